"""Live board streams (issue #29): a result finished on one server process reaches a reader
of another within a second; SSE for browsers; and no seed or hidden card of today's deals
in any answer of the API while the day is open (checked on the raw bytes)."""

from __future__ import annotations

import asyncio
import datetime as dt
import io
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
import redis.asyncio

from engine import VARIANT_IDS, from_view, full_state, new_game
from server.api import streams
from server.fairplay.admin import run
from server.redis import keys
from server.runtime.clock import ManualClock
from tests.support.apiclient import ApiClient, schema_validate
from tests.support.app import T0_MS, App, serve
from tests.support.races import race_config

V5 = (1, 2, 3, 4, 5)
TODAY = dt.date(2030, 6, 15)


@pytest_asyncio.fixture
async def two_apps(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[tuple[App, App]]:
    config = race_config(redis_url, tmp_path)
    async with serve(config, ManualClock(T0_MS)) as a, serve(config, ManualClock(T0_MS)) as b:
        yield a, b


async def next_line(content: aiohttp.StreamReader, timeout: float = 5.0) -> dict[str, Any]:
    while True:
        raw = await asyncio.wait_for(content.readline(), timeout)
        assert raw, "the stream ended"
        if raw.strip():
            line: dict[str, Any] = json.loads(raw)
            schema_validate(line, "BoardStreamLine")
            return line


async def test_a_finish_on_one_process_reaches_a_reader_of_another_within_a_second(
    two_apps: tuple[App, App],
) -> None:
    a, b = two_apps
    early = await a.client("early")
    g = await early.request("daily.start", variant="fourteen-out")
    await early.request("resign", game_id=g["game_id"])
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{b.http}/api/v1/live/fourteen-out/board?top=5") as r,
    ):
        assert r.status == 200 and r.headers["Content-Type"] == "application/x-ndjson"
        assert r.headers["Cache-Control"] == "no-store"
        head = await next_line(r.content)
        assert head == {
            "type": "board",
            "variant": "fourteen-out",
            "tier": "medium",
            "date": "2030-06-15",
            "total": 1,
        }
        first = await next_line(r.content)
        assert first["type"] == "entry" and first["entry"]["name"] == "early"
        # A result on the other process: the reader of B hears of it within a second.
        late = await a.client("late")
        g = await late.request("daily.start", variant="fourteen-out")
        a.clock.advance(3_000)
        b.clock.advance(3_000)
        await late.request("resign", game_id=g["game_id"])
        finished = time.monotonic()
        line = await next_line(r.content, timeout=1.0)
        assert time.monotonic() - finished < 1.0
        assert line["type"] == "entry" and line["entry"]["name"] == "late"
        assert line["entry"]["rank"] == 2 and line["total"] == 2
        # Another variant's result is not on this stream.
        other = await a.client("other")
        g = await other.request("daily.start", variant="triple-deck")
        await other.request("resign", game_id=g["game_id"])
        third = await a.client("third")
        g = await third.request("daily.start", variant="fourteen-out")
        await third.request("resign", game_id=g["game_id"])
        assert (await next_line(r.content, timeout=1.0))["entry"]["name"] == "third"


async def test_server_sent_events_for_browsers(two_apps: tuple[App, App]) -> None:
    a, _ = two_apps
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            f"{a.http}/api/v1/live/triple-triangle/board",
            headers={"Accept": "text/event-stream"},
        ) as r,
    ):
        assert r.headers["Content-Type"] == "text/event-stream"
        assert r.headers["Access-Control-Allow-Origin"] == "*"
        assert await r.content.readline() == b"event: board\n"
        data = await r.content.readline()
        assert data.startswith(b"data: ")
        assert json.loads(data[6:])["total"] == 0
        assert await r.content.readline() == b"\n"
        c = await a.client("sse_reader")
        g = await c.request("daily.start", variant="triple-triangle")
        await c.request("resign", game_id=g["game_id"])
        assert await asyncio.wait_for(r.content.readline(), 2.0) == b"event: entry\n"
        entry = json.loads((await r.content.readline())[6:])
        assert entry["entry"]["name"] == "sse_reader"


async def test_no_seed_or_hidden_card_of_an_open_day_in_any_answer(
    two_apps: tuple[App, App], redis_client: redis.asyncio.Redis
) -> None:
    a, _ = two_apps
    c = await a.client("player_one", versions=V5)
    for variant in VARIANT_IDS:  # every deal of the day dealt and played a little
        g = await c.request("daily.start", variant=variant, timeout=60)
        moves = list(from_view(g["view"]).legal_moves())
        if moves:
            await c.request("move", game_id=g["game_id"], move=str(moves[0]), expected_seq=0)
        if variant != "triple-deck":
            await c.request("resign", game_id=g["game_id"])
    seeds = {}
    hidden: set[str] = set()
    for variant in VARIANT_IDS:
        raw = await redis_client.get(keys.daily_deal(variant, TODAY))
        assert raw
        seeds[variant] = json.loads(raw)["seed"]
        deal = new_game(variant, seeds[variant])
        shown = json.dumps(deal.view())
        hidden |= {str(x) for x in full_state(deal).cards() if f'"{x}"' not in shown}
    assert hidden, "the test means something: some of today's cards are face down"
    bodies: list[bytes] = []
    async with aiohttp.ClientSession() as session:
        api = ApiClient(a.http, session)
        paths = [
            "/api/v1/days/today",
            "/api/v1/days/2030-06-15",
            "/api/v1/days/2030-06-15/results.ndjson.gz",
            "/api/v1/players/player_one",
            "/api/v1/races/live",
            "/api/v1/race-boards/fourteen-out/rating",
        ]
        for variant in VARIANT_IDS:
            paths += [
                f"/api/v1/days/today/boards/{variant}?limit=100",
                f"/api/v1/players/player_one/history/{variant}",
                f"/api/v1/players/player_one/races/{variant}",
            ]
        for path in paths:
            bodies.append((await api.get(path)).body)
        for variant in VARIANT_IDS:
            async with session.get(f"{a.http}/api/v1/live/{variant}/board?top=100") as r:
                head = await r.content.readline()
                bodies.append(head)
                for _ in range(json.loads(head)["total"]):  # the rows of the board now
                    bodies.append(await r.content.readline())
    everything = b"\n".join(bodies).decode()
    for variant, seed in seeds.items():
        assert str(seed) not in everything, variant
    assert all(d["seed"] is None for d in json.loads(bodies[0])["deals"])
    words = set(everything.replace('"', " ").replace(",", " ").replace(":", " ").split())
    assert not hidden & words, "no face-down card of today's deals"


async def test_a_board_stream_says_removed_keeps_alive_and_ends_with_the_day(
    two_apps: tuple[App, App], redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams, "KEEPALIVE_S", 0.3)
    a, _ = two_apps
    cheat = await a.client("to_be_marked")
    g = await cheat.request("daily.start", variant="fourteen-out")
    await cheat.request("resign", game_id=g["game_id"])
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{a.http}/api/v1/live/fourteen-out/board") as r,
    ):
        assert (await next_line(r.content))["total"] == 1
        assert (await next_line(r.content))["entry"]["name"] == "to_be_marked"
        assert (await next_line(r.content)) == {"type": "ping"}, "a quiet stream stays alive"
        out = io.StringIO()
        argv = ["--redis-url", redis_url, "--reviewer", "rita", "mark", cheat.player_id]
        assert await run(argv, env={}, out=out) == 0, out.getvalue()
        line = await next_line(r.content)
        while line["type"] == "ping":
            line = await next_line(r.content)
        assert line == {"type": "removed", "name": "to_be_marked", "total": 0}
        a.clock.set(T0_MS + 12 * 3_600_000)  # midnight: the day's board is final
        line = await next_line(r.content)
        while line["type"] == "ping":
            line = await next_line(r.content)
        assert line == {"type": "end", "date": "2030-06-15"}
        assert await asyncio.wait_for(r.content.read(), 2.0) == b"", "the stream ended"
