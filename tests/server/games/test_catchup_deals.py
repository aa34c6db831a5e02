"""Catch-up games play their day's catch-up deals, not the day's published ones (issue #28
fair play): through the real server, real Redis, real WebSockets and HTTP, as a bot would.

The hole: once a day closes its seeds are published (`daily.seeds`, the API's tiers), yet its
catch-up games stayed playable all month on those very deals; a bot read the seed, solved
offline and won hint-free crowns. Now each (variant, day, tier) has a catch-up deal of its own
secret sequence, certified for that tier by the background pass (never on a request), and
its seed is published only once the month is closed.

Fourteen Out's tiers and catch-up deals of 2030-06-01 are certified for real before the
server starts, by `DailyDeals.prepare_tiers_ahead` as the background pass runs it (a small
node budget, Fourteen Out only); the server itself deals uncertified (`--no-certify`) and
serves what is stored.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
import redis.asyncio

from engine import VARIANT_IDS, from_view, new_game
from engine.difficulty import rate
from engine.solvers import solve
from engine.views import json_map
from server.config import Config
from server.games.daily import day_start_ms
from server.games.deals import (
    CATCHUP_TIERS,
    MAX_CANDIDATES,
    DailyDeals,
    DayTiers,
    SolverPool,
    candidate_seed,
    catchup_candidate_seed,
    catchup_days,
    tier_candidate_seed,
)
from server.redis import keys
from server.runtime.clock import ManualClock
from tests.support.apiclient import ApiClient
from tests.support.app import App, serve, unthrottled_config
from tests.support.procs import ServerProcess, pinned_day
from tests.support.tierplay import start_tier, win_by_solver
from tests.support.wsclient import Client

V8 = (1, 2, 3, 4, 5, 6, 7, 8)
SECRET = b"catchup-1"
VARIANT = "fourteen-out"
JUNE_1, JUNE_2, JUNE_30, JULY_1 = (
    dt.date(2030, 6, 1),
    dt.date(2030, 6, 2),
    dt.date(2030, 6, 30),
    dt.date(2030, 7, 1),
)
TIERS = ("easy", "medium", "hard", "expert")
NODES, CANDIDATES = 3_000, 16
HOUR_MS = 3_600_000


def at(date: dt.date, hour: float) -> int:
    return day_start_ms(date) + int(hour * HOUR_MS)


def certifier(client: redis.asyncio.Redis, clock: ManualClock) -> DailyDeals:
    return DailyDeals(
        client,
        clock,
        SECRET,
        SolverPool(1),
        certify=True,
        tier_nodes=NODES,
        tier_deals=CANDIDATES,
    )


@pytest_asyncio.fixture
async def certified(redis_client: redis.asyncio.Redis) -> DayTiers:
    """June 1's tiers and catch-up deals of Fourteen Out, certified by the background pass
    of June 1 (another process's, before this server starts)."""
    deals = certifier(redis_client, ManualClock(at(JUNE_1, 1)))
    try:
        await deals.prepare_tiers_ahead([VARIANT])
        found = await deals.peek_tiers(VARIANT, JUNE_1, catchup=True)
        assert found is not None, "certified by the pass"
        return found
    finally:
        deals.pool.close()


@pytest.fixture
def config(redis_url: str, tmp_path: Path) -> Config:
    return unthrottled_config(redis_url, tmp_path, SECRET)


async def player(app: App, name: str) -> Client:
    c = await Client.connect(app.url)
    await c.hello(name=name, versions=V8)
    return c


async def start(c: Client, tier: str, date: dt.date | None = None) -> dict[str, Any]:
    return await start_tier(c, VARIANT, tier, date)


win = win_by_solver


def dealt(seed: int) -> dict[str, object]:
    """The first view of Fourteen Out's deal of ``seed``, as a bot computes it offline."""
    return json_map(new_game(VARIANT, seed).view())


async def published(bot: Client, api: ApiClient, date: dt.date) -> set[int]:
    """Every seed of ``date`` a bot can read: `daily.seeds` (each tier) and the API's tiers."""
    seeds: set[int] = set()
    for tier in (None, *TIERS):
        fields: dict[str, Any] = {"tier": tier} if tier else {}
        reply = await bot.request("daily.seeds", date=date.isoformat(), **fields)
        assert reply["type"] == "daily.seeds", reply
        seeds |= set(reply["seeds"].values())
    day = (await api.get(f"/api/v1/days/{date.isoformat()}/tiers")).json()
    for v in day["variants"]:
        for t in v["tiers"]:
            seeds |= {t[k] for k in ("seed", "catchup_seed") if t[k] is not None}
    return seeds


async def test_a_bot_reading_a_closed_days_seeds_cannot_predict_its_catch_up_deals(
    config: Config, certified: DayTiers, redis_client: redis.asyncio.Redis
) -> None:
    """The cheat, played: a bot reads every published seed of June 1 once it is closed, deals
    them offline and solves them, then starts June 1's catch-up games: none of them is any
    published deal, and no answer before the month's end names a catch-up seed. Once June is
    closed the catch-up seeds are published (the API's tiers, `game.export`, replays) and no
    catch-up game of June can start any more."""
    assert set(certified.deals) == set(CATCHUP_TIERS), "a catch-up deal of every tier"
    secret = {d.seed for d in certified.deals.values()}
    async with serve(config, ManualClock(at(JUNE_1, 20))) as app, aiohttp.ClientSession() as http:
        api = ApiClient(app.http, http)
        amy = await player(app, "amy")
        ranked = {t: await start(amy, t) for t in TIERS}  # June 1's own deals, played on the day
        for g in ranked.values():
            await amy.request("resign", game_id=g["game_id"])
        bot = await player(app, "bot")  # joined on June 1: catch-up opens on the day joined
        app.clock.set(at(JUNE_2, 0.5))
        assert await app.services.day_closer.sweep(JUNE_1), "June 1 is closed"

        seeds = await published(bot, api, JUNE_1)
        assert len(seeds) >= 4, "the day's deals are public (Fourteen Out's four at least)"
        # The comparison is sound: each ranked game of the day is a published deal.
        assert {str(g["view"]) for g in ranked.values()} <= {str(dealt(s)) for s in seeds}
        for tier in TIERS:
            g = await start(bot, tier, JUNE_1)
            assert g["catchup"] is True and g["game_id"].startswith("c.")
            for seed in seeds:
                assert g["view"] != dealt(seed), f"the {tier} catch-up is no published deal"
            record = await app.services.store.get(g["game_id"])
            assert record.seed == certified.deals[tier].seed and record.seed not in seeds
            # Certified for its own tier by the background pass (deterministic for its budget).
            rating = rate(VARIANT, record.seed, max_nodes=NODES)
            assert rating.tier is not None and rating.tier.value == tier
            assert g["par"] == certified.deals[tier].par == rating.features.line_moves
        won = await win(bot, await start(bot, "hard", JUNE_1))
        assert won["result"]["catchup"] is True
        game_id = won["game_id"]

        # Nowhere before the month's end: the API's tiers, `daily.seeds`, an export, a replay.
        answer = await api.get("/api/v1/days/2030-06-01/tiers")
        assert answer.headers["Cache-Control"] == "public, max-age=5", "not final yet"
        assert not any(str(s) in answer.body.decode() for s in secret)
        assert {t["catchup_seed"] for v in answer.json()["variants"] for t in v["tiers"]} == {None}
        assert not secret & await published(bot, api, JUNE_1)
        export = await bot.request("game.export", game_id=game_id)
        assert (export["type"], export["code"]) == ("error", "not_found"), export
        assert (await api.get(f"/api/v1/games/{game_id}/replay")).code == "not_found"
        own = await amy.request("game.export", game_id=ranked["hard"]["game_id"])
        assert own["type"] == "game.export", "a closed day's own games are exported as before"

        # The month is closed: the catch-up seeds are published, and June's catch-up is over.
        app.clock.set(at(JULY_1, 0.5))
        assert await app.services.day_closer.sweep(JUNE_30), "June 30 is closed"
        answer = await api.get("/api/v1/days/2030-06-01/tiers")
        assert answer.headers["Cache-Control"] == "public, max-age=86400, immutable"
        tiers = next(v for v in answer.json()["variants"] if v["variant"] == VARIANT)["tiers"]
        assert {t["tier"]: t["catchup_seed"] for t in tiers} == {
            t: certified.deals[t].seed for t in TIERS
        }
        export = await bot.request("game.export", game_id=game_id)
        assert export["type"] == "game.export" and export["seed"] == certified.deals["hard"].seed
        replay = await api.get(f"/api/v1/games/{game_id}/replay")
        assert replay.status == 200 and replay.json()["steps"][0]["view"] == dealt(export["seed"])
        late = await bot.request(
            "daily.start", variant=VARIANT, tier="easy", date=JUNE_2.isoformat()
        )
        assert (late["type"], late["code"]) == ("error", "bad_request"), late


async def test_a_catch_up_game_resumes_on_its_own_deal(config: Config, certified: DayTiers) -> None:
    """A catch-up game keeps its deal: one started now resumes on its catch-up deal, and one
    started before catch-up deals existed (on the day's own deal, as the previous server
    dealt it) resumes on that deal, with that deal's par."""
    async with serve(config, ManualClock(at(JUNE_1, 20))) as app:
        amy = await player(app, "amy")  # both joined on June 1: its catch-up is open to them
        bea = await player(app, "bea")
        app.clock.set(at(JUNE_2, 10))
        g = await start(amy, "expert", JUNE_1)
        move = str(next(iter(from_view(g["view"]).legal_moves())))
        moved = await amy.request("move", game_id=g["game_id"], move=move, expected_seq=0)
        assert moved["type"] == "moved", moved
        token = amy.token
        await amy.close()
        # The previous server's catch-up game of June 1's easy tier: the day's own deal.
        day_tiers = await app.services.deals.tiers_for_request(VARIANT, JUNE_1)
        assert day_tiers is not None and "easy" in day_tiers.deals
        own = day_tiers.deals["easy"]
        assert own.seed != certified.deals["easy"].seed
        old = await app.services.games.start_tier(
            VARIANT, JUNE_1, bea.player_id, "easy", own.seed, catchup=True
        )
        resumed = await start(bea, "easy", JUNE_1)
        assert resumed["game_id"] == old.record.game_id and resumed["seq"] == 0
        assert resumed["view"] == dealt(own.seed), "the deal it was started on"
        assert resumed["par"] == own.par
        won = await win(bea, resumed)
        assert won["result"]["catchup"] is True

    async with serve(config, ManualClock(at(JUNE_2, 11))) as app:  # a restart, then resume
        back = await Client.connect(app.url)
        await back.hello(token=token, versions=V8)
        again = await start(back, "expert", JUNE_1)
        assert again["game_id"] == g["game_id"] and again["seq"] == 1
        assert again["log"] == [move] and again["par"] == certified.deals["expert"].par
        game = new_game(VARIANT, certified.deals["expert"].seed)
        game.play(move)
        assert again["view"] == json_map(game.view()), "its catch-up deal, one move in"


async def test_catch_up_deals_are_certified_by_the_background_pass_never_on_request(
    redis_client: redis.asyncio.Redis,
) -> None:
    """A request never certifies a catch-up deal (nothing stored, no solver started); the
    background pass certifies the catch-up deals of the month's past days and of today (a
    day before they are playable), each the first candidate of its tier in the day's own
    catch-up sequence, apart from the day's tiers; on the month's last day, not today's."""
    clock = ManualClock(at(JUNE_2, 1))
    d = certifier(redis_client, clock)
    try:
        assert await d.tiers_for_request(VARIANT, JUNE_1, catchup=True) is None
        assert d.pool.worker_pids() == set(), "no certification started by the request"
        assert await redis_client.get(keys.daily_catchup_lock(VARIANT, JUNE_1)) is None
        assert await redis_client.get(keys.daily_catchup(VARIANT, JUNE_1)) is None

        assert catchup_days(JUNE_2) == [JUNE_1, JUNE_2]
        # June 30 is never a catch-up day of June: on June 30, only the days before it.
        assert catchup_days(JUNE_30) == [JUNE_30 - dt.timedelta(days=n) for n in range(1, 30)]
        await d.prepare_tiers_ahead([VARIANT])
        candidates = [catchup_candidate_seed(SECRET, VARIANT, JUNE_1, i) for i in range(CANDIDATES)]
        for day in (JUNE_1, JUNE_2):
            found = await d.peek_tiers(VARIANT, day, catchup=True)
            assert found is not None
            # Apart from the sequences of the day's own deals (the daily's and the tiers').
            own = {candidate_seed(SECRET, VARIANT, day, i) for i in range(MAX_CANDIDATES)}
            own |= {tier_candidate_seed(SECRET, VARIANT, day, i) for i in range(CANDIDATES)}
            for tier, deal in found.deals.items():
                assert deal.certified and deal.seed not in own
                rating = rate(VARIANT, deal.seed, max_nodes=NODES).tier
                assert rating is not None and rating.value == tier
            if day == JUNE_1:
                ratings = [rate(VARIANT, s, max_nodes=NODES).tier for s in candidates]
                for tier, deal in found.deals.items():
                    first = next(
                        s for s, r in zip(candidates, ratings, strict=True) if r and r.value == tier
                    )
                    assert deal.seed == first, "the first candidate of its tier, in order"
        other = certifier(redis_client, clock)  # another process serves what is stored
        try:
            stored = await d.peek_tiers(VARIANT, JUNE_1, catchup=True)
            assert await other.tiers_for_request(VARIANT, JUNE_1, catchup=True) == stored
            assert other.pool.worker_pids() == set()
        finally:
            other.pool.close()
    finally:
        d.pool.close()


async def test_a_catch_up_start_waits_for_the_background_certification(
    config: Config, redis_client: redis.asyncio.Redis
) -> None:
    """With certification on, while another process certifies a day's catch-up deals (it
    holds their lock), a catch-up start answers `unavailable` and deals nothing, and the
    calendar says `pending`; once stored by the pass, the start plays the stored deal."""
    lock = keys.daily_catchup_lock(VARIANT, JUNE_1)
    await redis_client.set(lock, "another process", ex=60)
    certifying = replace(
        config, certify_deals=True, solver_budget_s=0.05, tier_nodes=NODES, tier_deals=0
    )
    async with serve(certifying, ManualClock(at(JUNE_1, 20))) as app:
        amy = await player(app, "amy")  # joined on June 1: its catch-up is open
        app.clock.set(at(JUNE_2, 10))
        busy = await amy.request("daily.start", variant=VARIANT, tier="easy", date="2030-06-01")
        assert (busy["type"], busy["code"]) == ("error", "unavailable"), busy
        cal = await amy.request("calendar.get", variant=VARIANT)
        day = next(d for d in cal["days"] if d["date"] == "2030-06-01")
        assert {t["state"] for t in day["variants"][0]["tiers"]} == {"pending"}
        assert await redis_client.get(keys.daily_catchup(VARIANT, JUNE_1)) is None
        assert await redis_client.get(lock) == "another process", "not taken by the request"
        await redis_client.delete(lock)  # that process died: the pass certifies them itself
        for _ in range(400):
            if await app.services.deals.peek_tiers(VARIANT, JUNE_1, catchup=True):
                break
            await asyncio.sleep(0.05)
        found = await app.services.deals.peek_tiers(VARIANT, JUNE_1, catchup=True)
        assert found is not None and found.deals == {}, "no candidate in a budget of none"
        absent = await amy.request("daily.start", variant=VARIANT, tier="easy", date="2030-06-01")
        assert (absent["type"], absent["code"]) == ("error", "not_found"), absent


async def test_a_catch_up_solver_line_at_speed_is_held_against_its_own_par(
    config: Config, redis_client: redis.asyncio.Redis
) -> None:
    """The fair-play screen knows a catch-up game's par: its catch-up deal's (June 1's own
    hard deal is uncertified here, without a par). A bot replaying the catch-up deal's solver
    line, no undo, at 450 ms a move (above Fourteen Out's pace floor of 300 ms, under twice
    it) is held as a replayed line: `flagged`, and no crowns."""
    d = certifier(redis_client, ManualClock(at(JUNE_1, 1)))
    try:
        deal = (await d.tiers(VARIANT, JUNE_1, catchup=True)).deals["hard"]
    finally:
        d.pool.close()
    assert deal.par is not None
    screened = replace(config, fair_play_screen=True)
    async with serve(screened, ManualClock(at(JUNE_1, 20))) as app:
        bot = await player(app, "bot")  # joined on June 1: its catch-up is open
        app.clock.set(at(JUNE_2, 10))
        g = await start(bot, "hard", JUNE_1)
        assert g["par"] == deal.par
        line = solve(from_view(g["view"]), max_nodes=300_000).solution
        assert len(line) <= deal.par, "the solver's line, at most par long"
        reply: dict[str, Any] = {}
        for seq, move in enumerate(line):
            app.clock.advance(450)
            reply = await bot.request(
                "move", game_id=g["game_id"], move=str(move), expected_seq=seq
            )
            assert reply["type"] == "moved", reply
        assert reply["finished"] and reply["result"]["won"] and reply["result"]["catchup"]
        assert reply["result"]["status"] == "flagged", reply["result"]
        assert (await bot.request("calendar.get"))["crowns"] == 0


async def _month_closed_everywhere(redis_client: redis.asyncio.Redis, date: dt.date) -> None:
    """Until every variant of ``date`` has its closed marker (a process's sweep wrote it)."""
    async with asyncio.timeout(30):
        while not all([await redis_client.exists(keys.daily_closed(v, date)) for v in VARIANT_IDS]):
            await asyncio.sleep(0.05)


async def test_a_process_whose_clock_lags_takes_no_catch_up_move_after_the_seeds_are_out(
    redis_url: str, certified: DayTiers, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """Two server processes on one Redis, one's clock 3 minutes behind the other's. The
    process ahead passes the month's end and closes its last day; the lagging one still
    takes catch-up moves of that month (by its clock the month goes on). The seeds must not
    be out then: they wait `--month-close-grace-ms` (5 min) past the month's end, by which
    time the lagging process's clock has passed the month's end too and refuses the move
    (`day_over`) and the start. Before, the process ahead published at once."""
    lag_ms, grace_ms = 3 * 60_000, 300_000
    month_end = day_start_ms(JULY_1)
    secret = SECRET.decode()

    def pair(ahead_ms: int) -> tuple[ServerProcess, ServerProcess]:
        ahead = ServerProcess(
            tmp_path / "ahead", pinned_day(_utc(ahead_ms), secret), redis_url=redis_url
        )
        behind = ServerProcess(
            tmp_path / "behind", pinned_day(_utc(ahead_ms - lag_ms), secret), redis_url=redis_url
        )
        return ahead, behind

    ahead, behind = pair(month_end + 60_000)  # 00:01 ahead, 23:58 of June 30 behind
    with ahead, behind:
        c = await Client.connect(behind.url)
        await c.hello(name="lagger", versions=V8)
        await redis_client.hset(keys.player(c.player_id), "created_at_ms", at(JUNE_1, 0))
        await c.close()
        lagger = await Client.connect(behind.url)
        await lagger.hello(token=c.token, versions=V8)
        g = await start(lagger, "easy", JUNE_1)
        assert g["catchup"] is True, g
        move = str(next(iter(from_view(g["view"]).legal_moves())))
        moved = await lagger.request("move", game_id=g["game_id"], move=move, expected_seq=0)
        assert moved["type"] == "moved", "by the lagging clock June goes on"
        await _month_closed_everywhere(redis_client, JUNE_30)  # the process ahead closed it
        async with aiohttp.ClientSession() as http:
            api = ApiClient(f"http://127.0.0.1:{ahead.port}", http)
            answer = (await api.get("/api/v1/days/2030-06-01/tiers")).json()
            assert {t["catchup_seed"] for v in answer["variants"] for t in v["tiers"]} == {None}, (
                "published while a process within the tolerated skew still takes moves"
            )
        await lagger.close()

    ahead, behind = pair(month_end + grace_ms + 30_000)  # the grace over by the clock ahead
    with ahead, behind:
        async with aiohttp.ClientSession() as http:
            api = ApiClient(f"http://127.0.0.1:{ahead.port}", http)
            answer = (await api.get("/api/v1/days/2030-06-01/tiers")).json()
        tiers = next(v for v in answer["variants"] if v["variant"] == VARIANT)["tiers"]
        assert {t["tier"]: t["catchup_seed"] for t in tiers} == {
            t: certified.deals[t].seed for t in TIERS
        }
        lagger = await Client.connect(behind.url)
        await lagger.hello(token=c.token, versions=V8)
        late = await lagger.request("move", game_id=g["game_id"], move=move, expected_seq=1)
        assert (late["type"], late["code"]) == ("error", "day_over"), late
        again = await lagger.request(
            "daily.start", variant=VARIANT, tier="medium", date=JUNE_1.isoformat()
        )
        assert (again["type"], again["code"]) == ("error", "bad_request"), again
        stood = await lagger.request("game.get", game_id=g["game_id"])
        assert stood["seq"] == 1, stood  # the move of June, nothing after
        await lagger.close()


def _utc(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
