"""`calendar.get` reads only the games the player started (their month index), and costs its
share of the rate limit (a cheater review: 1,488 records read per call, 80-110 ms of server time,
a flood from six connections of one address slowed everyone). Real server, real Redis (its own
command counters), real WebSockets; a cheater is a client sending `calendar.get` without
waiting for the replies.

Deals are uncertified (a bare Config): with the secret ``tiers-1`` Fourteen Out's tiers of
2030-06-29 and 2030-06-30 and its catch-up deals of 2030-06-28 are winnable by the solver's
line (tests/server/games/test_tiers.py checks it)."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import redis.asyncio
import websockets

from engine import VARIANT_IDS
from server.config import Config
from server.handlers.tiers import day_tiers
from server.redis import keys
from server.runtime.clock import ManualClock
from tests.support.app import App, serve, unthrottled_config
from tests.support.tierplay import at, joined_player, start_tier, win_by_solver
from tests.support.wsclient import Client

V9 = (1, 2, 3, 4, 5, 6, 7, 8, 9)
SECRET = b"tiers-1"
JUNE_1, JUNE_2, JUNE_15 = dt.date(2030, 6, 1), dt.date(2030, 6, 2), dt.date(2030, 6, 15)
JUNE_28, JUNE_29, JUNE_30 = dt.date(2030, 6, 28), dt.date(2030, 6, 29), dt.date(2030, 6, 30)
FO = "fourteen-out"
#: Every tier game a player may have in June: 30 days x 6 variants x 4 tiers x 2.
JUNE_GAMES = 30 * 6 * 4 * 2

Cells = dict[tuple[str, str, str], tuple[str, bool]]


@pytest.fixture
def config(redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path) -> Config:
    return unthrottled_config(redis_url, tmp_path, SECRET)


@pytest_asyncio.fixture
async def app(config: Config) -> AsyncIterator[App]:
    async with serve(config, ManualClock(at(JUNE_29, 22))) as running:
        yield running


async def calls(r: redis.asyncio.Redis) -> dict[str, int]:
    """Calls of each command this Redis has run so far (INFO commandstats)."""
    stats = await r.info("commandstats")
    return {
        name.removeprefix("cmdstat_"): int(entry["calls"])
        for name, entry in stats.items()
        if isinstance(entry, dict)
    }


async def counted(
    r: redis.asyncio.Redis, c: Client, **fields: Any
) -> tuple[dict[str, Any], dict[str, int]]:
    """A `calendar.get` and the Redis commands it ran, by name (INFO itself left out)."""
    before = await calls(r)
    reply = await c.request("calendar.get", **fields)
    assert reply["type"] == "calendar", reply
    after = await calls(r)
    ran = {n: k - before.get(n, 0) for n, k in after.items() if n != "info"}
    return reply, {n: k for n, k in ran.items() if k}


def cells(cal: dict[str, Any]) -> Cells:
    return {
        (day["date"], v["variant"], t["tier"]): (t["state"], bool(t.get("catchup")))
        for day in cal["days"]
        for v in day["variants"]
        for t in v["tiers"]
    }


async def every_record(app: App, pid: str, today: dt.date) -> Cells:
    """What the calendar said before the index: every tier game of every day read."""
    days = [JUNE_1 + dt.timedelta(days=i) for i in range(30)]
    found = await day_tiers(app.services, pid, days, today)
    return {
        (d.isoformat(), t.variant, t.tier): (t.state, t.catchup)
        for d, tiers in found.items()
        for t in tiers
    }


async def test_the_calendar_reads_the_games_played_and_answers_as_every_record_did(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    amy = await joined_player(app, "amy", JUNE_1, V9)
    pid = amy.player_id
    # Played before the month index existed: a game whose start noted nothing (its note is
    # taken away, as on a server before the upgrade).
    before = await start_tier(amy, "triple-deck", "expert", JUNE_2)
    await redis_client.delete(keys.calendar_games(pid, 2030, 6))
    assert await redis_client.exists(keys.parse_game_id(before["game_id"]).game)
    # June 29, on its day: a ranked game left unfinished (lost at the day's end), one won.
    await start_tier(amy, FO, "easy")
    await win_by_solver(amy, await start_tier(amy, FO, "hard"))
    app.clock.advance(22 * 3_600_000)  # June 30, 20:00
    # June 30: won, resigned (lost) and playing; catch-up games won, lost and playing.
    await win_by_solver(amy, await start_tier(amy, FO, "hard"))
    easy = await start_tier(amy, FO, "easy")
    assert (await amy.request("resign", game_id=easy["game_id"]))["type"] == "finished"
    await start_tier(amy, FO, "medium")
    # Noted before the start was acknowledged, under the player's hash tag, kept as the games.
    index = keys.calendar_games(pid, 2030, 6)
    assert index.startswith(f"sol:{{h:{pid}}}:")
    assert await redis_client.smembers(index) >= {
        "30|fourteen-out|medium|r",
        "29|fourteen-out|hard|r",
    }
    assert await redis_client.ttl(index) > 90 * 86_400 - 30 * 86_400
    await win_by_solver(amy, await start_tier(amy, FO, "easy", JUNE_28))
    lost = await start_tier(amy, FO, "hard", JUNE_28)
    assert (await amy.request("resign", game_id=lost["game_id"]))["type"] == "finished"
    await start_tier(amy, "triple-triangle", "medium", JUNE_15)
    played = 9

    # The first read of the month finds the game from before the index (once, marked).
    first, _ = await counted(redis_client, amy)
    assert await redis_client.sismember(keys.calendar_games(pid, 2030, 6), "*")
    # Then only the games played are read: one HGETALL each (and the month's crowns).
    again, ran = await counted(redis_client, amy)
    assert cells(again) == cells(first) and again["crowns"] == first["crowns"] == 3 + 3 + 1
    assert ran.get("hgetall", 0) <= played + 1, ran
    assert ran.get("hgetall", 0) >= played, ran
    assert sum(n for c, n in ran.items() if c != "get") <= played + 10, ran
    # Exactly what reading every record of the month says (the calendar before the index).
    got = cells(again)
    assert got == await every_record(app, pid, JUNE_30)
    assert {
        (d, t): got[(d, FO, t)] for d in ("2030-06-29", "2030-06-30") for t in ("easy", "hard")
    } == {
        ("2030-06-29", "easy"): ("lost", False),
        ("2030-06-29", "hard"): ("won", False),
        ("2030-06-30", "easy"): ("lost", False),
        ("2030-06-30", "hard"): ("won", False),
    }
    assert got[("2030-06-30", FO, "medium")] == ("playing", False)
    assert got[("2030-06-28", FO, "easy")] == ("won", True)
    assert got[("2030-06-28", FO, "hard")] == ("lost", True)
    assert got[("2030-06-15", "triple-triangle", "medium")] == ("playing", True)
    assert got[("2030-06-02", "triple-deck", "expert")] == ("playing", True)
    one, _ = await counted(redis_client, amy, variant=FO)
    assert cells(one) == {k: v for k, v in got.items() if k[1] == FO}


async def test_a_month_before_the_account_reads_no_game_and_a_fresh_one_little(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    fresh = await Client.connect(app.url)
    await fresh.hello(name="fresh", versions=V9)
    may, ran = await counted(redis_client, fresh, month="2030-05")
    assert ran.get("hgetall", 0) <= 1 and "smembers" not in ran, ran  # 1: the crowns
    assert ran.get("get", 0) >= 31 * 6 * 2, ran  # its deals looked for
    assert {s for s, _ in cells(may).values()} <= {"absent", "not_played"}
    # May's deals were never dealt, and never will be: looked for once, not at every call.
    may_again, ran = await counted(redis_client, fresh, month="2030-05")
    assert cells(may_again) == cells(may), "the same answer"
    assert ran.get("get", 0) <= 6, ran  # the app's own background reads, if any
    # This month: the account's first day only, once (no game can be older than it) ...
    june, ran = await counted(redis_client, fresh)
    assert ran.get("hgetall", 0) <= len(VARIANT_IDS) * 4 * 2 + 1, ran
    # ... then the games it played: none.
    again, ran = await counted(redis_client, fresh)
    assert cells(again) == cells(june) and ran.get("hgetall", 0) <= 1, ran
    assert JUNE_GAMES > 1_000  # what every call read before the index


def flood_config(redis_url: str, tmp_path: Path) -> Config:
    """The default message limits (20 a second, bursts of 40; costly requests 20 tokens a
    second per address, bursts of 60) behind a trusted proxy naming the client."""
    base = replace(Config(), redis_url=redis_url, data_dir=tmp_path, daily_secret=SECRET)
    return replace(base, trusted_proxies=("127.0.0.0/8",))


async def client_from(app: App, address: str) -> Client:
    ws = await websockets.connect(
        app.url, max_size=2**22, additional_headers={"X-Forwarded-For": address}
    )
    return Client(ws, True)


async def test_a_calendar_flood_from_one_address_is_rate_limited_and_others_stay_fast(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """Six connections of one address each send 10 `calendar.get` at once (under the
    per-connection message rate): a costly request takes 10 tokens of its connection (bursts
    of 40) and of its address (bursts of 60), so at most 6 are answered, the rest
    `rate_limited`; a `ping` from another address meanwhile is answered at once. The manual
    clock stands still: no bucket refills during the test."""
    cheater = "203.0.113.5"
    async with serve(flood_config(redis_url, tmp_path), ManualClock(at(JUNE_30, 12))) as app:
        first = await client_from(app, cheater)
        await first.hello(name="flooder", versions=V9)
        conns = [first] + [await client_from(app, cheater) for _ in range(5)]
        for c in conns[1:]:
            await c.hello(token=first.token, versions=V9)
        other = await client_from(app, "198.51.100.7")
        await other.hello(name="bystander", versions=V9)
        flood = [c.request("calendar.get", timeout=30) for c in conns for _ in range(10)]
        sent = asyncio.gather(*flood)
        await asyncio.sleep(0)  # the frames are on their way
        started = time.perf_counter()
        pong = await other.request("ping")
        waited = time.perf_counter() - started
        replies = await sent
        assert pong["type"] == "pong"
        assert waited < 1.0, f"a ping waited {waited:.3f} s behind the flood"
        kinds = [r["type"] if r["type"] == "calendar" else r["code"] for r in replies]
        answered = kinds.count("calendar")
        assert set(kinds) == {"calendar", "rate_limited"}, kinds
        assert answered == 6, kinds  # the address's 60 tokens, whichever connections
        refused = next(r for r in replies if r["type"] == "error")
        assert "calendar.get costs 10" in refused["message"] and refused["id"] > 1
        # A fresh connection of the address gets no fresh budget for costly requests.
        again = await client_from(app, cheater)
        await again.hello(token=first.token, versions=V9)
        assert (await again.request("calendar.get"))["code"] == "rate_limited"
        assert (await again.request("ping"))["type"] == "pong", "cheap requests still pass"
        # The bystander's own calendar is served: the budget is per address.
        assert (await other.request("calendar.get"))["type"] == "calendar"
        # The budgets refill with the app's clock: 60 tokens of the address in 3 s.
        app.clock.advance(3_000)
        assert (await again.request("calendar.get"))["type"] == "calendar"
        for c in [*conns, again, other]:
            await c.close()


async def test_one_connection_gets_three_calendars_of_its_burst_and_then_pings(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """Without the budget per address, a connection's own bucket still charges 10 tokens a
    `calendar.get`: of its 40, `hello` took 1, three calendars 30, the fourth is refused (it
    spends 1 token to be read, the rest is not there), cheap requests still go through."""
    cfg = replace(flood_config(redis_url, tmp_path), expensive_rate=0.0)
    async with serve(cfg, ManualClock(at(JUNE_30, 12))) as app:
        c = await client_from(app, "203.0.113.9")
        await c.hello(name="greedy", versions=V9)
        replies = await asyncio.gather(*(c.request("calendar.get") for _ in range(5)))
        kinds = [r["type"] if r["type"] == "calendar" else r["code"] for r in replies]
        assert kinds == ["calendar"] * 3 + ["rate_limited"] * 2, kinds
        assert [(await c.request("ping"))["type"] for _ in range(7)] == ["pong"] * 7
        assert (await c.request("ping"))["code"] == "rate_limited", "the bucket is empty now"
        app.clock.advance(500)  # 10 tokens
        assert (await c.request("calendar.get"))["type"] == "calendar"
        await c.close()
