"""Spectators over real WebSockets: delayed boards as the racers see them, never a hidden
card, counts shown to racers, listing races, and what a spectator may not do."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest
import redis.asyncio

from engine import from_view, full_state, new_game
from server.races import spectate
from server.redis import keys, pubsub
from tests.support.app import App, serve
from tests.support.races import race_config, start_race
from tests.support.wsclient import Client

VARIANT = "triple-triangle"  # face-down tableau cards and a stock: plenty to hide


def cards_in(view: Any) -> set[str]:
    """Every card named in a view (``??`` marks a face-down card, not a card)."""
    if isinstance(view, dict):
        return {c for k, v in view.items() if k != "variant" for c in cards_in(v)}
    if isinstance(view, list):
        return {c for v in view for c in cards_in(v)}
    return {view} if isinstance(view, str) and view != "??" else set()


async def until(client: Client, type_: str, test: Any, timeout: float = 15.0) -> dict[str, Any]:
    """The first push of `type_` passing `test` (earlier ones are dropped)."""

    async def wait() -> dict[str, Any]:
        while True:
            msg = await client.push(type_, timeout=timeout)
            if test(msg):
                return msg

    return await asyncio.wait_for(wait(), timeout)


async def play(c: Client, game_id: str, view: dict[str, Any], n: int) -> dict[str, Any]:
    """Play up to `n` legal moves (stops early when none is left); the last view."""
    for _ in range(n):
        moves = list(from_view(view).legal_moves())
        if not moves:
            break
        reply = await c.request("move", game_id=game_id, move=str(moves[0]))
        assert reply["type"] == "moved", reply
        view = reply["view"]
        if reply["finished"]:
            break
    return view


@pytest.fixture(autouse=True)
def short_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spectate, "DELAY_MS", 300)


async def room(app: App, *names: str) -> tuple[str, list[Client]]:
    clients = [await app.client(n) for n in names]
    created = await clients[0].request("race.create", variant=VARIANT, size=4)
    race_id, code = created["race"]["race_id"], created["race"]["code"]
    for c in clients[1:]:
        assert (await c.request("race.join", code=code))["type"] == "race.room"
    assert (await clients[0].request("race.start", race_id=race_id))["type"] == "race.room"
    return race_id, clients


async def test_a_spectator_sees_the_racers_boards_and_never_a_hidden_card(
    race_app: App, redis_client: redis.asyncio.Redis
) -> None:
    race_id, (a, b) = await room(race_app, "racer_a", "racer_b")
    s = await race_app.client("watcher")

    listed = await s.request("race.list", variant=VARIANT)
    assert [r["race_id"] for r in listed["races"]] == [race_id]
    assert listed["races"][0]["status"] == "countdown"

    watching = await s.request("race.watch", race_id=race_id)
    assert watching["type"] == "race.watching", watching
    assert watching["spectators"] == 1 and watching["delay_ms"] == 300
    assert "code" not in watching["race"] and "game_id" not in watching["race"]
    assert {r["player_id"] for r in watching["race"]["racers"]} == {a.player_id, b.player_id}
    for racer in (a, b):
        assert (await until(racer, "race.spectators", lambda m: True))["count"] == 1

    started = dict(zip((a.player_id, b.player_id), await start_race(race_app, a, b), strict=True))
    await play(a, started[a.player_id]["game_id"], started[a.player_id]["view"], 6)
    await play(b, started[b.player_id]["game_id"], started[b.player_id]["view"], 3)
    a_moves = await redis_client.llen(keys.parse_game_id(started[a.player_id]["game_id"]).log)

    # The race ends; its last frames reach the spectator too (after the delay), showing each
    # racer's board as it stands at the end.
    for racer in (a, b):
        gid = started[racer.player_id]["game_id"]
        assert (await racer.request("resign", game_id=gid))["type"] == "finished"
    await until(s, "race.update", lambda m: m["race"]["status"] == "finished")
    board = await until(
        s,
        "race.spectate",
        lambda m: m["board"]["player_id"] == a.player_id and m["board"]["seq"] == a_moves,
    )
    assert board["board"]["name"] == "racer_a"

    # Every board a spectator was shown is the racer's own view after that many moves.
    raw_seed = await redis_client.hget(keys.race(race_id), "seed")
    assert raw_seed is not None
    seed = int(raw_seed)
    shown: set[str] = set()
    views = [m["board"] for m in s.seen if m.get("type") == "race.spectate"]
    views += [bd for m in s.seen if m.get("type") == "race.watching" for bd in m["boards"]]
    views = [v for v in views if v.get("view") is not None]
    assert views
    for bd in views:
        gid = keys.race_game_id(race_id, bd["player_id"])
        log_key = keys.parse_game_id(gid).log
        log = cast(list[str], await redis_client.lrange(log_key, 0, -1))[: bd["seq"]]
        game = new_game(VARIANT, seed)
        game.replay(log)
        expect: dict[str, Any] = json.loads(json.dumps(game.view()))
        # The racer's own view of a position of their game: nothing masked.
        assert bd["view"] == expect
        shown |= cards_in(bd["view"])
    # Cards that stayed hidden from both racers never reached the spectator in any frame.
    seen_by_racers: set[str] = set()
    for racer in (a, b):
        gid = keys.race_game_id(race_id, racer.player_id)
        game = new_game(VARIANT, seed)
        seen_by_racers |= cards_in(game.view())
        for move in cast(list[str], await redis_client.lrange(keys.parse_game_id(gid).log, 0, -1)):
            game.play(move)
            seen_by_racers |= cards_in(game.view())
    deck = {str(c) for c in full_state(new_game(VARIANT, seed)).cards()}
    every_string = {x for m in s.seen for x in cards_in(m)}
    assert shown <= seen_by_racers
    hidden = deck - seen_by_racers
    assert len(deck) == 52 and hidden  # the test means something: cards stayed hidden
    assert not hidden & every_string
    assert "seed" not in str(s.seen)
    # Nor after the race: a racer's game (its seed) is exported to the racers only.
    gid = started[a.player_id]["game_id"]
    assert (await s.request("game.export", game_id=gid))["code"] == "not_found"
    assert (await b.request("game.export", game_id=gid))["type"] == "game.export"


async def test_spectators_cannot_act_and_are_counted(race_app: App) -> None:
    race_id, (a, b) = await room(race_app, "racer_c", "racer_d")
    assert (await a.request("race.watch", race_id=race_id))["code"] == "conflict"
    s1 = await race_app.client("watcher1")
    s2 = await race_app.client("watcher2")
    assert (await s1.request("race.watch", race_id=race_id))["spectators"] == 1
    assert (await s2.request("race.watch", race_id=race_id))["spectators"] == 2
    await until(a, "race.spectators", lambda m: m["count"] == 2)
    started = await start_race(race_app, a, b)
    gid = started[0]["game_id"]
    moves = list(from_view(started[0]["view"]).legal_moves())
    # A spectator's move on a racer's game is refused as not theirs; it changes nothing.
    refused = await s1.request("move", game_id=gid, move=str(moves[0]))
    assert refused["type"] == "error" and refused["code"] == "not_found"
    assert (await s1.request("race.unwatch", race_id=race_id))["type"] == "race.unwatched"
    assert (await s1.request("race.unwatch", race_id=race_id))["code"] == "not_found"
    await until(a, "race.spectators", lambda m: m["count"] == 1)
    await s2.close()  # a closed connection stops watching
    await until(b, "race.spectators", lambda m: m["count"] == 0)
    info = await a.request("race.get", race_id=race_id)
    assert len(info["race"]["racers"]) == 2  # spectators are not racers


async def test_watch_errors(race_app: App) -> None:
    c = await race_app.client("curious")
    assert (await c.request("race.watch", race_id="20300615-nosuchrace1"))["code"] == "not_found"
    assert (await c.request("race.list", variant="no-such-variant"))["code"] == "not_found"
    assert (await c.request("race.list"))["races"] == []
    bad = await c.request("race.watch", race_id="not a race id!")
    assert bad["code"] == "bad_request"


def test_the_spectator_count_message_round_trips_and_is_checked() -> None:
    msg = pubsub.SpectatorsChanged(race_id="20300615-abcdef", count=3)
    assert pubsub.decode(pubsub.encode(msg)) == msg
    for bad in (
        '{"t":"race.spectators","race_id":"20300615-abcdef","count":-1}',
        '{"t":"race.spectators","race_id":"20300615-abcdef","count":true}',
        '{"t":"race.spectators","race_id":"nope","count":1}',
        '{"t":"race.spectators","race_id":"20300615-abcdef","count":1,"x":0}',
    ):
        with pytest.raises(pubsub.PubSubDecodeError):
            pubsub.decode(bad)
    with pytest.raises(ValueError):
        pubsub.encode(pubsub.SpectatorsChanged(race_id="20300615-abcdef", count=-1))


async def test_each_app_builds_its_own_spectators(race_app: App) -> None:
    """#26: the spectators hub was a module-global registry keyed by fan-out, made on first
    use; it is a service of the app now, registered with its fan-out from the start."""
    services = race_app.services
    assert isinstance(services.spectators, spectate.Spectators)
    assert services.race_fanout.watchers == [services.spectators]
    assert not hasattr(spectate, "_HUBS")


async def test_a_count_dropped_while_its_process_was_paused_comes_back(
    race_app: App, redis_client: redis.asyncio.Redis
) -> None:
    """Another process's sweep drops the count of a process that did not refresh it in time
    (paused, say); once it runs again, its next heartbeat counts its spectators again."""
    race_id, (a, _) = await room(race_app, "racer_p", "racer_q")
    s = await race_app.client("watcher_p")
    assert (await s.request("race.watch", race_id=race_id))["spectators"] == 1
    await until(a, "race.spectators", lambda m: m["count"] == 1)
    instance = race_app.services.race_fanout.instance
    await redis_client.hdel(keys.race_watchers(race_id), instance)  # as the sweep would
    await redis_client.zrem(keys.race_watchers_alive(race_id), instance)
    await until(a, "race.spectators", lambda m: m["count"] == 1, timeout=5)
    assert await redis_client.hget(keys.race_watchers(race_id), instance) == "1"
    listed = await s.request("race.list")
    assert [r["spectators"] for r in listed["races"]] == [1]


async def test_racers_and_spectators_who_only_receive_are_not_closed_as_idle(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """Found by a newcomer writing a client from the docs: the idle timeout (no frame from
    the client for `--idle-timeout`; pongs are no frame of the protocol) closed a spectator
    in the middle of a 10-minute race, and would close a racer in a room waiting for its
    start. A connection that follows a race is not idle for receiving only (the heartbeat
    still closes it should its peer vanish); once it stops following, the timeout applies."""
    config = replace(race_config(redis_url, tmp_path), idle_timeout=0.6)
    async with serve(config) as app:
        race_id, (a, b) = await room(app, "quiet_a", "quiet_b")
        s = await app.client("quiet_watcher")
        idle = await app.client("quiet_idler")
        assert (await s.request("race.watch", race_id=race_id))["type"] == "race.watching"
        await asyncio.wait_for(idle.reader, 5)  # 0.6 s without a frame: closed
        assert (idle.ws.close_code, idle.ws.close_reason) == (1001, "idle timeout")
        await asyncio.sleep(1.5)  # the racers (in the room) and the spectator said nothing
        for c in (a, b, s):
            assert c.ws.close_code is None, c.ws.close_reason
            assert (await c.request("ping"))["type"] == "pong"
        assert (await s.request("race.unwatch", race_id=race_id))["type"] == "race.unwatched"
        await asyncio.wait_for(s.reader, 5)  # no longer following: idle again
        assert (s.ws.close_code, s.ws.close_reason) == (1001, "idle timeout")
