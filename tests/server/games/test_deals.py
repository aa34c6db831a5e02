"""One deal per variant and day across processes, whatever the timing (issue #25): the deal is
written only by the first process (``SET NX``), a process whose lock expired serves the
stored deal rather than its own, and a lock is released only by its holder."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import os
import time

import redis.asyncio

from server.games.deals import CERTIFY_BUDGETS, LOCK_MARGIN_S, DailyDeals, Deal, SolverPool
from server.redis import keys
from server.runtime.clock import ManualClock

DAY = dt.date(2030, 6, 15)
VARIANT = "triple-triangle"


class SlowDeals(DailyDeals):
    """A process whose computation finishes when the test says so, with a seed of its own
    (two processes' certifications can end on different seeds: budgets are wall time)."""

    def __init__(self, client: redis.asyncio.Redis, clock: ManualClock, seed: int) -> None:
        super().__init__(client, clock, b"x", SolverPool(1), certify=False)
        self.seed = seed
        self.computing = asyncio.Event()
        self.release = asyncio.Event()

    async def _compute(self, variant_id: str, date: dt.date) -> Deal:
        self.computing.set()
        await self.release.wait()
        deal = await super()._compute(variant_id, date)
        return dataclasses.replace(deal, seed=self.seed)


async def test_a_late_writer_serves_the_stored_deal_and_keeps_its_hands_off_the_lock(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    a, b = SlowDeals(redis_client, clock, 111), SlowDeals(redis_client, clock, 222)
    lock = keys.daily_deal_lock(VARIANT, DAY)
    got_a = asyncio.create_task(a.get(VARIANT, DAY))
    await a.computing.wait()
    assert await redis_client.ttl(lock) > 0
    await redis_client.delete(lock)  # a's lock expires while it still computes
    got_b = asyncio.create_task(b.get(VARIANT, DAY))
    await b.computing.wait()  # b took the lock and computes too
    held_by_b = await redis_client.get(lock)
    b.release.set()
    deal_b = await got_b  # b writes first
    a.release.set()
    deal_a = await got_a
    assert deal_a == deal_b and deal_a.seed == 222, "one deal for the day, on both processes"
    stored = await redis_client.get(keys.daily_deal(VARIANT, DAY))
    assert stored is not None and Deal.load(VARIANT, DAY, stored).seed == 222
    assert held_by_b is not None and await redis_client.get(lock) is None  # b released its own

    # a's release after an expiry must not free a lock someone else holds now
    c = SlowDeals(redis_client, clock, 333)
    got_c = asyncio.create_task(c.get(VARIANT, DAY + dt.timedelta(days=1)))
    await c.computing.wait()
    other = keys.daily_deal_lock(VARIANT, DAY + dt.timedelta(days=1))
    await redis_client.set(other, "someone-else")  # c's lock expired; another took it
    c.release.set()
    await got_c
    assert await redis_client.get(other) == "someone-else"


def test_the_lock_outlives_the_longest_certification(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    deals = DailyDeals(redis_client, clock, b"x", SolverPool(1), budget_s=120.0)
    # every candidate budget, then the fallback; the old fixed 300 s was below 6 x 120 s
    assert deals.lock_ttl_s() >= 120 * CERTIFY_BUDGETS + LOCK_MARGIN_S
    quick = DailyDeals(redis_client, clock, b"x", SolverPool(1), certify=False)
    assert quick.lock_ttl_s() == LOCK_MARGIN_S


class PausingRedis(redis.asyncio.Redis):
    """A real client on the same pool that, once it has read ``key``, waits for the test
    before its next command: the moment in which another process may store the deal and
    release its lock."""

    def __init__(self, pool: redis.asyncio.ConnectionPool, key: str) -> None:
        super().__init__(connection_pool=pool)
        self.key = key
        self.read = asyncio.Event()
        self.go = asyncio.Event()

    async def get(self, name: str) -> bytes | str | None:  # type: ignore[override]
        value: bytes | str | None = await super().get(name)
        if name == self.key and not self.read.is_set():
            self.read.set()
            await self.go.wait()
        return value


class CountingDeals(DailyDeals):
    def __init__(self, client: redis.asyncio.Redis, clock: ManualClock) -> None:
        super().__init__(client, clock, b"x", SolverPool(1), certify=False)
        self.computed = 0

    async def _compute(self, variant_id: str, date: dt.date) -> Deal:
        self.computed += 1
        return await super()._compute(variant_id, date)


async def test_a_deal_stored_between_the_read_and_the_lock_is_not_computed_again(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """Seen in benchmarks/midnight_rush.py: at rollover every process prepares the day after
    at once; one read no deal, another stored it and released its lock, and the first then
    took the free lock and certified the same deal again (up to 6 solver budgets of CPU),
    only to lose the write ("another process dealt first")."""
    paused = PausingRedis(redis_client.connection_pool, keys.daily_deal(VARIANT, DAY))
    b = CountingDeals(paused, clock)
    got_b = asyncio.create_task(b.get(VARIANT, DAY))
    await paused.read.wait()  # b read: no deal yet
    a = CountingDeals(redis_client, clock)
    deal_a = await a.get(VARIANT, DAY)  # a computes, stores and releases its lock
    assert a.computed == 1 and await redis_client.get(keys.daily_deal_lock(VARIANT, DAY)) is None
    paused.go.set()
    assert await got_b == deal_a
    assert b.computed == 0, "the stored deal is served, not computed again"


async def test_closing_the_pool_stops_a_worker_in_the_middle_of_a_search() -> None:
    """`SolverPool.close` stops its workers at once (a certification may run for a minute),
    knowing them by the process ids they report, not by the executor's private table."""
    pool = SolverPool(1)
    search = asyncio.ensure_future(pool.run(time.sleep, 60.0))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while not pool.worker_pids() and loop.time() < deadline:
        await asyncio.sleep(0.05)
    (pid,) = pool.worker_pids()
    pool.close()
    deadline = loop.time() + 10
    while _alive(pid) and loop.time() < deadline:
        await asyncio.sleep(0.05)
    assert not _alive(pid)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(search, 5)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie not reaped yet by the forkserver is gone.
    with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ", 1)[1][0] != "Z"
    return True
