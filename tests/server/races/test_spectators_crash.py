"""Spectator counts after a server process crashes (issue #25): the counts of a killed
process's spectators leave the race's total within seconds, told to the racers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio

from server.races.spectate import WATCH_FRESH_MS
from server.redis import keys
from tests.support.procs import ServerProcess
from tests.support.wsclient import Client

FLAGS = ("--daily-secret", "x", "--race-countdown-ms", "300", "--log-level", "WARNING")


@pytest.fixture
def two_servers(redis_url: str, tmp_path: Path) -> Iterator[list[ServerProcess]]:
    servers: list[ServerProcess] = []
    try:
        for i in range(2):
            servers.append(ServerProcess(tmp_path / f"w{i}", FLAGS, redis_url=redis_url).start())
        yield servers
    finally:
        for srv in servers:
            srv.stop()


async def count_push(client: Client, count: int, timeout: float) -> dict[str, Any]:
    """The first `race.spectators` push announcing `count` (earlier ones are dropped)."""

    async def wait() -> dict[str, Any]:
        while True:
            msg = await client.push("race.spectators", timeout=timeout)
            if msg["count"] == count:
                return msg

    return await asyncio.wait_for(wait(), timeout)


async def test_a_killed_process_spectators_leave_the_count(
    two_servers: list[ServerProcess], redis_client: redis.asyncio.Redis
) -> None:
    doomed, survivor = two_servers
    a, b = await Client.connect(survivor.url), await Client.connect(survivor.url)
    await a.hello(name="sc-ann", versions=(3,))
    await b.hello(name="sc-bob", versions=(3,))
    for cl in (a, b):
        await cl.request("race.queue", variant="fourteen-out")
    race_id = (await a.push("race.started"))["race_id"]
    here, there = await Client.connect(survivor.url), await Client.connect(doomed.url)
    await here.hello(name="sc-here", versions=(3,))
    await there.hello(name="sc-there", versions=(3,))
    assert (await here.request("race.watch", race_id=race_id))["type"] == "race.watching"
    watching = await there.request("race.watch", race_id=race_id)
    assert watching["spectators"] == 2
    await count_push(a, 2, 10)
    doomed.kill()  # SIGKILL: its spectator is never told to leave
    killed = time.monotonic()
    await count_push(a, 1, 20)
    took = time.monotonic() - killed
    # lapses WATCH_FRESH_MS after the last heartbeat, dropped at the next sweep (1 s)
    assert took < WATCH_FRESH_MS / 1000 + 3, f"{took:.1f} s"
    assert await redis_client.hlen(keys.race_watchers(race_id)) == 1
    listed = await here.request("race.list")
    assert [r["spectators"] for r in listed["races"]] == [1]
    # The survivor's own spectator stays counted while its heartbeat runs.
    await asyncio.sleep(WATCH_FRESH_MS / 1000 + 1.5)
    listed = await here.request("race.list")
    assert [r["spectators"] for r in listed["races"]] == [1]
    for cl in (a, b, here, there):
        await cl.close()
