"""Race requests refused for the state a player is in (`server.races.service`), over real
WebSockets:
one race at a time, the queue before a room, a room its creator leaves, and a player free
again once their race is over."""

from __future__ import annotations

import json
from typing import Any

import msgpack  # type: ignore[import-untyped]
import redis.asyncio

from server.redis import keys
from tests.support.app import App
from tests.support.races import start_race
from tests.support.wsclient import Client


def refused(reply: dict[str, Any], code: str, says: str) -> None:
    assert (reply["type"], reply["code"]) == ("error", code), reply
    assert says in reply["message"], reply


async def racing_pair(app: App, *names: str) -> list[Client]:
    """Two players matched from the queue, their race in its countdown."""
    clients = [await app.client(n) for n in names]
    for c in clients:
        assert (await c.request("race.queue", variant="fourteen-out"))["type"] == "race.queued"
    for c in clients:
        assert (await c.push("race.update"))["race"]["status"] == "countdown"
    return clients


async def test_a_racer_can_enter_no_other_race(race_app: App) -> None:
    a, b = await racing_pair(race_app, "busy_a", "busy_b")
    host = await race_app.client("host")
    room = await host.request("race.create", variant="fourteen-out")
    for request, fields in (
        ("race.queue", {"variant": "fourteen-out"}),
        ("race.create", {"variant": "triple-deck"}),
        ("race.join", {"code": room["race"]["code"]}),
    ):
        refused(await a.request(request, **fields), "conflict", "already in race")
    # The countdown's race cannot be left either: only the queue and open rooms can.
    refused(await b.request("race.leave"), "not_found", "")
    got = await host.request("race.get", race_id=room["race"]["race_id"])
    assert [r["name"] for r in got["race"]["racers"]] == ["host"]


async def test_the_queue_must_be_left_before_a_room(race_app: App) -> None:
    host = await race_app.client("roomhost")
    room = await host.request("race.create", variant="fourteen-out")
    waiting = await race_app.client("waiter")
    await waiting.request("race.queue", variant="triple-deck", size=3)
    refused(
        await waiting.request("race.join", code=room["race"]["code"]),
        "conflict",
        "leave the race queue first",
    )
    refused(
        await waiting.request("race.queue", variant="fourteen-out"),
        "conflict",
        "leave the race queue first",
    )
    assert (await waiting.request("race.leave"))["type"] == "race.left"
    joined = await waiting.request("race.join", code=room["race"]["code"])
    assert [r["name"] for r in joined["race"]["racers"]] == ["roomhost", "waiter"]
    again = await waiting.request("race.join", code=room["race"]["code"])  # already in: fine
    assert again["race"]["race_id"] == joined["race"]["race_id"]
    assert len(again["race"]["racers"]) == 2


async def test_a_room_closes_when_its_creator_leaves(race_app: App) -> None:
    host, guest = await race_app.client("closer"), await race_app.client("stayer")
    room = await host.request("race.create", variant="triple-triangle", size=3)
    code, race_id = room["race"]["code"], room["race"]["race_id"]
    await guest.request("race.join", code=code)
    assert (await host.request("race.leave"))["type"] == "race.left"
    event = await guest.push("race.event")
    while event["event"]["kind"] != "left":
        event = await guest.push("race.event")
    assert (event["event"]["player_id"], event["event"]["closed"]) == (host.player_id, True)
    # Everyone in the closed room is free: the guest may open a room of their own.
    mine = await guest.request("race.create", variant="fourteen-out")
    assert mine["type"] == "race.room" and mine["race"]["race_id"] != race_id
    refused(await host.request("race.start", race_id=race_id), "conflict", "")


async def test_a_finished_race_frees_its_racers(race_app: App) -> None:
    a, b = await racing_pair(race_app, "done_a", "done_b")
    sa, sb = await start_race(race_app, a, b)
    await a.request("resign", game_id=sa["game_id"])
    await b.request("resign", game_id=sb["game_id"])
    event = await a.push("race.event")
    while event["event"]["kind"] != "finished":
        event = await a.push("race.event")
    assert event["event"]["reason"]
    again = await a.request("race.queue", variant="fourteen-out")
    assert (again["type"], again["waiting"]) == ("race.queued", 1)
    room = await b.request("race.create", variant="fourteen-out")
    assert room["race"]["status"] == "open"


def race_ids_in(frames: list[str | bytes]) -> set[str]:
    """The race ids the pushes among ``frames`` speak of."""
    ids: set[str] = set()
    for frame in frames:
        msg = msgpack.unpackb(frame) if isinstance(frame, bytes) else json.loads(frame)
        if "id" in msg:
            continue  # a reply, not a push
        race = msg.get("race")
        ids.add(str(msg.get("race_id") or (race.get("race_id") if race else "")))
    return ids - {""}


async def test_a_racer_whose_game_is_over_races_again_while_an_idle_rival_stays(
    race_app: App,
) -> None:
    """The grief of the cheater review's F7: a rival who stays connected and never moves kept
    a racer who had resigned out of every race until the time limit (10 minutes)."""
    a, b = await racing_pair(race_app, "moves_on", "idle_rival")
    sa, sb = await start_race(race_app, a, b)
    race_id = sa["race_id"]
    assert (await a.request("resign", game_id=sa["game_id"]))["type"] == "finished"
    # Still playing, the idle rival is still kept to this race.
    refused(await b.request("race.create", variant="triple-deck"), "conflict", "already in race")

    room = await a.request("race.create", variant="triple-deck")  # refused before
    assert room["type"] == "race.room" and room["race"]["race_id"] != race_id, room
    assert (await a.request("race.leave"))["type"] == "race.left"
    queued = await a.request("race.queue", variant="fourteen-out")
    assert (queued["type"], queued["waiting"]) == ("race.queued", 1), queued
    since = len(a.raw)

    # The race goes on without them, and their resignation stands in its results.
    got = await b.request("race.get", race_id=race_id)
    assert got["race"]["status"] == "running", got
    assert (await b.request("resign", game_id=sb["game_id"]))["type"] == "finished"
    finished = await b.push("race.event", timeout=10)
    while finished["event"]["kind"] != "finished":
        finished = await b.push("race.event", timeout=10)
    results = {r["name"]: r for r in finished["event"]["results"]}
    assert set(results) == {"moves_on", "idle_rival"}
    assert not results["moves_on"]["forfeited"] and results["moves_on"]["place"] in (1, 2)
    # Their connection follows the race they moved on to, not the one left behind.
    c = await race_app.client("third_one")
    assert (await c.request("race.queue", variant="fourteen-out"))["type"] == "race.queued"
    matched = await a.push("race.update")
    assert matched["race"]["race_id"] != race_id
    assert race_id not in race_ids_in(a.raw[since:])


async def test_a_race_that_expired_from_redis_frees_its_racers(
    race_app: App, redis_client: redis.asyncio.Redis
) -> None:
    """Race records expire (a TTL in Redis) while a player's pointer to one may not: a race
    that is gone is no race, so nothing is refused for it."""
    host = await race_app.client("expired_host")
    room = await host.request("race.create", variant="fourteen-out")
    race_id = room["race"]["race_id"]
    assert await redis_client.delete(keys.race(race_id)) == 1  # as its expiry would
    refused(await host.request("race.get", race_id=race_id), "not_found", "")
    refused(await host.request("race.leave"), "not_found", "")
    mine = await host.request("race.create", variant="fourteen-out")
    assert mine["type"] == "race.room" and mine["race"]["race_id"] != race_id
    assert (await host.request("race.leave"))["type"] == "race.left"
    other = await host.request("race.queue", variant="triple-deck")
    assert other["type"] == "race.queued"
