"""A day's games end with the day (issue #24 item 1), through the real server, real Redis and
real WebSockets on manual clocks.

The cheat it closes: a Tri Peaks daily started 7 s before midnight, its seed read from
`daily.seeds` 0.3 s after midnight, the solver's line played and the game won 0.9 s after the
day ended, ranked #1 on that day's board.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import redis.asyncio

import protocol as p
from clients.cli.games import DAY_OVER_TEXT, ServerGame
from clients.cli.session import ServerSession
from engine import from_view
from server.runtime.clock import ManualClock
from tests.support.app import T0_MS, App, serve
from tests.support.races import race_config
from tests.support.wsclient import Client

DAY_MS = 86_400_000
MIDNIGHT = T0_MS + DAY_MS // 2  # 2030-06-16 00:00 UTC: the end of 2030-06-15
YESTERDAY = dt.date(2030, 6, 15)
V5 = (1, 2, 3, 4, 5)
V4 = (1, 2, 3, 4)


async def player(app: App, name: str, versions: tuple[int, ...] = V5) -> Client:
    c = await Client.connect(app.url)
    await c.hello(name=name, versions=versions)
    return c


async def start(c: Client, variant: str) -> dict[str, Any]:
    g = await c.request("daily.start", variant=variant)
    assert g["type"] == "game" and not g["finished"], g
    return g


def a_move(game: dict[str, Any]) -> str:
    return str(next(iter(from_view(game["view"]).legal_moves())))


async def moved(c: Client, g: dict[str, Any], seq: int) -> dict[str, Any]:
    """Play a legal move of the game's current position; the new state (`game.get`)."""
    now = await c.request("game.get", game_id=g["game_id"])
    r = await c.request("move", game_id=g["game_id"], move=a_move(now), expected_seq=seq)
    assert r["type"] == "moved", r
    return await c.request("game.get", game_id=g["game_id"])


def refused_for_the_day(reply: dict[str, Any], code: str = "day_over") -> None:
    assert reply["type"] == "error" and reply["code"] == code, reply
    assert "day is over" in reply["message"], reply


async def test_the_cheat_finishing_yesterdays_tri_peaks_with_its_seed(race_app: App) -> None:
    clock = race_app.clock
    clock.set(MIDNIGHT - 7_000)  # 23:59:53
    c = await player(race_app, "cheater")
    g = await start(c, "triple-triangle")
    clock.set(MIDNIGHT + 300)  # 00:00:00.3: the seed is not published, the game is open
    seeds = await c.request("daily.seeds", date=YESTERDAY.isoformat())
    assert seeds["type"] == "error" and seeds["code"] == "not_found", seeds
    assert "retry" in seeds["message"]
    clock.set(MIDNIGHT + 900)  # 00:00:00.9: a move of the line (leaked or not) is refused
    refused_for_the_day(await c.request("move", game_id=g["game_id"], move=a_move(g)))
    now = await c.request("game.get", game_id=g["game_id"])
    assert now["finished"] and now["seq"] == 0, "closed as it stood: no move after midnight"
    assert not now["result"]["won"] and now["result"]["over"]
    assert now["result"]["time_ms"] == 7_000, "its clock ran until the day's end"
    board = await c.request("leaderboard.top", variant="triple-triangle", date="2030-06-15")
    assert [(e["name"], e["won"]) for e in board["entries"]] == [("cheater", False)]
    # Once every game of the day is settled, the day closes and its seeds are public; the
    # game still takes nothing.
    assert await race_app.services.day_closer.sweep(YESTERDAY)
    seeds = await c.request("daily.seeds", date=YESTERDAY.isoformat())
    assert seeds["type"] == "daily.seeds" and "triple-triangle" in seeds["seeds"], seeds
    refused_for_the_day(await c.request("move", game_id=g["game_id"], move=a_move(g)))


@pytest.mark.parametrize("write", ["move", "undo", "hint", "resign", "finish"])
async def test_every_write_1_ms_after_midnight_is_refused(race_app: App, write: str) -> None:
    clock = race_app.clock
    clock.set(MIDNIGHT - 60_000)
    c = await player(race_app, f"late_{write}")
    variant = "triple-deck" if write == "finish" else "fourteen-out"
    g = await start(c, variant)
    before = await moved(c, g, 0)
    clock.set(MIDNIGHT + 1)
    request: dict[str, Any] = {"game_id": g["game_id"]}
    if write == "move":
        request |= {"move": a_move(before), "expected_seq": 1}
    reply = await c.request(write, timeout=30, **request)
    refused_for_the_day(reply)
    after = await c.request("game.get", game_id=g["game_id"])
    assert after["seq"] == 1 and after["hints"] == 0, "nothing written after the day's end"
    assert after["finished"] and not after["result"]["resigned"], "closed, not resigned"
    ids = await race_app.services.redis.lrange(
        f"sol:{{d:{variant}:2030-06-15:{c.player_id}}}:log", 0, -1
    )
    assert len(ids) == 1, "the log in Redis holds the one move made before midnight"


async def test_old_versions_get_game_over(race_app: App) -> None:
    race_app.clock.set(MIDNIGHT - 1_000)
    c = await player(race_app, "oldtimer", versions=V4)
    g = await start(c, "fourteen-out")
    race_app.clock.set(MIDNIGHT + 1)
    reply = await c.request("move", game_id=g["game_id"], move=a_move(g))
    refused_for_the_day(reply, code="game_over")
    refused_for_the_day(await c.request("resign", game_id=g["game_id"]), code="game_over")


async def test_an_open_game_is_closed_at_rollover_onto_board_and_history(race_app: App) -> None:
    clock = race_app.clock
    clock.set(MIDNIGHT - 600_000)  # 23:50
    c = await player(race_app, "sleeper")
    deck = await start(c, "triple-deck")
    pairs = await start(c, "fourteen-out")
    deck_now = await moved(c, deck, 0)
    await moved(c, pairs, 0)
    clock.set(MIDNIGHT + 5_000)
    # No request of the player: the sweep closes both, as they stood.
    assert await race_app.services.day_closer.sweep(YESTERDAY)
    got = await c.request("game.get", game_id=deck["game_id"])
    r = got["result"]
    assert got["finished"] and (r["won"], r["over"], r["resigned"]) == (False, True, False)
    assert r["score"] == deck_now["view"]["score"], "the score as it stood"
    assert r["time_ms"] == 600_000 and r["moves"] == 1
    for variant in ("triple-deck", "fourteen-out"):
        top = await c.request("leaderboard.top", variant=variant, date="2030-06-15")
        [entry] = top["entries"]
        assert (entry["name"], entry["won"], entry["time_ms"]) == ("sleeper", False, 600_000)
        assert entry["finished_at"] == MIDNIGHT, "as of the day's end"
    profile = await c.request("profile.get")
    recent = {d["variant"]: d for d in profile["recent"]}
    assert set(recent) == {"triple-deck", "fourteen-out"}
    assert not recent["fourteen-out"]["won"] and not recent["fourteen-out"]["resigned"]
    assert recent["triple-deck"]["score"] == r["score"]
    stats = {d["variant"]: d for d in profile["daily"]}
    assert (stats["fourteen-out"]["played"], stats["fourteen-out"]["won"]) == (1, 0)
    # A second sweep (another process) changes nothing.
    assert await race_app.services.day_closer.sweep(YESTERDAY)
    again = await c.request("leaderboard.top", variant="fourteen-out", date="2030-06-15")
    assert again["total"] == 1


async def test_a_game_read_after_midnight_is_closed_lazily(race_app: App) -> None:
    race_app.clock.set(MIDNIGHT - 2_000)
    c = await player(race_app, "reader")
    g = await start(c, "fourteen-out")
    race_app.clock.set(MIDNIGHT + 1)
    got = await c.request("game.get", game_id=g["game_id"])
    assert got["finished"] and got["result"]["over"] and not got["result"]["won"], got
    assert got["result"]["rank"] == 1


async def test_seeds_and_exports_wait_for_every_game_of_the_day(race_app: App) -> None:
    clock = race_app.clock
    clock.set(MIDNIGHT - 60_000)
    a, b = await player(race_app, "finisher"), await player(race_app, "dawdler")
    done = await start(a, "fourteen-out")
    await a.request("resign", game_id=done["game_id"])
    await start(b, "triple-triangle")  # left open over midnight
    clock.set(MIDNIGHT + 60_000)
    day = YESTERDAY.isoformat()
    assert (await a.request("daily.seeds", date=day))["code"] == "not_found"
    assert (await a.request("game.export", game_id=done["game_id"]))["code"] == "not_found"
    assert await race_app.services.day_closer.sweep(YESTERDAY)
    seeds = await a.request("daily.seeds", date=day)
    assert {"fourteen-out", "triple-triangle"} <= set(seeds["seeds"]), seeds
    export = await a.request("game.export", game_id=done["game_id"])
    assert export["type"] == "game.export" and export["seed"] == seeds["seeds"]["fourteen-out"]
    today = await a.request("daily.seeds", date="2030-06-16")
    assert today["code"] == "not_found", "today's seeds stay secret"


@pytest_asyncio.fixture
async def two_apps(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[tuple[App, App]]:
    """Two server processes on one Redis; B's clock one second behind A's."""
    config = race_config(redis_url, tmp_path)
    async with (
        serve(config, ManualClock(MIDNIGHT - 60_000)) as a,
        serve(config, ManualClock(MIDNIGHT - 61_000)) as b,
    ):
        yield a, b


def at(app: App, ms: int) -> None:
    app.clock.set(ms)


async def test_two_processes_with_skewed_clocks_both_refuse(two_apps: tuple[App, App]) -> None:
    a, b = two_apps
    on_b = await player(b, "skewed")
    g = await start(on_b, "fourteen-out")
    swept = await start(on_b, "triple-triangle")
    on_a = await Client.connect(a.url)
    await on_a.hello(token=on_b.token, versions=V5)
    # 1 ms after midnight by A; 23:59:59.001 by B.
    at(a, MIDNIGHT + 1)
    at(b, MIDNIGHT + 1 - 1_000)
    refused_for_the_day(await on_a.request("move", game_id=g["game_id"], move=a_move(g)))
    refused_for_the_day(await on_b.request("move", game_id=g["game_id"], move=a_move(g)))
    refused_for_the_day(await on_b.request("resign", game_id=g["game_id"]))
    # A game nobody touched after midnight: A's sweep closes it, and B refuses it too.
    assert await a.services.day_closer.sweep(YESTERDAY)
    refused_for_the_day(await on_b.request("move", game_id=swept["game_id"], move=a_move(swept)))
    refused_for_the_day(await on_b.request("hint", game_id=swept["game_id"], timeout=30))
    # The day is closed: B (still on 2030-06-15 by its clock) deals no new game of it.
    late = await player(b, "latecomer")
    refused_for_the_day(await late.request("daily.start", variant="fourteen-out"))
    assert (await on_b.request("game.get", game_id=g["game_id"]))["finished"]


async def test_the_terminal_client_says_the_day_is_over(race_app: App) -> None:
    race_app.clock.set(MIDNIGHT - 5_000)
    session = ServerSession(race_app.url, name="cli_late")
    welcome = await session.connect()
    assert welcome.version >= p.FAIR_PLAY  # day_over is sent from version 5 on
    state = await session.request(
        lambda rid: p.DailyStart(id=rid, variant="fourteen-out"), p.GameState
    )
    game = ServerGame(session, state)
    race_app.clock.set(MIDNIGHT + 1)
    out = await game.move(str(game.legal_moves()[0]))
    assert not out.ok and out.code == "day_over" and out.reason == DAY_OVER_TEXT
    assert game.finished, "the client fetched the game closed at the day's end"
    assert (await game.resign()).reason == DAY_OVER_TEXT
    await session.close()


async def test_a_days_ranks_are_final_only_once_every_game_of_it_is_on_the_board(
    race_app: App,
) -> None:
    clock = race_app.clock
    clock.set(MIDNIGHT - 60_000)
    early, late = await player(race_app, "early_bird"), await player(race_app, "night_owl")
    g = await start(early, "fourteen-out")
    await early.request("resign", game_id=g["game_id"])
    await moved(late, await start(late, "fourteen-out"), 0)  # left open over midnight
    clock.set(MIDNIGHT + 1_000)
    [mine] = (await early.request("profile.get"))["recent"]
    assert "rank" not in mine, "no final rank while a game of the day may still reach its board"
    assert await race_app.services.day_closer.sweep(YESTERDAY)
    [mine] = (await early.request("profile.get"))["recent"]
    assert mine["total"] == 2, "the game closed at the day's end is on the board it ranks on"


async def test_any_process_closes_the_day_in_the_background_and_together_once(
    two_apps: tuple[App, App],
) -> None:
    a, b = two_apps
    names = [f"sweep_{i}" for i in range(5)]
    clients = [await player(a, n) for n in names]
    for c in clients:
        await moved(c, await start(c, "fourteen-out"), 0)
    at(a, MIDNIGHT + 2_000)
    at(b, MIDNIGHT + 1_000)
    # Both processes sweep at once: every game closed once, one entry each on the board.
    await asyncio.gather(
        a.services.day_closer.sweep(YESTERDAY), b.services.day_closer.sweep(YESTERDAY)
    )
    board = await clients[0].request(
        "leaderboard.top", variant="fourteen-out", date="2030-06-15", limit=50
    )
    assert sorted(e["name"] for e in board["entries"]) == names and board["total"] == 5
    for c in clients:
        stats = {d["variant"]: d for d in (await c.request("profile.get"))["daily"]}
        assert stats["fourteen-out"]["played"] == 1


async def test_a_process_started_after_midnight_closes_yesterday_by_itself(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    config = race_config(redis_url, tmp_path)
    async with serve(config, ManualClock(MIDNIGHT - 10_000)) as before:
        first = await player(before, "overnight")
        g = await start(first, "triple-triangle")
        token = first.token
    # A new process whose clock is past midnight: its background job (the app's cleanup_ctx)
    # closes the open game and the day, with no request of anyone.
    async with serve(config, ManualClock(MIDNIGHT + 5_000)) as after:
        for _ in range(100):
            if await after.services.day_closer.day_closed(YESTERDAY):
                break
            await asyncio.sleep(0.05)
        c = await Client.connect(after.url)
        await c.hello(token=token, versions=V5)
        seeds = await c.request("daily.seeds", date=YESTERDAY.isoformat())
        assert seeds["type"] == "daily.seeds", seeds
        got = await c.request("game.get", game_id=g["game_id"])
        assert got["finished"] and got["result"]["time_ms"] == 10_000


async def test_hints_counted_on_another_process_survive_the_close_at_midnight(
    two_apps: tuple[App, App],
) -> None:
    """The cheat a helper found: hints asked through process A, the moves played through
    process B (one player, two connections: the balancer may route them so). B's cached copy
    never learns of the hints (they change no move count), and B's close at the day's end
    wrote its copy's count, 0: the result unhinted, without its penalties, ranked as such.
    The finish's step now refuses any hint count but the stored one, for every caller."""
    a, b = two_apps
    at(b, MIDNIGHT - 60_000)
    honest = await player(a, "unhinted")
    hg = await start(honest, "triple-deck")
    assert (await honest.request("finish", game_id=hg["game_id"]))["type"] == "finished"
    on_b = await player(b, "twohands")
    g = await start(on_b, "triple-deck")
    on_a = await Client.connect(a.url)
    await on_a.hello(token=on_b.token, versions=V5)
    seq = g["seq"]
    for n in (1, 2, 3):
        await on_a.request("game.get", game_id=g["game_id"])
        h = await on_a.request("hint", game_id=g["game_id"], timeout=30)
        assert h["type"] == "hint" and h["move"] and h["hints"] == n, h
        m = await on_b.request("move", game_id=g["game_id"], move=h["move"], expected_seq=seq)
        assert m["type"] == "moved", m
        seq = m["seq"]
    at(a, MIDNIGHT + 1)
    at(b, MIDNIGHT + 1)
    late = await on_b.request("move", game_id=g["game_id"], move=a_move(g), expected_seq=seq)
    refused_for_the_day(late)  # B closed the game as it stood, from its own copy
    result = (await on_b.request("game.get", game_id=g["game_id"]))["result"]
    assert result["hints"] == 3, result
    assert result["time_ms"] >= 60_000 + 3 * 30_000, result  # to midnight, plus 3 penalties
    board = await honest.request(
        "leaderboard.top", variant="triple-deck", date=YESTERDAY.isoformat()
    )
    ranked = [(e["name"], e["hints"]) for e in board["entries"]]
    assert ranked == [("unhinted", 0), ("twohands", 3)], ranked
