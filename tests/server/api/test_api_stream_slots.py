"""Per-address stream slots, played as an abuser would: streams opened and dropped at once
(the slot was held until the next keep-alive write, 15 s), and HEAD requests on the stream
endpoints (each one held a slot and streamed, with no body to read)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest_asyncio
import redis.asyncio

from server.api import FEEDS, STREAMS_OPEN
from tests.support.app import App, serve, unthrottled_config

BOARD = "/api/v1/live/fourteen-out/board"


@pytest_asyncio.fixture
async def app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    config = unthrottled_config(redis_url, tmp_path, b"slots", api_streams_per_address=1)
    async with serve(config) as running:
        yield running


def open_slots(app: App) -> int:
    assert app.web_app is not None
    return app.web_app[STREAMS_OPEN].open("127.0.0.1")


async def test_a_dropped_stream_gives_its_slot_back_within_a_second(app: App) -> None:
    for _ in range(3):  # open, read the first line, hang up; again at once
        async with aiohttp.ClientSession() as s, s.get(app.http + BOARD) as r:
            assert r.status == 200
            assert b'"type":"board"' in await r.content.readline()
            assert open_slots(app) == 1
            # the response is released (its connection closed) here: the client is gone
        gone_at = time.monotonic()
        while open_slots(app):
            assert time.monotonic() - gone_at < 1.0, "the slot is still held"
            await asyncio.sleep(0.02)
    async with aiohttp.ClientSession() as s, s.get(app.http + BOARD) as r:
        assert r.status == 200, "the one slot is free again"
    assert app.web_app is not None
    deadline = time.monotonic() + 1.0
    while len(app.web_app[FEEDS].hangups):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)


async def test_head_on_a_stream_answers_headers_only_and_takes_no_slot(app: App) -> None:
    async with aiohttp.ClientSession() as s:
        for _ in range(5):
            async with asyncio.timeout(2):
                async with s.head(app.http + BOARD) as r:
                    assert r.status == 200
                    assert r.headers["Content-Type"] == "application/x-ndjson"
                    assert r.headers["Cache-Control"] == "no-store"
                async with s.head(app.http + BOARD, headers={"Accept": "text/event-stream"}) as r:
                    assert r.headers["Content-Type"] == "text/event-stream"
            assert open_slots(app) == 0
        async with s.head(app.http + "/api/v1/races/20300615-nosuchrace/events") as r:
            assert r.status == 404
        async with s.head(app.http + "/api/v1/live/no-such-variant/board") as r:
            assert r.status == 404
        # The slot is there for a real reader.
        async with s.get(app.http + BOARD) as r:
            assert r.status == 200
            assert b'"type":"board"' in await r.content.readline()
