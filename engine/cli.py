"""`python -m engine`: deal, replay and list variants from the command line.

Subcommands are registered on an argparse sub-parser set; each sets ``func`` (via
``set_defaults``) to a callable taking the parsed arguments and returning an exit status.
Other packages add theirs the same way: when ``engine/solvers/cli.py`` exists, its
``register(subparsers)`` is called (it adds ``solve``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from .errors import IllegalMove
from .variants import VARIANT_IDS, VARIANTS, new_game

Register = Callable[[Any], None]

EXIT_ILLEGAL = 1


def _solver_register() -> Register | None:
    """The solver package's `register(subparsers)`, if that package is installed."""
    try:
        module = importlib.import_module(".solvers.cli", __package__)
    except ModuleNotFoundError as exc:
        if exc.name in (f"{__package__}.solvers", f"{__package__}.solvers.cli"):
            return None
        raise
    register: Register | None = getattr(module, "register", None)
    return register


_SEED_RE = re.compile(r"0|[1-9][0-9]{0,19}")


def _seed(text: str) -> int:
    """A seed as docs/deals.md writes it: decimal ASCII digits, no sign, spaces, underscores
    or leading zeros (Python's `int` would take ``+1``, `` 1``, ``1_0``, ``01``, ``١``)."""
    if _SEED_RE.fullmatch(text) is None:
        raise argparse.ArgumentTypeError(
            f"invalid seed {text!r}: write it in decimal ASCII digits without sign, spaces, "
            "underscores or leading zeros (e.g. 0, 1, 18446744073709551615)"
        )
    value = int(text)
    if value > 2**64 - 1:
        raise argparse.ArgumentTypeError("the seed must be in 0..2**64-1")
    return value


def _dump(obj: object, out: TextIO, indent: int | None) -> None:
    out.write(json.dumps(obj, indent=indent) + "\n")


def _game_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("variant", choices=VARIANT_IDS, help="variant id")
    parser.add_argument("--seed", type=_seed, required=True, help="deal seed, 0..2**64-1")
    parser.add_argument("--indent", type=int, default=None, help="pretty-print the JSON")


def cmd_variants(args: argparse.Namespace) -> int:
    """Print the variant ids, one a line (with titles when --titles is given)."""
    for vid, cls in VARIANTS.items():
        print(f"{vid}\t{cls.title}" if args.titles else vid)
    return 0


def cmd_deal(args: argparse.Namespace) -> int:
    """Print the full initial state (hidden cards included) as JSON."""
    _dump(new_game(args.variant, args.seed).to_json(), sys.stdout, args.indent)
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    """Play a move log from stdin; print the final state and result, or the first error."""
    game = new_game(args.variant, args.seed)
    for number, raw in enumerate(sys.stdin, start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            game.play(line)
        except IllegalMove as exc:
            print(f"line {number}: {exc}", file=sys.stderr)
            _dump(
                {
                    "error": {
                        "line": number,
                        "move": line,
                        "reason": exc.reason,
                        "message": str(exc),
                    },
                    "result": game.result(),
                },
                sys.stdout,
                args.indent,
            )
            return EXIT_ILLEGAL
    _dump({"state": game.to_json(), "result": game.result()}, sys.stdout, args.indent)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="python -m engine", description="Solitaire rules engine: deals and replays."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("variants", help="list the variant ids")
    p.add_argument("--titles", action="store_true", help="also print each variant's title")
    p.set_defaults(func=cmd_variants)

    p = sub.add_parser("deal", help="print the initial state of a deal as JSON")
    _game_args(p)
    p.set_defaults(func=cmd_deal)

    p = sub.add_parser("replay", help="replay moves from stdin (one a line, 'undo' allowed)")
    _game_args(p)
    p.set_defaults(func=cmd_replay)

    register_solve = _solver_register()
    if register_solve is not None:
        register_solve(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    status: int = args.func(args)
    return status
