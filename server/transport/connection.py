"""One WebSocket connection: decode, rate-limit, dispatch, reply in the client's own form.

Outgoing frames go through a bounded queue drained by one writer task, so pushes never
interleave with replies and a client that stops reading is disconnected instead of growing
the server's memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from aiohttp import WSCloseCode, web

import protocol as p
from engine import IllegalMove, UnknownVariant
from server.players.registry import Player
from server.runtime.errors import DayOver, ServerError, is_outage
from server.transport.ratelimit import TokenBucket

if TYPE_CHECKING:
    from server.services import Services

log = logging.getLogger(__name__)

#: A request handler; the app's table maps each client message type to one.
Handler = Callable[["Connection", Any], Awaitable[p.ServerMessage]]

#: Consecutive frames refused by the rate limiter before the connection is closed.
FLOOD_CLOSE_AFTER = 50
#: Requests a connection may make before `hello`.
OPEN_REQUESTS = (p.Hello, p.Ping)


class NotAuthenticated(p.ProtocolError):
    def __init__(self) -> None:
        super().__init__("say hello first", code=p.ErrorCode.NOT_AUTHENTICATED)


def error_reply(exc: BaseException, req_id: int | None, version: int | None = None) -> p.ErrorReply:
    """The error reply for an exception raised while handling a request, in the words of the
    connection's protocol ``version`` (a code newer than it is sent as its older equivalent)."""
    if isinstance(exc, DayOver) and (version or 0) < p.FAIR_PLAY:
        return p.ErrorReply(code=p.ErrorCode.GAME_OVER, message=str(exc)[:1000], id=req_id)
    if isinstance(exc, p.ProtocolError):
        return p.ErrorReply.from_error(exc, id=req_id)
    code: p.ErrorCode
    if isinstance(exc, IllegalMove):
        code, message = p.ErrorCode.ILLEGAL_MOVE, str(exc)
    elif isinstance(exc, UnknownVariant):
        code, message = p.ErrorCode.NOT_FOUND, str(exc)
    elif isinstance(exc, ServerError):
        code, message = exc.code, str(exc)
    elif is_outage(exc):  # a Redis call no store translated: still an outage, not a bug
        log.warning("untranslated redis outage: %s: %s", type(exc).__name__, exc)
        code, message = p.ErrorCode.UNAVAILABLE, "redis unavailable"
    else:  # a bug, including any other engine error: never mapped by accident
        log.exception("internal error", exc_info=exc)
        code, message = p.ErrorCode.INTERNAL, "internal server error"
    return p.ErrorReply(code=code, message=message[:1000], id=req_id)


class Connection:
    """The state of one client connection."""

    def __init__(
        self,
        ws: web.WebSocketResponse,
        services: Services,
        handlers: Mapping[type[p.ClientMessage], Handler],
    ) -> None:
        self.ws = ws
        self.services = services
        self.handlers = handlers
        self.player: Player | None = None
        self.version: int | None = None
        #: The client's address (`server.transport.address.client_address`: the peer, or what a
        #: trusted proxy forwarded); "" when unknown.
        self.address: str = ""
        self.binary = True  # the form of the client's latest frame; pushes use it too
        cfg = services.config
        self.validate = cfg.validate_replies
        self.bucket = TokenBucket(cfg.rate_limit, cfg.rate_burst, services.clock.monotonic)
        self.refused = 0
        self.queue: asyncio.Queue[str | bytes | None] = asyncio.Queue(cfg.send_queue_max)
        self.closing = False
        #: The close code and reason the reader loop must close with once the current frame is
        #: answered (set by `close_soon` while a frame is being handled).
        self.close_code: tuple[int, str] | None = None
        self._in_frame = False  # the reader is inside `handle_frame`
        self._closer: asyncio.Task[None] | None = None
        self._sending = asyncio.Lock()  # one frame at a time onto the socket
        #: Event-loop time of the latest frame from the client (idle connections are closed).
        self.last_seen = asyncio.get_running_loop().time()
        #: Steps a handler asks to run once its reply is on its way (e.g. the pushes that must
        #: follow `welcome`, never precede it); run and cleared after each reply.
        self.after_reply: list[Callable[[], Awaitable[None]]] = []

    def require_player(self) -> Player:
        if self.player is None:
            raise NotAuthenticated()
        return self.player

    # -- outgoing -----------------------------------------------------------------------------

    def _frame(self, message: p.ServerMessage) -> str | bytes:
        try:
            return p.encode(message, self.binary, validate=self.validate)
        except p.EncodeError:
            log.exception("cannot encode %s", type(message).__name__)
            return p.encode(
                p.ErrorReply(
                    code=p.ErrorCode.INTERNAL,
                    message="internal error",
                    id=getattr(message, "id", None),
                ),
                self.binary,
            )

    def send(self, message: p.ServerMessage) -> None:
        """Queue a message (pushes, from any task); a client too slow to keep up is
        disconnected."""
        if self.closing:
            return
        try:
            self.queue.put_nowait(self._frame(message))
        except asyncio.QueueFull:
            log.warning("send queue full; closing a slow client")
            self.close_soon(WSCloseCode.TRY_AGAIN_LATER, "too slow")

    async def reply(self, message: p.ServerMessage) -> None:
        """Send a reply from this connection's reader: straight onto the socket when nothing
        is queued or being written ahead of it (no writer-task wake-up per request), else
        behind the queue, so frames keep their order."""
        if self.closing:
            return
        if not self.queue.empty() or self._sending.locked():
            self.send(message)
            return
        frame = self._frame(message)
        async with self._sending:
            await self._write(frame)

    async def _write(self, frame: str | bytes) -> bool:
        try:
            if isinstance(frame, bytes):
                await self.ws.send_bytes(frame)
            else:
                await self.ws.send_str(frame)
        except (ConnectionError, RuntimeError):
            return False
        return True

    async def writer(self) -> None:
        """Drain the send queue onto the socket until told to stop."""
        while True:
            frame = await self.queue.get()
            if frame is None or self.ws.closed:
                return
            async with self._sending:
                if not await self._write(frame):
                    return

    async def flush(self, timeout: float = 2.0) -> None:
        """Stop the writer after everything queued so far has been sent."""
        with contextlib.suppress(asyncio.QueueFull):
            self.queue.put_nowait(None)
        await asyncio.sleep(0)
        deadline = asyncio.get_running_loop().time() + timeout
        while not self.queue.empty() and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)

    def close_soon(self, code: int, reason: str) -> None:
        """Close with ``code`` after every frame sent or queued so far.

        Called while the reader handles a frame (flooding, a bad version, a frame too large),
        the reader itself closes once the frame is answered (`finish`): it then goes on
        reading until the client's close frame, so the client's frames still in flight are
        read rather than reset, and the client receives every reply, then the close frame.
        Otherwise (an idle or a too slow client, from another task) a task closes it.
        """
        if self.closing:
            return
        self.closing = True
        self.close_code = (code, reason)
        if not self._in_frame:  # kept on the connection: asyncio holds no reference to it
            self._closer = asyncio.get_running_loop().create_task(
                self._close_after_queue(code, reason)
            )

    async def _close_after_queue(self, code: int, reason: str, timeout: float = 1.0) -> None:
        await self.flush(timeout)
        with contextlib.suppress(Exception):
            async with self._sending:
                await self.ws.close(code=code, message=reason.encode())

    async def finish(self, writer: asyncio.Task[None], timeout: float = 1.0) -> None:
        """The reader is done: send what is queued, stop the writer, and close with the code
        `close_soon` asked for (if any) after those frames."""
        self.closing = True
        with contextlib.suppress(Exception):  # a timeout, or the writer's own failure
            await asyncio.wait_for(self.queue.put(None), timeout)
            await asyncio.wait_for(asyncio.shield(writer), timeout)
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await writer
        if self.close_code is not None and not self.ws.closed:
            code, reason = self.close_code
            with contextlib.suppress(Exception):
                async with self._sending:
                    await self.ws.close(code=code, message=reason.encode())

    # -- incoming -----------------------------------------------------------------------------

    async def handle_frame(self, frame: str | bytes) -> None:
        """Answer one frame: a reply, or an error reply carrying the request id when known."""
        self._in_frame = True
        try:
            await self._handle_frame(frame)
        finally:
            self._in_frame = False

    async def _handle_frame(self, frame: str | bytes) -> None:
        self.binary = isinstance(frame, bytes)
        self.last_seen = asyncio.get_running_loop().time()
        metrics = self.services.metrics
        if not self.bucket.take():
            self.refused += 1
            metrics.errors.inc("rate_limited")
            if self.refused >= FLOOD_CLOSE_AFTER:
                self.close_soon(WSCloseCode.POLICY_VIOLATION, "rate limit exceeded")
                return
            # A refusal is dropped rather than overflow the send queue, so that a flood is
            # closed for flooding (1008), not as a slow reader (1013).
            if not self.queue.full():
                self.send(
                    p.ErrorReply(
                        code=p.ErrorCode.RATE_LIMITED,
                        id=_request_id(frame),
                        message="too many requests; slow down",
                    )
                )
            return
        self.refused = 0
        started = time.perf_counter()
        req_id: int | None = None
        kind = "invalid"
        try:
            request = p.decode(frame, max_size=self.services.config.max_msg_size)
            req_id, kind = request.id, request.type
            metrics.messages.inc(kind)
            if self.player is None and not isinstance(request, OPEN_REQUESTS):
                raise NotAuthenticated()
            reply = await self.handlers[type(request)](self, request)
        except Exception as exc:  # every failure becomes an error reply, never a crash
            if isinstance(exc, p.FrameTooLarge) and req_id is None:
                req_id = _request_id(frame, max_size=len(frame) * 4)
            reply = error_reply(
                exc, req_id if req_id is not None else getattr(exc, "id", None), self.version
            )
            metrics.errors.inc(str(reply.code))
            if isinstance(exc, p.UnsupportedVersion):
                await self.reply(reply)
                self.close_soon(WSCloseCode.PROTOCOL_ERROR, "unsupported protocol version")
                return
            if isinstance(exc, p.FrameTooLarge):
                await self.reply(reply)
                self.close_soon(WSCloseCode.MESSAGE_TOO_BIG, "frame too large")
                return
        metrics.latency.observe(kind, time.perf_counter() - started)
        await self.reply(reply)
        steps, self.after_reply = self.after_reply, []
        for step in steps:
            try:
                await step()
            except Exception:  # the reply is sent; a failed follow-up must not end the reader
                log.warning("a step after the %s reply failed", kind, exc_info=True)


def _request_id(frame: str | bytes, max_size: int = p.MAX_FRAME_SIZE) -> int | None:
    """The request id of a frame the server will not process, when it is easy to read."""
    try:
        return p.decode(frame, max_size=max_size).id
    except p.ProtocolError as exc:
        return exc.id
    except Exception:
        return None
