"""Connection paths end to end (`server.transport.connection`): a handler's bug becomes an
`internal`
reply and the connection goes on, a reply that cannot be encoded falls back to `internal`,
a client whose send queue overflows is closed with 1013, and the request errors
`unknown_type`, `bad_request`, `invalid_name` and undo with nothing to undo.

The faults are injected by replacing one entry of the app's request table: the server, Redis
and the WebSockets are real.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import redis.asyncio
import websockets

import protocol as p
from server.config import Config
from server.transport.router import Router
from server.transport.session import Session
from tests.support.app import serve
from tests.support.slowreader import close_a_slow_reader


@pytest.fixture
def config(redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path) -> Config:
    return replace(
        Config(),
        redis_url=redis_url,
        data_dir=tmp_path,
        daily_secret=b"paths",
        validate_replies=True,
    )


async def broken_ping(session: Session, req: p.Ping) -> p.ServerMessage:
    raise ZeroDivisionError("a bug in a handler")


async def unencodable_ping(session: Session, req: p.Ping) -> p.ServerMessage:
    return p.Pong(id=req.id, server_time=-5)  # a negative time breaks the reply schema


async def test_a_handler_bug_is_an_internal_reply_and_the_connection_survives(
    config: Config, caplog: pytest.LogCaptureFixture
) -> None:
    async with serve(config, routes=Router().on(p.Ping, broken_ping)) as app:
        c = await app.client("buggy")
        for binary in (True, False):  # each form gets the reply in its own form
            c.binary = binary
            reply = await c.request("ping")
            assert reply == {
                "type": "error",
                "id": reply["id"],
                "code": "internal",
                "message": "internal server error",
            }
        # The same connection still serves other requests.
        game = await c.request("daily.start", variant="fourteen-out")
        assert game["type"] == "game" and game["seq"] == 0
        await c.close()
    assert "a bug in a handler" in caplog.text  # logged with its traceback, never sent


async def test_a_reply_that_cannot_be_encoded_falls_back_to_internal(
    config: Config, caplog: pytest.LogCaptureFixture
) -> None:
    async with serve(config, routes=Router().on(p.Ping, unencodable_ping)) as app:
        c = await app.client("encoder")
        reply = await c.request("ping")
        assert (reply["type"], reply["code"], reply["id"]) == ("error", "internal", 2)
        assert (await c.request("game.get", game_id="nope"))["code"] == "not_found"
        await c.close()
    assert "cannot encode Pong" in caplog.text


async def test_a_client_that_stops_reading_is_closed_1013(
    config: Config, caplog: pytest.LogCaptureFixture
) -> None:
    """A room's host stops reading (small socket buffers, so they fill soon) while still
    sending requests; once the replies back up, the pushes of a guest joining and leaving
    overflow the host's send queue and the server closes the host with 1013 "too slow".
    Every frame sent before that is still delivered when the host reads again."""
    fast = replace(config, send_queue_max=4, rate_limit=1e6, rate_burst=1_000_000)
    async with serve(fast, send_buffer=4096) as app:
        closed = await close_a_slow_reader(app, caplog)
    assert (closed.code, closed.reason) == (1013, "too slow")
    assert len(closed.frames) > 2, "the frames queued before the close are delivered"


async def test_request_errors_end_to_end(config: Config) -> None:
    async with serve(config) as app, websockets.connect(app.url) as ws:
        await ws.send(json.dumps({"type": "race.teleport", "id": 4}))
        assert json.loads(await ws.recv())["code"] == "unknown_type"
        await ws.send(json.dumps({"type": "hello", "id": 5, "versions": [1], "name": "x" * 200}))
        bad_name = json.loads(await ws.recv())
        assert (bad_name["code"], bad_name["id"]) == ("invalid_name", 5)
        await ws.send(
            json.dumps(
                {"type": "hello", "id": 6, "versions": [1], "name": "okay_name", "token": "t"}
            )
        )
        both = json.loads(await ws.recv())  # name and token: one or the other
        assert (both["code"], both["id"]) == ("bad_request", 6)
        await ws.send(json.dumps({"type": "daily.start", "id": 7, "variant": "fourteen-out"}))
        assert json.loads(await ws.recv())["code"] == "not_authenticated"
        await ws.send(json.dumps({"type": "hello", "id": 8, "versions": [1], "name": "latecomer"}))
        assert json.loads(await ws.recv())["type"] == "welcome"  # the connection lives on


async def test_undo_with_nothing_to_undo_changes_nothing(config: Config) -> None:
    async with serve(config) as app:
        c = await app.client("undoer")
        g = await c.request("daily.start", variant="triple-deck")
        refused = await c.request("undo", game_id=g["game_id"])
        assert refused["code"] == "illegal_move" and "undo" in refused["message"]
        again = await c.request("game.get", game_id=g["game_id"])
        assert (again["seq"], again["view"]) == (0, g["view"])
        moved = await c.request("move", game_id=g["game_id"], move="d")
        assert moved["seq"] == 1
        # A draw turned stock cards face up: it cannot be taken back either.
        revealed = await c.request("undo", game_id=g["game_id"])
        assert revealed["code"] == "illegal_move"
        assert (await c.request("game.get", game_id=g["game_id"]))["seq"] == 1
