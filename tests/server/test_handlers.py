"""Session, daily and leaderboard handlers (`server.handlers`) over a real connection: the
refusals and empty cases the end-to-end daily tests (test_e2e_daily) do not reach."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest_asyncio
import redis.asyncio

from server.config import Config
from tests.support.app import App, serve
from tests.support.wsclient import Client


@pytest_asyncio.fixture
async def app(redis_url: str, redis_client: redis.asyncio.Redis,
              tmp_path: Path) -> AsyncIterator[App]:
    config = replace(Config(), redis_url=redis_url, data_dir=tmp_path, daily_secret=b"h",
                     rate_limit=1000.0, rate_burst=1000, certify_deals=False)
    async with serve(config) as running:
        yield running


async def test_a_second_hello_on_a_connection_conflicts(app: App) -> None:
    c = await app.client("hanna")
    again = await c.request("hello", versions=[1], token=c.token)
    assert again["type"] == "error" and again["code"] == "conflict"
    pong = await c.request("ping")  # still the same session
    assert pong["type"] == "pong" and pong["server_time"] == app.clock.now_ms()
    await c.close()


async def test_welcome_gives_a_token_only_to_new_players(app: App) -> None:
    c = await app.client("henry")
    back = await Client.connect(app.url)
    welcome = await back.hello(token=c.token)
    assert welcome["player_id"] == c.player_id and welcome["name"] == "henry"
    assert welcome.get("token") is None
    assert welcome["server_time"] == app.clock.now_ms() and "fourteen-out" in welcome["variants"]
    await c.close()
    await back.close()


async def test_unknown_variants_are_not_found(app: App) -> None:
    c = await app.client("hilda")
    for kind in ("daily.start", "leaderboard.top", "leaderboard.around", "leaderboard.rank"):
        r = await c.request(kind, variant="klondike")
        assert r["type"] == "error" and r["code"] == "not_found", (kind, r)
        assert "fourteen-out" in r["message"]
    await c.close()


async def test_empty_boards_and_a_player_not_on_one(app: App) -> None:
    c = await app.client("hugo")
    top = await c.request("leaderboard.top", variant="triple-deck", date="2030-06-14")
    assert (top["type"], top["date"], top["total"], top["entries"]) == (
        "leaderboard", "2030-06-14", 0, [])
    around = await c.request("leaderboard.around", variant="triple-deck", k=3)
    assert around["date"] == "2030-06-15" and around["entries"] == [] and around["offset"] == 0
    rank = await c.request("leaderboard.rank", variant="triple-deck")
    assert rank["type"] == "rank" and rank.get("entry") is None and rank["total"] == 0
    await c.close()


async def test_only_the_resigned_game_counts_once(app: App) -> None:
    c = await app.client("hazel")
    g = await c.request("daily.start", variant="fourteen-out")
    assert g["type"] == "game" and not g["finished"] and g.get("result") is None
    fin = await c.request("resign", game_id=g["game_id"])
    assert fin["type"] == "finished" and fin["result"]["resigned"] and fin["result"]["rank"] == 1
    twice = await c.request("resign", game_id=g["game_id"])
    assert twice["type"] == "error" and twice["code"] == "game_over"
    moved = await c.request("undo", game_id=g["game_id"], expected_seq=0)
    assert moved["type"] == "error" and moved["code"] == "game_over"
    rank = await c.request("leaderboard.rank", variant="fourteen-out")
    assert rank["total"] == 1 and rank["entry"]["me"] and rank["entry"]["name"] == "hazel"
    await c.close()
