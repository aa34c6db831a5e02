"""Tiers per day, catch-up games, the calendar and crowns (issue #28 part 2), through the real
server, real Redis and real WebSockets on a manual clock.

Deals are uncertified here (a bare Config: `--no-certify`): each tier is its own sequence's
first playable seed, and so is each catch-up deal (of its own sequences, not the day's).
With the secret ``tiers-1`` every Fourteen Out tier of 2030-06-29, 2030-06-30 and 2030-07-01
is winnable (the first test checks it), and so are the catch-up deals of 2030-06-28 (not
June 29's expert one), so a player wins them with the solver's line from the view, as a
client may (Fourteen Out shows every card).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import redis.asyncio

from server.config import Config
from server.games.daily import day_start_ms
from server.runtime.clock import ManualClock
from tests.support.app import App, serve, unthrottled_config
from tests.support.tierplay import joined_player, start_tier, win_by_solver
from tests.support.wsclient import Client

V8 = (1, 2, 3, 4, 5, 6, 7, 8)
V6 = (1, 2, 3, 4, 5, 6)
SECRET = b"tiers-1"
JUNE_29, JUNE_30, JULY_1 = dt.date(2030, 6, 29), dt.date(2030, 6, 30), dt.date(2030, 7, 1)
JUNE_1 = dt.date(2030, 6, 1)
#: A day whose every catch-up deal is winnable with the secret.
JUNE_28 = dt.date(2030, 6, 28)
TIERS = ("easy", "medium", "hard", "expert")
HOUR_MS = 3_600_000


def at(date: dt.date, hour: float) -> int:
    return day_start_ms(date) + int(hour * HOUR_MS)


@pytest.fixture
def config(redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path) -> Config:
    return unthrottled_config(redis_url, tmp_path, SECRET)


@pytest_asyncio.fixture
async def app(config: Config) -> AsyncIterator[App]:
    async with serve(config, ManualClock(at(JUNE_30, 20))) as running:
        yield running


async def player(app: App, name: str, versions: tuple[int, ...] = V8) -> Client:
    """A player who joined on the month's first day (catch-up games open from then on)."""
    return await joined_player(app, name, JUNE_1, versions)


async def start(c: Client, tier: str, date: dt.date | None = None) -> dict[str, Any]:
    return await start_tier(c, "fourteen-out", tier, date)


win = win_by_solver


def cells(cal: dict[str, Any], date: dt.date) -> dict[str, tuple[str, bool]]:
    """Fourteen Out's tiers of ``date`` in a calendar: tier -> (state, catchup)."""
    day = next(d for d in cal["days"] if d["date"] == date.isoformat())
    v = next(v for v in day["variants"] if v["variant"] == "fourteen-out")
    return {t["tier"]: (t["state"], bool(t.get("catchup"))) for t in v["tiers"]}


async def test_each_tier_is_its_own_game_board_and_result_one_attempt_each(app: App) -> None:
    amy = await player(app, "amy")
    games = {t: await start(amy, t) for t in TIERS}
    assert len({g["game_id"] for g in games.values()}) == 4, "four games, one per tier"
    assert [g["tier"] for g in games.values()] == list(TIERS)
    daily = await amy.request("daily.start", variant="fourteen-out")
    assert daily["game_id"] == games["medium"]["game_id"], "the medium tier is the daily game"
    assert len({str(g["view"]) for g in games.values()}) == 4, "four different deals"
    won = await win(amy, games["hard"])
    assert won["result"]["rank"] == 1 and "catchup" not in won["result"]
    # One attempt per tier: starting it again answers the finished game.
    again = await start(amy, "hard")
    assert again["game_id"] == games["hard"]["game_id"] and again["finished"]
    resigned = await amy.request("resign", game_id=games["easy"]["game_id"])
    assert resigned["type"] == "finished"
    assert (await start(amy, "easy"))["finished"], "a resigned tier stays resigned"
    # Each tier has its own board: the hard win is on the hard board only.
    hard = await amy.request("leaderboard.top", variant="fourteen-out", tier="hard")
    assert hard["tier"] == "hard" and [e["name"] for e in hard["entries"]] == ["amy"]
    assert hard["entries"][0]["won"]
    easy = await amy.request("leaderboard.top", variant="fourteen-out", tier="easy")
    assert [(e["name"], e["won"]) for e in easy["entries"]] == [("amy", False)]
    medium = await amy.request("leaderboard.top", variant="fourteen-out")
    assert medium["total"] == 0, "the daily board has no tier's result"
    # Every tier of the three test days is winnable with this secret (the other tests rely
    # on it): the medium and expert games of today are won too.
    await win(amy, games["medium"])
    await win(amy, games["expert"])
    cal = await amy.request("calendar.get")
    assert cells(cal, JUNE_30) == {
        "easy": ("lost", False),
        "medium": ("won", False),
        "hard": ("won", False),
        "expert": ("won", False),
    }
    assert cal["crowns"] == 2 + 3 + 4 and "badge" not in cal


async def test_old_clients_see_exactly_one_daily_per_variant(app: App) -> None:
    amy = await player(app, "amy")
    for t in TIERS:
        await start(amy, t)
    old = await player(app, "amy_old", V6)
    refused = await old.request("daily.start", variant="fourteen-out", tier="hard")
    assert refused["type"] == "error" and refused["code"] == "bad_request", refused
    assert "version 8" in refused["message"]
    back = await Client.connect(app.url)
    welcome = await back.hello(token=amy.token, versions=V6)
    assert welcome["version"] == 6 and "tiers" not in welcome
    assert [(g["variant"], g["game_id"]) for g in welcome["daily"]] == [
        ("fourteen-out", f"d.fourteen-out.{JUNE_30}.{amy.player_id}")
    ], "the daily game only, as before tiers"
    assert all("tier" not in g for g in welcome["daily"])
    again = await back.request("daily.start", variant="fourteen-out")
    assert "tier" not in again and again["game_id"] == welcome["daily"][0]["game_id"]
    new = await Client.connect(app.url)
    welcome8 = await new.hello(token=amy.token, versions=V8)
    assert [g["tier"] for g in welcome8["daily"]] == list(TIERS)
    mine = [t for t in welcome8["tiers"] if t["variant"] == "fourteen-out"]
    assert [(t["tier"], t["state"]) for t in mine] == [(t, "playing") for t in TIERS]
    others = {t["state"] for t in welcome8["tiers"] if t["variant"] != "fourteen-out"}
    assert others == {"not_played"}


async def test_catch_up_is_never_ranked_and_marked_everywhere(app: App) -> None:
    amy = await player(app, "amy")
    bob = await player(app, "bob")
    await win(bob, await start(bob, "easy", None))  # bob plays today only
    g = await start(amy, "easy", JUNE_29)
    assert g["catchup"] is True and g["tier"] == "easy" and g["date"] == JUNE_29.isoformat()
    assert g["game_id"].startswith("c.")
    won = await win(amy, g)
    assert won["result"]["catchup"] is True and "rank" not in won["result"], "never ranked"
    for tier in ("easy", None):
        fields: dict[str, Any] = {"tier": tier} if tier else {}
        board = await amy.request(
            "leaderboard.top", variant="fourteen-out", date=JUNE_29.isoformat(), **fields
        )
        assert board["total"] == 0, "a catch-up result is on no board of its day"
    rank = await amy.request(
        "leaderboard.rank", variant="fourteen-out", date=JUNE_29.isoformat(), tier="easy"
    )
    assert "entry" not in rank
    profile = await amy.request("profile.get")
    assert profile["recent"] == [], "not in the daily history: streaks stay as they are"
    assert profile["months"] == [{"month": "2030-06", "crowns": 1}]
    # One attempt per tier and day, catch-up too.
    again = await start(amy, "easy", JUNE_29)
    assert again["game_id"] == g["game_id"] and again["finished"] and again["catchup"]
    assert again["result"]["catchup"] is True and "rank" not in again["result"]
    cal = await amy.request("calendar.get")
    assert cells(cal, JUNE_29)["easy"] == ("won", True)
    assert cells(cal, JUNE_29)["hard"] == ("not_played", False)


async def test_a_tier_played_on_its_day_has_no_catch_up(config: Config) -> None:
    async with serve(config, ManualClock(at(JUNE_29, 23))) as app:
        amy = await player(app, "amy")
        g = await start(amy, "hard")
        app.clock.set(at(JUNE_30, 1))  # the day is over: the game is closed as it stood
        again = await start(amy, "hard", JUNE_29)
        assert again["game_id"] == g["game_id"] and again["finished"], "the day's game, closed"
        assert not again.get("catchup") and not again["result"]["won"]
        cal = await amy.request("calendar.get")
        assert cells(cal, JUNE_29)["hard"] == ("lost", False)


async def test_catch_up_dates_are_past_days_of_this_month(app: App) -> None:
    amy = await player(app, "amy")
    for date, why in (
        (JULY_1, "a day to come"),
        (dt.date(2030, 5, 31), "last month"),
    ):
        reply = await amy.request(
            "daily.start", variant="fourteen-out", tier="easy", date=date.isoformat()
        )
        assert reply["type"] == "error" and reply["code"] == "bad_request", (why, reply)
    today = await start(amy, "easy", JUNE_30)
    assert not today["catchup"], "today's date is today's ranked game"


async def test_the_day_closes_its_open_tier_games(config: Config) -> None:
    async with serve(config, ManualClock(at(JUNE_29, 22))) as app:
        amy = await player(app, "amy")
        g = await start(amy, "expert")
        app.clock.set(at(JUNE_30, 0.5))
        assert await app.services.day_closer.sweep(JUNE_29), "closed with its tier games"
        stored = await app.services.store.get(g["game_id"])
        assert stored.finished and stored.result is not None and stored.result.rollover
        board = await amy.request(
            "leaderboard.top", variant="fourteen-out", date=JUNE_29.isoformat(), tier="expert"
        )
        assert [(e["name"], e["won"]) for e in board["entries"]] == [("amy", False)]
        # The day is closed: its tiers' seeds are published, each tier's on its own.
        seeds = await amy.request("daily.seeds", date=JUNE_29.isoformat(), tier="expert")
        assert seeds["tier"] == "expert" and seeds["seeds"]["fourteen-out"] == stored.seed
        daily = await amy.request("daily.seeds", date=JUNE_29.isoformat())
        assert daily["seeds"]["fourteen-out"] != stored.seed and "tier" not in daily


async def test_calendar_states_and_days(app: App) -> None:
    amy = await player(app, "amy")
    await start(amy, "hard")  # playing
    await amy.request("resign", game_id=(await start(amy, "easy"))["game_id"])  # lost
    await start(amy, "expert", JUNE_29)  # a catch-up game in play
    cal = await amy.request("calendar.get")
    assert cal["month"] == "2030-06" and cal["today"] == JUNE_30.isoformat()
    assert [d["date"] for d in cal["days"]] == [
        (dt.date(2030, 6, 1) + dt.timedelta(days=i)).isoformat() for i in range(30)
    ]
    assert [d["catchup_open"] for d in cal["days"]] == [True] * 29 + [False]
    assert cells(cal, JUNE_30) == {
        "easy": ("lost", False),
        "medium": ("not_played", False),
        "hard": ("playing", False),
        "expert": ("not_played", False),
    }
    assert cells(cal, JUNE_29)["expert"] == ("playing", True)
    july = await amy.request("calendar.get", month="2030-07")
    assert len(july["days"]) == 31 and not any(d["catchup_open"] for d in july["days"])
    assert set(cells(july, JULY_1).values()) == {("upcoming", False)}
    one = await amy.request("calendar.get", variant="triple-deck")
    assert [v["variant"] for v in one["days"][0]["variants"]] == ["triple-deck"]
    bad = await amy.request("calendar.get", month="2030-13")
    assert bad["type"] == "error" and bad["code"] == "bad_request"
    old = await player(app, "amy_v6", V6)
    assert (await old.request("calendar.get"))["code"] == "unknown_type"


async def test_badges_are_exact_across_a_month_end_and_a_restart(config: Config) -> None:
    """20 crowns in June (bronze): every tier of June 30 on the day and of June 28 as
    catch-up. A catch-up game of June 29 still open at midnight counts for nothing after the
    month's end; a restarted server (the clock moved into July) keeps June's badge, and
    July's crowns start from zero."""
    async with serve(config, ManualClock(at(JUNE_30, 21))) as app:
        amy = await player(app, "amy")
        for tier in TIERS:
            await win(amy, await start(amy, tier))
            await win(amy, await start(amy, tier, JUNE_28))
        late = await start(amy, "easy", JUNE_29)
        cal = await amy.request("calendar.get")
        assert cal["crowns"] == 20 and cal["badge"] == "bronze"
        token = amy.token
        await amy.close()
    async with serve(config, ManualClock(at(JULY_1, 0.25))) as app:
        amy = await Client.connect(app.url)
        await amy.hello(token=token, versions=V8)
        refused = await amy.request("move", game_id=late["game_id"], move="1 2")
        assert refused["type"] == "error" and refused["code"] == "day_over", refused
        june = await amy.request("calendar.get", month="2030-06")
        assert june["crowns"] == 20 and june["badge"] == "bronze"
        assert not any(d["catchup_open"] for d in june["days"]), "June is over"
        assert cells(june, JUNE_29)["easy"] == ("lost", True)
        july = await amy.request("calendar.get")
        assert july["month"] == "2030-07" and july["crowns"] == 0 and "badge" not in july
        await win(amy, await start(amy, "expert"))
        profile = await amy.request("profile.get")
        assert profile["months"] == [
            {"month": "2030-07", "crowns": 4},
            {"month": "2030-06", "crowns": 20, "badge": "bronze"},
        ]
        # The same finish recorded again (the outbox replayed) adds nothing.
        store = app.services.store
        record = await store.get(f"t.expert.fourteen-out.{JULY_1.isoformat()}.{amy.player_id}")
        await store.record_history(record)
        again = await amy.request("profile.get")
        assert again["months"] == profile["months"]


async def test_a_held_tier_result_earns_no_crowns(config: Config) -> None:
    """A tier won at machine speed is held by the fair-play screen, as a daily game is: on no
    board, and no crowns until a reviewer clears it."""
    screened = replace(config, fair_play_screen=True)
    async with serve(screened, ManualClock(at(JUNE_30, 20))) as app:
        bot = await player(app, "bot")
        won = await win(bot, await start(bot, "expert"))
        assert won["result"]["status"] == "flagged" and "rank" not in won["result"]
        board = await bot.request("leaderboard.top", variant="fourteen-out", tier="expert")
        assert board["total"] == 0
        cal = await bot.request("calendar.get")
        assert cal["crowns"] == 0 and cells(cal, JUNE_30)["expert"] == ("won", False)
        assert (await bot.request("profile.get"))["months"] == []


async def test_a_tier_won_with_hints_earns_no_crowns(app: App) -> None:
    """The cheat: a bot asks a hint for every move of today's tiers and wins them. A win with
    a hint counts as a win (calendar, history) but earns no crowns; the same tier won without
    one does. Past days' catch-up games take no hints at all (docs/fairplay.md)."""
    bot, amy = await player(app, "hintbot"), await player(app, "amy")
    catchup = await start(bot, "expert", JUNE_28)
    refused = await bot.request("hint", game_id=catchup["game_id"])
    assert refused["type"] == "error" and refused["code"] == "conflict", refused
    for c, hinted in ((bot, True), (amy, False)):
        g = await start(c, "expert")
        if hinted:
            hint = await c.request("hint", game_id=g["game_id"])
            assert hint["type"] == "hint", hint
        won = await win(c, g)
        assert won["result"]["hints"] == (1 if hinted else 0)
    bot_cal, amy_cal = await bot.request("calendar.get"), await amy.request("calendar.get")
    assert bot_cal["crowns"] == 0 and cells(bot_cal, JUNE_30)["expert"] == ("won", False)
    assert amy_cal["crowns"] == 4
    assert (await bot.request("profile.get"))["months"] == []


async def test_a_calendar_month_outside_the_calendar_is_bad_request(app: App) -> None:
    amy = await player(app, "amy")
    for month in ("0000-01", "1969-12", "3000-01", "2030-13"):
        reply = await amy.request("calendar.get", month=month)
        assert (reply["type"], reply.get("code")) == ("error", "bad_request"), (month, reply)


async def test_catch_up_opens_on_the_day_the_account_was_created(app: App) -> None:
    """A new account cannot play the month's earlier days as catch-up games (crowns for days
    it did not exist); its first day on is open, and the calendar says which."""
    app.clock.set(at(JUNE_29, 9))
    newcomer = await Client.connect(app.url)
    await newcomer.hello(name="newcomer", versions=V8)  # joined June 29
    app.clock.set(at(JUNE_30, 20))
    for date in (dt.date(2030, 6, 1), dt.date(2030, 6, 28)):
        reply = await newcomer.request(
            "daily.start", variant="fourteen-out", tier="easy", date=date.isoformat()
        )
        assert (reply["type"], reply["code"]) == ("error", "bad_request"), reply
        assert "joined (2030-06-29)" in reply["message"], reply
    g = await start(newcomer, "easy", JUNE_29)  # the day it joined is open
    assert g["catchup"] is True
    cal = await newcomer.request("calendar.get")
    assert [d["catchup_open"] for d in cal["days"]] == [False] * 28 + [True, False]
