"""Catch-up findings of the cheater review (F3, F4), through the real server, real Redis and
real WebSockets on a manual clock, played as the cheating clients would.

F3: every player plays the same secret catch-up deal of a (variant, day, tier). A scout
account asked a hint for every move of it (its result crownless) and a main account replayed
the line by hand for crowns: catch-up games now take no hints (``conflict``).
F4: a catch-up result the screen held was never listed on the review desk, so a false
positive lost its crowns for good: it is listed now, and clearing it awards them.

Deals are uncertified (a bare Config); with the secret ``tiers-1`` every catch-up deal of
Fourteen Out of 2030-06-28 is winnable (tests/server/games/test_tiers.py checks it).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio

from engine.variants import VARIANT_IDS
from server.config import Config
from server.fairplay.review import ReviewDesk
from server.games.daily import day_start_ms
from server.redis import keys
from server.runtime.clock import ManualClock
from tests.support.app import App, serve, unthrottled_config
from tests.support.tierplay import joined_player, start_tier, win_by_solver
from tests.support.wsclient import Client

V8 = (1, 2, 3, 4, 5, 6, 7, 8)
SECRET = b"tiers-1"
JUNE_1, JUNE_28, JUNE_30 = dt.date(2030, 6, 1), dt.date(2030, 6, 28), dt.date(2030, 6, 30)
HOUR_MS = 3_600_000


def at(date: dt.date, hour: float) -> int:
    return day_start_ms(date) + int(hour * HOUR_MS)


@pytest.fixture
def config(redis_url: str, tmp_path: Path) -> Config:
    return unthrottled_config(redis_url, tmp_path, SECRET)


async def player(app: App, name: str) -> Client:
    """A player who joined on the month's first day (catch-up games open from then on)."""
    return await joined_player(app, name, JUNE_1)


async def start(c: Client, tier: str, date: dt.date | None = None) -> dict[str, Any]:
    return await start_tier(c, "fourteen-out", tier, date)


win = win_by_solver


async def test_a_scout_gets_no_hint_on_a_catch_up_deal(config: Config) -> None:
    """The scout starts the catch-up game the main account will play (the same deal) and
    asks the server for its line: refused (``conflict``), nothing counted; today's tier
    still takes hints."""
    async with serve(config, ManualClock(at(JUNE_30, 20))) as app:
        scout, main = await player(app, "scout"), await player(app, "mainacct")
        g = await start(scout, "easy", JUNE_28)
        assert g["catchup"] is True
        refused = await scout.request("hint", game_id=g["game_id"], timeout=30)
        assert refused["type"] == "error" and refused["code"] == "conflict", refused
        assert "catch-up" in refused["message"]
        same = await start(main, "easy", JUNE_28)
        assert same["view"] == g["view"], "every player plays the same catch-up deal"
        record = await app.services.store.get(g["game_id"])
        assert record.hints == 0, "the refused hint is not counted"
        today = await start(scout, "medium")  # always dealt (the daily game)
        given = await scout.request("hint", game_id=today["game_id"], timeout=30)
        assert given["type"] == "hint" and given["move"], given


async def test_a_held_catch_up_result_is_reviewable_and_cleared_for_its_crowns(
    config: Config, redis_client: redis.asyncio.Redis
) -> None:
    """A catch-up game won at machine speed is held (no crowns); it is on the review desk
    now, and the reviewer's clear awards its crowns (a false positive loses nothing)."""
    screened = replace(config, fair_play_screen=True)
    async with serve(screened, ManualClock(at(JUNE_30, 20))) as app:
        fast = await player(app, "fastone")
        g = await start(fast, "hard", JUNE_28)
        won = await win(fast, g)
        assert won["result"]["status"] == "flagged" and won["result"]["catchup"] is True
        assert (await fast.request("calendar.get"))["crowns"] == 0
        desk = ReviewDesk(redis_client, VARIANT_IDS)
        try:
            held = await desk.held()
            assert [h.game_id for h in held] == [g["game_id"]], "listed on the desk"
            assert held[0].catchup
            audit = await desk.clear(g["game_id"], "rev", "a fast human")
            assert "crowns" in audit.detail
        finally:
            await desk.aclose()
        assert await desk_empty(redis_client)
        cal = await fast.request("calendar.get")
        assert cal["crowns"] > 0, "cleared: its crowns awarded"
        board = await fast.request(
            "leaderboard.top", variant="fourteen-out", date=JUNE_28.isoformat(), tier="hard"
        )
        assert board["total"] == 0, "a catch-up result stays on no board"


async def desk_empty(client: redis.asyncio.Redis) -> bool:
    return await client.zcard(keys.fairplay_held()) == 0
