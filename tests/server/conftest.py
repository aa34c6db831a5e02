"""Shared fixtures for server tests: one real embedded redis-server for the whole session.

Fixtures:
    redis_url     (session)  ``unix://`` URL of the session's redis-server
    redis_client  (function) fresh ``redis.asyncio.Redis`` (decode_responses=True) on a
                             FLUSHDB'd database 0; closed with ``aclose()`` after the test
    clock         (function) ``ManualClock`` at 2030-06-15 12:00 UTC
    race_app      (function) the app in-process (`tests.support.app.serve`) on that Redis,
                             with the race timings of `tests.support.races.race_config`
    fixed_race_deals (function, autouse) races dealt one fixed deal per variant
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio

from server.games.deals import offers_a_move
from server.redis.embedded import EmbeddedRedis, connect
from server.runtime.clock import ManualClock
from tests.support.app import T0_MS, App, serve
from tests.support.races import race_config


@functools.cache
def fixed_race_seed(variant: str) -> int:
    """The first seed from 1 whose deal offers a move (as `server.races.service._seed` demands)."""
    return next(seed for seed in itertools.count(1) if offers_a_move(variant, seed))


@pytest.fixture(autouse=True)
def fixed_race_deals(monkeypatch: pytest.MonkeyPatch) -> None:
    """Races in these tests are dealt `fixed_race_seed`: a random race deal can leave a racer
    with no move after the first one or two, and a test that plays a move and then resigns
    failed at random (once in CI, `test_cluster_slots`)."""
    monkeypatch.setattr("server.races.service._seed", fixed_race_seed)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # Started synchronously from the main thread: no event-loop scope coupling with tests,
    # and PR_SET_PDEATHSIG stays bound to a thread that lives for the whole session.
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"))
    url = server.start_sync()
    try:
        yield url
    finally:
        server.stop_sync()


@pytest_asyncio.fixture
async def redis_client(redis_url: str) -> AsyncIterator[redis.asyncio.Redis]:
    client = connect(redis_url)
    await client.flushdb()  # tests run serially; each starts from an empty database
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0_MS)  # 2030-06-15T12:00:00Z


@pytest_asyncio.fixture
async def race_app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    async with serve(race_config(redis_url, tmp_path)) as app:
        yield app
