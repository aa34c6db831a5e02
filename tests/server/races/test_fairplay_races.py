"""Fair play in races (issue #24, items 4-6), each cheat played as a cheating client would,
through the real server on a real Redis: no card of a race deal before the start, no card to
spectators that a racer still playing has not seen, ratings that resist boosting, a queue that
keeps one address's accounts apart, and limits on private rooms."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import redis.asyncio
import websockets

from engine import VARIANT_IDS, full_state, new_game
from server.races import spectate
from server.races.referee import REAL_ATTEMPT_MOVES
from server.redis import keys
from server.services import RACE_TTL_MS
from tests.support.app import App, serve
from tests.support.races import race_config, start_race
from tests.support.wsclient import Client

#: The variants that hide cards (face-down cards, a stock); the pairing games hide none.
HIDDEN_VARIANTS = ("triple-triangle", "triple-deck", "triple-deck-kings", "triple-easthaven")
V5 = (1, 2, 3, 4, 5)
HOUR_MS = 3_600_000


def strings(value: Any) -> set[str]:
    """Every string in a message (keys aside)."""
    if isinstance(value, dict):
        return {s for v in value.values() for s in strings(v)}
    if isinstance(value, list):
        return {s for v in value for s in strings(v)}
    return {value} if isinstance(value, str) else set()


def deck_of(variant: str, seed: int) -> set[str]:
    return {str(c) for c in full_state(new_game(variant, seed)).cards()}


async def room(app: App, variant: str, *clients: Client) -> str:
    """A private room of `clients` (the first creates it), started: in its countdown."""
    made = await clients[0].request("race.create", variant=variant, size=len(clients))
    assert made["type"] == "race.room", made
    for c in clients[1:]:
        assert (await c.request("race.join", code=made["race"]["code"]))["type"] == "race.room"
    race_id: str = made["race"]["race_id"]
    assert (await clients[0].request("race.start", race_id=race_id))["type"] == "race.room"
    return race_id


async def seed_of(r: redis.asyncio.Redis, race_id: str) -> int:
    raw = await r.hget(keys.race(race_id), "seed")
    assert raw is not None
    return int(raw)


# -- 4. nothing before the start ----------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANT_IDS)
async def test_no_card_of_a_race_deal_reaches_anyone_before_the_start(
    race_app: App, redis_client: redis.asyncio.Redis, variant: str
) -> None:
    """The cheat: `game.get` on one's own race game 2.5 s before `start_at` showed the deal.
    Every path that could carry the race's cards is tried in the countdown, by the racers (of
    every protocol version), a racer reconnecting, and a spectator; none carries a card."""
    a = await race_app.client("early_a", versions=V5)
    b = await race_app.client("early_b", versions=(1,))
    race_id = await room(race_app, variant, a, b)
    deck = deck_of(variant, await seed_of(redis_client, race_id))
    info = await a.request("race.get", race_id=race_id, since=0)
    assert info["race"]["status"] == "countdown"
    gid_a, gid_b = info["race"]["game_id"], keys.race_game_id(race_id, b.player_id)
    for c, gid in ((a, gid_a), (b, gid_b)):
        got = await c.request("game.get", game_id=gid)
        assert (got["type"], got["code"]) == ("error", "not_started"), got
        assert (await c.request("move", game_id=gid, move="d"))["code"] == "not_started"
        assert (await c.request("undo", game_id=gid))["code"] == "not_started"
        assert (await c.request("hint", game_id=gid))["code"] == "conflict", "no hints in races"
        assert (await c.request("game.export", game_id=gid))["code"] == "not_found"
    # A racer's second device resumes (welcome with the race, then its pushes).
    again = await Client.connect(race_app.url)
    welcome = await again.hello(token=a.token, versions=V5)
    assert welcome["race"]["game_id"] == gid_a and welcome["race"]["status"] == "countdown"
    await again.push("race.update")
    watcher = await race_app.client("early_eye", versions=V5)
    watching = await watcher.request("race.watch", race_id=race_id)
    assert all(board.get("view") is None for board in watching["boards"])
    await a.request("ping")  # every reply and push due before the start has arrived
    for c in (a, b, again, watcher):
        assert not strings(c.seen) & deck, "a card of the deal before the start"
        assert not [m for m in c.seen if m.get("type") == "race.started"]
    # At the start the racers get their view: the test would have seen cards.
    started = await start_race(race_app, a, b)
    assert strings(started[0]["view"]) & deck
    assert (await a.request("game.get", game_id=gid_a))["type"] == "game"
    hint = await a.request("hint", game_id=gid_a)
    assert hint["code"] == "conflict", "still no hints once it runs"
    for c in (a, b, again, watcher):
        await c.close()


# -- 4. nothing to spectators that a racer has not seen -----------------------------------------


async def until_board(s: Client, pid: str, seq: int) -> dict[str, Any]:
    while True:
        msg = await s.push("race.spectate")
        if (
            msg["board"]["player_id"] == pid
            and msg["board"]["seq"] >= seq
            and msg["board"].get("view")
        ):
            board: dict[str, Any] = msg["board"]
            return board


def up_cards(view: dict[str, Any]) -> list[str]:
    """Every card written in a view, with repeats, "??" included (a multiset, in order)."""
    out: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if k != "variant":
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str):
            out.append(v)

    walk(view)
    return out


@pytest.mark.parametrize("variant", HIDDEN_VARIANTS)
async def test_a_spectator_never_sees_a_card_a_racer_still_playing_has_not_seen(
    race_app: App,
    redis_client: redis.asyncio.Redis,
    monkeypatch: pytest.MonkeyPatch,
    variant: str,
) -> None:
    """The cheat: the racer watches their own race from an alt; the opponent's stock draws are
    the racer's own next cards. Now the alt sees the opponent's drawn cards only once the
    racer has drawn them too, and the boards that may show more are sent again then."""
    monkeypatch.setattr(spectate, "DELAY_MS", 200)
    cheat, rival = await race_app.client("cheat", versions=V5), await race_app.client("rival")
    race_id = await room(race_app, variant, cheat, rival)
    alt = await race_app.client("cheat_alt", versions=V5)
    assert (await alt.request("race.watch", race_id=race_id))["type"] == "race.watching"
    started = {s["game_id"]: s for s in await start_race(race_app, cheat, rival)}
    gid_c = keys.race_game_id(race_id, cheat.player_id)
    gid_r = keys.race_game_id(race_id, rival.player_id)
    # What the cheat has seen: the deal's face-up cards.
    dealt_up = [c for c in up_cards(started[gid_c]["view"]) if c != "??"]
    draws = 3
    for _ in range(draws):  # the rival draws from the stock; the cheat does not
        moved = await rival.request("move", game_id=gid_r, move="d")
        assert moved["type"] == "moved", moved
    rival_view = moved["view"]
    drawn = [c for c in up_cards(rival_view) if c != "??"]
    assert len(drawn) > len(dealt_up), "the rival turned up cards the cheat has not seen"
    board = await until_board(alt, rival.player_id, draws)
    # The alt sees the rival's board, but none of the cards the cheat has not seen yet.
    shown = [c for c in up_cards(board["view"]) if c != "??"]
    assert sorted(shown) == sorted(dealt_up), (shown, dealt_up)
    assert len(up_cards(board["view"])) == len(up_cards(rival_view)), "held back as '??'"
    seen_by_cheat = set(dealt_up)
    race_strings = {
        s
        for m in alt.seen
        if m.get("type") in ("race.spectate", "race.watching")
        for s in strings(m)
    }
    assert race_strings & deck_of(variant, await seed_of(redis_client, race_id)) <= seen_by_cheat
    # The cheat draws the same cards: now both have seen them, and the alt is shown them.
    for _ in range(draws):
        cheat_moved = await cheat.request("move", game_id=gid_c, move="d")
        assert cheat_moved["type"] == "moved", cheat_moved
    board = await until_board(alt, rival.player_id, draws)
    while up_cards(board["view"]) != up_cards(rival_view):  # the rival's board, more shown
        board = await until_board(alt, rival.player_id, draws)
    # The race ends: the final boards show what each racer saw.
    for c, gid in ((cheat, gid_c), (rival, gid_r)):
        assert (await c.request("resign", game_id=gid))["type"] == "finished"
    while (await alt.push("race.update"))["race"]["status"] != "finished":
        pass
    final = await until_board(alt, rival.player_id, draws)  # sent with the end
    assert up_cards(final["view"]) == up_cards(rival_view)
    for c in (cheat, rival, alt):
        await c.close()


async def test_a_racer_whose_game_is_over_no_longer_holds_cards_back(
    race_app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three racers: the rival's draws stay held back while any racer still playing has not
    drawn them; once the last one who has not resigns, nobody can be helped: they show."""
    monkeypatch.setattr(spectate, "DELAY_MS", 200)
    racers = [await race_app.client(n, versions=V5) for n in ("trio_a", "trio_b", "trio_c")]
    rival, racer, idle = racers
    race_id = await room(race_app, "triple-deck", *racers)
    eye = await race_app.client("trio_eye", versions=V5)
    assert (await eye.request("race.watch", race_id=race_id))["type"] == "race.watching"
    await start_race(race_app, *racers)
    gid = {c.player_id: keys.race_game_id(race_id, c.player_id) for c in racers}
    for c in (rival, racer):
        for _ in range(2):
            moved = await c.request("move", game_id=gid[c.player_id], move="d")
            assert moved["type"] == "moved", moved
    rival_view = (await rival.request("game.get", game_id=gid[rival.player_id]))["view"]
    board = await until_board(eye, rival.player_id, 2)
    while up_cards(board["view"]) == up_cards(rival_view):
        board = await until_board(eye, rival.player_id, 2)
    assert up_cards(board["view"]).count("??") - up_cards(rival_view).count("??") == 6, (
        "the idle racer has drawn none of the six cards"
    )
    assert (await idle.request("resign", game_id=gid[idle.player_id]))["type"] == "finished"
    board = await until_board(eye, rival.player_id, 2)
    while up_cards(board["view"]) != up_cards(rival_view):
        board = await until_board(eye, rival.player_id, 2)
    for c in (*racers, eye):
        await c.close()


# -- 5. ratings that resist boosting -------------------------------------------------------------


async def finished_results(c: Client) -> list[dict[str, Any]]:
    while True:
        ev = await c.push("race.event")
        if ev["event"]["kind"] == "finished":
            results: list[dict[str, Any]] = ev["event"]["results"]
            return results


async def really_try(c: Client, gid: str) -> None:
    """Enough moves to count as a real attempt (draws: always legal in Triple Deck)."""
    for _ in range(REAL_ATTEMPT_MOVES):
        assert (await c.request("move", game_id=gid, move="d"))["type"] == "moved"


async def test_private_rooms_do_not_boost_a_rating(race_app: App) -> None:
    """The cheat: main against alt in private rooms, alt resigning at once: 1000 -> 1138 ->
    1248 -> 1336 in three rooms. Rooms are casual now: places, no rating, no wins."""
    main, alt = await race_app.client("boost_main", versions=V5), await race_app.client("boost_alt")
    for _ in range(3):
        race_id = await room(race_app, "triple-deck", main, alt)
        code = (await main.request("race.get", race_id=race_id))["race"]["code"]
        await start_race(race_app, main, alt)
        await really_try(main, keys.race_game_id(race_id, main.player_id))
        await alt.request("resign", game_id=keys.race_game_id(race_id, alt.player_id))
        await main.request("resign", game_id=keys.race_game_id(race_id, main.player_id))
        results = await finished_results(main)
        assert [r["place"] for r in results] == [1, 2]
        assert results[0]["player_id"] == main.player_id
        assert all(r.get("rating") is None and r.get("rating_change") is None for r in results)
        gone = await alt.request("race.join", code=code)
        assert gone["code"] == "not_found", "the room's code is free once its race is over"
    rank = await main.request("race.rank", variant="triple-deck")
    assert rank.get("entry") is None, "no rating from private rooms"
    wins = await main.request("race.top", variant="triple-deck", board="wins")
    assert wins["entries"] == [], "no wins board either"


async def test_queue_boosting_gains_nothing(race_app: App) -> None:
    """Boosting through the queue: the alt resigns at once (no real attempt: the main gains
    nothing, the alt loses), then a real race between them the same day is unrated."""
    main, alt = (
        await race_app.client("qboost_main", versions=V5),
        await race_app.client("qboost_alt"),
    )
    for c in (main, alt):
        await c.request("race.queue", variant="triple-deck")
    sm, sa = await start_race(race_app, main, alt)
    await really_try(main, sm["game_id"])
    await alt.request("resign", game_id=sa["game_id"])
    await main.request("resign", game_id=sm["game_id"])
    first = {r["player_id"]: r for r in await finished_results(main)}
    assert first[main.player_id]["rating_change"] == 0, "nothing from a racer who did not try"
    assert first[alt.player_id]["rating_change"] < 0, "who did not try loses"
    for c in (main, alt):
        await c.request("race.queue", variant="triple-deck")
    sm, sa = await start_race(race_app, main, alt)
    await really_try(main, sm["game_id"])
    await really_try(alt, sa["game_id"])
    await alt.request("resign", game_id=sa["game_id"])
    await main.request("resign", game_id=sm["game_id"])
    second = await finished_results(main)
    assert all(r.get("rating_change") is None for r in second), "a pair once per UTC day"
    row = await alt.request("race.rank", variant="triple-deck")
    assert row["entry"]["played"] == 1
    wins = await main.request("race.top", variant="triple-deck", board="wins")
    assert wins["entries"] == [], "no win over a racer who did not try, none unrated"


# -- 5. the queue keeps one address's accounts apart ---------------------------------------------


@pytest_asyncio.fixture
async def strict_app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    config = dataclasses.replace(
        race_config(redis_url, tmp_path), race_same_address_wait_ms=15_000, race_rooms_per_hour=3
    )
    async with serve(config) as app:
        yield app


async def client_from(app: App, address: str, name: str) -> Client:
    """A player whose socket comes from `address` (a loopback address of its own)."""
    ws = await websockets.connect(app.url, max_size=2**20, local_addr=(address, 0))
    c = Client(ws, binary=True)
    await c.hello(name=name, versions=V5)
    return c


async def test_the_queue_does_not_pair_accounts_of_one_address_while_others_wait(
    strict_app: App,
) -> None:
    """The cheat: main and alt queued back to back were paired. Now they wait, and the
    next player from elsewhere is paired with the first of them; accounts of one address are
    paired with each other only when nobody else came for a while."""
    main = await client_from(strict_app, "127.0.0.1", "addr_main")
    alt = await client_from(strict_app, "127.0.0.1", "addr_alt")
    other = await client_from(strict_app, "127.0.0.2", "addr_other")
    assert (await main.request("race.queue", variant="fourteen-out"))["waiting"] == 1
    strict_app.clock.advance(1)  # main first in the queue's order
    assert (await alt.request("race.queue", variant="fourteen-out"))["waiting"] == 2, "not paired"
    await other.request("race.queue", variant="fourteen-out")
    update = await other.push("race.update")
    assert {r["player_id"] for r in update["race"]["racers"]} == {main.player_id, other.player_id}
    # The alt waits on alone; a second account of its address is paired with it only after
    # the same-address wait.
    alt2 = await client_from(strict_app, "127.0.0.1", "addr_alt2")
    assert (await alt2.request("race.queue", variant="fourteen-out"))["waiting"] == 2
    strict_app.clock.advance(15_000)
    late = await alt2.push("race.update", timeout=15)  # the matchmaking sweep (every second)
    assert {r["player_id"] for r in late["race"]["racers"]} == {alt.player_id, alt2.player_id}
    for c in (main, alt, alt2, other):
        await c.close()


# -- 6. room limits ------------------------------------------------------------------------------


async def test_rooms_per_hour_and_a_closed_room_is_freed_at_once(
    strict_app: App, redis_client: redis.asyncio.Redis
) -> None:
    """The cheat: 50 rooms created and left in 4 s by one account, each closed room keeping
    its keys and code for 7 days. Now 3 an hour here (`--race-rooms-per-hour`), then
    `limit_reached` (version 5) or `rate_limited` (older clients); a closed room's code is
    free at once and its keys go within a minute."""
    spammer = await strict_app.client("spammer", versions=V5)
    old = await strict_app.client("old_spam", versions=(1, 2, 3, 4))
    for c in (spammer, old):
        for _ in range(3):
            made = await c.request("race.create", variant="fourteen-out")
            assert made["type"] == "race.room", made
            race_id, code = made["race"]["race_id"], made["race"]["code"]
            assert (await c.request("race.leave"))["type"] == "race.left"
            assert not await redis_client.exists(keys.room_code(code)), "the code is free"
            ttl = await redis_client.pttl(keys.race(race_id))
            assert 0 < ttl <= 60_000 < RACE_TTL_MS, "the closed room's keys go soon"
            joined = await spammer.request("race.join", code=code)
            assert joined["code"] == "not_found"
    refused = await spammer.request("race.create", variant="fourteen-out")
    assert (refused["type"], refused["code"]) == ("error", "limit_reached")
    assert "per hour" in refused["message"]
    assert (await old.request("race.create", variant="fourteen-out"))["code"] == "rate_limited"
    strict_app.clock.advance(HOUR_MS)
    assert (await spammer.request("race.create", variant="fourteen-out"))["type"] == "race.room"
    for c in (spammer, old):
        await c.close()
