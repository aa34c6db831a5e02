"""`solitaire`: play the daily deals, races and practice games, read leaderboards.

Exit status: 0 ok; 1 a move was refused or the server refused a request; 2 usage error or
a feature the server does not offer; 3 server unreachable; 4 protocol version mismatch;
130 interrupted (Ctrl-C; a daily game can be resumed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Final

from rich.console import Console

import protocol as p
from engine import VARIANT_IDS
from protocol.fields import DATE
from protocol.races import ROOM_CODE

from . import render
from .account import cmd_token
from .calendar import cmd_calendar
from .commands import Ctx, cmd_daily, cmd_leaderboard, cmd_practice, cmd_rules, cmd_variants
from .config import DEFAULT_SERVER
from .devices import cmd_device_revoke, cmd_devices, cmd_signin, cmd_signin_code
from .free import cmd_free
from .race import cmd_race, cmd_rematch
from .render import View
from .session import EXIT_USAGE, SessionError
from .social import cmd_history, cmd_me, cmd_profile, cmd_share, cmd_watch

Command = Callable[[argparse.Namespace, Ctx], Coroutine[Any, Any, int]]
EXIT_INTERRUPTED: Final = 130


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 1 <= value <= 100:
        raise argparse.ArgumentTypeError("the limit must be from 1 to 100")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value <= 2**64 - 1:
        raise argparse.ArgumentTypeError("the seed must be in 0..2**64-1")
    return value


def _date(text: str) -> str:
    try:
        return DATE.load(text, "--date")
    except p.ProtocolError:
        raise argparse.ArgumentTypeError(f"not a date YYYY-MM-DD: {text!r}") from None


def _month(text: str) -> str:
    if re.fullmatch(r"[0-9]{4}-(0[1-9]|1[0-2])", text) is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a month YYYY-MM")
    return text


def _room_code(text: str) -> str:
    try:
        return ROOM_CODE.load(text.upper(), "--join")
    except p.ProtocolError:
        raise argparse.ArgumentTypeError(
            f"not a room code (4-8 letters or digits): {text!r}"
        ) from None


def _globals(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """Options accepted before or after the command name."""
    d = (lambda value: value) if top else (lambda value: argparse.SUPPRESS)
    parser.add_argument(
        "--server",
        metavar="URL",
        default=d(os.environ.get("SOLITAIRE_SERVER") or DEFAULT_SERVER),
        help=f"server WebSocket URL (env SOLITAIRE_SERVER; default {DEFAULT_SERVER})",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=d(False),
        help="machine-readable output: one JSON object per command",
    )
    parser.add_argument(
        "--name",
        default=d(None),
        help="the local player called NAME: created on first use (no prompt), then resumed; "
        "several names keep several players apart on one computer",
    )
    parser.add_argument(
        "--profile",
        metavar="PROFILE",
        default=d(os.environ.get("SOLITAIRE_PROFILE") or None),
        help="keep this player's identity under PROFILE (env SOLITAIRE_PROFILE; default: "
        "one player per server)",
    )
    parser.add_argument(
        "--ascii",
        action="store_true",
        default=d(False),
        help="write suits as letters (H D C S) instead of symbols",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="solitaire",
        description="Multiplayer solitaire: daily deals, races, leaderboards.",
        epilog="Exit status: 0 ok, 1 refused move/request, 2 usage or unavailable feature, "
        "3 server unreachable, 4 version mismatch, 130 interrupted.",
    )
    _globals(parser, top=True)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, func: Command, help_text: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_text, description=help_text)
        _globals(sp, top=False)
        sp.set_defaults(func=func)
        return sp

    sp = add("daily", cmd_daily, "play today's deal of a variant")
    sp.add_argument("variant", choices=VARIANT_IDS, metavar="VARIANT")
    sp.add_argument(
        "--moves", metavar="FILE", help="play the moves in FILE ('-': stdin) non-interactively"
    )
    sp.add_argument(
        "--show",
        action="store_true",
        help="start today's ranked game if not started (its clock then runs: a deal is seen"
        " only by starting it), then print it and exit",
    )
    sp.add_argument(
        "--tier",
        choices=("easy", "medium", "hard", "expert"),
        help="one of the day's tiers (default: medium, the daily deal)",
    )
    sp.add_argument(
        "--date",
        type=_date,
        help="a past day of this month, YYYY-MM-DD: play it as catch-up (on no board)",
    )

    sp = add("calendar", cmd_calendar, "this month's tiers, your results, crowns and badge")
    sp.add_argument("--month", type=_month, help="YYYY-MM (default: this month, UTC)")
    sp.add_argument("--variant", choices=VARIANT_IDS, metavar="VARIANT", help="one variant only")

    sp = add("leaderboard", cmd_leaderboard, "show a daily (or race) leaderboard")
    sp.add_argument("variant", choices=VARIANT_IDS, metavar="VARIANT")
    sp.add_argument("--date", type=_date, help="YYYY-MM-DD (default: today, UTC)")
    sp.add_argument("--around-me", action="store_true", help="the entries around your own")
    sp.add_argument("--limit", type=_limit, default=20, help="entries to show (1-100)")
    sp.add_argument("--race", action="store_true", help="the race board instead of the daily")
    sp.add_argument(
        "--tier", choices=("easy", "medium", "hard", "expert"), help="that tier's daily board"
    )
    sp.add_argument(
        "--board",
        choices=("rating", "wins"),
        default="rating",
        help="race board: rating (default) or wins on --date",
    )

    add("variants", cmd_variants, "list the variants")

    sp = add("rules", cmd_rules, "print a variant's rules and move notation")
    sp.add_argument("variant", choices=VARIANT_IDS, metavar="VARIANT")

    sp = add("practice", cmd_practice, "play offline with a seed of your choice (no server)")
    sp.add_argument("variant", choices=VARIANT_IDS, metavar="VARIANT")
    sp.add_argument("--seed", type=_seed, help="deal seed (default: random)")
    sp.add_argument("--moves", metavar="FILE", help="play the moves in FILE ('-': stdin)")
    sp.add_argument("--show", action="store_true", help="print the deal and exit")

    sp = add("free", cmd_free, "free play on the server: an unranked random deal (no board)")
    sp.add_argument("variant", choices=VARIANT_IDS, metavar="VARIANT")
    sp.add_argument("--resume", metavar="GAME_ID", help="go on with a free game of yours")
    sp.add_argument("--moves", metavar="FILE", help="play the moves in FILE ('-': stdin)")
    sp.add_argument("--show", action="store_true", help="print the game and exit")

    sp = add("race", cmd_race, "race other players on a fresh deal")
    sp.add_argument("variant", nargs="?", choices=VARIANT_IDS, metavar="VARIANT")
    sp.add_argument("--players", type=int, default=2, help="group size, 2-8 (default 2)")
    group = sp.add_mutually_exclusive_group()
    group.add_argument("--create", action="store_true", help="open a private room")
    group.add_argument(
        "--join", metavar="CODE", type=_room_code, help="join a private room by its code"
    )
    sp.add_argument("--moves", metavar="FILE", help="play the moves in FILE ('-': stdin)")

    sp = add("rematch", cmd_rematch, "race the racers of a race that is over again")
    sp.add_argument("race_id", metavar="RACE_ID", help="the race (its id, as the race printed)")
    sp.add_argument("--moves", metavar="FILE", help="play the moves in FILE ('-': stdin)")
    sp.set_defaults(players=8, create=True, join=None, variant=None)

    add("me", cmd_me, "your profile: daily streaks and bests, races, the last 30 days")

    sp = add("profile", cmd_profile, "another player's profile")
    sp.add_argument(
        "who",
        metavar="NAME_OR_ID",
        help="a display name or a player id (one starting with '-' after '--')",
    )

    sp = add("history", cmd_history, "your daily results (of every variant, or one), newest first")
    sp.add_argument("variant", nargs="?", choices=VARIANT_IDS, metavar="VARIANT")
    sp.add_argument("--before", type=_date, help="only days before YYYY-MM-DD (next page)")
    sp.add_argument("--limit", type=_limit, default=30, help="days to show (1-100)")
    sp.add_argument(
        "--player",
        metavar="NAME_OR_ID",
        help="another player's history (a name starting with '-': --player=-NAME)",
    )
    sp.add_argument(
        "--replay",
        type=_date,
        metavar="DATE",
        help="replay that day's game move by move (once the day is over)",
    )

    sp = add("watch", cmd_watch, "watch a race live, a few seconds behind")
    sp.add_argument(
        "race_id", nargs="?", metavar="RACE_ID", help="the race (default: the newest race running)"
    )
    sp.add_argument("--list", action="store_true", help="list the races running and exit")
    sp.add_argument(
        "--variant", choices=VARIANT_IDS, metavar="VARIANT", help="only races of this variant"
    )

    add("share", cmd_share, "a text summary of today's results, to paste into a chat")

    sp = add("token", cmd_token, "replace your stored token, or sign out your other sessions")
    sp.add_argument(
        "action",
        choices=("rotate", "revoke-all"),
        help="rotate: a new token, the old one stops working; revoke-all: the same, and every "
        "other session of yours (another device, a copied token) is signed out",
    )
    add("signin-code", cmd_signin_code, "show a one-time code to sign in on another device")
    sp = add("signin", cmd_signin, "sign in as your player with a code from another device")
    sp.add_argument("code", metavar="CODE", help="the code signin-code (or the browser) showed")
    sp.add_argument(
        "--account",
        metavar="NAME",
        help="your player's name: the attempt counts against that account, not this "
        "address (for a shared network whose tries someone used up; protocol 9)",
    )
    add("devices", cmd_devices, "list the devices signed in as your player")
    sp = add("device-revoke", cmd_device_revoke, "sign one of your devices out")
    sp.add_argument(
        "device",
        metavar="DEVICE",
        help="its id, as 'solitaire devices' lists it (one starting with '-' after '--')",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `solitaire` console script."""
    args = build_parser().parse_args(argv)
    console = Console(stderr=args.json, highlight=False)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    ctx = Ctx(args=args, out=View(console=console, ascii=args.ascii, json=args.json), err=err)
    func: Command = args.func
    try:
        status: int = asyncio.run(func(args, ctx))
    except KeyboardInterrupt:
        err.print(render.interrupted(practice=args.command == "practice"))
        return EXIT_INTERRUPTED
    except SessionError as exc:
        if args.json:
            sys.stdout.write(_error_json(args.command, exc) + "\n")
        err.print(render.error_text(str(exc)))
        return exc.exit_code
    return status


def _error_json(command: str, exc: SessionError) -> str:
    import json

    doc = {
        "command": command,
        "error": {
            "message": str(exc),
            "code": getattr(exc, "code", None),
            "exit_code": exc.exit_code,
        },
    }
    return json.dumps(doc)


if __name__ == "__main__":
    sys.exit(main())

__all__ = ["EXIT_USAGE", "build_parser", "main"]
