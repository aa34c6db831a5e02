"""The app in-process on a free port, for end-to-end tests over real WebSockets."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from aiohttp import web

from server.app import create_app
from server.clock import ManualClock
from server.config import Config
from tests.support.wsclient import Client


class App:
    def __init__(self, url: str, http: str, clock: ManualClock) -> None:
        self.url, self.http, self.clock = url, http, clock

    async def client(self, name: str, binary: bool = True,
                     versions: tuple[int, ...] = (1,)) -> Client:
        c = await Client.connect(self.url, binary=binary)
        await c.hello(name=name, versions=versions)
        return c


@contextlib.asynccontextmanager
async def serve(config: Config) -> AsyncIterator[App]:
    """The app in-process on a free port, on a manual clock at 2030-06-15 12:00 UTC."""
    clock = ManualClock(1_907_755_200_000)
    runner = web.AppRunner(create_app(config, clock=clock))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield App(f"ws://127.0.0.1:{port}/ws", f"http://127.0.0.1:{port}", clock)
    finally:
        await runner.cleanup()
