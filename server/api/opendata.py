"""Open data: every ranked result of a closed day, one JSON line each (docs/api.md).

A line holds what the engine alone needs to check it: the variant and seed, the moves as the
server logged them, the result the server recorded and its rank, plus the server's
milliseconds between moves (`server.fairplay`). `python -m engine verify FILE` replays them.
The lines of a day are served gzipped at ``/api/v1/days/DATE/results.ndjson.gz`` once the day
is closed (the ``closed`` markers of `server.games.rollover`) and dumped to files by
`python -m server.api.dump`. The bytes depend on the stored data only (gzip without a time
stamp, keys sorted), so every process serves the same file with the same ETag.

`OpenDataFiles` serves them: a day's file is built once for every process and kept in Redis
(``sol:{od:<date>}:file``, expiring with the day's boards), tagged with the fair-play
generation (``sol:{fp}:gen``, bumped after every review that changes a board). Each request
reads the generation (one ``GET``): a file built before a mark is never served after it, on
any process. One process builds a day at a time (``sol:{od:<date>}:building``); the others
wait for its file. A process builds at most `MAX_BUILDS` days at once: a request needing
another is answered `BuildsBusy` (the API's ``503`` with ``Retry-After``).
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import gzip
import json
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Final, TypedDict, cast

import redis.asyncio

from engine import VARIANT_IDS
from server.boards.leaderboard import MAX_LIMIT, BoardRef, Leaderboard
from server.games.store import GameStore
from server.redis import keys
from server.redis.batch import LuaScript
from server.runtime.errors import NotFound

__all__ = [
    "BuildsBusy",
    "OpenDataFiles",
    "ResultLine",
    "Sources",
    "all_closed",
    "day_lines",
    "day_results_gz",
]

#: Days' files one process builds at once (each reads a whole day's games from Redis).
MAX_BUILDS: Final = 2
#: How long a request waits for another process's build of its day before ``503``.
BUILD_WAIT_S: Final = 20.0
#: A build's lock lapses after this long (its process died building).
BUILD_LOCK_MS: Final = 60_000
#: Days' files kept in this process's memory (each checked against the generation).
MEMORY_DAYS: Final = 8

# KEYS: file. ARGV: gen, gz (base64), expire at (s). Stores a day's file unless one of a later
# generation is there already. Returns 1 stored.
_STORE_LUA = """
local g = tonumber(redis.call('HGET', KEYS[1], 'gen') or '-1')
if g > tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'gen', ARGV[1], 'gz', ARGV[2])
redis.call('EXPIREAT', KEYS[1], ARGV[3])
return 1
"""

# KEYS: building. ARGV: token. Lets go of a build's lock if it is still ours.
_RELEASE_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


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


class BuildsBusy(Exception):
    """This process builds `MAX_BUILDS` days' files already (or another process's build of the
    day did not end in `BUILD_WAIT_S`): retry in a few seconds."""


class OpenDataFiles:
    """Closed days' files: in Redis for every process, a few in this process's memory, each
    served only while the fair-play generation it was built at is the current one."""

    def __init__(
        self,
        max_builds: int = MAX_BUILDS,
        wait_s: float = BUILD_WAIT_S,
        memory_days: int = MEMORY_DAYS,
    ) -> None:
        self.max_builds = max_builds
        self.wait_s = wait_s
        self.memory_days = memory_days
        self._memory: OrderedDict[dt.date, tuple[int, bytes]] = OrderedDict()
        self._getting: dict[tuple[dt.date, int], asyncio.Task[bytes]] = {}
        self._building = 0
        #: Days built by this process (for the tests and the logs).
        self.builds = 0
        self._store = LuaScript.of(_STORE_LUA)
        self._release = LuaScript.of(_RELEASE_LUA)

    async def get(self, src: Sources, date: dt.date, expire_at_s: int) -> bytes:
        """The file of a closed ``date`` as of the current generation. Raises `BuildsBusy`."""
        gen = int(cast(str | None, await src.redis.get(keys.fairplay_generation())) or 0)
        kept = self._memory.get(date)
        if kept is not None and kept[0] == gen:
            self._memory.move_to_end(date)
            return kept[1]
        task = self._getting.get((date, gen))
        if task is None:  # one fetch or build per day and generation, shared by its readers
            task = asyncio.create_task(self._fetch_or_build(src, date, gen, expire_at_s))
            self._getting[(date, gen)] = task
            task.add_done_callback(lambda _: self._getting.pop((date, gen), None))
        body = await asyncio.shield(task)
        self._memory[date] = (gen, body)
        self._memory.move_to_end(date)
        while len(self._memory) > self.memory_days:
            self._memory.popitem(last=False)
        return body

    async def _fetch_or_build(
        self, src: Sources, date: dt.date, gen: int, expire_at_s: int
    ) -> bytes:
        r = src.redis
        file_key, lock_key = keys.opendata_file(date), keys.opendata_building(date)
        deadline = asyncio.get_running_loop().time() + self.wait_s
        while True:
            stored_gen, gz = cast(list[str | None], await r.hmget(file_key, ["gen", "gz"]))
            if stored_gen is not None and gz is not None and int(stored_gen) >= gen:
                return base64.b64decode(gz)
            if self._building >= self.max_builds:
                raise BuildsBusy(f"{self._building} days' files are being built here")
            self._building += 1  # the slot is taken before the lock is asked for
            try:
                token = secrets.token_hex(8)
                if await r.set(lock_key, token, nx=True, px=BUILD_LOCK_MS):
                    try:
                        body = await day_results_gz(src, date)
                        self.builds += 1
                        await src.store.batch.eval(
                            self._store,
                            (file_key,),
                            (gen, base64.b64encode(body).decode(), expire_at_s),
                        )
                        return body
                    finally:
                        await src.store.batch.eval(self._release, (lock_key,), (token,))
            finally:
                self._building -= 1
            if asyncio.get_running_loop().time() >= deadline:
                raise BuildsBusy(f"the file of {date.isoformat()} is being built elsewhere")
            await asyncio.sleep(0.1)
