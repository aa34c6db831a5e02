"""The public API's tiers (issue #28): each tier's board of a day (live, then closed), the
day's tier list (par, certified or absent, the seeds once closed), a player's crowns and
badge per month, and catch-up games on no board. Through the real server, real Redis, real
WebSockets and HTTP, every answer checked against the OpenAPI document.

Fourteen Out's tiers of 2030-06-30 are certified for real before the server starts (as
another process's `prepare_tiers_ahead` would: a budget of 6 candidates finds hard and
expert, no easy deal); the server itself deals uncertified (`--no-certify`), so the other
variants' tiers are dealt on request and 2030-06-29's are its own sequences' first seeds.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest_asyncio
import redis.asyncio

from engine import VARIANT_IDS, from_view
from engine.solvers import WINNABLE, solve
from server.games.daily import day_start_ms
from server.games.deals import DailyDeals, DayTiers, SolverPool
from server.runtime.clock import ManualClock
from tests.support.apiclient import ApiClient, schema_validate
from tests.support.app import App, serve, unthrottled_config
from tests.support.tierplay import joined_player
from tests.support.wsclient import Client

V8 = (1, 2, 3, 4, 5, 6, 7, 8)
SECRET = b"tiers-1"
JUNE_29, JUNE_30, JULY_1 = dt.date(2030, 6, 29), dt.date(2030, 6, 30), dt.date(2030, 7, 1)
JUNE_1 = dt.date(2030, 6, 1)
#: Every catch-up deal of June 27 and 28 is winnable with the secret (June 29's expert is not).
JUNE_28 = dt.date(2030, 6, 28)
HOUR_MS = 3_600_000
#: The certification's budget: candidates 0-5 rate medium, medium, expert, medium, hard, hard.
NODES, CANDIDATES = 3_000, 6
BOARD = "/api/v1/days/{date}/boards/fourteen-out"


def at(date: dt.date, hour: float) -> int:
    return day_start_ms(date) + int(hour * HOUR_MS)


@pytest_asyncio.fixture
async def certified(redis_client: redis.asyncio.Redis) -> DayTiers:
    """Fourteen Out's tiers of June 30, certified into Redis before the server starts."""
    deals = DailyDeals(
        redis_client,
        ManualClock(at(JUNE_30, 1)),
        SECRET,
        SolverPool(1),
        certify=True,
        tier_nodes=NODES,
        tier_deals=CANDIDATES,
    )
    try:
        return await deals.tiers("fourteen-out", JUNE_30)
    finally:
        deals.pool.close()


@pytest_asyncio.fixture
async def app(certified: DayTiers, redis_url: str, tmp_path: Path) -> AsyncIterator[App]:
    config = unthrottled_config(redis_url, tmp_path, SECRET)
    async with serve(config, ManualClock(at(JUNE_30, 20))) as running:
        yield running


@pytest_asyncio.fixture
async def api(app: App) -> AsyncIterator[ApiClient]:
    async with aiohttp.ClientSession() as session:
        yield ApiClient(app.http, session)


async def player(app: App, name: str) -> Client:
    """A player who joined on the month's first day (catch-up games open from then on)."""
    return await joined_player(app, name, JUNE_1)


async def play(c: Client, tier: str, date: dt.date | None = None, *, win: bool) -> str:
    """Start Fourteen Out's ``tier`` (of ``date``: a catch-up) and win it with the solver's
    line from its view (Fourteen Out shows every card), or resign it; its game id."""
    fields: dict[str, Any] = {"variant": "fourteen-out", "tier": tier}
    if date is not None:
        fields["date"] = date.isoformat()
    g = await c.request("daily.start", **fields)
    assert g["type"] == "game", g
    if not win:
        assert (await c.request("resign", game_id=g["game_id"]))["type"] == "finished"
        return str(g["game_id"])
    result = solve(from_view(g["view"]), max_nodes=300_000)
    assert result.verdict == WINNABLE, g["game_id"]
    reply: dict[str, Any] = {}
    for seq, move in enumerate(result.solution):
        reply = await c.request("move", game_id=g["game_id"], move=str(move), expected_seq=seq)
        assert reply["type"] == "moved", reply
    assert reply["finished"] and reply["result"]["won"], reply
    return str(g["game_id"])


async def next_line(content: aiohttp.StreamReader, timeout: float = 5.0) -> dict[str, Any]:
    """The stream's next line that is not blank, checked against the OpenAPI document."""
    while True:
        raw = await asyncio.wait_for(content.readline(), timeout)
        assert raw, "the stream ended"
        if raw.strip():
            line: dict[str, Any] = json.loads(raw)
            schema_validate(line, "BoardStreamLine")
            return line


def fourteen_out(day: dict[str, Any]) -> dict[str, dict[str, Any]]:
    v = next(v for v in day["variants"] if v["variant"] == "fourteen-out")
    return {t["tier"]: t for t in v["tiers"]}


async def test_each_tier_has_its_board_live_then_closed_and_catch_up_is_on_none(
    app: App, api: ApiClient, certified: DayTiers
) -> None:
    assert set(certified.deals) == {"hard", "expert"}, "the budget finds hard and expert"
    amy, bea, cal = [await player(app, n) for n in ("amy", "bea", "cal")]
    await play(amy, "hard", win=True)
    await play(bea, "hard", win=False)
    await play(cal, "medium", win=False)
    await play(cal, "hard", JUNE_29, win=True)  # a catch-up win: crowns, but on no board
    today = BOARD.format(date="2030-06-30")

    hard = (await api.get(today + "?tier=hard")).json()
    ws = await amy.request("leaderboard.top", variant="fourteen-out", tier="hard")
    assert [e["name"] for e in hard["entries"]] == [e["name"] for e in ws["entries"]]
    assert [(e["name"], e["won"]) for e in hard["entries"]] == [("amy", True), ("bea", False)]
    assert hard["tier"] == "hard" and hard["total"] == 2 and not hard["closed"]
    assert hard["par"] == certified.deals["hard"].par == ws["par"] == 26
    medium = (await api.get(today)).json()
    assert medium["tier"] == "medium", "no tier: the daily board"
    assert [e["name"] for e in medium["entries"]] == ["cal"]
    assert (await api.get(today + "?tier=medium")).json() == medium
    assert (await api.get(today + "?tier=expert")).json()["total"] == 0
    answer = await api.get(today + "?tier=legendary")
    assert (answer.status, answer.code) == (400, "bad_request")
    live = await api.get(today + "?tier=hard")
    assert live.headers["Cache-Control"] == "public, max-age=5", "today's tier board is live"
    past = (await api.get(BOARD.format(date="2030-06-29") + "?tier=hard")).json()
    assert past["total"] == 0 and past["entries"] == [], "a catch-up game is on no board"
    assert (await api.get(BOARD.format(date="2030-06-29"))).json()["total"] == 0

    # Midnight: the day closes with its tier games; its tier boards stay, revalidated.
    app.clock.set(at(JULY_1, 0.5))
    assert await app.services.day_closer.sweep(JUNE_30)
    closed = await api.get(today + "?tier=hard")
    assert closed.json()["closed"] and closed.json()["entries"] == hard["entries"]
    assert closed.headers["Cache-Control"] == "public, no-cache"


async def test_a_days_tiers_say_par_certified_absent_and_seeds_only_once_closed(
    app: App, api: ApiClient, certified: DayTiers
) -> None:
    amy = await player(app, "amy")
    await play(amy, "hard", win=True)
    await play(amy, "easy", JUNE_29, win=False)  # June 29's catch-up deal, not its own
    await app.services.deals.prepare_tiers_ahead()  # today's, as the server does at start
    answer = await api.get("/api/v1/days/2030-06-30/tiers")
    day = answer.json()
    assert answer.headers["Cache-Control"] == "public, max-age=5"
    assert day["date"] == "2030-06-30" and not day["closed"]
    assert [v["variant"] for v in day["variants"]] == list(VARIANT_IDS)
    assert (await api.get("/api/v1/days/today/tiers")).json() == day
    tiers = fourteen_out(day)
    assert list(tiers) == ["easy", "medium", "hard", "expert"]
    assert [t["crowns"] for t in tiers.values()] == [1, 2, 3, 4]
    assert tiers["easy"] == {
        "tier": "easy",
        "state": "absent",  # no easy deal among the budget's candidates
        "crowns": 1,
        "par": None,
        "certified": False,
        "seed": None,
        "catchup_seed": None,
    }
    for name in ("hard", "expert"):
        deal = certified.deals[name]
        assert tiers[name]["state"] == "dealt" and tiers[name]["certified"]
        assert tiers[name]["par"] == deal.par and tiers[name]["seed"] is None
    assert tiers["medium"]["state"] == "dealt" and tiers["medium"]["seed"] is None
    # Today's other tiers are dealt ahead (uncertified here: --no-certify).
    other = next(v for v in day["variants"] if v["variant"] == "triple-triangle")
    assert {t["state"] for t in other["tiers"]} == {"dealt"}
    assert not any(t["certified"] for t in other["tiers"])
    assert all(t["seed"] is None for v in day["variants"] for t in v["tiers"])
    secrets_ = {str(d.seed) for d in certified.deals.values()}
    assert not any(s in answer.body.decode() for s in secrets_), "no seed of an open day"
    # A past day of the month: nothing was dealt on June 29 (the server started on June 30),
    # and a catch-up game deals none of the day's tiers: it plays the day's catch-up deal.
    answer = await api.get("/api/v1/days/2030-06-29/tiers")
    before = answer.json()
    # June 29 is over and its games settled (a catch-up game is not one of them): closed,
    # yet not final: its catch-up seeds are published when June is closed.
    assert before["closed"]
    assert answer.headers["Cache-Control"] == "public, max-age=5"
    assert {t["state"] for v in before["variants"] for t in v["tiers"]} == {"absent"}
    assert all(t["seed"] is None for v in before["variants"] for t in v["tiers"])
    assert all(t["catchup_seed"] is None for v in before["variants"] for t in v["tiers"])

    # Closed: every dealt tier's seed is published (the seeds `daily.seeds` reveals).
    app.clock.set(at(JULY_1, 0.5))
    assert await app.services.day_closer.sweep(JUNE_30)
    answer = await api.get("/api/v1/days/2030-06-30/tiers")
    assert answer.headers["Cache-Control"] == "public, max-age=86400, immutable"
    tiers = fourteen_out(answer.json())
    assert answer.json()["closed"]
    revealed = await amy.request("daily.seeds", date="2030-06-30", tier="hard")
    assert tiers["hard"]["seed"] == certified.deals["hard"].seed
    assert tiers["hard"]["seed"] == revealed["seeds"]["fourteen-out"]
    assert tiers["expert"]["seed"] == certified.deals["expert"].seed
    assert tiers["easy"]["seed"] is None and tiers["easy"]["state"] == "absent"
    medium = await amy.request("daily.seeds", date="2030-06-30")
    assert tiers["medium"]["seed"] == medium["seeds"]["fourteen-out"]
    assert (await api.get("/api/v1/days/2030-07-02/tiers")).code == "not_found"
    assert (await api.get("/api/v1/days/2030-6-30/tiers")).code == "bad_request"


async def test_a_players_crowns_and_badge_per_month(app: App, api: ApiClient) -> None:
    amy = await player(app, "amy")
    assert (await api.get("/api/v1/players/amy")).json()["months"] == []
    await play(amy, "hard", win=True)  # 3 crowns
    await play(amy, "expert", win=True)  # 4
    await play(amy, "medium", win=False)  # none
    await play(amy, "expert", JUNE_28, win=True)  # a catch-up win counts too: 4
    ws = await amy.request("profile.get", name="amy")
    months = (await api.get("/api/v1/players/amy")).json()["months"]
    assert months == [{"month": "2030-06", "crowns": 11}] == ws["months"]
    # 20 crowns make bronze: June 27's and 28's tiers as catch-up games (one of them, June
    # 28's expert, won already: no tier counts twice).
    for date in (dt.date(2030, 6, 27), JUNE_28):
        for tier in ("easy", "medium", "hard", "expert"):
            if (date, tier) != (JUNE_28, "expert"):
                await play(amy, tier, date, win=True)
    months = (await api.get("/api/v1/players/amy")).json()["months"]
    assert months == [{"month": "2030-06", "crowns": 27, "badge": "bronze"}]
    # The newest month comes first; June keeps its crowns and badge.
    app.clock.set(at(JULY_1, 12))
    await play(amy, "hard", win=True)
    months = (await api.get("/api/v1/players/amy")).json()["months"]
    assert months == [
        {"month": "2030-07", "crowns": 3},
        {"month": "2030-06", "crowns": 27, "badge": "bronze"},
    ]


async def test_a_tiers_live_board_streams_its_own_results(app: App) -> None:
    amy, bea = await player(app, "amy"), await player(app, "bea")
    await play(amy, "hard", win=False)
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{app.http}/api/v1/live/fourteen-out/board?tier=hard") as r,
    ):
        assert r.status == 200
        head = await next_line(r.content)
        assert head == {
            "type": "board",
            "variant": "fourteen-out",
            "tier": "hard",
            "date": "2030-06-30",
            "total": 1,
        }
        first = await next_line(r.content)
        assert first["tier"] == "hard" and first["entry"]["name"] == "amy"
        await play(bea, "medium", win=False)  # the daily board's: not on this stream
        await play(bea, "hard", JUNE_29, win=True)  # a catch-up: on no board
        await play(bea, "hard", win=True)
        line = await next_line(r.content, timeout=2.0)
        assert line["type"] == "entry" and line["tier"] == "hard"
        assert (line["entry"]["name"], line["entry"]["rank"], line["total"]) == ("bea", 1, 2)
    async with aiohttp.ClientSession() as session:
        bad = await session.get(f"{app.http}/api/v1/live/fourteen-out/board?tier=hardest")
        assert bad.status == 400 and (await bad.json())["error"]["code"] == "bad_request"
