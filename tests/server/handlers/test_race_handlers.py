"""The race request handlers over real WebSockets: rooms, the queue, boards, their errors."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from engine import from_view
from tests.support.app import App
from tests.support.races import start_race
from tests.support.wsclient import Client


def error(reply: dict[str, Any], code: str) -> None:
    assert reply["type"] == "error" and reply["code"] == code, reply


async def room(app: App, *names: str) -> tuple[str, str, list[Client]]:
    clients = [await app.client(n) for n in names]
    created = await clients[0].request("race.create", variant="fourteen-out", size=4)
    assert created["type"] == "race.room", created
    race_id, code = created["race"]["race_id"], created["race"]["code"]
    for c in clients[1:]:
        assert (await c.request("race.join", code=code))["type"] == "race.room"
    return race_id, code, clients


async def test_only_the_creator_starts_and_not_alone(race_app: App) -> None:
    race_id, code, (a,) = await room(race_app, "creator")
    error(await a.request("race.start", race_id=race_id), "conflict")  # one racer
    b = await race_app.client("joiner")
    await b.request("race.join", code=code)
    error(await b.request("race.start", race_id=race_id), "conflict")  # not the creator
    started = await a.request("race.start", race_id=race_id)
    assert started["type"] == "race.room" and started["race"]["status"] == "countdown"
    error(await a.request("race.start", race_id=race_id), "conflict")  # already started
    late = await race_app.client("latecomer")
    error(await late.request("race.join", code=code), "conflict")


async def test_unknown_things_are_not_found(race_app: App) -> None:
    c = await race_app.client("lost")
    error(await c.request("race.join", code="ZZZZZ"), "not_found")
    error(await c.request("race.get", race_id="20300615-nosuchrace1"), "not_found")
    error(await c.request("race.start", race_id="20300615-nosuchrace1"), "not_found")
    error(await c.request("race.leave"), "not_found")
    for req in ("race.queue", "race.create", "race.top", "race.rank", "race.recent"):
        error(await c.request(req, variant="no-such-variant"), "not_found")


async def test_one_race_at_a_time(race_app: App) -> None:
    c = await race_app.client("busy")
    queued = await c.request("race.queue", variant="fourteen-out", size=3)
    assert queued["type"] == "race.queued" and queued["waiting"] == 1 and queued["size"] == 3
    error(await c.request("race.create", variant="fourteen-out"), "conflict")
    assert (await c.request("race.leave"))["type"] == "race.left"
    error(await c.request("race.leave"), "not_found")
    created = await c.request("race.create", variant="fourteen-out")
    assert created["type"] == "race.room"
    error(await c.request("race.create", variant="fourteen-out"), "conflict")


async def test_leaving_a_room_tells_the_others(race_app: App) -> None:
    race_id, _, (a, b) = await room(race_app, "host1", "guest1")
    assert (await b.request("race.leave"))["type"] == "race.left"
    ev = await a.push("race.event")
    while ev["event"]["kind"] == "joined":  # b's own join comes first
        ev = await a.push("race.event")
    assert ev["event"]["kind"] == "left" and ev["event"]["player_id"] == b.player_id
    assert ev["event"]["closed"] is False
    got = await a.request("race.get", race_id=race_id)
    assert [r["name"] for r in got["race"]["racers"]] == ["host1"]


async def test_race_get_replays_the_event_log_since_a_version(race_app: App) -> None:
    race_id, _, (a, b) = await room(race_app, "logger", "logged")
    await a.request("race.start", race_id=race_id)
    full = await b.request("race.get", race_id=race_id, since=0)
    kinds = [e["kind"] for e in full["events"]]
    assert kinds == ["joined", "countdown"], full["events"]
    versions = [e["v"] for e in full["events"]]
    tail = await b.request("race.get", race_id=race_id, since=versions[0])
    assert [e["v"] for e in tail["events"]] == versions[1:]
    assert full["race"]["game_id"].endswith(b.player_id), "a racer sees their own game"
    onlooker = await race_app.client("onlooker")
    seen = await onlooker.request("race.get", race_id=race_id)
    assert seen["race"].get("game_id") is None, "an onlooker has no game"
    assert seen["events"] == full["events"], "the public log is public"


async def test_boards_after_a_race(race_app: App) -> None:
    a, b = await race_app.client("boarda"), await race_app.client("boardb")
    await a.request("race.queue", variant="fourteen-out")
    await b.request("race.queue", variant="fourteen-out")
    sa, sb = await start_race(race_app, a, b)
    # Both really try (a racer who resigns without a real attempt gives nobody points): each
    # move of Fourteen Out clears cards.
    for c, s in ((b, sb), (a, sa)):
        view = s["view"]
        for _ in range(5):
            moves = list(from_view(view).legal_moves())
            if not moves:
                break
            moved = await c.request("move", game_id=s["game_id"], move=str(moves[0]))
            view = moved["view"]
            if moved["finished"]:
                break
        await c.request("resign", game_id=s["game_id"])
    ev = await a.push("race.event")
    while ev["event"]["kind"] != "finished":
        ev = await a.push("race.event")
    winner = ev["event"]["results"][0]["player_id"]
    top = await b.request("race.top", variant="fourteen-out")
    assert top["total"] == 2 and top["entries"][0]["player_id"] == winner
    assert [e["me"] for e in top["entries"]] == [
        e["player_id"] == b.player_id for e in top["entries"]
    ]
    assert {e["name"] for e in top["entries"]} == {"boarda", "boardb"}
    around = await a.request("race.around", variant="fourteen-out", k=1)
    assert around["offset"] == 0 and len(around["entries"]) == 2
    rank = await b.request("race.rank", variant="fourteen-out")
    assert rank["entry"]["played"] == 1 and rank["entry"]["me"]
    wins = await a.request("race.top", variant="fourteen-out", board="wins")
    assert wins["date"] == "2030-06-15"
    assert [(e["player_id"], e["rating"]) for e in wins["entries"]] == [(winner, 1)]
    other_day = await a.request("race.top", variant="fourteen-out", board="wins", date="2030-06-14")
    assert other_day["entries"] == [] and other_day["total"] == 0
    recent = await a.request("race.recent", variant="fourteen-out")
    assert len(recent["races"]) == 1 and recent["races"][0]["racers"] == 2
    nobody = await race_app.client("unrated")
    assert (await nobody.request("race.rank", variant="fourteen-out")).get("entry") is None
    assert (await nobody.request("race.around", variant="fourteen-out"))["entries"] == []
    assert (await nobody.request("race.recent", variant="fourteen-out"))["races"] == []


def without(race: dict[str, Any], *secrets: str) -> dict[str, Any]:
    return {k: v for k, v in race.items() if k not in secrets}


async def test_a_non_racer_may_get_a_race_and_sees_nothing_hidden(race_app: App) -> None:
    """docs/protocol.md §10: anyone may `race.get` a race; a non-racer sees the race as its
    racers do but without a game id or the room's code, nothing that holds a card, and is
    not attached to its pushes; their move on a racer's game is `not_found`."""
    race_id, code, (a, b) = await room(race_app, "seer_host", "seer_guest")
    onlooker = await race_app.client("seer_onlooker")
    for phase in ("open", "countdown", "running", "finished"):
        mine = await a.request("race.get", race_id=race_id, since=0)
        seen = await onlooker.request("race.get", race_id=race_id, since=0)
        assert seen["type"] == "race.room" and seen["race"]["status"] == phase, seen
        assert "code" not in seen["race"] and "game_id" not in seen["race"], phase
        assert seen["race"] == without(mine["race"], "code", "game_id"), phase
        assert seen["events"] == mine["events"], "the public log is public"
        text = json.dumps(seen)
        assert code not in text and '"view"' not in text and '"seed"' not in text
        assert f"r.{race_id}." not in text, "no racer's game id"
        if phase == "open":
            late = await race_app.client("seer_late")
            assert (await late.request("race.join", code=code))["type"] == "race.room"
            assert (await late.request("race.leave"))["type"] == "race.left"
            await a.push(
                "race.event", event={"kind": "left", "player_id": late.player_id, "closed": False}
            )
            assert (await a.request("race.start", race_id=race_id))["type"] == "race.room"
        elif phase == "countdown":
            sa, sb = await start_race(race_app, a, b)
            move = str(next(iter(from_view(sa["view"]).legal_moves())))
            error(await onlooker.request("move", game_id=sa["game_id"], move=move), "not_found")
            assert (await a.request("move", game_id=sa["game_id"], move=move))["seq"] == 1
            ev = await b.push("race.event")
            while ev["event"]["kind"] != "progress":
                ev = await b.push("race.event")
        elif phase == "running":
            for racer, started in ((a, sa), (b, sb)):
                await racer.request("resign", game_id=started["game_id"])
            ev = await b.push("race.event")
            while ev["event"]["kind"] != "finished":
                ev = await b.push("race.event")
    await asyncio.sleep(0.2)  # anything pushed to the onlooker would have arrived by now
    assert onlooker.pushes.empty(), "a non-racer's race.get attaches them to nothing"


async def test_a_malformed_race_or_game_id_is_a_clear_error_everywhere(race_app: App) -> None:
    """The finding: `race.decline` with race id "x" answered `internal` (a ValueError from
    the offer's key). Every request that takes a race or game id answers a clear code."""
    c = await race_app.client("probe_ids", versions=tuple(range(1, 10)))
    for bad in ("x", "", "20300615-" + "z" * 200, "../../x", "x:{y}"):
        for kind in ("race.get", "race.start", "race.rematch", "race.decline", "race.watch"):
            reply = await c.request(kind, race_id=bad)
            assert reply["type"] == "error", (kind, bad, reply)
            assert reply["code"] in ("bad_request", "not_found"), (kind, bad, reply)
        for kind in ("game.get", "move", "undo", "resign", "finish", "hint", "game.export"):
            fields: dict[str, Any] = {"game_id": bad}
            if kind == "move":
                fields["move"] = "d"
            reply = await c.request(kind, **fields)
            assert reply["type"] == "error", (kind, bad, reply)
            assert reply["code"] in ("bad_request", "not_found"), (kind, bad, reply)
    unwatched = await c.request("race.unwatch", race_id="x")
    assert unwatched["type"] in ("race.unwatched", "error"), unwatched
    if unwatched["type"] == "error":
        assert unwatched["code"] in ("bad_request", "not_found"), unwatched
