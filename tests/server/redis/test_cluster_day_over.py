"""The end of a day on a real three-master Redis Cluster: the day check, the rollover close and
the closed-day marker are single-slot scripts, so they hold there as on one Redis."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest_asyncio
import redis.asyncio

from engine import from_view
from server.config import Config
from tests.support.app import T0_MS, App, serve
from tests.support.wsclient import Client

pytest_plugins = ["tests.support.cluster"]

MIDNIGHT = T0_MS + 43_200_000  # the end of 2030-06-15


@pytest_asyncio.fixture
async def app(
    cluster_url: str, cluster_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    config = replace(
        Config(),
        redis_url=cluster_url,
        data_dir=tmp_path,
        daily_secret=b"day",
        rate_limit=1000.0,
        rate_burst=1000,
    )
    async with serve(config) as running:
        yield running


async def test_a_day_ends_and_closes_on_the_cluster(app: App) -> None:
    app.clock.set(MIDNIGHT - 30_000)
    players = []
    games = []
    for name in ("cl-dusk", "cl-dawn", "cl-noon"):
        c = await Client.connect(app.url)
        await c.hello(name=name, versions=(1, 2, 3, 4, 5))
        g = await c.request("daily.start", variant="fourteen-out")
        players.append(c)
        games.append(g)
    app.clock.set(MIDNIGHT + 1)
    for c, g in zip(players, games, strict=True):
        move = str(next(iter(from_view(g["view"]).legal_moves())))
        refused = await c.request("move", game_id=g["game_id"], move=move)
        assert refused["code"] == "day_over", refused
    assert (await players[0].request("daily.seeds", date="2030-06-15"))["code"] == "not_found"
    assert await app.services.day_closer.sweep(dt.date(2030, 6, 15))
    seeds = await players[0].request("daily.seeds", date="2030-06-15")
    assert "fourteen-out" in seeds["seeds"], seeds
    board = await players[0].request("leaderboard.top", variant="fourteen-out", date="2030-06-15")
    assert board["total"] == 3 and not any(e["won"] for e in board["entries"])
