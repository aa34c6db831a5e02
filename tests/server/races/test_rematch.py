"""Rematches (protocol 7): after a race, a racer asks for another; the others are offered it
by a push and accept with `race.join`, or decline; an offer nobody takes closes its room.
Real server, real Redis, real WebSockets."""

from __future__ import annotations

from typing import Any

from server.races.rematch import OFFER_MS
from tests.support.app import App
from tests.support.races import start_race
from tests.support.wsclient import Client

V7 = (5, 6, 7)


async def v7(app: App, name: str, versions: tuple[int, ...] = V7) -> Client:
    c = await Client.connect(app.url)
    await c.hello(name=name, versions=versions)
    return c


async def race_to_the_end(app: App, *racers: Client) -> str:
    """A private room of `racers` (the first creates and starts it), raced and resigned by
    all: the race id of a race that is over."""
    room = await racers[0].request("race.create", variant="fourteen-out", size=len(racers))
    race_id, code = room["race"]["race_id"], room["race"]["code"]
    for c in racers[1:]:
        assert (await c.request("race.join", code=code))["type"] == "race.room"
    assert (await racers[0].request("race.start", race_id=race_id))["type"] == "race.room"
    started = await start_race(app, *racers)
    for c, s in zip(racers, started, strict=True):
        await c.request("resign", game_id=s["game_id"])
    for c in racers:
        while True:
            ev = await c.push("race.event", race_id=race_id)
            if ev["event"]["kind"] == "finished":
                break
    return str(race_id)


async def status(c: Client, race_id: str) -> str:
    got: dict[str, Any] = await c.request("race.get", race_id=race_id)
    return str(got["race"]["status"])


async def test_a_rematch_is_offered_accepted_and_raced(race_app: App) -> None:
    a, b = await v7(race_app, "remy"), await v7(race_app, "rhea")
    old = await b.request("race.rematch", race_id="20300615-abcdef012345")
    assert old["code"] == "not_found"
    race_id = await race_to_the_end(race_app, a, b)
    asked = await a.request("race.rematch", race_id=race_id)
    assert asked["type"] == "race.room", asked
    room = asked["race"]
    assert room["race_id"] != race_id and room["variant"] == "fourteen-out"
    assert room["status"] == "open" and [r["name"] for r in room["racers"]] == ["remy"]
    offer = await b.push("race.rematch_offer")
    assert offer == {
        "type": "race.rematch_offer",
        "race_id": room["race_id"],
        "rematch_of": race_id,
        "variant": "fourteen-out",
        "code": room["code"],
        "player_id": a.player_id,
        "name": "remy",
        "expires_at": race_app.clock.now_ms() + OFFER_MS,
    }
    joined = await b.request("race.join", code=offer["code"])
    assert {r["name"] for r in joined["race"]["racers"]} == {"remy", "rhea"}
    # b asking too lands in the same room, not a second one.
    again = await b.request("race.rematch", race_id=race_id)
    assert again["race"]["race_id"] == room["race_id"]
    assert (await a.request("race.start", race_id=room["race_id"]))["type"] == "race.room"
    sa, sb = await start_race(race_app, a, b)
    assert sa["race_id"] == sb["race_id"] == room["race_id"] and sa["view"] == sb["view"]
    # Casual, as every private room: nobody's rating moves.
    await a.request("resign", game_id=sa["game_id"])
    await b.request("resign", game_id=sb["game_id"])
    assert (await a.request("race.rank", variant="fourteen-out")).get("entry") is None
    # Once the rematch is under way, another rematch of the first race is refused.
    late = await a.request("race.rematch", race_id=race_id)
    assert late["code"] == "conflict"
    await a.close()
    await b.close()


async def test_declines_and_an_expired_offer_close_the_room(race_app: App) -> None:
    a, b, c = await v7(race_app, "dina"), await v7(race_app, "dora"), await v7(race_app, "duke")
    old = await v7(race_app, "olden", versions=(5, 6))  # speaks version 6 only
    race_id = await race_to_the_end(race_app, a, b, c, old)
    early = await a.request("race.decline", race_id=race_id)
    assert early["code"] == "not_found", "nothing offered to the asker"
    room = (await a.request("race.rematch", race_id=race_id))["race"]
    assert (await b.push("race.rematch_offer"))["race_id"] == room["race_id"]
    assert (await c.push("race.rematch_offer"))["race_id"] == room["race_id"]
    assert all(f["type"] != "race.rematch_offer" for f in old.seen), "v6 hears no v7 push"
    assert (await old.request("race.rematch", race_id=race_id))["code"] == "unknown_type"
    got = await b.request("race.decline", race_id=room["race_id"])
    assert got == {"type": "race.declined", "id": got["id"], "race_id": room["race_id"]}
    told = await a.push("race.rematch_declined")
    assert (told["player_id"], told["name"]) == (b.player_id, "dora")
    assert await status(a, room["race_id"]) == "open", "duke and olden have not answered"
    assert (await c.request("race.decline", race_id=room["race_id"]))["type"] == "race.declined"
    assert (await a.push("race.rematch_declined"))["name"] == "duke"
    # olden (version 6) was invited too and never answers: the offer expires.
    race_app.clock.advance(OFFER_MS)
    assert await race_app.services.rematches.sweep() == [room["race_id"]]
    assert (await a.push("race.update", timeout=5))["race"]["race_id"] == room["race_id"]
    refused = await b.request("race.join", code=room["code"])
    assert refused["type"] == "error", "the room is closed"
    assert (await a.request("race.queue", variant="fourteen-out"))["type"] == "race.queued"
    for x in (a, b, c, old):
        await x.close()


async def test_everyone_declining_closes_the_room_at_once(race_app: App) -> None:
    a, b = await v7(race_app, "emma"), await v7(race_app, "ezra")
    race_id = await race_to_the_end(race_app, a, b)
    room = (await a.request("race.rematch", race_id=race_id))["race"]
    unfinished = await a.request("race.rematch", race_id=room["race_id"])
    assert unfinished["code"] == "conflict", "a race not over has no rematch"
    await b.push("race.rematch_offer")
    assert (await b.request("race.decline", race_id=room["race_id"]))["type"] == "race.declined"
    assert (await b.request("race.decline", race_id=room["race_id"]))["code"] == "conflict"
    # a is free again: the closed room holds nobody.
    assert (await a.request("race.create", variant="fourteen-out"))["type"] == "race.room"
    assert await race_app.services.rematches.sweep() == []
    await a.close()
    await b.close()
