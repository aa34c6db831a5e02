"""`python -m engine solve VARIANT --seed SEED [--budget SECONDS] [--nodes N]`.

Prints one JSON object: the verdict (``winnable``, ``impossible`` or ``unknown``), the solution
in move notation (``python -m engine replay`` accepts it, one move a line), for the scoring
games the best score, the maximum and whether the best is proven optimal, and the search
statistics. The exit status is 0 whatever the verdict.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..cliargs import dump, game_args, positive_float
from ..variants import new_game
from . import solve

#: Default time budget of the command, in seconds.
DEFAULT_BUDGET = 60.0


def cmd_solve(args: argparse.Namespace) -> int:
    """Solve a deal with full information and print the verdict as JSON."""
    result = solve(new_game(args.variant, args.seed), max_seconds=args.budget, max_nodes=args.nodes)
    out: dict[str, Any] = {"variant": args.variant, "seed": args.seed}
    out.update(result.to_json())
    out["moves"] = len(result.solution)
    dump(out, sys.stdout, args.indent)
    return 0


def register(sub: Any) -> None:
    """Add the `solve` subcommand to `python -m engine`."""
    p = sub.add_parser("solve", help="decide whether a deal can be won; print a solution")
    game_args(p)
    p.add_argument(
        "--budget",
        type=positive_float,
        default=DEFAULT_BUDGET,
        metavar="SECONDS",
        help=f"time budget in seconds (default {DEFAULT_BUDGET:g})",
    )
    p.add_argument(
        "--nodes",
        type=lambda t: int(positive_float(t)),
        default=None,
        metavar="N",
        help="node budget (default: none)",
    )
    p.set_defaults(func=cmd_solve)
