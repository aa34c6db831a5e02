"""A small protocol client for tests: requests by id, pushes kept in order."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import msgpack  # type: ignore[import-untyped]
import websockets


class Client:
    def __init__(self, ws: websockets.ClientConnection, binary: bool) -> None:
        self.ws = ws
        self.binary = binary
        self.ids = itertools.count(1)
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.pushes: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.seen: list[dict[str, Any]] = []  # every frame received, for leak checks
        self.raw: list[str | bytes] = []  # the same frames exactly as they came
        self.reader = asyncio.create_task(self._read())
        self.player_id = ""
        self.token = ""

    @classmethod
    async def connect(cls, url: str, *, binary: bool = True) -> Client:
        return cls(await websockets.connect(url, max_size=2**20), binary)

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                self.raw.append(frame)
                msg = msgpack.unpackb(frame) if isinstance(frame, bytes) else json.loads(frame)
                self.seen.append(msg)
                fut = self.replies.pop(msg.get("id"), None) if "id" in msg else None
                if fut is not None and not fut.done():
                    fut.set_result(msg)
                else:
                    await self.pushes.put(msg)
        except websockets.ConnectionClosed:
            pass

    async def request(self, type_: str, timeout: float = 10.0, **fields: Any) -> dict[str, Any]:
        rid = next(self.ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[rid] = fut
        msg = {"type": type_, "id": rid, **fields}
        await self.ws.send(msgpack.packb(msg) if self.binary else json.dumps(msg))
        return await asyncio.wait_for(fut, timeout)

    async def hello(
        self,
        name: str | None = None,
        token: str | None = None,
        versions: tuple[int, ...] = (1,),
        features: tuple[str, ...] | None = None,
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {"name": name} if name else {"token": token}
        if features is not None:
            fields["features"] = list(features)
        reply = await self.request("hello", versions=list(versions), **fields)
        assert reply["type"] == "welcome", reply
        self.player_id = reply["player_id"]
        self.token = reply.get("token") or token or ""
        return reply

    async def push(self, type_: str, timeout: float = 10.0, **match: Any) -> dict[str, Any]:
        """The next push of this type (and matching fields); earlier other pushes are dropped."""

        async def wait() -> dict[str, Any]:
            while True:
                msg = await self.pushes.get()
                if msg.get("type") == type_ and all(msg.get(k) == v for k, v in match.items()):
                    return msg

        return await asyncio.wait_for(wait(), timeout)

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()
