"""A new player's `welcome` reads no game records (issue #30, the mixed load's CPU): the
player was created by this very `hello`, so its 48 tier records of the day (6 variants x 4
tiers x ranked/catch-up) cannot exist. Real server, real Redis (its own command counters),
real WebSockets."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio

from server.config import Config
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
