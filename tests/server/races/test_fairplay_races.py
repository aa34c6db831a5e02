"""Fair play in races (issue #24, items 4-6), each cheat played as a cheating client would,
through the real server on a real Redis: no card of a race deal before the start, no card to
spectators that a racer still playing has not seen, ratings that resist boosting, a queue that
keeps one address's accounts apart, and limits on private rooms."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
import redis.asyncio
import websockets

from engine import VARIANT_IDS, full_state, new_game
from server.races import spectate
from server.redis import keys
from server.services import RACE_TTL_MS
from tests.support.apistream import stream, strings
from tests.support.app import App, serve
from tests.support.races import clear_a_card, race_config, start_race
from tests.support.spectating import Replay, board_breaks, line_onto_unseen, replay
from tests.support.wsclient import Client

#: The variants that hide cards (face-down cards, a stock); the pairing games hide none.
HIDDEN_VARIANTS = ("triple-triangle", "triple-deck", "triple-deck-kings", "triple-easthaven")
V5 = (1, 2, 3, 4, 5)
HOUR_MS = 3_600_000


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


class Spectator:
    """What one spectator of a race is sent, over a WebSocket (`race.watch`: the client's
    frames) or the HTTP race stream (/api/v1/races/{id}/events: its lines), in phases."""

    def __init__(self, name: str, lines: list[dict[str, Any]]) -> None:
        self.name, self.lines = name, lines
        self.starts = [0]  # where each phase's lines begin

    def next_phase(self) -> None:
        self.starts.append(len(self.lines))

    def of_phase(self, phase: int | None) -> list[dict[str, Any]]:
        if phase is None:
            return self.lines
        end = self.starts[phase + 1] if phase + 1 < len(self.starts) else len(self.lines)
        return self.lines[self.starts[phase] : end]

    def boards(self, pid: str, phase: int | None = None) -> list[dict[str, Any]]:
        """The boards of `pid` with a view, in the order sent."""
        out = []
        for m in self.of_phase(phase):
            found = [m["board"]] if m.get("type") == "race.spectate" else []
            found += m.get("boards", []) if m.get("type") == "race.watching" else []
            out += [b for b in found if b["player_id"] == pid and b.get("view") is not None]
        return out

    def shows(self, pid: str, seq: int, phase: int) -> bool:
        """Whether a board of `pid` at `seq` came in `phase`."""
        return any(b["seq"] == seq for b in self.boards(pid, phase))

    def event(self, kind: str, pid: str | None = None, moves: int = 0) -> bool:
        """Whether a race event of this kind came (of `pid`, with at least `moves` moves)."""
        return any(
            m.get("type") == "race.event"
            and m["event"]["kind"] == kind
            and (pid is None or m["event"].get("player_id") == pid)
            and m["event"].get("moves", 0) >= moves
            for m in self.lines
        )

    async def until(self, test: Callable[[], bool], what: str) -> None:
        for _ in range(500):
            if test():
                await asyncio.sleep(0.1)  # the rest of that batch (boards follow the event)
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"{self.name}: no {what}")


def assert_keeps_the_rule(
    eye: Spectator, phase: int, pid: str, racer: Replay, playing: list[Replay]
) -> list[dict[str, Any]]:
    """Every board of `pid` sent in `phase` is a position of the racer's game that tells
    nothing of a card one of the racers still `playing` has not seen; the boards."""
    boards = eye.boards(pid, phase)
    for board in boards:
        broken = board_breaks(board["view"], board["seq"], racer, playing)
        assert broken is None, f"{eye.name}, phase {phase}: {broken}"
    return boards


@pytest.mark.parametrize("variant", HIDDEN_VARIANTS)
async def test_a_spectator_never_sees_a_card_a_racer_still_playing_has_not_seen(
    race_app: App,
    redis_client: redis.asyncio.Redis,
    monkeypatch: pytest.MonkeyPatch,
    variant: str,
) -> None:
    """The cheat: the racer follows their own race from an alt (over a WebSocket, and over
    the HTTP stream, which needs no account); the rival turns up cards that are the racer's
    own next cards and plays onto them. A "??" mask hid such a card, but the move onto it told
    its rank. Now no board shows a position of the rival's game after a card the racer has
    not seen turned up; the board catches up once the racer has seen those cards, or stops
    playing, and shows everything once the race is over."""
    monkeypatch.setattr(spectate, "DELAY_MS", 200)
    cheat, rival = await race_app.client("cheat", versions=V5), await race_app.client("rival")
    race_id = await room(race_app, variant, cheat, rival)
    seed = await seed_of(redis_client, race_id)
    line = line_onto_unseen(variant, seed)  # its last move goes onto (or moves) such a card
    alt = await race_app.client("cheat_alt", versions=V5)
    assert (await alt.request("race.watch", race_id=race_id))["type"] == "race.watching"
    gid_c = keys.race_game_id(race_id, cheat.player_id)
    gid_r = keys.race_game_id(race_id, rival.player_id)

    async def play(c: Client, gid: str, moves: list[str]) -> None:
        for move in moves:
            moved = await c.request("move", game_id=gid, move=move)
            assert moved["type"] == "moved", moved

    async def until_all(test: Callable[[Spectator], bool], what: str) -> None:
        for eye in eyes:
            await eye.until(functools.partial(test, eye), what)

    async with (
        aiohttp.ClientSession() as session,
        stream(session, f"{race_app.http}/api/v1/races/{race_id}/events") as http,
    ):
        eyes = (Spectator("websocket", alt.seen), Spectator("http", http.lines))
        await until_all(lambda e: any(m["type"] == "race.watching" for m in e.lines), "watching")
        await start_race(race_app, cheat, rival)

        # 1. The rival plays onto a card the cheat has not seen; the cheat has not moved.
        await play(rival, gid_r, line)
        await until_all(lambda e: e.event("progress", rival.player_id, len(line)), "moves")
        before, after = replay(variant, seed, line), replay(variant, seed, [])
        for eye in eyes:
            shown = assert_keeps_the_rule(eye, 0, rival.player_id, before, [after])
            assert shown, f"{eye.name}: the rival's board (as dealt) is shown"
            assert max(b["seq"] for b in shown) < len(line), f"{eye.name}: held back"
            eye.next_phase()

        # 2. The cheat plays the same line on the same deal: both have seen those cards, and
        # the rival's board catches up.
        await play(cheat, gid_c, line)
        await until_all(
            lambda e: any(b["seq"] == len(line) for b in e.boards(rival.player_id, 1)),
            "the rival's board caught up",
        )
        for eye in eyes:
            assert_keeps_the_rule(eye, 1, rival.player_id, before, [before])
            assert_keeps_the_rule(eye, 1, cheat.player_id, before, [before])
            eye.next_phase()

        # 3. The rival draws: cards the cheat has not seen, held back while the cheat plays
        # on; shown once the cheat stops playing (resigns), the race still running.
        await play(rival, gid_r, ["d"])
        drawn = replay(variant, seed, [*line, "d"])
        await until_all(lambda e: e.event("progress", rival.player_id, len(line) + 1), "draw")
        for eye in eyes:
            assert_keeps_the_rule(eye, 2, rival.player_id, drawn, [before])
            eye.next_phase()
        assert (await cheat.request("resign", game_id=gid_c))["type"] == "finished"
        await until_all(
            lambda e: any(b["seq"] == len(line) + 1 for b in e.boards(rival.player_id, 3)),
            "the rival's board once the cheat stopped playing",
        )
        for eye in eyes:
            assert not eye.event("finished"), "the race still runs"
            eye.next_phase()

        # 4. The race ends: the last boards show what each racer saw.
        assert (await rival.request("resign", game_id=gid_r))["type"] == "finished"
        await until_all(lambda e: e.event("finished"), "the race's end")
        await http.ended()  # the stream ends with the race
    for eye in eyes:
        final = eye.boards(rival.player_id, 4)
        assert final and final[-1]["seq"] == len(line) + 1, eye.name
    for c in (cheat, rival, alt):
        await c.close()


@pytest.mark.parametrize("variant", ["triple-triangle", "triple-deck"])
async def test_a_racer_on_the_anonymous_http_stream_gets_no_card_they_have_not_seen(
    race_app: App,
    redis_client: redis.asyncio.Redis,
    monkeypatch: pytest.MonkeyPatch,
    variant: str,
) -> None:
    """Accepted (docs/fairplay.md): a racer may follow their own race on the HTTP stream,
    which needs no account (a WebSocket `race.watch` of one's own race is refused). Played as
    that racer would: every line the stream sends while they still play holds only cards of
    the deal they had been sent themselves by then, while the rival draws and plays onto
    cards they have not seen."""
    monkeypatch.setattr(spectate, "DELAY_MS", 200)
    racer, rival = await race_app.client("own_eye", versions=V5), await race_app.client("riv")
    race_id = await room(race_app, variant, racer, rival)
    deck = deck_of(variant, await seed_of(redis_client, race_id))
    line = line_onto_unseen(variant, await seed_of(redis_client, race_id))
    refused = await racer.request("race.watch", race_id=race_id)
    assert refused["type"] == "error", "a racer's own race.watch is refused over a WebSocket"
    gid_r = keys.race_game_id(race_id, rival.player_id)
    gid_c = keys.race_game_id(race_id, racer.player_id)
    lines: list[tuple[dict[str, Any], set[str]]] = []  # each line, and what the racer had seen

    def noted(msg: dict[str, Any]) -> None:
        lines.append((msg, strings(racer.seen) & deck))

    async with (
        aiohttp.ClientSession() as session,
        stream(session, f"{race_app.http}/api/v1/races/{race_id}/events", noted) as http,
    ):
        eye = Spectator("http", http.lines)
        await start_race(race_app, racer, rival)
        for move in [*line, "d", "d"]:  # onto cards the racer has not seen, then draws
            moved = await rival.request("move", game_id=gid_r, move=move)
            assert moved["type"] == "moved", moved
        await eye.until(lambda: eye.event("progress", rival.player_id, len(line) + 2), "draws")
        for move in line[:2]:  # the racer plays on
            assert (await racer.request("move", game_id=gid_c, move=move))["type"] == "moved"
        await eye.until(lambda: eye.event("progress", racer.player_id, 2), "racer's moves")
        await asyncio.sleep(0.5)  # the delayed boards of both
        shown = [m for m, _ in lines if m.get("type") in ("race.watching", "race.spectate")]
        assert shown and any(strings(m) & deck for m in shown), "the stream shows boards"
        for msg, seen in lines:
            unseen = (strings(msg) & deck) - seen
            assert not unseen, f"{msg.get('type')} holds {sorted(unseen)} unseen by the racer"
        rival_cards = {c for m in shown for c in strings(m) & deck}
        assert rival_cards <= strings(racer.seen) & deck
    for c in (racer, rival):
        await c.close()


@pytest.mark.parametrize("stop", ["resign", "forfeit"])
async def test_a_racer_whose_game_is_over_no_longer_holds_cards_back(
    race_app: App, redis_client: redis.asyncio.Redis, monkeypatch: pytest.MonkeyPatch, stop: str
) -> None:
    """Three racers: two draw the same cards, the third does not. Their boards stay at the
    deal while the third plays on (it has not seen those cards); once the third resigns, or
    forfeits (gone beyond the grace period), nobody still playing can be helped: both boards
    catch up, the race still running, and the spectator was told of the stop first."""
    monkeypatch.setattr(spectate, "DELAY_MS", 200)
    variant = "triple-deck"
    racers = [await race_app.client(n, versions=V5) for n in ("trio_a", "trio_b", "trio_c")]
    rival, racer, idle = racers
    race_id = await room(race_app, variant, *racers)
    seed = await seed_of(redis_client, race_id)
    eye_client = await race_app.client("trio_eye", versions=V5)
    assert (await eye_client.request("race.watch", race_id=race_id))["type"] == "race.watching"
    eye = Spectator("websocket", eye_client.seen)
    await start_race(race_app, *racers)
    gid = {c.player_id: keys.race_game_id(race_id, c.player_id) for c in racers}
    for c in (rival, racer):
        for _ in range(2):
            moved = await c.request("move", game_id=gid[c.player_id], move="d")
            assert moved["type"] == "moved", moved
    for c in (rival, racer):
        await eye.until(functools.partial(eye.event, "progress", c.player_id, 2), "the draws")
    drew, dealt = replay(variant, seed, ["d", "d"]), replay(variant, seed, [])
    for c in (rival, racer):
        shown = assert_keeps_the_rule(eye, 0, c.player_id, drew, [drew, dealt])
        assert shown and max(b["seq"] for b in shown) == 0, "held at the deal"
    eye.next_phase()
    if stop == "resign":
        assert (await idle.request("resign", game_id=gid[idle.player_id]))["type"] == "finished"
    else:
        await idle.close()
        for _ in range(12):  # steps shorter than a presence mark: the others stay present
            race_app.clock.advance(2_000)
            await race_app.services.race_clock.tick(sweep=True)
            if eye.event("forfeit", idle.player_id):
                break
            await asyncio.sleep(0.3)
    for c in (rival, racer):
        await eye.until(functools.partial(eye.shows, c.player_id, 2, 1), "caught up")
        assert_keeps_the_rule(eye, 1, c.player_id, drew, [drew])
    kind = "progress" if stop == "resign" else "forfeit"
    told = next(
        i
        for i, m in enumerate(eye.lines)
        if m.get("type") == "race.event"
        and m["event"]["kind"] == kind
        and m["event"]["player_id"] == idle.player_id
    )
    first = next(
        i
        for i, m in enumerate(eye.lines)
        if m.get("type") == "race.spectate" and m["board"]["seq"] == 2
    )
    assert told < first, "the stop is told before the boards it lets move on"
    assert not eye.event("finished"), "the race still runs"
    for c in (*racers, eye_client):
        await c.close()


async def test_cards_seen_and_turned_back_into_the_stock_still_hold_the_board(
    race_app: App, redis_client: redis.asyncio.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Triple Deck: the rival draws through the whole stock and turns the waste back over.
    Nothing face up is then new (the board looks as dealt, 40 moves on), but the rival saw
    every stock card: the board stays at the deal, and moves on only as far as the other
    racer has drawn too."""
    monkeypatch.setattr(spectate, "DELAY_MS", 200)
    variant = "triple-deck"
    cheat, rival = await race_app.client("redeal_c", versions=V5), await race_app.client("redeal")
    race_id = await room(race_app, variant, cheat, rival)
    seed = await seed_of(redis_client, race_id)
    eye_client = await race_app.client("redeal_eye", versions=V5)
    assert (await eye_client.request("race.watch", race_id=race_id))["type"] == "race.watching"
    eye = Spectator("websocket", eye_client.seen)
    await start_race(race_app, cheat, rival)
    gid_r = keys.race_game_id(race_id, rival.player_id)
    draws = -(-replay(variant, seed, []).views[0]["stock"] // 3) + 1  # type: ignore[index]
    for _ in range(draws):
        moved = await rival.request("move", game_id=gid_r, move="d")
        assert moved["type"] == "moved", moved
    assert moved["view"]["waste"] == [] and moved["view"]["stock"] == 116, "turned back over"
    await eye.until(functools.partial(eye.event, "progress", rival.player_id, draws), "draws")
    redealt, dealt = replay(variant, seed, ["d"] * draws), replay(variant, seed, [])
    shown = assert_keeps_the_rule(eye, 0, rival.player_id, redealt, [dealt])
    assert shown and max(b["seq"] for b in shown) == 0, "held at the deal"
    eye.next_phase()
    gid_c = keys.race_game_id(race_id, cheat.player_id)
    for _ in range(3):
        assert (await cheat.request("move", game_id=gid_c, move="d"))["type"] == "moved"
    await eye.until(functools.partial(eye.shows, rival.player_id, 3, 1), "caught up to 3")
    drew = replay(variant, seed, ["d"] * 3)
    assert [b["seq"] for b in assert_keeps_the_rule(eye, 1, rival.player_id, redealt, [drew])]
    assert max(b["seq"] for b in eye.boards(rival.player_id, 1)) == 3
    for c in (cheat, rival, eye_client):
        await c.close()


# -- 5. ratings that resist boosting -------------------------------------------------------------


async def finished_results(c: Client) -> list[dict[str, Any]]:
    while True:
        ev = await c.push("race.event")
        if ev["event"]["kind"] == "finished":
            results: list[dict[str, Any]] = ev["event"]["results"]
            return results


async def really_try(c: Client, gid: str) -> None:
    """A real attempt: a card cleared (draws alone are none)."""
    await clear_a_card(c, gid)


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
    other = await client_from(strict_app, "127.0.1.2", "addr_other")
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


async def test_guessing_room_codes_stops_after_20_wrong_ones(strict_app: App) -> None:
    """Cheater review F8: 211 wrong `race.join` codes in 10 s from one connection, each
    `not_found`, nothing counted: about 33,500 guesses find one of 1,000 open rooms. Now 20
    wrong codes an hour per account, and 100 per network (/24, /48: review F-B, a /48 holds
    65,536 address groups); past either, every `race.join` of the hour is `limit_reached`,
    a right code too. Tries are counted first (review F-C: concurrent ones overshot)."""
    host = await client_from(strict_app, "127.0.60.1", "room_host")
    made = await host.request("race.create", variant="fourteen-out")
    code = made["race"]["code"]
    wrong = next(c for c in ("AAAAA", "BBBBB", "CCCCC", "DDDDD") if c != code)
    guessers = [await client_from(strict_app, f"127.0.61.{1 + n}", f"guesser{n}") for n in range(5)]
    for g in guessers:  # 20 wrong codes each, concurrently: the account's limit holds
        replies = await asyncio.gather(*(g.request("race.join", code=wrong) for _ in range(22)))
        codes = sorted(r["code"] for r in replies)
        assert codes == ["limit_reached"] * 2 + ["not_found"] * 20, codes
    refused = await guessers[0].request("race.join", code=code)
    assert refused["code"] == "limit_reached" and "room codes" in refused["message"], refused
    # The network's 100 are spent: a sixth account of it is refused at once, a right code too.
    alt = await client_from(strict_app, "127.0.61.99", "guesser_alt")
    assert (await alt.request("race.join", code=code))["code"] == "limit_reached"
    friend = await client_from(strict_app, "127.0.62.1", "friend")
    assert (await friend.request("race.join", code=code))["type"] == "race.room"
    strict_app.clock.advance(HOUR_MS)
    assert (await alt.request("race.join", code=code))["type"] == "race.room"
    for c in (host, alt, friend, *guessers):
        await c.close()
