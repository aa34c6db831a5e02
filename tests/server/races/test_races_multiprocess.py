"""Two server processes sharing one Redis: a race across them, and a reconnect to the other."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis.asyncio

from engine import from_view
from tests.support.procs import ServerProcess
from tests.support.wsclient import Client

FLAGS = ("--daily-secret", "x", "--race-countdown-ms", "300", "--log-level", "WARNING")


@pytest.fixture
def two_servers(redis_url: str, tmp_path: Path) -> Iterator[list[str]]:
    servers: list[ServerProcess] = []
    try:
        for i in range(2):
            servers.append(ServerProcess(tmp_path / f"s{i}", FLAGS, redis_url=redis_url).start())
        yield [srv.url for srv in servers]
    finally:
        for srv in servers:
            srv.stop()


async def test_race_across_two_processes(
    two_servers: list[str], redis_client: redis.asyncio.Redis
) -> None:
    url1, url2 = two_servers
    a, b = await Client.connect(url1), await Client.connect(url2)
    await a.hello(name="nora1")
    await b.hello(name="oscar2")
    await a.request("race.queue", variant="fourteen-out")
    await b.request("race.queue", variant="fourteen-out")
    ua, ub = await a.push("race.update"), await b.push("race.update")
    assert ua["race"]["race_id"] == ub["race"]["race_id"]
    sa, sb = await a.push("race.started"), await b.push("race.started")
    assert sa["view"] == sb["view"]
    moves = list(from_view(sb["view"]).legal_moves())
    moved = await b.request("move", game_id=sb["game_id"], move=str(moves[0]), expected_seq=0)
    assert moved["type"] == "moved"
    ev = await a.push("race.event")  # b's progress, fanned out from the other process
    while ev["event"]["kind"] != "progress":
        ev = await a.push("race.event")
    assert ev["event"]["player_id"] == b.player_id and ev["event"]["moves"] == 1
    # b reconnects to the other process and carries on from the same position
    await b.close()
    b2 = await Client.connect(url1)
    await b2.hello(token=b.token)
    state = await b2.request("race.get", race_id=sb["race_id"])
    assert state["race"]["game_id"] == sb["game_id"]
    game = await b2.request("game.get", game_id=sb["game_id"])
    assert game["seq"] == 1 and game["view"] == moved["view"]
    nxt = list(from_view(game["view"]).legal_moves())
    if nxt:
        again = await b2.request("move", game_id=sb["game_id"], move=str(nxt[0]), expected_seq=1)
        assert again["type"] == "moved" and again["seq"] == 2
    resign = await a.request("resign", game_id=sa["game_id"])
    assert resign["type"] == "finished"
    await b2.request("resign", game_id=sb["game_id"])
    fin = await b2.push("race.event")
    while fin["event"]["kind"] != "finished":
        fin = await b2.push("race.event")
    assert {r["name"] for r in fin["event"]["results"]} == {"nora1", "oscar2"}


GRACE_FLAGS = (*FLAGS, "--race-grace-ms", "1500")


@pytest.fixture
def two_quick_servers(redis_url: str, tmp_path: Path) -> Iterator[list[str]]:
    """Two processes whose racers forfeit after 1.5 s away."""
    servers: list[ServerProcess] = []
    try:
        for i in range(2):
            servers.append(
                ServerProcess(tmp_path / f"q{i}", GRACE_FLAGS, redis_url=redis_url).start()
            )
        yield [srv.url for srv in servers]
    finally:
        for srv in servers:
            srv.stop()


async def test_hello_alone_reattaches_a_racer_on_the_other_process(
    two_quick_servers: list[str], redis_client: redis.asyncio.Redis
) -> None:
    """Issue 12: a racer who reconnects to another process with `hello` alone is told the
    race (`welcome.race`), re-attached and pushed its state, and is never forfeited while
    connected; a racer who stays away beyond the grace is."""
    url1, url2 = two_quick_servers
    a, b, c = (await Client.connect(url1), await Client.connect(url2), await Client.connect(url2))
    for cl, name in ((a, "pia01"), (b, "quinn2"), (c, "rhea03")):
        await cl.hello(name=name, versions=(1, 2, 3))
        await cl.request("race.queue", variant="fourteen-out", size=3)
    _, sb, _ = [await cl.push("race.started") for cl in (a, b, c)]
    race_id = sb["race_id"]
    await b.close()
    b2 = await Client.connect(url1)
    welcome = await b2.hello(token=b.token, versions=(1, 2, 3))
    assert welcome["race"] == {
        "race_id": race_id,
        "variant": "fourteen-out",
        "status": "running",
        "game_id": sb["game_id"],
    }
    update = await b2.push("race.update")
    assert update["race"]["race_id"] == race_id and update["race"]["game_id"] == sb["game_id"]
    again = await b2.push("race.started")
    assert (again["game_id"], again["view"]) == (sb["game_id"], sb["view"])
    # c leaves after b came back: c's forfeit, a grace later, comes after b's would have
    await c.close()
    ev = await a.push("race.event", timeout=20)
    while ev["event"]["kind"] != "forfeit":
        ev = await a.push("race.event", timeout=20)
    assert ev["event"]["player_id"] == c.player_id
    state = await a.request("race.get", race_id=race_id)
    racers = {r["name"]: r for r in state["race"]["racers"]}
    assert not racers["quinn2"]["forfeited"] and racers["quinn2"]["connected"]
    assert racers["rhea03"]["forfeited"] and state["race"]["status"] == "running"
    moves = list(from_view(sb["view"]).legal_moves())
    moved = await b2.request("move", game_id=sb["game_id"], move=str(moves[0]), expected_seq=0)
    assert moved["type"] == "moved" and moved["seq"] == 1
    for cl in (a, b2):
        await cl.close()


async def test_a_race_whose_racers_all_leave_together_ends_by_the_grace_rule(
    two_quick_servers: list[str], redis_client: redis.asyncio.Redis
) -> None:
    """Issue #25: with both racers gone within a grace of each other no process held a
    connection of the race any more, nothing ticked it, and it ran until its time limit
    (10 minutes); it must end by forfeit about a grace after they left."""
    url1, url2 = two_quick_servers
    a, b = await Client.connect(url1), await Client.connect(url2)
    await a.hello(name="sven01", versions=(3,))
    await b.hello(name="tove02", versions=(3,))
    for cl in (a, b):
        await cl.request("race.queue", variant="fourteen-out")
    sa, _ = await a.push("race.started"), await b.push("race.started")
    race_id = sa["race_id"]
    await asyncio.gather(a.close(), b.close())
    left = time.monotonic()
    judge = await Client.connect(url2)
    await judge.hello(name="umpire3", versions=(3,))
    status = ""
    while time.monotonic() - left < 20:
        state = await judge.request("race.get", race_id=race_id)
        status = state["race"]["status"]
        if status == "finished":
            break
        await asyncio.sleep(0.25)
    took = time.monotonic() - left
    assert status == "finished", f"still {status} {took:.1f} s after both racers left"
    # grace 1.5 s, presence marks lapse within 5 s, sweeps every second: well inside 15 s
    assert took < 15
    assert any(r["forfeited"] for r in state["race"]["racers"])
    await judge.close()


async def test_a_racer_who_closes_is_shown_disconnected_within_a_second(
    two_quick_servers: list[str], redis_client: redis.asyncio.Redis
) -> None:
    """Issue #25: racers showed `connected: true` for 4-5 s after their socket closed."""
    url1, url2 = two_quick_servers
    a, b = await Client.connect(url1), await Client.connect(url2)
    await a.hello(name="vera01", versions=(3,))
    await b.hello(name="walt02", versions=(3,))
    for cl in (a, b):
        await cl.request("race.queue", variant="fourteen-out")
    sa, _ = await a.push("race.started"), await b.push("race.started")

    def shown(state: dict[str, object]) -> dict[str, bool]:
        race = state["race"]
        assert isinstance(race, dict)
        return {r["name"]: r["connected"] for r in race["racers"]}

    # Both marked present by their processes' race clocks (a background tick each, about
    # once a second): waited for, not slept for (a loaded machine's tick comes late).
    deadline = time.monotonic() + 10
    before = await a.request("race.get", race_id=sa["race_id"])
    while shown(before) != {"vera01": True, "walt02": True}:
        assert time.monotonic() < deadline, f"not both shown connected: {shown(before)}"
        await asyncio.sleep(0.05)
        before = await a.request("race.get", race_id=sa["race_id"])
    await b.close()
    closed = time.monotonic()
    while True:
        state = await a.request("race.get", race_id=sa["race_id"])
        if not shown(state)["walt02"]:
            break
        assert time.monotonic() - closed < 1.0, "still shown connected a second after closing"
        await asyncio.sleep(0.05)
    assert shown(state)["vera01"]
    await a.close()
