"""`python -m engine rate`: a deal's difficulty features and tier, or a calibration run.

    python -m engine rate VARIANT --seed S [--nodes N | --budget SECONDS] [--json]
    python -m engine rate --calibrate VARIANT --deals N [--first SEED] [--trials T] [--fit]

The first prints the features, the score and the tier (text, or one JSON object with
``--json``). The second rates seeds FIRST .. FIRST+N-1, plays each winnable one with the
simulated players and prints, per tier and skill level, the win rate, points left, moves
and modelled seconds; with ``--fit`` it first fits a model on those deals and prints it
as the `MODELS` entry to paste into engine/difficulty/model.py (docs/deals.md,
"Difficulty"). The exit status is 0, or 1 when a calibration's tiers are not monotonic.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from ..cliargs import dump, positive_float, positive_int, seed_arg
from ..variants import VARIANT_IDS
from . import rate
from .calibrate import collect, fit_played, tabulate
from .model import MODELS, Model

#: Node budget of `rate` and of a calibration's deals unless --nodes/--budget is given.
DEFAULT_NODES = 50_000


def model_source(variant: str, model: Model) -> str:
    """A model as the Python text of its `MODELS` entry."""
    return (
        f'    "{variant}": Model(\n'
        f"        means={model.means!r},\n"
        f"        spreads={model.spreads!r},\n"
        f"        weights={model.weights!r},\n"
        f"        cuts={model.cuts!r},\n"
        "    ),"
    )


def cmd_rate(args: argparse.Namespace) -> int:
    if args.calibrate:
        return _calibrate(args)
    if args.seed is None:
        print("python -m engine rate: --seed is required (or --calibrate)", file=sys.stderr)
        return 2
    if args.budget is not None:
        rating = rate(args.variant, args.seed, max_seconds=args.budget)
    else:
        rating = rate(args.variant, args.seed, max_nodes=args.nodes or DEFAULT_NODES)
    tier = rating.tier.value if rating.tier is not None else None
    if args.json:
        out: dict[str, Any] = {
            "variant": rating.variant,
            "seed": rating.seed,
            "winnable": rating.winnable,
            "features": dataclasses.asdict(rating.features),
            "score": rating.score,
            "tier": tier,
        }
        dump(out, sys.stdout, args.indent)
        return 0
    print(f"{rating.variant} seed {rating.seed}")
    for name, value in dataclasses.asdict(rating.features).items():
        print(f"  {name:<20} {value}")
    print(f"  {'winnable':<20} {'yes' if rating.winnable else 'not proven'}")
    print(f"  {'score':<20} {rating.score:.3f}")
    print(f"tier: {tier if tier is not None else 'none (not certified winnable)'}")
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    deals = args.deals or 100
    seeds = range(args.first, args.first + deals)

    def progress(done: int) -> None:
        if done % 10 == 0 or done == deals:
            print(f"  {done}/{deals} deals", file=sys.stderr)

    played = collect(
        args.variant,
        seeds,
        per_deal_nodes=args.nodes or DEFAULT_NODES,
        trials=args.trials,
        progress=progress,
    )
    if args.fit:
        model = fit_played(played, args.variant)
        print(model_source(args.variant, model))
        print()
    else:
        model = MODELS[args.variant]
    report = tabulate(args.variant, played, model)
    print(report.table())
    ok = report.monotonic()
    print(f"\nmonotonic: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


def register(sub: Any) -> None:
    """Add the `rate` subcommand to `python -m engine`."""
    p = sub.add_parser("rate", help="a deal's difficulty features and tier; --calibrate")
    p.add_argument("variant", choices=VARIANT_IDS, help="variant id")
    p.add_argument("--seed", type=seed_arg, default=None, help="deal seed, 0..2**64-1")
    p.add_argument(
        "--nodes",
        type=positive_int,
        default=None,
        metavar="N",
        help=f"node budget per deal (default {DEFAULT_NODES}; deterministic)",
    )
    p.add_argument(
        "--budget",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="time budget instead of nodes (interactive; not deterministic)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--indent", type=int, default=None, help="pretty-print the JSON")
    p.add_argument(
        "--calibrate", action="store_true", help="calibrate: rate and play --deals seeds"
    )
    p.add_argument("--deals", type=positive_int, default=None, help="deals to calibrate on")
    p.add_argument("--first", type=seed_arg, default=0, help="first calibration seed")
    p.add_argument("--trials", type=positive_int, default=2, help="games per deal and level")
    p.add_argument("--fit", action="store_true", help="fit a model on the deals and print it")
    p.set_defaults(func=cmd_rate)
