"""A confirmed cheater's profile after the mark: it showed the ranks and percentiles frozen
before the mark (profile.get over the WebSocket, the API's /players/...), as if the account
still held its places. Played as the cheater and a curious player would, through the real
server; the mark with `solitaire-admin`."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest_asyncio
import redis.asyncio

from engine import from_view
from server.fairplay.admin import run
from server.games.daily import utc_date
from tests.support.apiclient import ApiClient
from tests.support.app import T0_MS, App, serve, unthrottled_config
from tests.support.wsclient import Client

V6 = (1, 2, 3, 4, 5, 6)
DAY_MS = 86_400_000
VARIANT = "fourteen-out"


@pytest_asyncio.fixture
async def app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    async with serve(unthrottled_config(redis_url, tmp_path, b"marked profile")) as running:
        yield running


async def play_and_resign(c: Client, moves: int) -> None:
    g = await c.request("daily.start", variant=VARIANT, timeout=60)
    for seq in range(moves):
        now = await c.request("game.get", game_id=g["game_id"])
        legal = list(from_view(now["view"]).legal_moves())
        r = await c.request("move", game_id=g["game_id"], move=str(legal[0]), expected_seq=seq)
        assert r["type"] == "moved", r
    assert (await c.request("resign", game_id=g["game_id"]))["type"] == "finished"


def ranks(profile: dict[str, Any]) -> list[object]:
    """Every rank-like field a profile or history page shows."""
    days = profile.get("recent", profile.get("entries", []))
    out: list[object] = [d.get(k) for d in days for k in ("rank", "total", "percentile")]
    out += [v.get("percentile") for v in profile.get("daily", [])]
    out += [r.get("rating") for r in profile.get("races", [])]
    return [x for x in out if x is not None]


async def test_a_marked_accounts_profile_shows_no_rank_over_websocket_and_api(
    app: App, redis_url: str
) -> None:
    cheat = await app.client("cheat", versions=V6)
    bea = await app.client("bea", versions=V6)
    await play_and_resign(cheat, 3)
    app.clock.advance(60_000)
    await play_and_resign(bea, 1)
    app.clock.set(T0_MS + DAY_MS)  # the next day: yesterday's ranks are final
    assert await app.services.day_closer.sweep(utc_date(T0_MS))

    before = await bea.request("profile.get", name="cheat")
    assert before["type"] == "profile"
    assert before["recent"][0]["rank"] == 1 and before["recent"][0]["total"] == 2
    assert ranks(before), "ranked before the mark"

    code = await run(
        ["--redis-url", redis_url, "--reviewer", "rita", "mark", before["player_id"]],
        env={},
        out=io.StringIO(),
    )
    assert code == 0
    # Anyone, the account itself included, over the WebSocket: results, no rank.
    for asker in (bea, cheat):
        after = await asker.request("profile.get", name="cheat")
        assert after["recent"][0]["won"] is False and after["recent"][0]["moves"] == 3
        assert ranks(after) == [], after
        page = await asker.request("history.get", player_id=before["player_id"], variant=VARIANT)
        assert page["type"] == "history" and len(page["entries"]) == 1
        assert ranks(page) == [], page
    # The honest player still has hers.
    assert ranks(await cheat.request("profile.get", name="bea"))
    # And over the public API (checked against the OpenAPI document).
    async with aiohttp.ClientSession() as session:
        api = ApiClient(app.http, session)
        prof = await api.get("/api/v1/players/cheat")
        assert prof.status == 200 and prof.json()["recent"] and ranks(prof.json()) == []
        hist = await api.get(f"/api/v1/players/cheat/history/{VARIANT}")
        assert hist.status == 200 and hist.json()["entries"] and ranks(hist.json()) == []
