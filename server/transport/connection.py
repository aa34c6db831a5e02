"""One WebSocket connection: decode, rate-limit, dispatch, reply in the client's own form.

The connection owns the socket, its send queue and its closing state (one `ConnState`);
handlers get its `Session` (player, version, send), never the socket.
Outgoing frames go through a bounded queue drained by one writer task, so pushes never
interleave with replies and a client that stops reading is disconnected instead of growing
the server's memory. The queue (a plain deque) and the writer task exist only while frames
wait: an idle connection holds neither (issue #30: an `asyncio.Queue` and a writer task
parked on it were 4.4 KiB of every idle connection's ~21).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
from collections import deque
from typing import TYPE_CHECKING

from aiohttp import WSCloseCode, web

import protocol as p
from engine import IllegalMove, UnknownVariant
from server.runtime.errors import DayOver, RateLimited, ServerError, is_outage
from server.transport.ratelimit import REQUEST_COSTS, TokenBucket
from server.transport.router import Router
from server.transport.session import NotAuthenticated, Session

if TYPE_CHECKING:
    from server.services import Services

log = logging.getLogger(__name__)

#: Consecutive frames refused by the rate limiter before the connection is closed.
FLOOD_CLOSE_AFTER = 50
#: Requests a connection may make before `hello` (`signin.redeem` is a `hello` by code).
OPEN_REQUESTS = (p.Hello, p.SigninRedeem, p.Ping)
#: The largest frame refused unread (`rate_limited`, `too_large`) whose `id` is still read for
#: the error reply: reading it means parsing the frame, which a flood must not get for free.
REFUSED_ID_MAX = 512


class ConnState(enum.Enum):
    """Where a connection is in its life; the one record of its closing."""

    OPEN = "open"  # reading, between frames
    HANDLING = "handling"  # the reader is inside `handle_frame`
    #: A close was asked while a frame was being handled: the reader closes once the frame is
    #: answered (`finish`), after every frame sent or queued so far.
    CLOSE_REQUESTED = "close_requested"
    CLOSING = "closing"  # being closed (a closer task, `finish` or `go_away`): nothing more sent
    CLOSED = "closed"  # the reader is done and the socket closed


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
    """One client connection: its socket, send queue, closing state and session."""

    __slots__ = (
        "_busy",
        "_close_with",
        "_closer",
        "_frames",
        "_idle",
        "_queue_max",
        "_stopped",
        "_writer",
        "_ws",
        "binary",
        "bucket",
        "bytes_budget",
        "last_seen",
        "ping_at",
        "pong_at",
        "refused",
        "router",
        "services",
        "session",
        "state",
        "validate",
    )

    def __init__(
        self,
        ws: web.WebSocketResponse,
        services: Services,
        router: Router,
        address: str = "",
        group: str | None = None,
    ) -> None:
        self._ws = ws
        self.services = services
        self.router = router
        #: What handlers get: the player, the protocol version, `send` (this connection's).
        #: (The connection itself is the session's `send`, `__call__`: a bound method kept
        #: per connection would be 64 bytes more of every idle one.)
        self.session = Session(services, self, address, group)
        self.binary = True  # the form of the client's latest frame; pushes use it too
        cfg = services.config
        self.validate = cfg.validate_replies
        self.bucket = TokenBucket(cfg.rate_limit, cfg.rate_burst, services.clock.monotonic)
        #: The bytes its address's connections may still send (None: no such budget).
        self.bytes_budget = services.frame_bytes.bucket(self.session.group)
        self.refused = 0
        #: Frames waiting for the socket, oldest first (None: stop the writer there); made
        #: when a frame has to wait, dropped once the writer has sent them all.
        self._frames: deque[str | bytes | None] | None = None
        self._queue_max = cfg.send_queue_max  # 0: unbounded
        #: The task sending the waiting frames (None: nothing waits, or it stopped).
        self._writer: asyncio.Task[None] | None = None
        self._stopped = False  # the writer met its stop mark or a dead socket: no more
        self.state = ConnState.OPEN
        #: The close code and reason `close_soon` asked for (None: no close asked).
        self._close_with: tuple[int, str] | None = None
        self._closer: asyncio.Task[None] | None = None
        #: One frame at a time onto the socket: `_busy` while one is written; `_idle`, made
        #: only when another write waits (no `asyncio.Lock` per connection), ends it.
        self._busy = False
        self._idle: asyncio.Future[None] | None = None
        #: `time.monotonic()` of the latest frame from the client (idle connections are closed).
        self.last_seen = time.monotonic()
        #: `time.monotonic()` of the latest ping the server sent, and of the latest pong
        #: (0.0: none yet): the heartbeat (`heartbeat`).
        self.ping_at = 0.0
        self.pong_at = 0.0

    def heartbeat(self, now: float, every: float) -> bool:
        """The connection sweep's heartbeat (`server.app`, every ``every / 2`` seconds or
        more often): True when a ping is due, that is when nothing came from the client for
        ``every`` seconds and no ping is waiting for its answer. A ping neither answered nor
        followed by any frame within ``every / 2`` seconds closes the connection: the peer
        is gone (a dropped network sends no close). One sweep for all connections, not a
        timer per connection re-armed by every frame (aiohttp's own heartbeat).

        Nothing while a frame is being handled: the reader reads no frame then, the client's
        pongs included, so a slow request (a deal still being certified) is not silence."""
        if self.state is not ConnState.OPEN:  # handling a frame, or closing
            return False
        if self.ping_at > self.pong_at and self.ping_at > self.last_seen:  # owed an answer
            if now - self.ping_at >= every / 2:
                self.close_soon(WSCloseCode.GOING_AWAY, "no answer to ping")
            return False
        return now - max(self.last_seen, self.ping_at) >= every

    async def ping(self, now: float) -> None:
        """Send a heartbeat ping (a closed socket is no error: the reader ends)."""
        self.ping_at = now
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self._ws.ping()

    @property
    def closing(self) -> bool:
        """A close was asked or is under way: nothing more is queued."""
        return self.state in _CLOSING

    @property
    def close_requested(self) -> bool:
        """The reader must stop reading and close (`finish`) after the frame it answered."""
        return self.state is ConnState.CLOSE_REQUESTED

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
        if self.queue_full():
            log.warning("send queue full; closing a slow client")
            self.close_soon(WSCloseCode.TRY_AGAIN_LATER, "too slow")
            return
        self._enqueue(self._frame(message))

    def __call__(self, message: p.ServerMessage) -> None:
        """What the session calls to push a message (see `__init__`): `send`. (A method, not
        `__call__ = send`: a compiled class has no class attribute aliases.)"""
        self.send(message)

    def queue_full(self) -> bool:
        """As many frames wait as the connection may queue (`--send-queue-max`)."""
        frames = self._frames
        return frames is not None and 0 < self._queue_max <= len(frames)

    def _enqueue(self, frame: str | bytes | None) -> None:
        """Queue a frame (None: the writer's stop mark); start the writer if none runs."""
        frames = self._frames
        if frames is None:
            frames = self._frames = deque()
        frames.append(frame)
        if self._writer is None and not self._stopped:
            self._writer = asyncio.get_running_loop().create_task(self._drain(frames))

    async def reply(self, message: p.ServerMessage) -> None:
        """Send a reply from this connection's reader: straight onto the socket when nothing
        is queued or being written ahead of it (no writer-task wake-up per request), else
        behind the queue, so frames keep their order."""
        if self.closing:
            return
        if self._frames or self._busy:
            self.send(message)
            return
        frame = self._frame(message)
        self._busy = True  # free just now, and nothing ran since
        try:
            await self._write(frame)
        finally:
            self._unlock()

    async def _lock(self) -> None:
        """Wait until no frame is being written, then hold the socket (`_unlock` frees it)."""
        while self._busy:
            if self._idle is None:
                self._idle = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._idle)  # a cancelled waiter leaves the others waiting
        self._busy = True

    def _unlock(self) -> None:
        self._busy = False
        idle, self._idle = self._idle, None
        if idle is not None and not idle.done():
            idle.set_result(None)

    async def _write(self, frame: str | bytes) -> bool:
        try:
            if isinstance(frame, bytes):
                await self._ws.send_bytes(frame)
            else:
                await self._ws.send_str(frame)
        except (ConnectionError, RuntimeError):
            return False
        return True

    async def _drain(self, frames: deque[str | bytes | None]) -> None:
        """The writer: send the waiting frames in order, until none is left (then the queue
        goes), a stop mark or a dead socket (then no writer starts again)."""
        try:
            while frames:
                frame = frames.popleft()
                if frame is None or self._ws.closed:
                    self._stopped = True
                    return
                await self._lock()
                try:
                    sent = await self._write(frame)
                finally:
                    self._unlock()
                if not sent:
                    self._stopped = True
                    return
            if self._frames is frames:
                self._frames = None
        finally:
            self._writer = None

    def _queued(self) -> bool:
        return bool(self._frames)

    async def flush(self, timeout: float = 2.0) -> None:
        """Stop the writer after everything queued so far has been sent."""
        if not self.queue_full():
            self._enqueue(None)
        await asyncio.sleep(0)
        deadline = asyncio.get_running_loop().time() + timeout
        while self._queued() and asyncio.get_running_loop().time() < deadline:
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
        self._close_with = (code, reason)
        if self.state is ConnState.HANDLING:
            self.state = ConnState.CLOSE_REQUESTED
            return
        self.state = ConnState.CLOSING
        # Kept on the connection: asyncio holds no reference to it.
        self._closer = asyncio.get_running_loop().create_task(self._close_after_queue(code, reason))

    async def _close_after_queue(self, code: int, reason: str, timeout: float = 1.0) -> None:
        await self.flush(timeout)
        await self._close(code, reason)

    async def _close(self, code: int, reason: str) -> None:
        with contextlib.suppress(Exception):
            await self._lock()
            try:
                await self._ws.close(code=code, message=reason.encode())
            finally:
                self._unlock()

    async def go_away(self, notice: p.ServerMessage, timeout: float = 1.0) -> None:
        """Shut down: send ``notice`` after everything queued, then close with GOING_AWAY."""
        self.send(notice)
        await self.flush(timeout)
        self.state = ConnState.CLOSING
        await self._close(WSCloseCode.GOING_AWAY, "server shutting down")

    async def finish(self, timeout: float = 1.0) -> None:
        """The reader is done: send what is queued, stop the writer, and close with the code
        `close_soon` asked for (if any) after those frames."""
        self.state = ConnState.CLOSING
        if self._frames and not self._stopped:
            self._enqueue(None)  # the last frame: nothing is queued once closing
        writer = self._writer
        if writer is not None:
            with contextlib.suppress(Exception):  # a timeout, or the writer's own failure
                await asyncio.wait_for(asyncio.shield(writer), timeout)
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer
        self._frames = None
        if self._close_with is not None and not self._ws.closed:
            await self._close(*self._close_with)
        self.state = ConnState.CLOSED
        self.session.detach()

    # -- incoming -----------------------------------------------------------------------------

    async def handle_frame(self, frame: str | bytes) -> None:
        """Answer one frame: a reply, or an error reply carrying the request id when known."""
        if self.state is ConnState.OPEN:
            self.state = ConnState.HANDLING
        try:  # (one coroutine a frame: no inner method to await)
            self.binary = isinstance(frame, bytes)
            # time.monotonic, not the loop's time(): Python 3.11's get_running_loop makes a
            # getpid() system call, a few µs a request on this machine.
            self.last_seen = time.monotonic()
            metrics = self.services.metrics
            session = self.session
            budget = self.bytes_budget
            if not self.bucket.take() or (budget is not None and not budget.take(len(frame))):
                self.refused += 1
                metrics.errors.inc("rate_limited")
                if self.refused >= FLOOD_CLOSE_AFTER:
                    self.close_soon(WSCloseCode.POLICY_VIOLATION, "rate limit exceeded")
                    return
                # A refusal is dropped rather than overflow the send queue, so that a flood is
                # closed for flooding (1008), not as a slow reader (1013).
                if not self.queue_full():
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
                if session.player is None and not isinstance(request, OPEN_REQUESTS):
                    raise NotAuthenticated()
                cost = REQUEST_COSTS.get(kind)
                if cost is not None and not self._afford(cost):
                    raise RateLimited(
                        f"{kind} costs {cost:g} requests of the rate limit; slow down"
                    )
                reply = await self.router.dispatch(session, request)
            except Exception as exc:  # every failure becomes an error reply, never a crash
                reply = error_reply(
                    exc, req_id if req_id is not None else getattr(exc, "id", None), session.version
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
            if not session.after_reply:
                return
            steps, session.after_reply = session.after_reply, []
            for step in steps:
                try:
                    await step()
                except Exception:  # the reply is sent; a failed follow-up must not end the reader
                    log.warning("a step after the %s reply failed", kind, exc_info=True)
        finally:
            if self.state is ConnState.HANDLING:
                self.state = ConnState.OPEN

    def _afford(self, cost: float) -> bool:
        """Whether a costly request may run: the rest of its cost (its first token is taken
        before it is read) from the connection's bucket, and its cost from its address's
        budget across connections (`server.transport.ratelimit`)."""
        if not self.bucket.take(cost - 1.0):
            return False
        return self.services.expensive.take(self.session.group, cost)


_CLOSING = frozenset((ConnState.CLOSE_REQUESTED, ConnState.CLOSING, ConnState.CLOSED))


def _request_id(frame: str | bytes) -> int | None:
    """The request id of a frame refused unread, when it is small enough to read
    (`REFUSED_ID_MAX`)."""
    if len(frame) > REFUSED_ID_MAX:
        return None
    try:
        return p.decode(frame).id
    except p.ProtocolError as exc:
        return exc.id
    except Exception:
        return None
