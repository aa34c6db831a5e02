"""Open data: every ranked result of a closed day, one JSON line each (docs/api.md).

A line holds what the engine alone needs to check it: the variant and seed, the moves as the
server logged them, the result the server recorded and its rank, plus the server's
milliseconds between moves (`server.fairplay`). `python -m engine verify FILE` replays them.
The lines of a day are served gzipped at ``/api/v1/days/DATE/results.ndjson.gz`` once the day
is closed (the ``closed`` markers of `server.games.rollover`) and dumped to files by
`python -m server.api.dump`. The bytes depend on the stored data only (gzip without a time
stamp, keys sorted), so every process serves the same file with the same ETag.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import gzip
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TypedDict, cast

import redis.asyncio

from engine import VARIANT_IDS
from server.boards.leaderboard import MAX_LIMIT, BoardRef, Leaderboard
from server.games.store import GameStore
from server.redis import keys
from server.runtime.errors import NotFound

__all__ = ["ResultLine", "Sources", "all_closed", "day_lines", "day_results_gz"]


class ResultLine(TypedDict):
    variant: str
    date: str
    rank: int
    name: str
    seed: int
    won: bool
    resigned: bool
    cleared: int
    score: int
    time_ms: int
    hints: int
    finished_at: int
    #: Moves counted as the server counts them (an ``undo`` is a move).
    move_count: int
    moves: list[str]
    #: Server milliseconds before each logged move (the first: since the deal was served).
    times_ms: list[int]


@dataclass(frozen=True, slots=True)
class Sources:
    """What the open data is read from (the app's services, or the dump's own)."""

    redis: redis.asyncio.Redis
    store: GameStore
    leaderboard: Leaderboard


async def all_closed(r: redis.asyncio.Redis, date: dt.date) -> bool:
    """Every variant of ``date`` is closed: no game of it can change any more."""
    for v in VARIANT_IDS:
        if not await r.exists(keys.daily_closed(v, date)):
            return False
    return True


async def day_lines(src: Sources, date: dt.date) -> AsyncIterator[ResultLine]:
    """Every ranked result of ``date``, variant by variant in rank order."""
    for variant in VARIANT_IDS:
        board = BoardRef.daily(variant, date)
        offset = 0
        while True:
            rows = await src.leaderboard.top(board, offset, MAX_LIMIT)
            for e in rows:
                game_id = keys.daily_game_id(variant, date, e.player_id)
                try:
                    record, moves = await src.store.load(game_id)
                except NotFound:  # expired with its board (older than the retention)
                    continue
                times = cast(
                    list[str],
                    await src.redis.lrange(keys.daily_times(variant, date, e.player_id), 0, -1),
                )
                r = record.result
                yield {
                    "variant": variant,
                    "date": date.isoformat(),
                    "rank": e.rank,
                    "name": e.name,
                    "seed": record.seed,
                    "won": e.won,
                    "resigned": bool(r and r.resigned),
                    "cleared": e.cleared,
                    "score": e.score,
                    "time_ms": e.time_ms,
                    "hints": e.hints,
                    "finished_at": e.finished_at_ms,
                    "move_count": e.moves,
                    "moves": list(moves),
                    "times_ms": [int(t) for t in times],
                }
            if len(rows) < MAX_LIMIT:
                break
            offset += MAX_LIMIT


def encode_line(line: ResultLine) -> bytes:
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


async def day_results_gz(src: Sources, date: dt.date) -> bytes:
    """The day's lines, gzipped reproducibly (no file name, no time stamp). The compression
    runs in a thread: a big day's file would hold the event loop for a while."""
    chunks = [encode_line(line) + b"\n" async for line in day_lines(src, date)]
    return await asyncio.to_thread(gzip.compress, b"".join(chunks), 9, mtime=0)
