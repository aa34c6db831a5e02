"""`python -m engine`: deal, replay, verify and list variants from the command line.

Subcommands are registered on an argparse sub-parser set; each sets ``func`` (via
``set_defaults``) to a callable taking the parsed arguments and returning an exit status.
The solver package adds its own the same way (``engine.solvers.cli.register`` adds
``solve``); arguments and output shared by both are in ``engine.cliargs``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .cliargs import dump, game_args
from .difficulty.cli import register as register_rate
from .errors import IllegalMove
from .solvers.cli import register as register_solve
from .variants import VARIANTS, new_game
from .verify import register as register_verify

EXIT_ILLEGAL = 1


def cmd_variants(args: argparse.Namespace) -> int:
    """Print the variant ids, one a line (with titles when --titles is given)."""
    for vid, cls in VARIANTS.items():
        print(f"{vid}\t{cls.title}" if args.titles else vid)
    return 0


def cmd_deal(args: argparse.Namespace) -> int:
    """Print the full initial state (hidden cards included) as JSON."""
    dump(new_game(args.variant, args.seed).to_json(), sys.stdout, args.indent)
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
            dump(
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
    dump({"state": game.to_json(), "result": game.result()}, sys.stdout, args.indent)
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
    game_args(p)
    p.set_defaults(func=cmd_deal)

    p = sub.add_parser("replay", help="replay moves from stdin (one a line, 'undo' allowed)")
    game_args(p)
    p.set_defaults(func=cmd_replay)

    register_solve(sub)
    register_rate(sub)  # `rate VARIANT --seed S`: difficulty (engine/difficulty)
    register_verify(sub)  # `verify FILE`: replay a day's results (engine/verify.py)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    status: int = args.func(args)
    return status
