"""`solitaire-admin`: review held results and mark accounts (docs/fairplay.md, "Review").

    solitaire-admin [--redis-url URL | --data-dir DIR] [--reviewer NAME] COMMAND ...

    held [--limit N]               results the screen holds, with the evidence
    clear GAME_ID [--note TEXT]    the result was human: it enters its board (a race
                                   result: the review is recorded, its rating stands)
    confirm GAME_ID [--note TEXT] [--mark]
                                   the result was not: it stays off (--mark: mark the account)
    mark PLAYER [--note TEXT]      a confirmed cheater: every result leaves every board
    unmark PLAYER [--note TEXT]    undo a mark
    marked                         the marked accounts
    audit [--limit N]              the review log: who did what, when and why

Redis: ``--redis-url`` or ``REDIS_URL`` (``redis://``, ``unix://``, or a cluster's
``redis+cluster://host:port,...``); otherwise the embedded Redis of ``--data-dir``
(``SOLITAIRE_DATA_DIR``, ``./data``): the running server's socket when it is up, else one
started for the command. The reviewer is ``--reviewer``, else ``$USER``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import getpass
import os
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import TextIO

import redis.asyncio
import redis.exceptions

from engine import VARIANT_IDS
from server.config import Config
from server.fairplay.review import AuditRecord, HeldResult, ReviewDesk
from server.redis.connect import connect, connected
from server.redis.embedded import EmbeddedRedis
from server.runtime.errors import Conflict, NotFound, StoreUnavailable

__all__ = ["main", "run"]


def _parser(env: Mapping[str, str]) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="solitaire-admin",
        description="Review results held by the fair-play screen and mark accounts.",
    )
    p.add_argument("--redis-url", default=env.get("REDIS_URL") or None)
    p.add_argument("--data-dir", type=Path, default=Path(env.get("SOLITAIRE_DATA_DIR", "./data")))
    p.add_argument("--reviewer", default=None, help="who acts (default: $USER)")
    sub = p.add_subparsers(dest="command", required=True)
    held = sub.add_parser("held", help="results held for review, with the evidence")
    held.add_argument("--limit", type=int, default=100)
    for name, what, target in (
        ("clear", "the result was human: it enters its board", "game_id"),
        ("confirm", "the result was not human: it stays off the boards", "game_id"),
        ("mark", "mark a confirmed cheater: every result leaves every board", "player"),
        ("unmark", "undo a mark: results and ratings are back", "player"),
    ):
        cmd = sub.add_parser(name, help=what)
        cmd.add_argument(target)
        cmd.add_argument("--note", default="", help="why (kept in the audit log)")
        if name == "confirm":
            cmd.add_argument("--mark", action="store_true", help="also mark the account")
    sub.add_parser("marked", help="the marked accounts")
    audit = sub.add_parser("audit", help="the review log")
    audit.add_argument("--limit", type=int, default=100)
    return p


def _reviewer(arg: str | None, env: Mapping[str, str]) -> str:
    if arg:
        return arg
    user = env.get("USER") or env.get("LOGNAME")
    if user:
        return user
    with contextlib.suppress(Exception):
        return getpass.getuser()
    return "unknown"


@contextlib.asynccontextmanager
async def _client(url: str | None, data_dir: Path) -> AsyncIterator[redis.asyncio.Redis]:
    """The Redis of ``url``; else the running server's embedded one; else one started here."""
    if url is None:
        sock = EmbeddedRedis(data_dir).socket_path
        if sock.exists():
            client = connect(f"unix://{sock}")
            try:
                await client.ping()
            except (redis.exceptions.ConnectionError, OSError):
                await client.aclose()
            else:
                try:
                    yield client
                finally:
                    await client.aclose()
                return
        async with connected(Config(data_dir=data_dir)) as started:
            yield started
        return
    client = connect(url)
    try:
        yield client
    finally:
        await client.aclose()


def _ms(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _print_held(rows: Sequence[HeldResult], out: TextIO) -> None:
    if not rows:
        print("no results held for review", file=out)
    for h in rows:
        e, v = h.verdict.evidence, h.verdict
        kind = "  (catch-up: crowns only)" if h.catchup else ""
        if h.race:
            kind = "  (race: rated as no real attempt when it ended; the review is a record)"
        print(
            f"{h.game_id}  player {h.player_id}  finished {_ms(h.finished_at_ms)}{kind}",
            file=out,
        )
        outcome = "won" if h.won else "not won"
        print(
            f"  {outcome}, {h.moves} moves, time {h.time_ms} ms, {h.hints} hints"
            f"{f', par {e.par}' if e.par is not None else ''}",
            file=out,
        )
        print(f"  held for: {', '.join(r.value for r in v.reasons)}", file=out)
        for note in v.notes:
            print(f"    - {note}", file=out)
        print(
            f"  timings: elapsed {e.elapsed_ms} ms, median {e.median_ms} ms (floor"
            f" {e.pace_floor_ms}), first move {e.first_ms} ms, fastest {e.fastest_ms} ms,"
            f" longest run under {e.burst_floor_ms} ms: {e.longest_fast_run}, draws {e.draws},"
            f" undos {e.undos}",
            file=out,
        )
        shown = ", ".join(str(i) for i in e.intervals_ms[:40])
        more = f", ... ({len(e.intervals_ms)} in all)" if len(e.intervals_ms) > 40 else ""
        print(f"  move intervals (ms): {shown}{more}", file=out)


def _print_audit(rows: Sequence[AuditRecord], out: TextIO) -> None:
    if not rows:
        print("the audit log is empty", file=out)
    for a in rows:
        note = f"  note: {a.note}" if a.note else ""
        detail = f"  ({a.detail})" if a.detail else ""
        print(f"{_ms(a.at_ms)}  {a.reviewer}  {a.action.value} {a.target}{detail}{note}", file=out)


async def run(
    argv: Sequence[str], env: Mapping[str, str] | None = None, out: TextIO | None = None
) -> int:
    """Run one command; returns the exit status (0 done, 1 refused, 2 usage, 3 no Redis)."""
    env = os.environ if env is None else env
    out = sys.stdout if out is None else out
    args = _parser(env).parse_args(list(argv))
    reviewer = _reviewer(args.reviewer, env)
    try:
        async with _client(args.redis_url, args.data_dir) as client:
            desk = ReviewDesk(client, VARIANT_IDS)
            try:
                return await _command(desk, args, reviewer, out)
            finally:
                await desk.aclose()
    except StoreUnavailable as exc:
        print(f"solitaire-admin: {exc}", file=sys.stderr)
        return 3
    except (redis.exceptions.ConnectionError, OSError) as exc:
        print(f"solitaire-admin: cannot reach Redis: {exc}", file=sys.stderr)
        return 3


async def _command(desk: ReviewDesk, args: argparse.Namespace, who: str, out: TextIO) -> int:
    try:
        match args.command:
            case "held":
                _print_held(await desk.held(args.limit), out)
            case "clear":
                _print_audit([await desk.clear(args.game_id, who, args.note)], out)
            case "confirm":
                done = [await desk.confirm(args.game_id, who, args.note)]
                if args.mark:
                    record = await desk.store.get(args.game_id)
                    done.append(await desk.mark(record.player_id, who, args.note))
                _print_audit(done, out)
            case "mark":
                _print_audit([await desk.mark(args.player, who, args.note)], out)
            case "unmark":
                _print_audit([await desk.unmark(args.player, who, args.note)], out)
            case "marked":
                marks = await desk.marked()
                if not marks:
                    print("no marked accounts", file=out)
                for pid, raw in sorted(marks.items()):
                    print(f"{pid}  {raw}", file=out)
            case "audit":
                _print_audit(await desk.audit(args.limit), out)
    except (NotFound, Conflict, ValueError) as exc:
        print(f"solitaire-admin: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    sys.exit(asyncio.run(run(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    main()
