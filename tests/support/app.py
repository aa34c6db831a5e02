"""The app in-process on a free port, for end-to-end tests over real WebSockets."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from aiohttp import web

from server.app import ROUTER, SERVICES, create_app
from server.config import Config
from server.runtime.clock import Clock, ManualClock
from server.services import Services
from server.transport.router import Router
from tests.support.wsclient import Client

#: 2030-06-15 12:00 UTC, where every test's manual clock starts.
T0_MS = 1_907_755_200_000


class App:
    """A running app: its WebSocket ``url``, its ``http`` root and the clock it runs on."""

    def __init__(
        self, url: str, http: str, clock: Clock, web_app: web.Application | None = None
    ) -> None:
        self.url, self.http = url, http
        self._clock = clock
        self.web_app = web_app

    @property
    def clock(self) -> ManualClock:
        """The manual clock the app runs on (`serve`'s default); AssertionError when `serve`
        was given another clock, which a test cannot advance."""
        assert isinstance(self._clock, ManualClock), f"not a manual clock: {self._clock!r}"
        return self._clock

    @property
    def port(self) -> int:
        return int(self.http.rsplit(":", 1)[1])

    @property
    def services(self) -> Services:
        """The running app's services (to drive its race clock in step with the clock)."""
        assert self.web_app is not None
        return self.web_app[SERVICES]

    async def client(
        self,
        name: str,
        binary: bool = True,
        versions: tuple[int, ...] = (1,),
        features: tuple[str, ...] | None = None,
    ) -> Client:
        c = await Client.connect(self.url, binary=binary)
        await c.hello(name=name, versions=versions, features=features)
        return c


@contextlib.asynccontextmanager
async def serve(
    config: Config,
    clock: Clock | None = None,
    *,
    routes: Router | None = None,
    send_buffer: int | None = None,
) -> AsyncIterator[App]:
    """The app in-process on a free port, on ``clock``: by default a manual clock at `T0_MS`.

    ``routes`` replace entries of the app's request table (to inject a fault: the server,
    Redis and the sockets stay real); ``send_buffer`` fixes the kernel send buffer of its
    sockets (accepted sockets inherit the listener's)."""
    clock = clock or ManualClock(T0_MS)
    app = create_app(config, clock=clock)
    if routes is not None:
        app[ROUTER] = app[ROUTER].overridden(routes)
    runner = web.AppRunner(app)
    await runner.setup()
    listener = socket.socket()
    if send_buffer is not None:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    site = web.SockSite(runner, listener)
    await site.start()
    try:
        yield App(f"ws://127.0.0.1:{port}/ws", f"http://127.0.0.1:{port}", clock, runner.app)
    finally:
        await runner.cleanup()


def unthrottled_config(redis_url: str, data_dir: Path, secret: bytes, **changes: Any) -> Config:
    """A Config on ``redis_url`` whose message rates never bite (per connection, costly
    requests and bytes per address): for tests of the other limits (per address, per
    account), which must not trip over these."""
    base = replace(
        Config(),
        redis_url=redis_url,
        data_dir=data_dir,
        daily_secret=secret,
        rate_limit=1000.0,
        rate_burst=1000,
        expensive_rate=0.0,  # nor its budget of costly requests per address
        address_bytes_rate=0.0,  # nor its budget of bytes per address
    )
    return replace(base, **changes)
