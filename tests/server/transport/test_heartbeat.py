"""The heartbeat (`--heartbeat`): the connection sweep pings a connection that sent nothing
for a while, keeps one whose client answers, closes one whose client is gone, and answers
the client's own pings. Real app, real Redis, real WebSocket clients (aiohttp's, with
autoping off so the test sees every ping and pong); a heartbeat of 0.4 s."""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import aiohttp
import pytest_asyncio
import redis.asyncio
from aiohttp import WSMsgType, web

import protocol as p
from server.transport.router import Router
from server.transport.session import Session
from tests.support.app import App, serve
from tests.support.races import race_config

EVERY = 0.4


@pytest_asyncio.fixture
async def app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    async with serve(replace(race_config(redis_url, tmp_path), heartbeat=EVERY)) as running:
        yield running


async def slow_ping(session: Session, req: p.Ping) -> p.ServerMessage:
    await asyncio.sleep(5 * EVERY)  # a slow request: a deal still being certified, say
    return p.Pong(id=req.id, server_time=1)


@pytest_asyncio.fixture
async def slow_app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    config = replace(race_config(redis_url, tmp_path), heartbeat=EVERY)
    async with serve(config, routes=Router().on(p.Ping, slow_ping)) as running:
        yield running


async def said_hello(
    session: aiohttp.ClientSession, app: App, name: str
) -> aiohttp.ClientWebSocketResponse:
    ws = await session.ws_connect(app.url, autoping=False)
    await ws.send_str(json.dumps({"type": "hello", "id": 1, "versions": [10], "name": name}))
    welcome = await ws.receive(timeout=5)
    assert json.loads(welcome.data)["type"] == "welcome"
    return ws


async def test_an_idle_client_that_answers_is_pinged_and_kept(app: App) -> None:
    async with aiohttp.ClientSession() as session:
        before_hello = time.monotonic()
        ws = await said_hello(session, app, "beat1")
        for n in range(4):  # (generous timeouts: the machine may be busy)
            msg = await ws.receive(timeout=10)
            assert msg.type == WSMsgType.PING, msg
            if n == 0:  # not before EVERY of silence since the hello
                assert time.monotonic() - before_hello >= EVERY * 0.99
            await ws.pong(msg.data)
        assert not ws.closed, "kept while it answers"
        await ws.send_str(json.dumps({"type": "ping", "id": 2}))
        while (msg := await ws.receive(timeout=10)).type == WSMsgType.PING:
            await ws.pong(msg.data)
        assert json.loads(msg.data)["type"] == "pong", "still served"
        await ws.close()


async def test_a_client_that_answers_nothing_is_closed(app: App) -> None:
    async with aiohttp.ClientSession() as session:
        ws = await said_hello(session, app, "beat2")
        msg = await ws.receive(timeout=10)
        assert msg.type == WSMsgType.PING  # not answered: the client is "gone"
        pinged = time.monotonic()
        msg = await ws.receive(timeout=10)
        assert msg.type == WSMsgType.CLOSE and msg.data == 1001, msg
        assert msg.extra == "no answer to ping"
        # Not before the ping was owed its answer for EVERY / 2 (the idle timeout is 300 s).
        assert time.monotonic() - pinged >= EVERY / 2 * 0.9


async def test_frames_from_the_client_need_no_ping(app: App) -> None:
    async with aiohttp.ClientSession() as session:
        ws = await said_hello(session, app, "beat3")
        before = time.monotonic()  # the latest frame sent before the one in flight
        for n in range(10):  # a request every EVERY / 4: no silence of EVERY
            sent = time.monotonic()
            await ws.send_str(json.dumps({"type": "ping", "id": 10 + n}))
            while (msg := await ws.receive(timeout=10)).type == WSMsgType.PING:
                # Only a stall of this client (a busy machine) may give the server a silence.
                assert time.monotonic() - before >= EVERY * 0.9, "pinged while frames came"
                await ws.pong(msg.data)
            before = sent
            assert msg.type == WSMsgType.TEXT, msg
            await asyncio.sleep(EVERY / 4)
        await ws.close()


async def test_the_clients_ping_is_answered(app: App) -> None:
    async with aiohttp.ClientSession() as session:
        ws = await said_hello(session, app, "beat4")
        await ws.ping(b"are you there")
        msg = await ws.receive(timeout=5)
        assert (msg.type, msg.data) == (WSMsgType.PONG, b"are you there")
        await ws.close()


async def test_a_dropped_connection_leaves_no_cycle_for_the_collector(app: App) -> None:
    """aiohttp's own heartbeat kept a callback of the response in its protocol, so every
    closed connection (request, response, protocol, reader: ~40 objects) waited for the
    cyclic garbage collector; under connection churn its collections took milliseconds."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        async with aiohttp.ClientSession() as session:
            for n in range(5):
                ws = await said_hello(session, app, f"drop{n}")
                ws._response.connection.transport.abort()  # type: ignore[union-attr]
        await asyncio.sleep(0.2)  # the server sees the connections lost and ends them
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, web.WebSocketResponse)]
        assert left == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


async def test_a_slow_request_keeps_its_connection_and_its_reply(slow_app: App) -> None:
    """The reader reads no frame (no pong either) while it handles one: the heartbeat waits
    for the request to be answered rather than take the unread pongs for silence (found by
    review: a `daily.start` waiting 30 s for its deal lost its connection and its reply)."""
    async with aiohttp.ClientSession() as session:
        ws = await session.ws_connect(slow_app.url)  # autoping on, as clients are
        await ws.send_str(json.dumps({"type": "hello", "id": 1, "versions": [10], "name": "busy1"}))
        assert json.loads((await ws.receive(timeout=5)).data)["type"] == "welcome"
        await ws.send_str(json.dumps({"type": "ping", "id": 2}))
        msg = await ws.receive(timeout=10)
        assert msg.type == WSMsgType.TEXT, (msg.type, msg.data, msg.extra)
        assert json.loads(msg.data)["type"] == "pong"
        await ws.close()
