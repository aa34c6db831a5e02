"""A client that stops reading, until the server closes it with 1013 ("too slow").

The app must run with a tiny send queue (``send_queue_max=4``), a lax rate limit and small
socket buffers (`tests.support.app.serve` with ``send_buffer=4096``), so they fill soon.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import socket
from dataclasses import dataclass, field
from typing import Any

import pytest
import websockets

from tests.support.app import App

#: What the server logs when it gives up on a slow client.
SLOW_CLIENT_LOG = "closing a slow client"


@dataclass
class SlowClose:
    """What the slow host saw once it read again: every frame, then the close."""

    frames: list[dict[str, Any]] = field(default_factory=list)
    code: int | None = None
    reason: str | None = None


async def close_a_slow_reader(
    app: App, caplog: pytest.LogCaptureFixture, timeout: float = 30.0
) -> SlowClose:
    """A room's host stops reading while still sending requests; once the replies back up,
    the pushes of a guest joining and leaving overflow the host's send queue and the server
    closes the host. Then the host reads everything the server still sends it, up to the
    close frame. The guest is checked to be served all along, and after."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", app.port))
    host = await websockets.connect(app.url, sock=sock, max_queue=1, compression=None)
    await host.send(json.dumps({"type": "hello", "id": 1, "versions": [1], "name": "slowhost"}))
    await host.send(json.dumps({"type": "race.create", "id": 2, "variant": "fourteen-out"}))
    out = SlowClose(frames=[json.loads(await host.recv()) for _ in range(2)])
    code = out.frames[1]["race"]["code"]

    async def keep_asking() -> None:  # blocks for good once the socket is full
        for rid in itertools.count(3):
            await host.send(
                json.dumps({"type": "daily.start", "id": rid, "variant": "triple-fourteens"})
            )

    asking = asyncio.create_task(keep_asking())
    guest = await app.client("guest")
    try:
        deadline = asyncio.get_running_loop().time() + timeout
        while SLOW_CLIENT_LOG not in caplog.text:
            assert asyncio.get_running_loop().time() < deadline, "the host was never closed"
            assert (await guest.request("race.join", code=code))["type"] == "race.room"
            assert (await guest.request("race.leave"))["type"] == "race.left"
        asking.cancel()
        try:
            while True:
                frame = await asyncio.wait_for(host.recv(), 10)
                out.frames.append(json.loads(frame))
        except websockets.ConnectionClosed as closed:
            if closed.rcvd is not None:
                out.code, out.reason = closed.rcvd.code, closed.rcvd.reason
        assert (await guest.request("profile.get"))["type"] == "profile", "the others are served"
    finally:  # never leave a blocked sender or a full socket behind (the app's shutdown)
        asking.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asking, 5)
        host.transport.abort()
        await guest.close()
    return out
