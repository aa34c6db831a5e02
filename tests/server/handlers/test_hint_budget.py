"""Hints of daily and tier games can no longer tie up the solver (cheater review F5): each
player's hints have a budget of solver time per hour (`--hint-solver-ms-per-hour`, charged
whether a move is found or not), and hints wait behind the day's certification in the
shared pool. Real server, real Redis, real WebSockets, the real solver pool."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import redis.asyncio

from engine import from_view
from engine.solvers import WINNABLE, solve
from server.games.free import FREE_SEED_BASE
from server.redis import keys
from tests.support.app import serve, unthrottled_config
from tests.support.wsclient import Client

V8 = (1, 2, 3, 4, 5, 6, 7, 8)
HOUR_MS = 3_600_000


async def test_hints_are_limited_by_solver_time_per_player_and_hour(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """With a budget of 1 ms an hour, the first hint (a real search, at least 1 ms charged)
    spends it: the next hint, in any game of the player, is `limit_reached` until the next
    hour; another player's hints are not affected."""
    config = unthrottled_config(redis_url, tmp_path, b"hbudget", hint_solver_ms_per_hour=1)
    async with serve(config) as app:
        me = await Client.connect(app.url)
        await me.hello(name="looper", versions=V8)
        daily = await me.request("daily.start", variant="fourteen-out")
        first = await me.request("hint", game_id=daily["game_id"], timeout=30)
        assert first["type"] == "hint" and first["move"], first
        hour = app.clock.now_ms() // HOUR_MS
        spent = await redis_client.get(keys.hint_solver_ms(me.player_id, hour))
        assert spent is not None and int(spent) >= 1, "the search's time is charged"
        refused = await me.request("hint", game_id=daily["game_id"], timeout=30)
        assert (refused["type"], refused["code"]) == ("error", "limit_reached"), refused
        assert "solver time" in refused["message"] and "min" in refused["message"]
        tier = await me.request("daily.start", variant="fourteen-out", tier="easy")
        again = await me.request("hint", game_id=tier["game_id"], timeout=30)
        assert again["code"] == "limit_reached", "the budget is the player's, every game"
        record = await app.services.store.get(daily["game_id"])
        assert record.hints == 1, "a refused hint is not counted"
        other = await Client.connect(app.url)
        await other.hello(name="other", versions=V8)
        theirs = await other.request("daily.start", variant="fourteen-out")
        served = await other.request("hint", game_id=theirs["game_id"], timeout=30)
        assert served["type"] == "hint", served
        app.clock.advance(HOUR_MS)  # a new hour, a new budget
        back = await me.request("hint", game_id=daily["game_id"], timeout=30)
        assert back["type"] == "hint", back
        await me.close()
        await other.close()


async def test_a_hint_flood_leaves_certification_running(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """Hints take at most `spare_slots` workers at a time and wait in the process's lane,
    not in the pool's queue: a certification job asked for during a flood of long hints
    (1 s each, the worst a hint costs is its budget) runs after at most one hint per slot,
    not after the whole flood (6 s of searches)."""
    async with serve(unthrottled_config(redis_url, tmp_path, b"hflood")) as app:
        pool = app.services.deals.pool
        slots = pool.spare_slots()
        await asyncio.gather(*(pool.run(time.sleep, 0.2) for _ in range(pool.workers)))
        started = time.monotonic()
        flood = [asyncio.ensure_future(pool.run_hint(time.sleep, 1.0)) for _ in range(6)]
        await asyncio.sleep(0.2)
        assert pool.hints_busy == slots, "the other hints wait in the lane"
        await pool.run(time.sleep, 0.2)  # the day's certification
        certified_after = time.monotonic() - started
        assert certified_after < 1.0 + 0.2 + 1.0, f"certification waited {certified_after:.2f} s"
        assert not all(f.done() for f in flood), "the flood is still running"
        await asyncio.gather(*flood)
        flood_took = time.monotonic() - started
        assert flood_took >= 6 / slots - 0.1, "hints ran at most spare_slots at a time"
        assert pool.hints_busy == 0


#: A free deal of Fourteen Out that offers moves but has no winning line (the solver proves it
#: in a few ms): free seeds are random, so the test deals this one.
HOPELESS_FREE_SEED = FREE_SEED_BASE + 13


async def test_a_hint_that_finds_no_move_is_charged_all_the_same(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The loop of the review played on a hopeless position: a free game with moves left but
    no winning line. The hint answers so (no `move`), counted as a hint (the search knows the
    face-down cards: "no winning line" is worth a hint), and its search is charged to the
    hourly budget: with 1 ms an hour, the second such request is `limit_reached`."""
    monkeypatch.setattr("server.games.free.free_seed", lambda variant: HOPELESS_FREE_SEED)
    config = unthrottled_config(
        redis_url, tmp_path, b"hbudget2", hint_solver_ms_per_hour=1, free_hints_per_hour=10
    )
    async with serve(config) as app:
        me = await Client.connect(app.url)
        await me.hello(name="hopeless", versions=V8)
        game = await me.request("free.start", variant="fourteen-out")
        assert game["type"] == "game", game
        position = from_view(game["view"])
        assert list(position.legal_moves()), "the game goes on: moves are left"
        assert solve(position).verdict != WINNABLE, "but no line wins"
        hour = app.clock.now_ms() // HOUR_MS
        assert await redis_client.get(keys.hint_solver_ms(me.player_id, hour)) is None

        first = await me.request("hint", game_id=game["game_id"], timeout=30)
        assert first["type"] == "hint" and first.get("move") is None, first
        assert first["hints"] == 1 and first["penalty_ms"] == config.hint_penalty_ms, first
        spent = await redis_client.get(keys.hint_solver_ms(me.player_id, hour))
        assert spent is not None and int(spent) >= 1, "the fruitless search is charged"
        refused = await me.request("hint", game_id=game["game_id"], timeout=30)
        assert (refused["type"], refused["code"]) == ("error", "limit_reached"), refused
        assert "finds no move counts too" in refused["message"], refused
        await me.close()
