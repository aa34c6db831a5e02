"""A flooding client in a process of its own: ``python -m tests.support.flood URL ADDRESS
CONNECTIONS FRAMES`` opens CONNECTIONS WebSockets as client address ADDRESS (X-Forwarded-For,
for a server that trusts the loopback proxy), sends FRAMES pings of just under 64 KiB built to
be slow to parse on each, then prints every reply (JSON, one list) and exits.

Its own process, so that building and sending ~15 MB of frames takes nothing from the event
loop of a test's in-process server, whose latency to other clients the test measures."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import msgpack  # type: ignore[import-untyped]
import websockets


def slow_ping(rid: int, binary: bool) -> str | bytes:
    """A `ping` of just under 64 KiB built to be slow to parse: an unknown field holding
    ~20,000 (JSON) or ~65,000 (msgpack) empty arrays, each a container the codec checks
    before it finds the field unknown (`bad_request`, with the id)."""
    if binary:
        frame: str | bytes = msgpack.packb({"type": "ping", "id": rid, "x": [[]] * 65_400})
    else:
        frame = json.dumps({"type": "ping", "id": rid, "x": [[]] * 21_700}, separators=(",", ":"))
    assert 60_000 < len(frame) <= 65_536
    return frame


async def flood(url: str, address: str, connections: int, frames: int) -> list[dict[str, Any]]:
    built = {binary: slow_ping(5, binary) for binary in (False, True)}
    headers = {"X-Forwarded-For": address}
    sockets = [
        await websockets.connect(url, additional_headers=headers) for _ in range(connections)
    ]

    async def one(ws: websockets.ClientConnection, binary: bool) -> list[dict[str, Any]]:
        for _ in range(frames):
            await ws.send(built[binary])
        replies = []
        for _ in range(frames):
            raw = await asyncio.wait_for(ws.recv(), 60)
            replies.append(msgpack.unpackb(raw) if binary else json.loads(raw))
        await ws.close()
        return replies

    got = await asyncio.gather(*(one(ws, i % 2 == 0) for i, ws in enumerate(sockets)))
    return [reply for replies in got for reply in replies]


if __name__ == "__main__":
    url, address, connections, frames = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    print(json.dumps(asyncio.run(flood(url, address, int(connections), int(frames)))))
