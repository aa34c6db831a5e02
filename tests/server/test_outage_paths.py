"""Every Redis-touching path answers `unavailable` during an outage (issue 12): deal peeks
(par on leaderboards and games) and revealed seeds, against a real redis-server killed."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

from benchmarks.load import procs
from server.clock import ManualClock
from server.config import Config
from server.deals import DailyDeals, SolverPool
from server.errors import StoreUnavailable
from server.redis_embedded import connect
from tests.support.app import T0_MS, serve

PAST = dt.date(2030, 6, 10)


async def test_deal_peeks_and_revealed_seeds_are_unavailable(tmp_path: Path) -> None:
    redis_server = procs.RedisServer(tmp_path / "redis").start()
    client = connect(redis_server.url)
    deals = DailyDeals(client, ManualClock(T0_MS), b"s", SolverPool(), certify=False)
    try:
        assert await deals.peek("fourteen-out", PAST) is None
        redis_server.kill()
        for call in (deals.peek("fourteen-out", PAST), deals.revealed(PAST)):
            try:
                await call
            except StoreUnavailable:
                continue
            raise AssertionError("no StoreUnavailable")
    finally:
        await client.aclose()
        redis_server.stop()


async def test_daily_seeds_and_old_leaderboards_answer_unavailable(tmp_path: Path) -> None:
    redis_server = procs.RedisServer(tmp_path / "redis").start()
    config = replace(Config(), redis_url=redis_server.url, data_dir=tmp_path / "data",
                     daily_secret=b"outage")
    try:
        async with serve(config) as app:
            c = await app.client("outage")
            redis_server.kill()
            for kind, fields in [("daily.seeds", {"date": PAST.isoformat()}),
                                 ("leaderboard.top", {"variant": "fourteen-out",
                                                      "date": PAST.isoformat()})]:
                r = await c.request(kind, **fields)
                assert (r["type"], r["code"]) == ("error", "unavailable"), (kind, r)
            await c.close()
    finally:
        redis_server.stop()
