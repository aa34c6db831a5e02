"""Race ratings against second accounts (docs/fairplay.md, "One network, one rating"), each
cheat played as a cheating client would, through the real server on a real Redis: accounts
from one network (one /24) are never rated against each other nor win over each other, an
opponent who only draws made no real attempt, and a provisional account's loss gives its
winner nothing. Sockets come from loopback addresses of their own (127.0.0.0/8)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
import redis.asyncio
import websockets

from engine import from_view
from server.config import Config
from server.redis import keys
from tests.support.app import App, serve
from tests.support.races import clear_a_card, race_config, start_race
from tests.support.wsclient import Client

VARIANT = "triple-triangle"
V9 = tuple(range(1, 10))
HUMAN_MS = 2_000  # a human pace between moves: nothing for the screen to hold


def fair_config(redis_url: str, tmp_path: Path, **changes: Any) -> Config:
    """The command line's fair-play defaults for races: the same-address wait (15 s), racers
    of one network unrated against each other; no provisional accounts, no screen (a
    fixture sets them)."""
    return dataclasses.replace(
        race_config(redis_url, tmp_path),
        race_same_address_wait_ms=15_000,
        race_unrated_same_network=True,
        **changes,
    )


@pytest_asyncio.fixture
async def app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    async with serve(fair_config(redis_url, tmp_path)) as app:
        yield app


@pytest_asyncio.fixture
async def provisional_app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    async with serve(fair_config(redis_url, tmp_path, race_provisional_rivals=2)) as app:
        yield app


async def client_from(app: App, address: str, name: str) -> Client:
    """A player whose socket comes from `address` (a loopback address)."""
    ws = await websockets.connect(app.url, max_size=2**20, local_addr=(address, 0))
    c = Client(ws, binary=True)
    await c.hello(name=name, versions=V9)
    return c


async def race(app: App, a: Client, b: Client, *, one_network: bool = False) -> list[str]:
    """`a` and `b` queue for a two-racer race and are matched (after the same-address wait
    when `one_network`); their game ids once it started."""
    for c in (a, b):
        queued = await c.request("race.queue", variant=VARIANT, size=2)
        assert queued["type"] == "race.queued", queued
        app.clock.advance(1)
    if one_network:
        app.clock.advance(15_000)  # nobody else came: the queue pairs them (its sweep)
    await b.push("race.update", timeout=15)
    return [s["game_id"] for s in await start_race(app, a, b)]


async def draw_then_resign(app: App, c: Client, gid: str, draws: int = 5) -> None:
    """The alt of the finding: five stock draws at a human pace, no card cleared, resign."""
    for _ in range(draws):
        app.clock.advance(HUMAN_MS)
        assert (await c.request("move", game_id=gid, move="d"))["type"] == "moved"
    app.clock.advance(HUMAN_MS)
    assert (await c.request("resign", game_id=gid))["type"] == "finished"


async def really_play(app: App, c: Client, gid: str, cards: int = 1) -> None:
    """Real play at a human pace: `cards` times a card cleared."""
    for _ in range(cards):
        await clear_a_card(c, gid, clock=app.clock, gap_ms=HUMAN_MS)


async def finish(app: App, c: Client, gid: str) -> dict[str, dict[str, Any]]:
    """`c` resigns (the race ends: everyone is done); the results by player id."""
    app.clock.advance(HUMAN_MS)
    await c.request("resign", game_id=gid)
    while True:
        ev = await c.push("race.event")
        if ev["event"]["kind"] == "finished":
            return {r["player_id"]: r for r in ev["event"]["results"]}


async def wins(c: Client) -> list[dict[str, Any]]:
    top = await c.request("race.top", variant=VARIANT, board="wins")
    assert top["type"] == "race.board", top
    entries: list[dict[str, Any]] = top["entries"]
    return entries


async def test_second_accounts_of_one_network_feed_main_no_rating_and_no_win(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    """The finding: main and a fresh alt of one address, paired after the same-address wait;
    the alt draws five times at a human pace and resigns, main plays on: main 1000 -> 1138,
    +118 over a second alt, rank 1. Now racers of one network (here 127.0.0.0/24, two
    addresses of it) keep their places but are unrated: no rating, no win."""
    main = await client_from(app, "127.0.0.1", "net_main")
    for n, address in enumerate(("127.0.0.1", "127.0.0.77")):
        alt = await client_from(app, address, f"net_alt{n}")
        gm, ga = await race(app, main, alt, one_network=True)
        await draw_then_resign(app, alt, ga)
        await really_play(app, main, gm, cards=2)
        results = await finish(app, main, gm)
        assert results[main.player_id]["place"] == 1, "the race still runs: main is first"
        for r in results.values():
            assert r.get("rating") is None and r.get("rating_change") is None, r
        await alt.close()
    rank = await main.request("race.rank", variant=VARIANT)
    assert rank.get("entry") is None, "main has no rating from its second accounts"
    assert await redis_client.zcard(keys.rating_board(VARIANT)) == 0
    assert await wins(main) == [], "no win over one's own network"
    history = await main.request("race.recent", variant=VARIANT)
    assert history["races"] == [], "no rated race to list"


async def test_two_real_players_of_different_networks_are_still_rated(app: App) -> None:
    """Two players from different /24s who both clear cards: rated, the winner's win counts."""
    a = await client_from(app, "127.0.1.1", "real_a")
    b = await client_from(app, "127.0.2.1", "real_b")
    ga, gb = await race(app, a, b)
    await really_play(app, a, ga, cards=2)
    await really_play(app, b, gb)
    app.clock.advance(HUMAN_MS)
    await b.request("resign", game_id=gb)
    results = await finish(app, a, ga)
    assert results[a.player_id]["place"] == 1
    assert results[a.player_id]["rating_change"] > 0 > results[b.player_id]["rating_change"]
    assert [e["player_id"] for e in await wins(a)] == [a.player_id]


async def test_draws_alone_are_no_real_attempt(app: App) -> None:
    """Five stock draws then `resign` counted as a real attempt (`REAL_ATTEMPT_MOVES = 5`).
    Now a card must be cleared (or the game played until over or the time limit): the
    drawing racer loses points, the winner gains none and no win."""
    main = await client_from(app, "127.0.3.1", "draw_main")
    drawer = await client_from(app, "127.0.4.1", "draw_alt")
    gm, gd = await race(app, main, drawer)
    await draw_then_resign(app, drawer, gd, draws=8)
    await really_play(app, main, gm)
    results = await finish(app, main, gm)
    assert results[main.player_id]["place"] == 1
    assert results[main.player_id]["rating_change"] == 0, "nothing from draws alone"
    assert results[drawer.player_id]["rating_change"] < 0, "who did not try loses"
    assert await wins(main) == []


async def test_a_provisional_accounts_loss_gives_its_winner_nothing(provisional_app: App) -> None:
    """Alts from networks of their own (a VPN) that really play: each is provisional (fewer
    than 2 distinct rivals, `--race-provisional-rivals 2`): its own rating moves, its loss
    gives the established winner nothing, and no win. (Review F-H: while provisional, main
    gains nothing over them either: one card cleared each made them real attempts, and main
    went 1000 -> 1138 -> 1256 on them before.)"""
    app = provisional_app
    main = await client_from(app, "127.0.10.1", "prov_main")
    # main becomes established: rated against two distinct rivals who really played.
    for n in range(2):
        rival = await client_from(app, f"127.0.{11 + n}.1", f"prov_rival{n}")
        gm, gr = await race(app, main, rival)
        await really_play(app, main, gm, cards=2)
        await really_play(app, rival, gr)
        app.clock.advance(HUMAN_MS)
        await rival.request("resign", game_id=gr)
        results = await finish(app, main, gm)
        assert results[main.player_id]["rating_change"] == 0, "no gain over provisional alts"
        assert results[rival.player_id]["rating_change"] < 0, "a provisional loser loses"
        assert await wins(main) == [], "no win over a provisional rival"
    assert (await main.request("race.rank", variant=VARIANT)).get("entry") is None, "unmoved"
    alt = await client_from(app, "127.0.20.1", "prov_alt")
    gm, ga = await race(app, main, alt)
    await really_play(app, main, gm, cards=2)
    await really_play(app, alt, ga)
    app.clock.advance(HUMAN_MS)
    await alt.request("resign", game_id=ga)
    results = await finish(app, main, gm)
    assert results[main.player_id]["place"] == 1
    assert results[main.player_id]["rating_change"] == 0, "a new account's loss gives nothing"
    assert results[alt.player_id]["rating_change"] < 0, "its own rating moves"
    assert (await main.request("race.rank", variant=VARIANT)).get("entry") is None, "unmoved"
    assert await wins(main) == []


async def test_a_group_race_of_main_and_its_second_accounts_is_unrated(app: App) -> None:
    """The group finding: main and seven alts in one race (+94; main first even after
    resigning), here main and three alts, size 4 (the queue groups one network's accounts
    only when nobody else waits, after the same-address wait). The alts draw and resign, main
    resigns after one card and is placed first: nobody is rated, no win."""
    main = await client_from(app, "127.0.5.1", "grp_main")
    alts = [await client_from(app, f"127.0.5.{2 + n}", f"grp_alt{n}") for n in range(3)]
    racers = [main, *alts]
    for c in racers:
        queued = await c.request("race.queue", variant=VARIANT, size=4)
        assert queued["type"] == "race.queued", queued
        app.clock.advance(1)
    app.clock.advance(15_000)
    await alts[-1].push("race.update", timeout=15)
    games = [s["game_id"] for s in await start_race(app, *racers)]
    for c, gid in zip(alts, games[1:], strict=True):
        await draw_then_resign(app, c, gid)
    await really_play(app, main, games[0])
    results = await finish(app, main, games[0])
    assert results[main.player_id]["place"] == 1, "main resigned, and is first all the same"
    for r in results.values():
        assert r.get("rating") is None and r.get("rating_change") is None, r
    assert await wins(main) == []
    assert (await main.request("race.rank", variant=VARIANT)).get("entry") is None


async def test_racing_an_alt_again_voids_no_group_race_left_behind(app: App) -> None:
    """Cheater review C1: a losing racer and an alt, both out of a group race still running
    (their games over: free to race again), raced each other at once and ended first; the
    once-a-day pair rule, judged at the group race's end, then left it unrated for everyone:
    the loss erased, the honest winner's gain and win gone. A race now rates only the pairs
    it was dealt first that day: the throwaway race is the unrated one."""
    cheat = await client_from(app, "127.0.30.1", "void_cheat")
    alt = await client_from(app, "127.0.31.1", "void_alt")
    honest = await client_from(app, "127.0.32.1", "void_honest")
    group = [honest, cheat, alt]
    for c in group:
        assert (await c.request("race.queue", variant=VARIANT, size=3))["type"] == "race.queued"
        app.clock.advance(1)
    await alt.push("race.update", timeout=15)
    g_honest, g_cheat, g_alt = [s["game_id"] for s in await start_race(app, *group)]
    await really_play(app, honest, g_honest, cards=2)
    for c, gid in ((cheat, g_cheat), (alt, g_alt)):  # both really try, then give up
        await really_play(app, c, gid)
        app.clock.advance(HUMAN_MS)
        assert (await c.request("resign", game_id=gid))["type"] == "finished"
    # The throwaway race, while the group race runs: rated before, so the pair was "met".
    g2_cheat, g2_alt = await race(app, cheat, alt)
    await really_play(app, cheat, g2_cheat)
    await really_play(app, alt, g2_alt)
    app.clock.advance(HUMAN_MS)
    await alt.request("resign", game_id=g2_alt)
    throwaway = await finish(app, cheat, g2_cheat)
    for r in throwaway.values():
        assert r.get("rating") is None and r.get("rating_change") is None, r
    results = await finish(app, honest, g_honest)
    assert results[honest.player_id]["place"] == 1
    assert results[honest.player_id]["rating_change"] > 0, results
    assert all(r.get("rating_change") is not None for r in results.values()), results
    assert min(r["rating_change"] for r in results.values()) < 0, "someone's loss stands"
    assert [e["player_id"] for e in await wins(honest)] == [honest.player_id]


@pytest_asyncio.fixture
async def screened_app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    async with serve(fair_config(redis_url, tmp_path, fair_play_screen=True)) as app:
        yield app


async def test_a_racer_who_trips_the_screen_on_purpose_still_loses(screened_app: App) -> None:
    """Cheater review F1: a losing racer played a burst at machine speed (a dozen moves in
    no time) before resigning; the screen held the result, a held racer was left unrated
    and, two racers being one, nobody was rated: no loss ever, and any deal seen at the
    start thrown away for free. Now a held racer keeps their place but is rated as one who
    made no real attempt: last, a loss, and nobody gains from them."""
    app = screened_app
    main = await client_from(app, "127.0.30.1", "held_main")
    burster = await client_from(app, "127.0.31.1", "held_burster")
    gm, gb = await race(app, main, burster)
    await really_play(app, burster, gb)
    for _ in range(14):  # the finding's burst: move, undo, at once (the clock stands still)
        view = (await burster.request("game.get", game_id=gb))["view"]
        move = next(str(m) for m in from_view(view).legal_moves() if str(m) != "d")
        assert (await burster.request("move", game_id=gb, move=move))["type"] == "moved"
        await burster.request("undo", game_id=gb)  # refused when the move turned a card
    app.clock.advance(HUMAN_MS)
    assert (await burster.request("resign", game_id=gb))["type"] == "finished"
    got = await burster.request("game.get", game_id=gb)
    assert got["result"].get("status") == "flagged", got
    await really_play(app, main, gm)
    results = await finish(app, main, gm)
    assert results[burster.player_id]["rating_change"] < 0, "the held racer loses"
    assert results[main.player_id]["rating_change"] == 0, "and gives nobody points"
    assert await wins(main) == []


async def test_a_new_account_gains_nothing_from_rivals_who_never_tried(
    provisional_app: App,
) -> None:
    """Cheater review F3: a fresh (provisional) account was rated from the whole race, the
    racers with no real attempt counted as last: eight alts that queued and resigned at
    once took it from 1000 to 1719. Now it is rated from those who tried only: alone, it
    keeps its rating; the alt still loses."""
    app = provisional_app
    main = await client_from(app, "127.0.40.1", "fresh_main")
    for n in range(2):
        alt = await client_from(app, f"127.0.{41 + n}.1", f"fresh_alt{n}")
        gm, ga = await race(app, main, alt)
        assert (await alt.request("resign", game_id=ga))["type"] == "finished"
        await really_play(app, main, gm)
        results = await finish(app, main, gm)
        assert results[main.player_id]["place"] == 1
        assert results[main.player_id]["rating_change"] == 0, results[main.player_id]
        assert results[alt.player_id]["rating_change"] < 0
        await alt.close()
    assert await wins(main) == []


@pytest_asyncio.fixture
async def proxied_app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    """Behind a trusted proxy: clients' addresses (IPv6 ones too) from `X-Forwarded-For`."""
    async with serve(fair_config(redis_url, tmp_path, trusted_proxies=("127.0.0.0/8",))) as app:
        yield app


async def client_behind(app: App, address: str, name: str) -> Client:
    """A player the proxy says comes from `address`."""
    headers = {"X-Forwarded-For": address}
    ws = await websockets.connect(app.url, max_size=2**20, additional_headers=headers)
    c = Client(ws, binary=True)
    await c.hello(name=name, versions=V9)
    return c


async def test_second_accounts_on_64s_of_one_48_are_one_network(proxied_app: App) -> None:
    """Cheater review F2: the race rules counted an IPv6 /64 as one subscriber; a /48 (a
    tunnel broker's, free) was 65,536 networks: alts were matched as strangers and rated
    against a main (+528 in five races). Now a /48 is one network: kept apart in the queue
    while others wait, and unrated against each other."""
    app = proxied_app
    main = await client_behind(app, "2001:db8:78:99::1", "v6_main")
    alt = await client_behind(app, "2001:db8:78:1::1", "v6_alt")
    gm, ga = await race(app, main, alt, one_network=True)
    await draw_then_resign(app, alt, ga, draws=1)
    await really_play(app, main, gm, cards=2)
    results = await finish(app, main, gm)
    for r in results.values():
        assert r.get("rating") is None and r.get("rating_change") is None, r
    # Another /48: strangers, rated.
    other = await client_behind(app, "2001:db8:79:1::1", "v6_other")
    gm, go = await race(app, main, other)
    await really_play(app, other, go)
    app.clock.advance(HUMAN_MS)
    await other.request("resign", game_id=go)
    await really_play(app, main, gm, cards=2)
    results = await finish(app, main, gm)
    assert results[main.player_id]["rating_change"] > 0
