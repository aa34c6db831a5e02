"""Boards of a day not begun (fairplay.md, "Boards of days to come"): refused over the
WebSocket as the HTTP API refuses them, so a par certified ahead is not told before its day."""

from __future__ import annotations

import datetime as dt
from typing import Any

import redis.asyncio

from server.games.daily import utc_date
from server.games.deals import Deal
from server.redis import keys
from tests.support.app import App

VARIANT = "fourteen-out"
PAR = 4321  # no real deal has this par: a reply carrying it read tomorrow's deal


async def test_no_leaderboard_or_race_board_of_a_day_not_begun(
    race_app: App, redis_client: redis.asyncio.Redis
) -> None:
    """The finding: `leaderboard.top` with tomorrow's date answered, with the par of
    tomorrow's deal once certified ahead. Tomorrow is certified here; every board request of
    it (and of far dates, with a tier too) is `not_found`; today's boards still answer."""
    today = utc_date(race_app.clock.now_ms())
    tomorrow = today + dt.timedelta(days=1)
    deal = Deal(VARIANT, tomorrow, seed=7, par=PAR, certified=True, candidate=0)
    await redis_client.set(keys.daily_deal(VARIANT, tomorrow), deal.dump())
    c = await race_app.client("future_peek", versions=tuple(range(1, 10)))
    for day in (tomorrow, today + dt.timedelta(days=400), dt.date(9999, 12, 31)):
        for kind in ("leaderboard.top", "leaderboard.around", "leaderboard.rank"):
            for tier in (None, "hard"):
                fields: dict[str, Any] = {"variant": VARIANT, "date": day.isoformat()}
                if tier is not None:
                    fields["tier"] = tier
                reply = await c.request(kind, **fields)
                assert (reply["type"], reply.get("code")) == ("error", "not_found"), reply
                assert "has not begun" in reply["message"] and PAR not in reply.values()
        for kind in ("race.top", "race.around", "race.rank"):
            reply = await c.request(kind, variant=VARIANT, board="wins", date=day.isoformat())
            assert (reply["type"], reply.get("code")) == ("error", "not_found"), reply
    top = await c.request("leaderboard.top", variant=VARIANT, date=today.isoformat())
    assert top["type"] == "leaderboard" and top["date"] == today.isoformat(), top
    assert (await c.request("leaderboard.rank", variant=VARIANT))["type"] == "rank"
    wins = await c.request("race.top", variant=VARIANT, board="wins", date=today.isoformat())
    assert wins["type"] == "race.board" and wins["date"] == today.isoformat(), wins
    # The rating board has no day: a date beside it is ignored, as before.
    rating = await c.request("race.top", variant=VARIANT, board="rating", date=tomorrow.isoformat())
    assert rating["type"] == "race.board", rating
    yesterday = (today - dt.timedelta(days=1)).isoformat()
    assert (await c.request("leaderboard.top", variant=VARIANT, date=yesterday))["type"] == (
        "leaderboard"
    )
