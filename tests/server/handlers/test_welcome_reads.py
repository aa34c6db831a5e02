"""A new player's `welcome` reads no game records (issue #30, the mixed load's CPU): the
player was created by this very `hello`, so its 48 tier records of the day (6 variants x 4
tiers x ranked/catch-up) cannot exist. A returning player's reads the day's 48 once, then
the games the month index names only. Real server, real Redis (its own command counters),
real WebSockets."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio

from engine import VARIANT_IDS
from server.config import Config
from server.games.daily import utc_date
from server.games.monthindex import BACKFILLED, day_mark
from server.handlers.tiers import day_tiers, games_of_day
from server.redis import keys
from tests.support.app import App, serve, unthrottled_config
from tests.support.wsclient import Client

V8 = (1, 2, 3, 4, 5, 6, 7, 8)
#: The records a returning player's `welcome` reads: 6 variants x 4 tiers x 2 (catch-up).
RECORDS = 48


@pytest.fixture
def config(redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path) -> Config:
    return unthrottled_config(redis_url, tmp_path, b"welcome-reads")


@pytest_asyncio.fixture
async def app(config: Config) -> AsyncIterator[App]:
    async with serve(config) as running:
        yield running


async def hgetalls(r: redis.asyncio.Redis) -> int:
    """HGETALL commands this Redis has run so far."""
    stats = await r.info("commandstats")
    entry = stats.get("cmdstat_hgetall")
    return int(entry["calls"]) if isinstance(entry, dict) else 0


async def test_a_new_players_welcome_reads_no_game_record(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    before = await hgetalls(redis_client)
    new = await Client.connect(app.url)
    welcome = await new.hello(name="fresh", versions=V8)
    read = await hgetalls(redis_client) - before
    assert read < RECORDS, f"{read} HGETALLs for a player created by this hello"
    # The same tiers as when the player comes back (and they are read): nothing is played.
    tiers = welcome["tiers"]
    assert len(tiers) == 24 and {t["state"] for t in tiers} == {"not_played"}, tiers
    back = await Client.connect(app.url)
    before = await hgetalls(redis_client)
    again = await back.hello(token=new.token, versions=V8)
    assert await hgetalls(redis_client) - before >= RECORDS, "a returning player is read"
    assert again["tiers"] == tiers


async def test_a_returning_players_welcome_still_shows_the_game_started(app: App) -> None:
    amy = await Client.connect(app.url)
    first = await amy.hello(name="amy", versions=V8)
    assert {t["state"] for t in first["tiers"]} == {"not_played"}
    g = await amy.request("daily.start", variant="fourteen-out", tier="hard")
    assert g["type"] == "game", g
    back = await Client.connect(app.url)
    again = await back.hello(token=amy.token, versions=V8)
    played = [(t["variant"], t["tier"], t["state"]) for t in again["tiers"]]
    assert ("fourteen-out", "hard", "playing") in played
    assert sum(state == "playing" for _, _, state in played) == 1


async def test_new_players_share_one_build_of_the_days_tiers(app: App) -> None:
    """The cells of a player without games are built once a day (while the day's deals stay
    the same objects) and shared by every new player's `welcome` (issue #30, per-game CPU)."""
    s = app.services
    today = utc_date(s.clock.now_ms())
    await s.deals.prepare_ahead()  # as the app's background task does: the deals stay put
    await s.deals.prepare_tiers_ahead()
    first = await Client.connect(app.url)
    one = await first.hello(name="newcomer1", versions=V8)
    second = await Client.connect(app.url)
    two = await second.hello(name="newcomer2", versions=V8)
    assert one["tiers"] == two["tiers"] and len(one["tiers"]) == 24
    built = (await day_tiers(s, "nobody-here1", [today], today, played=False))[today]
    again = (await day_tiers(s, "nobody-here2", [today], today, played=False))[today]
    assert built is again, "a new player's tiers were built afresh"
    # A returning player's are their own (read from their records), equal while unplayed.
    mine = (await day_tiers(s, first.player_id, [today], today))[today]
    assert mine is not built and mine == built
    # A returning player whose day's index names no game (their first visit of the day)
    # shares them too, welcome and all; one with a game has cells of their own.
    assert (await day_tiers(s, first.player_id, [today], today, known={}))[today] is built
    back = await (await Client.connect(app.url)).hello(token=first.token, versions=V8)
    assert back["tiers"] == one["tiers"]
    await first.request("daily.start", variant="triple-deck")
    played = await games_of_day(s, first.player_id, today)
    own = (await day_tiers(s, first.player_id, [today], today, known=played))[today]
    assert own is not built and own != built
    # Another day is another build: the next day's cells are not the shared ones.
    app.clock.advance(86_400_000)
    tomorrow = utc_date(s.clock.now_ms())
    later = (await day_tiers(s, "nobody-here3", [tomorrow], tomorrow, played=False))[tomorrow]
    assert later is not built
    third = await Client.connect(app.url)
    three = await third.hello(name="newcomer3", versions=V8)
    shown = [(t["variant"], t["tier"], t["state"], t.get("par")) for t in three["tiers"]]
    assert shown == [(c.variant, c.tier, c.state, c.par) for c in later]


async def gets(r: redis.asyncio.Redis) -> int:
    stats = await r.info("commandstats")
    entry = stats.get("cmdstat_get")
    return int(entry["calls"]) if isinstance(entry, dict) else 0


async def test_a_kept_deal_is_not_read_again_while_its_tiers_are_missing(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    """`peek_days` reads only what it does not keep: a day's deal stays the same object while
    its tiers are still missing (being certified), so the shared cells of new players hold."""
    s = app.services
    yesterday = utc_date(s.clock.now_ms()) - dt.timedelta(days=1)  # tiers never dealt
    pairs = [(v, yesterday) for v in VARIANT_IDS]
    for v, d in pairs:
        await s.deals.get(v, d)
    deals, tiers = await s.deals.peek_days(pairs)
    assert len(deals) == len(pairs) and not tiers
    before = await gets(redis_client)
    again, tiers = await s.deals.peek_days(pairs)
    # The tiers' 6 GETs (the app's background tasks may run one or two more), not 12.
    assert await gets(redis_client) - before < 2 * len(pairs), "the deals were read again"
    assert not tiers and all(again[d] is deals[d] for d in pairs)


async def commands(r: redis.asyncio.Redis) -> dict[str, int]:
    """Calls of each command this Redis has run so far (scripts' inner commands counted)."""
    stats = await r.info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}


async def test_a_returning_players_later_welcomes_read_the_games_played_only(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    """The first `welcome` of the day of a returning player scans the day's 48 possible
    games and marks the day in the month index; every later one reads the index and the
    records of the games it names (2 here, 72 before), and shows the same cells and daily
    games as the full read, a game started since included."""
    s = app.services
    today = utc_date(s.clock.now_ms())
    eve = await Client.connect(app.url)
    await eve.hello(name="eve", versions=V8)
    assert (await eve.request("daily.start", variant="triple-deck"))["type"] == "game"
    first = await Client.connect(app.url)
    before = await hgetalls(redis_client)
    await first.hello(token=eve.token, versions=V8)
    assert await hgetalls(redis_client) - before >= RECORDS, "the day is scanned once"
    month = keys.calendar_games(eve.player_id, today.year, today.month)
    assert day_mark(today) in await redis_client.smembers(month)
    # A game started after the day was marked is in the index (its start noted it).
    hard = await eve.request("daily.start", variant="fourteen-out", tier="hard")
    assert hard["type"] == "game", hard
    later = await Client.connect(app.url)
    before = await hgetalls(redis_client)
    welcome = await later.hello(token=eve.token, versions=V8)
    assert await hgetalls(redis_client) - before == 2 + 1, "2 games and the player's hash"
    full = (await day_tiers(s, eve.player_id, [today], today))[today]
    shown = [(t["variant"], t["tier"], t["state"]) for t in welcome["tiers"]]
    assert shown == [(c.variant, c.tier, c.state) for c in full]
    assert {(v, t) for v, t, state in shown if state == "playing"} == {
        ("triple-deck", "medium"),
        ("fourteen-out", "hard"),
    }
    daily = [(g["variant"], g["tier"]) for g in welcome["daily"]]
    assert daily == [("fourteen-out", "hard"), ("triple-deck", "medium")], daily


async def test_a_game_the_index_missed_is_found_by_the_days_scan(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    """A game started before the month index existed (its member missing) shows in the
    first `welcome` of the day (the scan), which adds it; a month marked as a whole (the
    calendar's scan) is trusted for every day without a day mark."""
    s = app.services
    today = utc_date(s.clock.now_ms())
    fay = await Client.connect(app.url)
    await fay.hello(name="fay", versions=V8)
    g = await fay.request("daily.start", variant="triple-easthaven", tier="easy")
    assert g["type"] == "game", g
    month = keys.calendar_games(fay.player_id, today.year, today.month)
    await redis_client.delete(month)  # as if started by a process without the index
    back = await Client.connect(app.url)
    welcome = await back.hello(token=fay.token, versions=V8)
    assert ("triple-easthaven", "easy", "playing") in [
        (t["variant"], t["tier"], t["state"]) for t in welcome["tiers"]
    ]
    members = await redis_client.smembers(month)
    assert {day_mark(today), f"{today.day:02d}|triple-easthaven|easy|r"} <= members
    # The month's own mark: no day mark needed, nothing scanned.
    await redis_client.delete(month)
    await redis_client.sadd(month, BACKFILLED, f"{today.day:02d}|triple-easthaven|easy|r")
    before = await commands(redis_client)
    again = await Client.connect(app.url)
    welcome = await again.hello(token=fay.token, versions=V8)
    after = await commands(redis_client)
    assert after.get("hgetall", 0) - before.get("hgetall", 0) == 1 + 1, "the game and the player"
    assert ("triple-easthaven", "easy", "playing") in [
        (t["variant"], t["tier"], t["state"]) for t in welcome["tiers"]
    ]


async def test_a_returning_players_hello_reads_through_the_group_commit(app: App) -> None:
    """The token, the player, the race, the queue and the day's index are read through the
    group commit (pipelines of the loop's iteration), not a redis-py round trip each: those
    cost a returning player's `hello` more than the commands (issue #30)."""
    gus = await Client.connect(app.url)
    await gus.hello(name="gus", versions=V8)
    await (await Client.connect(app.url)).hello(token=gus.token, versions=V8)  # the scan
    batcher = app.services.store.batch
    batches: list[set[tuple[str, str]]] = []
    batcher.observe = lambda batch: batches.append({(str(c.args[0]), c.key) for c, _ in batch})
    await (await Client.connect(app.url)).hello(token=gus.token, versions=V8)
    batcher.observe = None
    today = utc_date(app.services.clock.now_ms())
    pid = gus.player_id
    sent = set().union(*batches)
    assert {
        ("HGET", keys.players_by_token()),
        ("HGETALL", keys.player(pid)),
    } <= sent, sent
    # The race's, the queue's and the day's index's reads share one round trip.
    standing_and_index = {
        ("HGET", keys.race_inrace()),
        ("HGET", keys.race_queue_who()),
        ("SMEMBERS", keys.calendar_games(pid, today.year, today.month)),
    }
    assert any(standing_and_index <= batch for batch in batches), batches
