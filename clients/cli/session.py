"""`ServerSession`: one WebSocket to the server, typed requests by id, pushes in a queue.

The session knows nothing about rendering or commands. It sends a request with a fresh id
and awaits the reply carrying that id; server pushes go to `pushes`. When the connection
drops (or the server announces `shutdown`) it reconnects with backoff, says `hello` with the
player's token and runs the `on_resume` callbacks (the game layer resynchronises there), then
resends the request that was in flight. `rate_limited` replies are retried after a pause.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

import websockets
from websockets.asyncio.client import ClientConnection, connect

import protocol as p
from protocol.events import ActiveRace

log = logging.getLogger(__name__)

M = TypeVar("M", bound=p.ServerMessage)
Factory = Callable[[int], p.ClientMessage]

REPLY_TIMEOUT_S: Final = 30.0
CONNECT_TIMEOUT_S: Final = 5.0
RECONNECT_DEADLINE_S: Final = 60.0
RATE_LIMIT_RETRIES: Final = 6
KEEPALIVE_S: Final = 60.0

EXIT_ERROR: Final = 1
EXIT_USAGE: Final = 2
EXIT_UNREACHABLE: Final = 3
EXIT_VERSION: Final = 4


class SessionError(Exception):
    """A failure a person can act on; `exit_code` is the process exit status to use."""

    exit_code = EXIT_ERROR


class ServerUnreachable(SessionError):
    exit_code = EXIT_UNREACHABLE

    def __init__(self, url: str, detail: str) -> None:
        super().__init__(
            f"cannot reach the server at {url}: {detail}\n"
            "Is it running? Choose another one with --server URL or "
            "SOLITAIRE_SERVER."
        )
        self.url = url


class VersionMismatch(SessionError):
    exit_code = EXIT_VERSION


class RequestFailed(SessionError):
    """The server answered a request with `error`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message


class ConnectionLost(Exception):
    """Internal: the connection dropped while a request was in flight."""


class ServerSession:
    """One logical session with the server, surviving reconnects."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        name: str | None = None,
        on_token: Callable[[p.Welcome], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
        reconnect_deadline_s: float = RECONNECT_DEADLINE_S,
        binary: bool = False,
        code: str | None = None,
        code_account: str | None = None,
    ) -> None:
        self.url = url
        self.token = token
        self.name = name
        #: A sign-in code (protocol 7) to redeem instead of the first `hello`.
        self.code = code
        #: The account the code is for (protocol 9: counted per account, not per address).
        self.code_account = code_account
        self.welcome: p.Welcome | None = None
        self.pushes: asyncio.Queue[p.ServerMessage] = asyncio.Queue()
        self.on_resume: list[Callable[[], Awaitable[None]]] = []
        self._on_token = on_token
        self._notice = on_notice or (lambda text: None)
        self._deadline_s = reconnect_deadline_s
        self._binary = binary
        self._ids = itertools.count(1)
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._keepalive: asyncio.Task[None] | None = None
        self._pending: dict[int, asyncio.Future[p.ServerMessage]] = {}
        self._retry_after_s = 0.0
        self._reconnecting: asyncio.Lock = asyncio.Lock()
        self._closed = False
        self._last_send = time.monotonic()
        self.clock_offset_ms = 0  # server_time - local time, from the last welcome/pong

    # -- connection -----------------------------------------------------------------------------

    @property
    def active_race(self) -> ActiveRace | None:
        """The player's unfinished race as the last `welcome` told it (protocol 3 on): a
        client that lost it (restarted, reconnected) rejoins it from here."""
        return self.welcome.race if self.welcome is not None else None

    @property
    def connected(self) -> bool:
        return self._ws is not None and self._reader is not None and not self._reader.done()

    async def connect(self) -> p.Welcome:
        """Connect and say hello; raises ServerUnreachable at once if the server is down."""
        welcome = await self._open()
        self._keepalive = asyncio.create_task(self._keep_alive())
        return welcome

    async def _open(self) -> p.Welcome:
        try:
            ws = await asyncio.wait_for(
                connect(
                    self.url,
                    max_size=p.MAX_FRAME_SIZE,
                    open_timeout=CONNECT_TIMEOUT_S,
                    ping_interval=20,
                    ping_timeout=20,
                ),
                CONNECT_TIMEOUT_S + 1,
            )
        except (
            OSError,
            TimeoutError,
            websockets.exceptions.InvalidHandshake,
            websockets.exceptions.InvalidURI,
        ) as exc:
            raise ServerUnreachable(self.url, str(exc) or type(exc).__name__) from None
        self._ws = ws
        self._reader = asyncio.create_task(self._read(ws))
        versions = tuple(sorted(p.SUPPORTED_VERSIONS))
        token, name, code = self.token, None if self.token else self.name, self.code
        account = self.code_account
        try:
            if code is not None and token is None:  # a new device signs in with a code
                reply = await self._roundtrip(
                    lambda rid: p.SigninRedeem(
                        id=rid,
                        versions=versions,
                        code=code,
                        name=account,
                        device="terminal" if account else None,
                    )
                )
            else:
                reply = await self._roundtrip(
                    lambda rid: p.Hello(id=rid, versions=versions, token=token, name=name)
                )
        except ConnectionLost:
            raise ServerUnreachable(self.url, "the connection closed during hello") from None
        if isinstance(reply, p.ErrorReply):
            await self._drop()
            if reply.code == p.ErrorCode.UNSUPPORTED_VERSION:
                raise VersionMismatch(
                    f"this client speaks protocol version(s) {sorted(p.SUPPORTED_VERSIONS)} "
                    f"but the server does not: {reply.message}. Upgrade the client."
                )
            raise RequestFailed(reply.code, reply.message)
        if not isinstance(reply, p.Welcome):
            raise RequestFailed("internal", f"unexpected reply {reply.type!r} to hello")
        self.welcome = reply
        self.clock_offset_ms = reply.server_time - int(time.time() * 1000)
        if reply.token:
            self.token, self.code = reply.token, None
            if self._on_token is not None:
                self._on_token(reply)
        return reply

    async def _drop(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            with contextlib.suppress(Exception):
                await ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader

    async def close(self) -> None:
        """Close the connection for good (no reconnect)."""
        self._closed = True
        if self._keepalive is not None:
            self._keepalive.cancel()
        await self._drop()

    async def ensure_connected(self) -> None:
        """Reconnect now if the connection has dropped (e.g. after a `shutdown` push)."""
        if not self.connected and not self._closed:
            await self._reconnect()

    async def _reconnect(self) -> None:
        """Reconnect with backoff until the deadline, then resume (callbacks in `on_resume`)."""
        async with self._reconnecting:
            if self.connected:
                return
            await self._drop()
            deadline = time.monotonic() + self._deadline_s
            delay, attempt = self._retry_after_s, 0
            self._retry_after_s = 0.0
            self._notice("connection lost; reconnecting...")
            while True:
                if delay:
                    await asyncio.sleep(delay)
                attempt += 1
                try:
                    await self._open()
                    break
                except ServerUnreachable as exc:
                    if time.monotonic() + min(5.0, 0.25 * 2**attempt) > deadline:
                        raise ServerUnreachable(
                            self.url, f"gave up reconnecting after {self._deadline_s:.0f} s"
                        ) from exc
                    delay = min(5.0, 0.25 * 2**attempt)
            self._notice("reconnected")
        for resume in list(self.on_resume):
            await resume()

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for frame in ws:
                try:
                    msg = p.decode_server(frame)
                except p.ProtocolError as exc:
                    log.warning("undecodable frame from server: %s", exc)
                    continue
                msg_id = getattr(msg, "id", None)
                fut = self._pending.pop(msg_id, None) if msg_id is not None else None
                if fut is not None:
                    if not fut.done():
                        fut.set_result(msg)
                    continue
                if isinstance(msg, p.Shutdown):
                    self._retry_after_s = msg.retry_after_ms / 1000
                    self._notice(
                        f"server going away ({msg.reason}); "
                        f"reconnecting in {self._retry_after_s:.1f} s"
                    )
                await self.pushes.put(msg)
        except websockets.exceptions.ConnectionClosed:
            pass
        finally:
            pending, self._pending = self._pending, {}
            for fut in pending.values():
                if not fut.done():
                    fut.set_exception(ConnectionLost())

    async def _keep_alive(self) -> None:
        """An application ping now and then keeps idle sessions (a player thinking) open."""
        while not self._closed:
            await asyncio.sleep(KEEPALIVE_S / 4)
            if self.connected and time.monotonic() - self._last_send > KEEPALIVE_S:
                with contextlib.suppress(Exception):
                    pong = await self.request(lambda rid: p.Ping(id=rid), expect=p.Pong)
                    self.clock_offset_ms = pong.server_time - int(time.time() * 1000)

    # -- requests -------------------------------------------------------------------------------

    def _next_id(self) -> int:
        rid = next(self._ids)
        if rid > p.MAX_REQUEST_ID:
            self._ids = itertools.count(2)
            rid = 1
        return rid

    async def _roundtrip(self, make: Factory) -> p.ServerMessage:
        ws = self._ws
        if ws is None:
            raise ConnectionLost()
        rid = self._next_id()
        msg = make(rid)
        frame = p.encode_request(msg, self._binary)
        fut: asyncio.Future[p.ServerMessage] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        try:
            await ws.send(frame)
        except websockets.exceptions.ConnectionClosed:
            self._pending.pop(rid, None)
            raise ConnectionLost() from None
        self._last_send = time.monotonic()
        try:
            return await asyncio.wait_for(fut, REPLY_TIMEOUT_S)
        except TimeoutError:
            self._pending.pop(rid, None)
            await self._drop()  # a silent server: treat as a dropped connection
            raise ConnectionLost() from None

    async def request(self, make: Factory, expect: type[M], *, resend: bool = True) -> M:
        """Send the request built by `make(id)` and return its reply of type `expect`.

        Raises RequestFailed for an `error` reply (after retrying `rate_limited` and, when
        `resend`, reconnecting on a dropped connection).
        """
        rate_limited = 0
        while True:
            if not self.connected:
                if self._closed:
                    raise SessionError("the session is closed")
                await self._reconnect()
            try:
                reply = await self._roundtrip(make)
            except ConnectionLost:
                if not resend:
                    await self._reconnect()
                    raise RequestFailed("unavailable", "the connection dropped") from None
                continue
            if isinstance(reply, p.ErrorReply):
                if reply.code == p.ErrorCode.RATE_LIMITED and rate_limited < RATE_LIMIT_RETRIES:
                    rate_limited += 1
                    delay = 0.5 * 2 ** (rate_limited - 1)
                    self._notice(f"rate limited by the server; retrying in {delay:.1f} s")
                    await asyncio.sleep(delay)
                    continue
                if reply.code == p.ErrorCode.UNAVAILABLE and rate_limited < RATE_LIMIT_RETRIES:
                    rate_limited += 1
                    await asyncio.sleep(0.5 * 2 ** (rate_limited - 1))
                    continue
                raise RequestFailed(reply.code, reply.message)
            if not isinstance(reply, expect):
                raise RequestFailed("internal", f"unexpected reply {reply.type!r}")
            return reply

    def server_now_ms(self) -> int:
        """The server's clock, estimated from the last welcome/pong."""
        return int(time.time() * 1000) + self.clock_offset_ms
