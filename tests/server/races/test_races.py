"""Race mode end to end: real WebSockets, real Redis, the app in-process with a manual clock."""

from __future__ import annotations

import re
from typing import Any

import msgpack  # type: ignore[import-untyped]

import protocol.races as pr
from engine import from_view
from tests.support.app import App
from tests.support.races import start_race
from tests.support.wsclient import Client

CARD = re.compile(r"^(A|[2-9]|10|J|Q|K)[CDHS]$")


def cards_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if CARD.match(value) else []
    if isinstance(value, dict):
        return [c for v in value.values() for c in cards_in(v)]
    if isinstance(value, list | tuple):
        return [c for v in value for c in cards_in(v)]
    return []


async def play_out(c: Client, started: dict[str, Any], limit: int = 200) -> dict[str, Any]:
    """Play legal moves from the client's own view until the game ends."""
    view, seq = started["view"], 0
    reply: dict[str, Any] = {}
    for _ in range(limit):
        moves = list(from_view(view).legal_moves())
        if not moves:
            break
        reply = await c.request(
            "move", game_id=started["game_id"], move=str(moves[0]), expected_seq=seq
        )
        assert reply["type"] == "moved", reply
        view, seq = reply["view"], reply["seq"]
        if reply["finished"]:
            break
    return reply


async def test_queue_pairs_two_players_who_race_to_a_finish(race_app: App) -> None:
    a, b = await race_app.client("alice"), await race_app.client("bobby")
    qa = await a.request("race.queue", variant="fourteen-out")
    assert qa["type"] == "race.queued" and qa["waiting"] == 1
    qb = await b.request("race.queue", variant="fourteen-out")
    assert qb["type"] == "race.queued"
    ua = await a.push("race.update")
    ub = await b.push("race.update")
    assert ua["race"]["race_id"] == ub["race"]["race_id"]
    assert ua["race"]["status"] == "countdown"
    assert {r["name"] for r in ua["race"]["racers"]} == {"alice", "bobby"}
    sa, sb = await start_race(race_app, a, b)
    assert sa["view"] == sb["view"], "racers share the deal"
    assert sa["game_id"] != sb["game_id"]
    # a plays to the end of the game; b resigns: the race is over, a ranks first.
    assert list(from_view(sa["view"]).legal_moves()), "a race never deals a dead deal"
    last = await play_out(a, sa)
    res = await b.request("resign", game_id=sb["game_id"])
    if last["result"]["won"]:  # the first racer to win ends the race: nothing left to resign
        assert res["type"] == "error" and res["code"] == "game_over"
    else:
        assert res["type"] == "finished"
    fin = await a.push("race.event", timeout=10)
    while fin["event"]["kind"] != "finished":
        fin = await a.push("race.event", timeout=10)
    results = fin["event"]["results"]
    assert results[0]["name"] == "alice", "bobby resigned without a move: alice cleared more"
    first, second = results
    assert first["place"] == 1 and second["place"] == 2
    rank = await a.request("race.rank", variant="fourteen-out")
    if last["result"]["won"]:  # the race ended bobby's game: he lost, alice gains
        assert first["rating_change"] > 0 > second["rating_change"], "ratings move the right way"
        assert rank["entry"]["played"] == 1
    else:  # bobby resigned without a real attempt: he loses, nobody gains from it
        assert first["rating_change"] == 0 > second["rating_change"]
        assert rank.get("entry") is None, "alice was not rated against a racer who did not try"
    recent = await b.request("race.recent", variant="fourteen-out")
    assert recent["races"][0]["place"] == 2
    wins = await a.request("race.top", variant="fourteen-out", board="wins")
    if last["result"]["won"]:
        assert wins["entries"][0]["name"] == first["name"]
    else:
        assert wins["entries"] == [], "no win over a racer who did not try"


async def test_private_room_three_racers_progress_has_no_card(race_app: App) -> None:
    a, b, c = [await race_app.client(n) for n in ("carol", "danny", "erica")]
    room = await a.request("race.create", variant="triple-triangle", size=3)
    assert room["type"] == "race.room" and room["race"]["status"] == "open"
    code, race_id = room["race"]["code"], room["race"]["race_id"]
    for cl in (b, c):
        joined = await cl.request("race.join", code=code)
        assert joined["race"]["race_id"] == race_id
    not_creator = await b.request("race.start", race_id=race_id)
    assert not_creator["type"] == "error" and not_creator["code"] == "conflict"
    started = await a.request("race.start", race_id=race_id)
    assert started["race"]["status"] == "countdown"
    assert len(started["race"]["racers"]) == 3
    # moves before the start are refused
    early = await a.request("move", game_id=f"r.{race_id}.{a.player_id}", move="d")
    assert early["type"] == "error" and early["code"] == "not_started"
    sa, sb, sc = await start_race(race_app, a, b, c)
    assert sa["view"] == sb["view"] == sc["view"]
    reply = await b.request("move", game_id=sb["game_id"], move="d")
    assert reply["type"] == "moved"
    for watcher in (a, c):
        ev = await watcher.push("race.event")
        while ev["event"]["kind"] != "progress":
            ev = await watcher.push("race.event")
        assert ev["event"]["player_id"] == b.player_id and ev["event"]["moves"] == 1
    for cl in (a, b, c):
        for msg in cl.seen:
            if msg.get("type") in ("race.event", "race.update", "race.room"):
                assert cards_in(msg) == [], f"a race message leaked a card: {msg}"


async def step_until_forfeit(
    app: App, watcher: Client, race_id: str, steps: int = 12
) -> dict[str, Any]:
    """Move the clock on in steps shorter than a presence mark lasts, the race clock ticking
    at each, until someone is forfeited (the race as `watcher` then sees it)."""
    for _ in range(steps):
        app.clock.advance(2_000)
        await app.services.race_clock.tick(sweep=True)
        state = await watcher.request("race.get", race_id=race_id)
        if any(r["forfeited"] for r in state["race"]["racers"]):
            return state
    raise AssertionError(f"nobody forfeited after {steps} steps")


async def test_disconnect_within_grace_continues_beyond_grace_forfeits(race_app: App) -> None:
    a, b, c = [await race_app.client(n) for n in ("frank", "grace", "heidi")]
    room = await a.request("race.create", variant="fourteen-out")
    race_id = room["race"]["race_id"]
    for cl in (b, c):
        await cl.request("race.join", code=room["race"]["code"])
    await a.request("race.start", race_id=race_id)
    _, sb, _ = await start_race(race_app, a, b, c)
    # b drops and comes back within the grace period with `hello` alone: re-attached, told
    # the race and their game, moves go on
    token = b.token
    await b.close()
    race_app.clock.advance(3_000)
    await race_app.services.race_clock.tick(sweep=True)
    b2 = await Client.connect(race_app.url)
    welcome = await b2.hello(token=token, versions=(1, 2, 3))
    assert welcome["race"] == {
        "race_id": race_id,
        "variant": "fourteen-out",
        "status": "running",
        "game_id": sb["game_id"],
    }
    update = await b2.push("race.update")
    assert update["race"]["race_id"] == race_id and update["race"]["game_id"] == sb["game_id"]
    assert not any(r["forfeited"] for r in update["race"]["racers"])
    again = await b2.push("race.started")
    assert (again["game_id"], again["view"]) == (sb["game_id"], sb["view"])
    moves = list(from_view(sb["view"]).legal_moves())
    ok = await b2.request("move", game_id=sb["game_id"], move=str(moves[0]))
    assert ok["type"] == "moved"
    # c disappears for longer than the grace period: c forfeits, the others (b2 connected by
    # hello alone, long past the grace counted from b's drop) race on
    await c.close()
    state = await step_until_forfeit(race_app, a, race_id)
    assert {r["name"]: r["forfeited"] for r in state["race"]["racers"]} == {
        "frank": False,
        "grace": False,
        "heidi": True,
    }
    ev = await a.push("race.event", timeout=5)
    while ev["event"]["kind"] != "forfeit":
        ev = await a.push("race.event", timeout=5)
    assert ev["event"]["player_id"] == c.player_id


async def test_a_second_socket_of_a_racer_gets_the_race_too(race_app: App) -> None:
    """Two sockets with one token are both live (docs/protocol.md §5 `hello`): each gets
    the race's pushes, and closing one does not start the racer's grace period."""
    a, b = await race_app.client("ingo1"), await race_app.client("jana1")
    await a.request("race.queue", variant="fourteen-out")
    await b.request("race.queue", variant="fourteen-out")
    await a.push("race.update")
    sa, sb = await start_race(race_app, a, b)
    second = await Client.connect(race_app.url)
    await second.hello(token=b.token)
    assert (await second.push("race.started"))["game_id"] == sb["game_id"]
    await b.close()  # b is still connected through `second`
    moves = list(from_view(sa["view"]).legal_moves())
    await a.request("move", game_id=sa["game_id"], move=str(moves[0]))
    ev = await second.push("race.event")
    while ev["event"]["kind"] != "progress":
        ev = await second.push("race.event")
    assert ev["event"]["player_id"] == a.player_id
    for _ in range(4):  # well beyond the grace
        race_app.clock.advance(2_000)
        await race_app.services.race_clock.tick(sweep=True)
    state = await a.request("race.get", race_id=sa["race_id"])
    assert not any(r["forfeited"] for r in state["race"]["racers"])
    assert all(r["connected"] for r in state["race"]["racers"])


async def test_time_limit_ends_a_stalled_race(race_app: App) -> None:
    a, b = await race_app.client("ivana"), await race_app.client("jorge")
    await a.request("race.queue", variant="triple-deck")
    await b.request("race.queue", variant="triple-deck")
    await a.push("race.update")
    sa, _ = await start_race(race_app, a, b)
    await a.request("move", game_id=sa["game_id"], move="d")
    race_app.clock.advance(61_000)
    ev = await a.push("race.event", timeout=5)
    while ev["event"]["kind"] != "finished":
        ev = await a.push("race.event", timeout=5)
    assert ev["event"]["reason"] == "time limit"
    assert len(ev["event"]["results"]) == 2
    late = await a.request("move", game_id=sa["game_id"], move="d")
    assert late["type"] == "error" and late["code"] == "game_over"


async def test_group_queue_starts_with_two_after_the_fill_wait(race_app: App) -> None:
    a, b = await race_app.client("kevin"), await race_app.client("laura")
    await a.request("race.queue", variant="fourteen-out", size=4)
    await b.request("race.queue", variant="fourteen-out", size=4)
    await race_app.services.matchmaking.sweep()  # before the fill wait: nobody is matched
    races = race_app.services.races
    assert (
        await races.queued_as(a.player_id) == await races.queued_as(b.player_id) == "fourteen-out:4"
    )
    race_app.clock.advance(2_500)
    update = await a.push("race.update", timeout=5)
    assert len(update["race"]["racers"]) == 2 and update["race"]["size"] == 4


async def test_leaving_the_queue(race_app: App) -> None:
    a = await race_app.client("mason")
    await a.request("race.queue", variant="fourteen-out")
    left = await a.request("race.leave")
    assert left["type"] == "race.left"
    again = await a.request("race.leave")
    assert again["type"] == "error" and again["code"] == "not_found"


async def test_a_player_waiting_in_the_queue_who_reconnects_hears_of_the_match(
    race_app: App,
) -> None:
    a = await race_app.client("oscar")
    await a.request("race.queue", variant="fourteen-out")
    await a.close()
    a2 = await Client.connect(race_app.url)
    welcome = await a2.hello(token=a.token, versions=(1, 2, 3))
    assert "race" not in welcome, "waiting is not racing yet"
    b = await race_app.client("paula")
    await b.request("race.queue", variant="fourteen-out")
    update = await a2.push("race.update")
    assert {r["name"] for r in update["race"]["racers"]} == {"oscar", "paula"}
    (sa,) = await start_race(race_app, a2)
    assert sa["game_id"] == update["race"]["game_id"]


async def test_a_race_entered_on_one_socket_reaches_the_players_other_socket(race_app: App) -> None:
    host, guest = await race_app.client("quentin"), await race_app.client("rosa1")
    phone = await Client.connect(race_app.url)  # the host's second socket, open all along
    await phone.hello(token=host.token)
    room = await host.request("race.create", variant="fourteen-out")
    race_id = room["race"]["race_id"]
    seen = await phone.push("race.update")
    assert seen["race"]["race_id"] == race_id and seen["race"]["status"] == "open"
    await guest.request("race.join", code=room["race"]["code"])
    await host.request("race.start", race_id=race_id)
    (on_host, on_phone, _) = await start_race(race_app, host, phone, guest)
    assert on_phone["game_id"] == on_host["game_id"] == f"r.{race_id}.{host.player_id}"
    assert on_phone["view"] == on_host["view"]


async def test_a_long_races_events_come_in_pages_that_fit_a_frame(race_app: App) -> None:
    """Found by a newcomer writing a client from the docs: `race.get` (its `since` is 0 when
    not given) after a two-racer Triple Deck race (689 events, ~105 KB) answered `internal`,
    the reply being larger than the 64 KiB frame. The events now come oldest first, as many
    as fit: a client asks again from the last one's `v` until it reaches `race.version`, and
    gets every event once, in order."""
    a, b = await race_app.client("pager_a"), await race_app.client("pager_b")
    room = await a.request("race.create", variant="triple-deck")
    race_id = room["race"]["race_id"]
    assert (await b.request("race.join", code=room["race"]["code"]))["type"] == "race.room"
    store = race_app.services.races.store
    for n in range(900):  # as many progress events as a long race logs, on the real log
        await store.emit(
            race_id,
            pr.RacerProgress(
                player_id=a.player_id,
                cleared=n % 52,
                score=n,
                moves=n + 1,
                finished=False,
                won=False,
                stuck=False,
            ),
        )
    logged = [e.version for e in await store.events_since(race_id, 0)]
    pages: list[list[dict[str, Any]]] = []
    since = 0
    for _ in range(10):
        got = await b.request("race.get", race_id=race_id, since=since)
        assert got["type"] == "race.room", got  # was `internal`: a frame over 64 KiB
        assert len(msgpack.packb(got)) <= 65_536
        pages.append(got["events"])
        since = got["events"][-1]["v"]
        if since >= got["race"]["version"]:
            break
    assert len(pages) >= 2, "one frame cannot hold 900 events"
    assert [e["v"] for page in pages for e in page] == logged  # each once, in order
    assert pages[-1][-1]["kind"] == "progress" and pages[-1][-1]["score"] == 899
    plain = await b.request("race.get", race_id=race_id)  # no `since`: the first page
    assert [e["v"] for e in plain["events"]] == [e["v"] for e in pages[0]]
    assert (await b.request("race.get", race_id=race_id, since=since))["events"] == []
