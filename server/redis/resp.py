"""A raw RESP pipeline to one Redis: an `asyncio.Protocol` that writes packed commands and
feeds the bytes it receives to a `hiredis.Reader`, resolving each command's future in order.

The group commit (`server.redis.batch.Batcher`) writes each batch here at once, with no task,
no pool checkout and no coroutine per reply: replies arrive in the order the commands were
written, so a FIFO of waiting commands is all the bookkeeping. Batches written before the
replies of earlier ones arrive simply queue behind them on the same connection.

What it keeps from the redis-py connection it replaces:

* settings: host/port, unix socket path, TLS (the `SSLConnection`'s own `ssl_context`),
  username/password or credential provider (AUTH), db (SELECT), client name and the driver's
  CLIENT SETINFO, connect timeout, reply encoding: all from the redis-py client's public
  `connection_pool.connection_class` and `connection_kwargs` (`RespSettings.of`);
* error replies: each is that command's result, as the exception redis-py would raise for it
  (`reply_error`: NOSCRIPT -> `NoScriptError`, LOADING -> `BusyLoadingError`, ...);
* a script Redis lacks (`NoScriptError` on an `EVALSHA` of a `LuaScript`): SCRIPT LOAD and the
  command are written again on the same connection (once: a second NOSCRIPT is its result);
* a connection failure (closed, reset, a write error) fails every command still waiting on it
  with `ConnectionError`, and the connection is never used again;
* the deadline: while replies are owed, SOCKET_TIMEOUT_S without a byte from Redis aborts the
  connection and fails what waits on it with `TimeoutError` (one timer per connection, armed
  when replies become owed, not one per command or batch);
* event-loop fairness: at most RESOLVE_CHUNK callers are woken per loop iteration, the rest on
  the following ones, so a large batch does not hold the loop for all its replies.

It speaks RESP2 whatever the client's `protocol` (the batch's callers read RESP2 replies).
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

import hiredis
import redis.asyncio
import redis.exceptions
from redis.asyncio.connection import SSLConnection, UnixDomainSocketConnection
from redis.credentials import CredentialProvider, UsernamePasswordCredentialProvider
from redis.driver_info import DriverInfo

__all__ = [
    "RESOLVE_CHUNK",
    "RespConnection",
    "RespSettings",
    "Waiter",
    "pack",
    "reply_error",
]

#: Callers woken per event-loop iteration as replies arrive (event-loop lag: a large batch's
#: callers each build and send a reply).
RESOLVE_CHUNK = 16


#: RESP's length lines, made once: `*N` for a command of N arguments, `$N` for an argument of
#: N bytes.
_COUNT_LINES: Final = tuple(b"*%d\r\n" % n for n in range(64))
_SIZE_LINES: Final = tuple(b"$%d\r\n" % n for n in range(1024))
_CRLF: Final = b"\r\n"


def pack(args: tuple[str | int | bytes, ...]) -> bytes:
    """One command in RESP, as `hiredis.pack_command` writes it (str as UTF-8, int in
    decimal). Not hiredis's: it writes every length with `sprintf`, 7 % of a game's server
    instructions (issue #30); compiled, this is about a third cheaper. Another type (a
    bool, a float) is a TypeError, as hiredis refuses a bool."""
    n = len(args)
    parts: list[bytes] = [_COUNT_LINES[n] if n < 64 else b"*%d\r\n" % n]
    for a in args:
        if isinstance(a, str):
            b = a.encode()
        elif type(a) is int:
            b = str(a).encode()
        elif isinstance(a, bytes):
            b = a
        else:
            raise TypeError(f"a command's argument must be str, int or bytes, not {type(a)}")
        size = len(b)
        parts.append(_SIZE_LINES[size] if size < 1024 else b"$%d\r\n" % size)
        parts.append(b)
        parts.append(_CRLF)
    return b"".join(parts)


#: Error codes (the reply's first word) and the redis-py exception each one is, as redis-py
#: parses them: the code is cut from the message of those listed.
_ERRORS: dict[str, type[redis.exceptions.ResponseError] | type[redis.exceptions.RedisError]] = {
    "OOM": redis.exceptions.OutOfMemoryError,
    "WRONGPASS": redis.exceptions.AuthenticationError,
    "EXECABORT": redis.exceptions.ExecAbortError,
    "LOADING": redis.exceptions.BusyLoadingError,
    "NOSCRIPT": redis.exceptions.NoScriptError,
    "READONLY": redis.exceptions.ReadOnlyError,
    "NOAUTH": redis.exceptions.AuthenticationError,
    "NOPERM": redis.exceptions.NoPermissionError,
    "ASK": redis.exceptions.AskError,
    "TRYAGAIN": redis.exceptions.TryAgainError,
    "MOVED": redis.exceptions.MovedError,
    "CLUSTERDOWN": redis.exceptions.ClusterDownError,
    "CROSSSLOT": redis.exceptions.ClusterCrossSlotError,
    "MASTERDOWN": redis.exceptions.MasterDownError,
}
_ERR_CLASSES: dict[str, type[redis.exceptions.RedisError]] = {
    "max number of clients reached": redis.exceptions.ConnectionError,
    "invalid password": redis.exceptions.AuthenticationError,
    "Client sent AUTH, but no password is set": redis.exceptions.AuthenticationError,
}


def reply_error(message: str | bytes) -> Exception:
    """The exception an error reply stands for (redis-py's classes and messages)."""
    text = message.decode(errors="replace") if isinstance(message, bytes) else message
    code, _, rest = text.partition(" ")
    if code == "ERR":
        return _ERR_CLASSES.get(rest, redis.exceptions.ResponseError)(rest)
    cls = _ERRORS.get(code)
    if cls is None:
        return redis.exceptions.ResponseError(text)
    try:
        return cls(rest)
    except ValueError:  # a MOVED/ASK without "slot host:port"
        return redis.exceptions.ResponseError(text)


@dataclass(frozen=True, slots=True)
class RespSettings:
    """Where and how to connect, read from a redis-py connection pool's public settings."""

    host: str
    port: int
    path: str | None
    ssl_context: ssl.SSLContext | None
    credentials: CredentialProvider | None
    db: int
    client_name: str | None
    driver: DriverInfo | None
    connect_timeout: float | None
    encoding: str | None  # None: replies stay bytes (decode_responses=False)
    encoding_errors: str

    @classmethod
    def of(cls, connection_class: type[object], kwargs: Mapping[str, Any]) -> RespSettings:
        """From `pool.connection_class` and `pool.connection_kwargs` (a single Redis's pool, or
        a cluster node's `connection_class` and `connection_kwargs`)."""
        context: ssl.SSLContext | None = None
        if issubclass(connection_class, SSLConnection):
            # The TLS settings as redis-py reads them (certificates, checks, versions): its
            # own context object, built by a connection that is never connected.
            template = connection_class(**kwargs)
            context = template.ssl_context.get()
        provider = cast("CredentialProvider | None", kwargs.get("credential_provider"))
        username = cast("str | None", kwargs.get("username"))
        password = cast("str | None", kwargs.get("password"))
        if provider is None and (username or password):
            provider = UsernamePasswordCredentialProvider(username, password)
        driver = kwargs.get("driver_info")
        return cls(
            host=str(kwargs.get("host", "localhost")),
            port=int(kwargs.get("port", 6379)),
            path=str(kwargs["path"])
            if issubclass(connection_class, UnixDomainSocketConnection)
            else None,
            ssl_context=context,
            credentials=provider,
            db=int(kwargs.get("db", 0) or 0),
            client_name=cast("str | None", kwargs.get("client_name")),
            driver=driver if isinstance(driver, DriverInfo) else None,
            connect_timeout=cast("float | None", kwargs.get("socket_connect_timeout", 5.0)),
            encoding=str(kwargs.get("encoding", "utf-8"))
            if kwargs.get("decode_responses")
            else None,
            encoding_errors=str(kwargs.get("encoding_errors", "strict")),
        )

    @classmethod
    def of_client(cls, client: redis.asyncio.Redis) -> RespSettings:
        pool = client.connection_pool
        return cls.of(pool.connection_class, pool.connection_kwargs)

    @property
    def address(self) -> str:
        return self.path if self.path is not None else f"{self.host}:{self.port}"


class Waiter:
    """A command written and not yet answered: the future its reply resolves and, for an
    `EVALSHA`, the script's source and the packed command, written again (after SCRIPT LOAD)
    if Redis lacks the script. ``group``: the futures of several calls a script ran as one
    (`server.redis.batch.LuaScript.many`), each resolved by its element of the reply (an
    error element fails its call alone; an error reply, every one)."""

    __slots__ = ("future", "group", "packed", "script")

    def __init__(
        self,
        future: asyncio.Future[object] | None,
        script: str | None = None,
        packed: bytes = b"",
        group: tuple[asyncio.Future[object], ...] | None = None,
    ) -> None:
        self.future = future
        self.script = script
        self.packed = packed
        self.group = group


#: Maps an exception that fails a command to what its caller gets (the batcher's
#: `StoreUnavailable` for an outage).
Failure = Callable[[BaseException], BaseException]


def _same(exc: BaseException) -> BaseException:
    return exc


class RespConnection(asyncio.Protocol):
    """One Redis connection carrying pipelined commands; see the module docstring."""

    def __init__(self, settings: RespSettings, timeout: float, failure: Failure = _same) -> None:
        self.settings = settings
        self._timeout = timeout
        self._failure = failure
        if settings.encoding is None:
            self._reader = hiredis.Reader(replyError=reply_error)
        else:
            self._reader = hiredis.Reader(
                replyError=reply_error,
                encoding=settings.encoding,
                errors=settings.encoding_errors,
            )
        self._loop = asyncio.get_running_loop()
        self._transport: asyncio.Transport | None = None
        self._waiting: deque[Waiter] = deque()
        #: Replies read but whose callers are not woken yet (RESOLVE_CHUNK per iteration).
        self._ready: deque[tuple[asyncio.Future[object], object]] = deque()
        self._draining = False
        self._lost: BaseException | None = None
        self._last_heard = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._idle: asyncio.Future[None] | None = None
        #: Reads from the socket, replies received and commands written (for tests).
        self.reads = 0
        self.replies = 0
        self.written = 0

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    async def open(
        cls, settings: RespSettings, timeout: float, failure: Failure = _same
    ) -> RespConnection:
        """Connected and set up (AUTH, SELECT, CLIENT SETNAME/SETINFO in one round trip)."""
        loop = asyncio.get_running_loop()
        conn = cls(settings, timeout, failure)
        try:
            async with asyncio.timeout(settings.connect_timeout):
                if settings.path is not None:
                    await loop.create_unix_connection(lambda: conn, settings.path)
                else:
                    await loop.create_connection(
                        lambda: conn,
                        settings.host,
                        settings.port,
                        ssl=settings.ssl_context,
                        server_hostname=settings.host if settings.ssl_context else None,
                    )
                await conn._handshake()
        except TimeoutError:
            conn.close()
            raise redis.exceptions.TimeoutError(
                f"timeout connecting to redis at {settings.address}"
            ) from None
        except OSError as exc:
            conn.close()
            raise redis.exceptions.ConnectionError(
                f"error connecting to redis at {settings.address}: {exc}"
            ) from exc
        except BaseException:
            conn.close()
            raise
        return conn

    async def _handshake(self) -> None:
        s = self.settings
        setup: list[tuple[str | int, ...]] = []
        if s.credentials is not None:
            creds = await s.credentials.get_credentials_async()
            setup.append(("AUTH", *creds))
        if s.client_name:
            setup.append(("CLIENT", "SETNAME", s.client_name))
        if s.db:
            setup.append(("SELECT", s.db))
        optional = 0
        if s.driver is not None:  # as redis-py: an old Redis without SETINFO is fine
            setup.append(("CLIENT", "SETINFO", "LIB-NAME", str(s.driver.formatted_name)))
            setup.append(("CLIENT", "SETINFO", "LIB-VER", str(s.driver.lib_version)))
            optional = 2
        if not setup:
            return
        futures = self.send([pack(c) for c in setup])
        replies = await asyncio.gather(*futures, return_exceptions=True)
        for reply in replies[: len(replies) - optional]:
            if isinstance(reply, redis.exceptions.ResponseError):
                if isinstance(reply, redis.exceptions.AuthenticationError):
                    raise reply
                raise redis.exceptions.ConnectionError(f"redis refused the setup: {reply}")
            if isinstance(reply, BaseException):
                raise reply

    # -- asyncio.Protocol ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self._reader.feed(data)
        self.reads += 1
        self._last_heard = self._loop.time()
        waiting, ready = self._waiting, self._ready
        retry: list[bytes] = []
        while True:
            try:
                reply = self._reader.gets()
            except hiredis.ProtocolError as exc:  # not RESP: nothing after it can be trusted
                self._abort(redis.exceptions.ConnectionError(f"redis protocol error: {exc}"))
                return
            if reply is False:
                break
            if not waiting:  # a reply nobody asked for: the stream is out of step
                self._abort(redis.exceptions.ConnectionError("unexpected reply from redis"))
                return
            w = waiting.popleft()
            self.replies += 1
            fut = w.future
            group = w.group
            if isinstance(reply, Exception):
                if w.script is not None and isinstance(reply, redis.exceptions.NoScriptError):
                    # Loaded and sent again below (same futures); once only.
                    retry.append(pack(("SCRIPT", "LOAD", w.script)))
                    retry.append(w.packed)
                    waiting.append(Waiter(None))  # the SCRIPT LOAD's reply
                    waiting.append(Waiter(fut, group=group))  # the second (last) try
                    continue
                reply = self._failure(reply)
            if group is not None:
                self._split(group, reply)
            elif fut is not None:  # None: a SCRIPT LOAD's reply (a failed one: its NOSCRIPT tells)
                ready.append((fut, reply))
        if retry:
            self._write(retry)
        if ready and not self._draining:
            self._drain()
        if not waiting and self._idle is not None and not self._idle.done():
            self._idle.set_result(None)

    def _split(self, group: tuple[asyncio.Future[object], ...], reply: object) -> None:
        """A script's reply for several calls (`Waiter.group`) to each call's caller."""
        ready = self._ready
        if isinstance(reply, BaseException):
            for fut in group:
                ready.append((fut, reply))
        elif isinstance(reply, list) and len(reply) == len(group):
            failure = self._failure
            for fut, r in zip(group, reply, strict=True):
                ready.append((fut, failure(r) if isinstance(r, Exception) else r))
        else:  # a script that broke its contract: no call can be known to be answered
            bad = redis.exceptions.ResponseError(
                f"a script run for {len(group)} calls answered {reply!r:.80}"
            )
            for fut in group:
                ready.append((fut, bad))

    def _drain(self) -> None:
        """Wake up to RESOLVE_CHUNK callers now, the rest on the next loop iteration."""
        ready = self._ready
        for _ in range(min(RESOLVE_CHUNK, len(ready))):
            fut, reply = ready.popleft()
            if fut.done():  # the caller went away; the write stands regardless
                continue
            if isinstance(reply, BaseException):
                fut.set_exception(reply)
            else:
                fut.set_result(reply)
        self._draining = bool(ready)
        if ready:
            self._loop.call_soon(self._drain)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._lost is None:
            self._lost = redis.exceptions.ConnectionError(
                f"connection to redis at {self.settings.address} lost" + (f": {exc}" if exc else "")
            )
        self._fail_waiting(self._lost)

    def eof_received(self) -> bool | None:
        return None  # close the transport: connection_lost fails what waits

    # -- writing ----------------------------------------------------------------------------

    @property
    def usable(self) -> bool:
        """Connected and never failed (a failed one is not written to again)."""
        return self._lost is None and self._transport is not None

    @property
    def owed(self) -> int:
        """Replies Redis still owes on this connection."""
        return len(self._waiting)

    def send(self, packed: list[bytes]) -> list[asyncio.Future[object]]:
        """Write commands; a future per command (for the setup and tests; the batcher uses
        `send_waiters` with its callers' own futures)."""
        waiters = [Waiter(self._loop.create_future()) for _ in packed]
        self.send_waiters(packed, waiters)
        return [cast(asyncio.Future[object], w.future) for w in waiters]

    def send_waiters(self, packed: list[bytes], waiters: list[Waiter]) -> None:
        """Write commands in one go; each `Waiter`'s future gets its command's reply."""
        if self._lost is not None:
            failure = self._failure(self._lost)
            for w in waiters:
                for fut in w.group or (w.future,):
                    if fut is not None and not fut.done():
                        fut.set_exception(failure)
            return
        if not self._waiting:
            self._last_heard = self._loop.time()  # the deadline counts from now
        self._waiting.extend(waiters)
        self._write(packed)
        if self._timer is None:
            self._timer = self._loop.call_at(self._last_heard + self._timeout, self._check)

    def _write(self, packed: list[bytes]) -> None:
        assert self._transport is not None
        self.written += len(packed)
        self._transport.write(packed[0] if len(packed) == 1 else b"".join(packed))

    def _check(self) -> None:
        """The deadline: Redis owes replies and has sent nothing for the timeout."""
        self._timer = None
        if not self._waiting or self._lost is not None:
            return
        due = self._last_heard + self._timeout
        if self._loop.time() >= due:
            self._abort(redis.exceptions.TimeoutError("timeout reading from redis"))
        else:
            self._timer = self._loop.call_at(due, self._check)

    # -- failing and closing -------------------------------------------------------------------

    def _abort(self, exc: BaseException) -> None:
        if self._lost is None:
            self._lost = exc
        if self._transport is not None:
            self._transport.abort()  # connection_lost follows, on the next iteration
        self._fail_waiting(self._lost)

    def _fail_waiting(self, exc: BaseException) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        failure = self._failure(exc)
        waiting, self._waiting = self._waiting, deque()
        for w in waiting:
            for fut in w.group or (w.future,):
                if fut is not None:
                    self._ready.append((fut, failure))
        if self._ready and not self._draining:
            self._drain()
        if self._idle is not None and not self._idle.done():
            self._idle.set_result(None)

    async def wait_idle(self) -> None:
        """Until Redis owes nothing on this connection (or it failed)."""
        if self._waiting and self._lost is None:
            if self._idle is None or self._idle.done():
                self._idle = self._loop.create_future()
            await asyncio.shield(self._idle)
        while self._ready:  # the last callers woken
            await asyncio.sleep(0)

    def close(self) -> None:
        """Close now: commands still waiting fail as a lost connection."""
        if self._lost is None:
            self._lost = redis.exceptions.ConnectionError("connection closed by the server")
        if self._transport is not None:
            self._transport.close()
        self._fail_waiting(self._lost)
