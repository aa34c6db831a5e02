"""Frames, errors and close codes over a real socket (issue 12): the frame-size limit, the
`too_large` reply (unread) before 1009, request ids kept on errors, `unsupported_version` with its
`versions` and 1002, and a flood closed with 1008 after every reply already sent."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
import pytest_asyncio
import redis.asyncio
import websockets
from aiohttp import web

import protocol as p
from server.app import SOCKETS, hard_frame_limit
from server.config import Config
from tests.support.app import App, serve

LIMIT = p.MAX_FRAME_SIZE


@pytest_asyncio.fixture
async def app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    config = replace(Config(), redis_url=redis_url, data_dir=tmp_path, daily_secret=b"frames")
    assert config.max_msg_size == LIMIT
    async with serve(config) as running:
        yield running


async def raw(app: App) -> websockets.ClientConnection:
    return await websockets.connect(app.url, max_size=2**20)


async def frames_until_close(ws: websockets.ClientConnection) -> list[dict[str, Any]]:
    """Every frame received until the connection closes."""
    got: list[dict[str, Any]] = []
    with contextlib.suppress(websockets.ConnectionClosed):
        async for frame in ws:
            got.append(msgpack.unpackb(frame) if isinstance(frame, bytes) else json.loads(frame))
    return got


def received_close(ws: websockets.ClientConnection) -> int | None:
    """The code of the close frame the server sent; None if none arrived (1006)."""
    rcvd = ws.protocol.close_rcvd
    return rcvd.code if rcvd is not None else None


async def hello_then_go(app: App, name: str, *, close_frame: bool, version: int = 10) -> None:
    """A client says hello, then leaves: with a close frame, or gone without one."""
    ws = await raw(app)
    await ws.send(json.dumps({"type": "hello", "id": 1, "versions": [version], "name": name}))
    assert json.loads(await ws.recv())["type"] == "welcome"
    if close_frame:
        await ws.close()
    else:
        ws.transport.abort()


async def handlers_ended(app: App) -> None:
    """Wait until the server's handlers of every connection have finished."""
    assert app.web_app is not None
    for _ in range(100):
        await asyncio.sleep(0.01)
        if not app.web_app[SOCKETS]:
            break
    assert not app.web_app[SOCKETS]


def padded_ping(size: int, req_id: int = 1) -> str:
    """A valid JSON `ping` of exactly ``size`` bytes (whitespace is legal JSON)."""
    body = json.dumps({"type": "ping", "id": req_id})
    return body[:-1] + " " * (size - len(body)) + "}"


async def test_a_frame_of_exactly_64_kib_is_accepted(app: App) -> None:
    ws = await raw(app)
    frame = padded_ping(LIMIT, 3)
    assert len(frame.encode()) == 65_536
    await ws.send(frame)
    reply = json.loads(await ws.recv())
    assert reply["type"] == "pong" and reply["id"] == 3, reply
    await ws.close()


@pytest.mark.parametrize("binary", [False, True])
async def test_a_larger_frame_gets_too_large_unread_then_1009(app: App, binary: bool) -> None:
    """The frame is refused unread: its `id` is not parsed out of it (parsing a frame that
    large, up to 256 KiB, is what a flood of them would be after), then 1009."""
    ws = await raw(app)
    if binary:
        frame: str | bytes = msgpack.packb({"type": "ping", "id": 7, "pad": "x" * LIMIT})
    else:
        frame = padded_ping(LIMIT + 1, 7)
    assert len(frame) > LIMIT
    await ws.send(frame)
    got = await frames_until_close(ws)
    assert [(m["type"], m.get("id"), m.get("code")) for m in got] == [("error", None, "too_large")]
    assert received_close(ws) == 1009


async def test_a_frame_beyond_the_hard_limit_is_closed_with_1009_unanswered(app: App) -> None:
    ws = await raw(app)
    await ws.send(padded_ping(hard_frame_limit(Config()) + 1, 8))
    assert await frames_until_close(ws) == []
    assert received_close(ws) == 1009


async def test_a_text_frame_that_is_not_utf8_is_closed_with_1007_unanswered(app: App) -> None:
    """The WebSocket layer refuses it before the server reads it (docs/protocol.md §1); the
    connection before it was served, and the server serves the next one."""
    ws = await raw(app)
    await ws.send(json.dumps({"type": "ping", "id": 1}))
    assert json.loads(await ws.recv())["id"] == 1
    await ws.send(b'{"type": "ping", "id": 2, "x": "\xff\xfe"}', text=True)
    assert await frames_until_close(ws) == []
    assert received_close(ws) == 1007
    again = await raw(app)
    await again.send(json.dumps({"type": "ping", "id": 3}))
    assert json.loads(await again.recv())["type"] == "pong"
    await again.close()


async def test_an_error_keeps_a_readable_id(app: App) -> None:
    ws = await raw(app)
    await ws.send(f'{{"id":5,"type":"leaderboard.top","variant":"fourteen-out","limit":{2**64}}}')
    reply = json.loads(await ws.recv())
    assert (reply["type"], reply.get("id"), reply["code"]) == ("error", 5, "bad_request"), reply
    await ws.close()


async def test_unsupported_version_lists_the_servers_versions_and_closes_1002(app: App) -> None:
    ws = await raw(app)
    await ws.send(json.dumps({"type": "hello", "id": 1, "versions": [98, 99], "name": "future"}))
    got = await frames_until_close(ws)
    assert got == [
        {
            "type": "error",
            "id": 1,
            "code": "unsupported_version",
            "message": got[0]["message"],
            "versions": sorted(p.SUPPORTED_VERSIONS),
        }
    ]
    assert p.decode_server(json.dumps(got[0])) == p.ErrorReply(
        code="unsupported_version",
        message=got[0]["message"],
        id=1,
        versions=tuple(sorted(p.SUPPORTED_VERSIONS)),
    )
    assert received_close(ws) == 1002


@pytest.mark.parametrize("attempt", range(3))
async def test_a_flood_gets_every_reply_then_a_1008_close(app: App, attempt: int) -> None:
    ws = await raw(app)
    await ws.send(
        json.dumps({"type": "hello", "id": 0, "versions": [1], "name": f"flood{attempt}"})
    )
    assert json.loads(await ws.recv())["type"] == "welcome"

    async def flood() -> int:
        sent = 0
        with contextlib.suppress(websockets.ConnectionClosed):
            for i in range(1, 20_001):  # still sending when the server closes
                await ws.send(padded_ping(500, i))  # small enough to be read for its id
                sent = i
        return sent

    sent = await flood()  # the replies wait in the client's buffers meanwhile
    got = await frames_until_close(ws)
    assert received_close(ws) == 1008, f"no close frame (reset?): {ws.close_code}"
    ids = [m["id"] for m in got]
    # Every frame before the one that ended the flood is answered, in order: a pong, or
    # `rate_limited` (the refusals never overflow the send queue before the close).
    assert ids == list(range(1, len(ids) + 1)), ids
    assert len(ids) < sent
    assert {(m["type"], m.get("code")) for m in got} == {("pong", None), ("error", "rate_limited")}


async def test_a_client_gone_without_a_close_frame_leaves_no_traceback_cycle(app: App) -> None:
    """aiohttp keeps the error of writing the close frame to a dead transport, whose traceback
    holds the response's frames; the server drops it (and the EofStream behind it), so the
    connection is freed by reference counting, not by an old-generation collection."""

    def kept(o: object) -> bool:
        # `type(o) is`, not isinstance: gc.get_objects() holds dead weak proxies, which
        # raise ReferenceError on isinstance's attribute lookup.
        if type(o) is not web.WebSocketResponse or not o.closed:
            return False
        exc = o.exception()
        return exc is not None and (exc.__traceback__ is not None or exc.__context__ is not None)

    def kept_tracebacks() -> int:
        return sum(1 for o in gc.get_objects() if kept(o))

    gc.collect()
    gc.disable()  # what is left must be left by reference counting alone
    try:
        before = kept_tracebacks()
        for i in range(3):  # no close frame: the server's close frame cannot be written
            await hello_then_go(app, f"gone{i}", close_frame=False, version=4)
        await handlers_ended(app)
        assert kept_tracebacks() == before
    finally:
        gc.enable()


async def test_a_closed_connections_transport_is_freed_without_the_collector(app: App) -> None:
    """asyncio's selector transport keeps its read handler, a bound method of itself, for its
    whole life: every connection's transport, socket and their dicts were a cycle left to the
    garbage collector. The server drops the handler once the transport is closing, so a
    connection closed either way (a close frame, or gone without one) is freed at once."""

    def servers_end(o: object) -> bool:
        if type(o).__name__ != "_SelectorSocketTransport":
            return False
        sockname = o.get_extra_info("sockname")  # type: ignore[attr-defined]
        return isinstance(sockname, tuple) and sockname[1] == app.port

    def servers_transports() -> int:
        return sum(1 for o in gc.get_objects() if servers_end(o))

    gc.collect()
    gc.disable()  # what is left must be left by reference counting alone
    try:
        before = servers_transports()
        for i in range(4):  # gone without a close frame, or with one
            await hello_then_go(app, f"freed{i}", close_frame=i % 2 == 0)
        await handlers_ended(app)
        await asyncio.sleep(0.05)  # the transports' connection_lost callbacks run
        assert servers_transports() == before, "a closed connection's transport is a cycle"
    finally:
        gc.enable()
