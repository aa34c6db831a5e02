"""Leaderboards: submissions through the finish path vs raw ZADD, and query latency on a big board.

* Submissions: ``GameStore.finish`` (the Lua script that closes a game and writes its entry,
  exactly once) against plain ``ZADD`` from the same redis-py client, at the same concurrency.
* Queries: a board bulk-loaded with pipelined writes in the documented format (ZSET member
  ``<finished_at_ms:013d>:<pid>`` scored by the rank key, ``members`` and ``entries`` hashes:
  see ``server.boards.leaderboard.prepare_entry``), then top / around-me / my-rank through
  ``server.boards.leaderboard.Leaderboard``, one at a time, timed end to end from the client.

The submissions alone, on a fresh redis-server, ``--runs`` times (issue #30's figure is the
client's CPU per finish against a raw ZADD's; the throughput ratio swings with what else the
cores run): ``python -m benchmarks.load.lbbench [--submissions N] [--runs R]``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import random
import resource
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import redis.asyncio

from server.boards.leaderboard import BoardRef, Leaderboard, prepare_entry
from server.games.store import FinalResult, GameRecord, GameStore, PlayedLog
from server.redis import keys
from server.redis.embedded import connect

from . import procs
from .generator import percentile

DATE = dt.date(2030, 1, 1)
VARIANT = "fourteen-out"
#: Each game of the submissions is started at 1_000 ms and gets one move at 1_500 ms (its
#: CPU measured: a move's, beside a finish's), then is finished as `GameService` finishes a
#: game it has cached (`GameStore.finish(played=...)`: the screen runs here, two round trips).
STARTED_MS, MOVED_MS = 1_000, 1_500


@dataclass
class LeaderboardFigures:
    submissions: int
    concurrency: int
    finish_per_s: float
    zadd_per_s: float
    board_size: int
    load_s: float
    query_ms: dict[str, dict[str, float]] = field(default_factory=dict)  # kind -> p50/p99/max
    #: This process's CPU per submission (µs): the finish path's share of the server's CPU
    #: for a finished game, and a raw ZADD's through redis-py.
    finish_cpu_us: float = 0.0
    zadd_cpu_us: float = 0.0
    #: Group-commit pipelines per finish (32 finishes share each of their two steps').
    finish_batches: float = 0.0
    #: This process's CPU per move appended through the same store (`GameStore.append`).
    append_cpu_us: float = 0.0

    @property
    def ratio(self) -> float:
        return self.finish_per_s / self.zadd_per_s


async def _concurrently(n: int, concurrency: int, job: Callable[[int], Awaitable[object]]) -> float:
    """Run job(0..n-1) with ``concurrency`` workers; returns jobs per second."""
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:
            await job(i)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return n / (time.perf_counter() - t0)


def _pid(i: int) -> str:
    return f"p{i:08d}"


@dataclass
class Submissions:
    finish_per_s: float
    zadd_per_s: float
    finish_cpu_us: float
    zadd_cpu_us: float
    finish_batches: float
    append_cpu_us: float
    #: The finish phase's client CPU split (µs per finish), and redis-server's (INFO cpu).
    finish_user_us: float = 0.0
    finish_sys_us: float = 0.0
    finish_redis_us: float = 0.0


async def _redis_cpu(client: redis.asyncio.Redis) -> float:
    """redis-server's CPU so far (s, main thread's user + system)."""
    info = await client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def submissions(client: redis.asyncio.Redis, n: int, concurrency: int) -> Submissions:
    store = GameStore(client)
    date = DATE + dt.timedelta(days=1)
    ids = [keys.daily_game_id(VARIANT, date, _pid(i)) for i in range(n)]
    records: dict[int, GameRecord] = {}

    async def start(i: int) -> None:
        records[i] = await store.start_game(ids[i], "daily", VARIANT, 1, STARTED_MS)

    await _concurrently(n, concurrency, start)
    cpu = time.process_time()
    await _concurrently(n, concurrency, lambda i: store.append_move(ids[i], 0, "m", MOVED_MS))
    append_cpu = (time.process_time() - cpu) / n * 1e6
    rng = random.Random(1)

    async def finish(i: int) -> None:
        result = FinalResult(
            won=rng.random() < 0.3,
            over=True,
            resigned=False,
            cleared=rng.randrange(52),
            score=0,
            points=rng.randrange(52),
            time_ms=rng.randrange(10**6),
            moves=rng.randrange(200),
        )
        played = PlayedLog(("m",), (MOVED_MS - STARTED_MS,), MOVED_MS, records[i])
        await store.finish(ids[i], result, f"name{i}", 2_000 + i, None, 1, played=played)

    redis_cpu = await _redis_cpu(client)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu, batches = time.process_time(), store.batch.batches
    finish_rate = await _concurrently(n, concurrency, finish)
    finish_cpu = (time.process_time() - cpu) / n * 1e6
    after = resource.getrusage(resource.RUSAGE_SELF)
    finish_redis = (await _redis_cpu(client) - redis_cpu) / n * 1e6
    finish_batches = (store.batch.batches - batches) / n
    raw_key = f"bench:{{zadd}}:{random.random()}"
    cpu = time.process_time()
    zadd_rate = await _concurrently(
        n, concurrency, lambda i: client.zadd(raw_key, {_pid(i): rng.randrange(1 << 53)})
    )
    zadd_cpu = (time.process_time() - cpu) / n * 1e6
    await client.delete(raw_key)
    return Submissions(
        finish_rate,
        zadd_rate,
        finish_cpu,
        zadd_cpu,
        finish_batches,
        append_cpu,
        (after.ru_utime - usage.ru_utime) / n * 1e6,
        (after.ru_stime - usage.ru_stime) / n * 1e6,
        finish_redis,
    )


async def bulk_load(
    client: redis.asyncio.Redis, board: BoardRef, n: int, chunk: int = 5_000
) -> float:
    """Write ``n`` entries in the documented format with pipelined batches; seconds taken."""
    rng = random.Random(7)
    t0 = time.perf_counter()
    for start in range(0, n, chunk):
        zmap: dict[str, int] = {}
        members: dict[str, str] = {}
        entries: dict[str, str] = {}
        for i in range(start, min(n, start + chunk)):
            pid = _pid(i)
            won = rng.random() < 0.3
            e = prepare_entry(
                player_id=pid,
                name=f"n{i}",
                won=won,
                cleared=rng.randrange(53),
                score=0,
                points=52 if won else rng.randrange(52),
                time_ms=rng.randrange(30_000, 3_600_000),
                moves=rng.randrange(20, 300),
                finished_at_ms=1_900_000_000_000 + i,
            )
            zmap[e.member] = e.score
            members[pid] = e.member
            entries[pid] = e.data
        async with client.pipeline(transaction=False) as pipe:
            pipe.zadd(board.board_key, zmap)
            pipe.hset(board.members_key, mapping=members)  # type: ignore[arg-type]
            pipe.hset(board.entries_key, mapping=entries)  # type: ignore[arg-type]
            await pipe.execute()
    return time.perf_counter() - t0


async def settle(client: redis.asyncio.Redis, timeout: float = 120.0) -> None:
    """Wait for the AOF rewrite the bulk load triggers (a fork) to finish: it is setup."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = await client.info("persistence")
        if not info.get("aof_rewrite_in_progress") and not info.get("aof_rewrite_scheduled"):
            return
        await asyncio.sleep(0.2)


async def queries(
    client: redis.asyncio.Redis, board: BoardRef, n: int, samples: int
) -> dict[str, dict[str, float]]:
    lb = Leaderboard(client)
    rng = random.Random(3)
    kinds: dict[str, Callable[[], Awaitable[object]]] = {
        "top (page of 20 at a random offset)": lambda: lb.top(
            board, rng.randrange(max(1, n - 20)), 20
        ),
        "top (first page of 20)": lambda: lb.top(board, 0, 20),
        "around me (k=5)": lambda: lb.around(board, _pid(rng.randrange(n)), 5),
        "my rank": lambda: lb.rank(board, _pid(rng.randrange(n))),
    }
    out = {}
    for kind, fn in kinds.items():
        for _ in range(50):  # warm up (script load, connection)
            await fn()
        times = []
        for _ in range(samples):
            t0 = time.perf_counter()
            rows = await fn()
            times.append((time.perf_counter() - t0) * 1000)
            assert rows, kind
        out[kind] = {"p50": percentile(times, 50), "p99": percentile(times, 99), "max": max(times)}
    return out


async def run(
    redis_url: str,
    *,
    submissions_n: int = 20_000,
    concurrency: int = 32,
    board_size: int = 1_000_000,
    samples: int = 2_000,
) -> LeaderboardFigures:
    client = connect(redis_url)
    try:
        await client.flushdb()
        s = await submissions(client, submissions_n, concurrency)
        board = BoardRef.daily(VARIANT, DATE)
        load_s = await bulk_load(client, board, board_size)
        n = await client.zcard(board.board_key)
        assert n == board_size, (n, board_size)
        await settle(client)
        q = await queries(client, board, board_size, samples)
        return LeaderboardFigures(
            submissions_n,
            concurrency,
            s.finish_per_s,
            s.zadd_per_s,
            board_size,
            load_s,
            q,
            s.finish_cpu_us,
            s.zadd_cpu_us,
            s.finish_batches,
            s.append_cpu_us,
        )
    finally:
        await client.aclose()


async def _submissions_alone(url: str, n: int, concurrency: int) -> Submissions:
    client = connect(url)
    try:
        await client.flushdb()
        return await submissions(client, n, concurrency)
    finally:
        await client.aclose()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="lbbench.submissions alone (issue #30, item 3)")
    ap.add_argument("--submissions", type=int, default=8_000)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            rs = procs.RedisServer(Path(tmp) / f"redis{run}").start()
            try:
                s = asyncio.run(_submissions_alone(rs.url, args.submissions, args.concurrency))
            finally:
                rs.stop()
            print(
                f"client CPU per finish {s.finish_cpu_us:.0f} us (user {s.finish_user_us:.0f}"
                f", sys {s.finish_sys_us:.0f}), per ZADD {s.zadd_cpu_us:.0f} us: "
                f"{s.zadd_cpu_us / s.finish_cpu_us:.1%} by CPU (goal >= 60 %); "
                f"{s.finish_per_s:,.0f}/s vs {s.zadd_per_s:,.0f}/s "
                f"({s.finish_per_s / s.zadd_per_s:.1%}); {s.finish_batches:.2f} pipelines "
                f"and redis-server {s.finish_redis_us:.0f} us per finish; "
                f"{args.submissions:,} each, {args.concurrency} concurrent",
                flush=True,
            )


if __name__ == "__main__":
    main()
