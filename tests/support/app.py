"""The app in-process on a free port, for end-to-end tests over real WebSockets."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from server.app import SERVICES, create_app
from server.clock import Clock, ManualClock
from server.config import Config
from server.services import Services
from tests.support.wsclient import Client

#: 2030-06-15 12:00 UTC, where every test's manual clock starts.
T0_MS = 1_907_755_200_000


class App:
    """A running app: its WebSocket ``url``, its ``http`` root and the clock it runs on."""

    def __init__(self, url: str, http: str, clock: Any,
                 web_app: web.Application | None = None) -> None:
        self.url, self.http = url, http
        self.clock: ManualClock = clock  # unless `serve` was given another clock
        self.web_app = web_app

    @property
    def services(self) -> Services:
        """The running app's services (to drive its race clock in step with the clock)."""
        assert self.web_app is not None
        return self.web_app[SERVICES]

    async def client(self, name: str, binary: bool = True,
                     versions: tuple[int, ...] = (1,)) -> Client:
        c = await Client.connect(self.url, binary=binary)
        await c.hello(name=name, versions=versions)
        return c


@contextlib.asynccontextmanager
async def serve(config: Config, clock: Clock | None = None) -> AsyncIterator[App]:
    """The app in-process on a free port, on ``clock``: by default a manual clock at `T0_MS`."""
    clock = clock or ManualClock(T0_MS)
    runner = web.AppRunner(create_app(config, clock=clock))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield App(f"ws://127.0.0.1:{port}/ws", f"http://127.0.0.1:{port}", clock, runner.app)
    finally:
        await runner.cleanup()
