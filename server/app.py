"""The aiohttp application: `create_app(config)` wires Redis, services and routes.

Routes: ``/ws`` (the protocol, docs/protocol.md), ``/healthz`` (process up), ``/readyz``
(Redis reachable), ``/metrics`` (Prometheus) and ``/api/v1/`` (the public HTTP API,
docs/api.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine

from aiohttp import WSCloseCode, WSMsgType, web

import protocol as p
from server.api import setup_api
from server.config import Config
from server.games.announce import Announcer
from server.games.daily import ms_until_rollover
from server.games.service import LiveGame, PlayedListener
from server.handlers.routes import app_router
from server.players.registry import Player
from server.redis import connect as redisconn
from server.runtime.clock import Clock, system_clock
from server.runtime.errors import StoreUnavailable, raise_if_cancelled
from server.runtime.looplag import LoopPacer, runtime_probes
from server.runtime.metrics import Metrics, scrape_allowed
from server.services import Services
from server.transport.address import (
    ConnectionCounter,
    TrustedProxies,
    address_group,
    client_address,
    origin_allowed,
)
from server.transport.connection import Connection
from server.transport.router import Router
from server.transport.session import Session
from server.transport.web import add_web_routes

log = logging.getLogger(__name__)

CONFIG = web.AppKey("config", Config)
CLOCK = web.AppKey("clock", Clock)
METRICS = web.AppKey("metrics", Metrics)
SERVICES = web.AppKey("services", Services)
#: The open sockets: a plain set (a connection leaves it in `_websocket`'s `finally`), so
#: that `Connection` can be compiled (a mypyc class takes no weak reference; setup.py).
SOCKETS = web.AppKey("sockets", set[Connection])
ROUTER = web.AppKey("router", Router)
PACER = web.AppKey("pacer", LoopPacer)
PROXIES = web.AppKey("proxies", TrustedProxies)
OPEN_PER_ADDRESS = web.AppKey("open_per_address", ConnectionCounter)

#: Longest pause between two sweeps of the connections (idle timeout, heartbeat).
IDLE_SWEEP_MAX_S = 5.0
#: Connections looked at between two yields of a sweep.
SWEEP_SLICE = 1_000
#: How long a background job may take to stop at shutdown.
BACKGROUND_STOP_S = 5.0
#: How long clients are told to wait before reconnecting after a shutdown.
RETRY_AFTER_MS = 2_000
#: Frames up to this many times the frame limit are read, to answer them with `too_large`.
HARD_FRAME_FACTOR = 4
#: Close code and reason of a connection that did not say `hello` in time (docs/protocol.md §1).
HELLO_TIMEOUT_CLOSE = (WSCloseCode.POLICY_VIOLATION, "hello timeout")
#: Close code and reason of a session whose player revoked every session (`token.revoke_all`).
TOKEN_REVOKED_CLOSE = (4001, "token revoked")
#: Longest time a revoked session of another process stays open when the revocation's
#: pub/sub message (`pubsub.SessionsRevoked`, which sweeps at once) is lost.
SESSION_SWEEP_S = 2.0
#: How often every session here is checked, whatever `keys.revocations` says.
FULL_SWEEP_S = 60.0
#: Sessions checked per round trip of a sweep (the loop runs requests between two).
FULL_SWEEP_SLICE = 250


def create_app(config: Config, *, clock: Clock | None = None) -> web.Application:
    """Build the app; Redis is connected (or started) when the app starts up."""
    app = web.Application()
    app[CONFIG] = config
    app[CLOCK] = clock or system_clock(config.clock_offset_ms)
    app[METRICS] = Metrics()
    app[SOCKETS] = set()
    # Counted when scraped, not kept up by every connection: the gauge's lock and two calls
    # cost each connection ~4 µs of server CPU (issue #30, per-game costs).
    sockets = app[SOCKETS]
    app[METRICS].connections.set_function(lambda: len(sockets))
    app[PROXIES] = TrustedProxies.parse(config.trusted_proxies)
    app[OPEN_PER_ADDRESS] = ConnectionCounter(config.connections_per_address)
    app[ROUTER] = app_router()  # raises IncompleteTable when a request has no handler
    app.cleanup_ctx.append(_redis_ctx)
    # Race background jobs, each its own context (stopped before Redis closes):
    app.cleanup_ctx.append(_background(lambda a: a[SERVICES].race_fanout.run()))
    app.cleanup_ctx.append(_background(lambda a: a[SERVICES].race_clock.run()))
    app.cleanup_ctx.append(_background(lambda a: a[SERVICES].matchmaking.run()))
    # The end of each UTC day: its unfinished daily games closed, then the day (seeds public).
    app.cleanup_ctx.append(_background(lambda a: a[SERVICES].day_closer.run()))
    app[PACER] = LoopPacer()
    app.cleanup_ctx.append(runtime_probes(app[METRICS], config.loop_lag_interval_ms, app[PACER]))
    app.cleanup_ctx.append(_background(_sweep_connections))
    app.cleanup_ctx.append(_background(_sweep_sessions))
    app.on_shutdown.append(_close_sockets)
    app.router.add_get("/ws", websocket)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    add_web_routes(app)  # the browser client at / (server/transport/web.py)
    setup_api(app, lambda a: a[SERVICES], app[PROXIES], config)  # /api/v1 (docs/api.md)
    return app


async def _redis_ctx(app: web.Application) -> AsyncIterator[None]:
    config = app[CONFIG]
    # One Redis, embedded or external, or a Redis Cluster (`server.redis.connect`).
    async with redisconn.connected(config) as client:
        services = Services.build(config, app[CLOCK], client, app[METRICS])
        sockets = app[SOCKETS]
        _listen(services, lambda: _sessions(sockets))
        app[SERVICES] = services
        try:  # look-alike names of the players created before folding (once per database)
            await services.players.backfill_folds()
        except StoreUnavailable:
            log.warning("cannot fold the older players' names now: Redis unavailable")
        deals_task = asyncio.create_task(_prepare_deals(services))
        try:
            yield
        finally:
            # Every task that writes to Redis stops before Redis closes: the background jobs
            # above (their contexts close first), the deals being prepared, and the deal and
            # tier computations they started (each releases its lock in Redis on the way out).
            deals_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await deals_task
            await services.deals.aclose()
            await services.games.aclose()
            await services.store.batch.aclose()  # writes already sent complete first
            services.deals.pool.close()


def _listen(services: Services, sessions: Callable[[], list[Session]]) -> None:
    """Register, once, the listeners of what the game service publishes: a racer's writes
    reach the race (progress, maybe its end), and a game found over after its reply reaches
    the player's sessions here and, through Redis, on the other processes."""
    services.games.on_played.append(_race_progress(services))
    announcer = Announcer(
        services.games,
        services.leaderboard,
        services.redis,
        services.race_fanout.instance,
        sessions,
    )
    services.games.on_finished.append(announcer.finished_here)
    services.race_fanout.on_game_ended(announcer.finished_elsewhere)

    def revoked(pid: str) -> None:  # a token of the player died on some process: sweep now
        if services.race_fanout.follows_player(pid):  # a session of the player is here
            services.sessions_revoked.set()

    services.race_fanout.on_sessions_revoked(revoked)


def _race_progress(services: Services) -> PlayedListener:
    """Race games tell the race about every write (progress, and maybe the end)."""
    referee = services.race_referee

    def progress(live: LiveGame) -> Awaitable[None] | None:
        return None if live.race_id is None else referee.on_played(live.race_id, live)

    return progress


def _sessions(sockets: set[Connection]) -> list[Session]:
    return [conn.session for conn in list(sockets)]


def _background(
    job: Callable[[web.Application], Coroutine[None, None, None]],
) -> Callable[[web.Application], AsyncIterator[None]]:
    """A cleanup_ctx running `job(app)` as a task from startup until cleanup."""

    async def ctx(app: web.Application) -> AsyncIterator[None]:
        task = asyncio.create_task(job(app))
        try:
            yield
        finally:
            task.cancel()
            # Bounded: a job stuck in a library call must not hold the shutdown forever.
            done, _ = await asyncio.wait({task}, timeout=BACKGROUND_STOP_S)
            if not done:
                log.warning("a background job did not stop within %.0f s", BACKGROUND_STOP_S)
            elif not task.cancelled() and task.exception() is not None:
                log.error("a background job failed", exc_info=task.exception())

    return ctx


async def _sweep_connections(app: web.Application) -> None:
    """One sweep over the connections for both of their timers (rather than a timer each,
    re-armed by every frame): close those that sent nothing for `idle_timeout` seconds,
    unless they follow a race (a racer or a spectator only receives, and may for the whole
    race), and ping those that sent nothing for `heartbeat` seconds, closing those that then
    answer nothing (`Connection.heartbeat`)."""
    config = app[CONFIG]
    fanout = app[SERVICES].race_fanout
    idle, every = config.idle_timeout, config.heartbeat
    pings: set[asyncio.Task[None]] = set()  # referenced until sent (asyncio keeps none)
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(min(idle / 4, every / 2, IDLE_SWEEP_MAX_S))
        now = time.monotonic()  # `Connection.last_seen`'s clock
        cutoff = now - idle
        sockets = app[SOCKETS]
        for n, conn in enumerate(list(sockets)):
            if conn.last_seen < cutoff and not fanout.follows(conn.session):
                conn.close_soon(WSCloseCode.GOING_AWAY, "idle timeout")
            elif conn.heartbeat(now, every):
                task = loop.create_task(conn.ping(now))
                pings.add(task)
                task.add_done_callback(pings.discard)
            if n % SWEEP_SLICE == SWEEP_SLICE - 1:
                await asyncio.sleep(0)  # many connections: let requests run between slices


async def _sweep_sessions(app: web.Application) -> None:
    """Close the sessions whose player revoked every session (`token.revoke_all`) since they
    said hello, or whose token died on its own since (`device.revoke`, or `token.rotate`
    from another connection of the same device).

    Every script that kills a token adds its player to `keys.revocations`; this reads what
    is new there (one command) and checks the sessions of those players only: at once when
    told (`pubsub.SessionsRevoked`, or a revocation by a session of this process), else every
    `SESSION_SWEEP_S` seconds, in case that message was lost. Reading every connected
    player's tokens each time instead cost 2 commands a session: ~470 ms of CPU and as long
    a stall of the loop every 2 s at 10,000 sessions. Every session is still checked every
    `FULL_SWEEP_S` (sliced, yielding between slices): the bound for a death the stream no
    longer holds (more than `REVOCATIONS_KEPT` between two reads) or never got (a process of
    an older version)."""
    services = app[SERVICES]
    revoked = services.sessions_revoked
    loop = asyncio.get_running_loop()
    after: str | None = None  # the last revocation read; None: not known yet
    full_at = loop.time() + FULL_SWEEP_S
    while True:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(revoked.wait(), SESSION_SWEEP_S)
        revoked.clear()
        try:
            if after is None:  # nothing older matters: every session here is checked below
                after, pids, more = await services.players.revocations_head(), None, False
            else:
                after, pids, more = await services.players.revoked_since(after)
        except Exception:
            raise_if_cancelled()
            log.warning("session sweep failed", exc_info=True)
            if loop.time() < full_at:
                continue
            pids, more = None, False  # the stream unreadable: the full sweep still runs
        if more:
            revoked.set()  # read on at once
        if pids is None or loop.time() >= full_at:
            full_at = loop.time() + FULL_SWEEP_S
            pids = None
        elif not pids:
            continue
        open_now = app[SOCKETS]
        conns = list(open_now)
        sessions = [
            (c, c.session.player)
            for c in conns
            if c.session.player is not None
            and not c.closing
            and (pids is None or c.session.player.id in pids)
        ]
        for i in range(0, len(sessions), FULL_SWEEP_SLICE):
            if not await _close_revoked(services, sessions[i : i + FULL_SWEEP_SLICE]):
                full_at = 0.0  # those players were read off the stream: every session next
                break


async def _close_revoked(services: Services, sessions: list[tuple[Connection, Player]]) -> bool:
    """Close those of ``sessions`` (each with its player as it said hello) whose token died:
    two pipelined reads, the players' epochs and their revoked devices. False when Redis
    could not be read."""
    try:
        epochs = await services.players.epochs(player.id for _, player in sessions)
        revoked_one = await services.players.revoked_sessions([pl for _, pl in sessions])
    except Exception:
        raise_if_cancelled()
        log.warning("session sweep failed", exc_info=True)
        return False
    for (conn, player), gone in zip(sessions, revoked_one, strict=True):
        if conn.session.player is not player:
            continue  # it rotated its token since the read: that rotation is in the stream
        if epochs.get(player.id, 0) > player.epoch or gone:
            conn.close_soon(*TOKEN_REVOKED_CLOSE)
    return True


async def _prepare_deals(services: Services) -> None:
    """Keep today's and tomorrow's daily deals and tiers computed, so rollover is instant."""
    while True:
        raise_if_cancelled()
        try:
            await services.deals.prepare_ahead()
            await services.deals.prepare_tiers_ahead()  # the day's tiers, after its deals
        except Exception:
            raise_if_cancelled()
            log.exception("preparing daily deals failed")
        await asyncio.sleep(min(3600.0, ms_until_rollover(services.clock.now_ms()) / 1000 + 1))


async def _close_sockets(app: web.Application) -> None:
    """Tell every client the server is going away, then close with GOING_AWAY."""
    sockets = app[SOCKETS]
    notice = p.Shutdown(reason="server shutting down", retry_after_ms=RETRY_AFTER_MS)
    await asyncio.gather(*(c.go_away(notice) for c in list(sockets)), return_exceptions=True)


def hard_frame_limit(config: Config) -> int:
    """The largest frame answered with `too_large` before the 1009 close; a larger one is
    closed with 1009 at once, unread (docs/protocol.md §1)."""
    return HARD_FRAME_FACTOR * config.max_msg_size


async def websocket(request: web.Request) -> web.WebSocketResponse:
    app = request.app
    config = app[CONFIG]
    # Refused before the upgrade: a foreign page's script (403), one address too many (429).
    if not origin_allowed(request.headers.get("Origin"), request.host, config.allowed_origins):
        raise web.HTTPForbidden(text="origin not allowed")
    address, group = _who(request.remote, request.headers.get("X-Forwarded-For"), app[PROXIES])
    counter = app[OPEN_PER_ADDRESS]
    if not counter.acquire(group):
        raise web.HTTPTooManyRequests(
            text="too many connections from this address", headers={"Retry-After": "10"}
        )
    try:
        return await _websocket(request, address, group)
    finally:
        counter.release(group)


#: `X-Forwarded-For` values up to this long are remembered by `_who` (a longer one, rare and
#: client-written, is worked out each time and kept nowhere).
_WHO_KEPT_LEN = 256


def _who(peer: str | None, forwarded_for: str | None, proxies: TrustedProxies) -> tuple[str, str]:
    """The client's address and its group (`client_address`, `address_group`): pure
    functions of their arguments, worked out once per distinct peer (their `ipaddress`
    parsing cost every connection about 20 µs of server CPU: issue #30, per-game costs)."""
    if forwarded_for is not None and len(forwarded_for) > _WHO_KEPT_LEN:
        address = client_address(peer, forwarded_for, proxies)
        return address, address_group(address)
    return _who_kept(peer, forwarded_for, proxies)


@functools.lru_cache(maxsize=4096)
def _who_kept(
    peer: str | None, forwarded_for: str | None, proxies: TrustedProxies
) -> tuple[str, str]:
    address = client_address(peer, forwarded_for, proxies)
    return address, address_group(address)


async def _websocket(request: web.Request, address: str, group: str) -> web.WebSocketResponse:
    app = request.app
    config = app[CONFIG]
    pacer = app[PACER]
    if pacer.behind():  # a burst of new connections waits for the loop's overdue timers too
        await pacer.catch_up()
    # aiohttp refuses a frame of `max_msg_size` bytes or more (it closes with 1009, no reply),
    # so it gets a larger limit: the codec refuses frames over `config.max_msg_size` with a
    # `too_large` reply before the close, for frames up to `hard_frame_limit(config)`.
    # The heartbeat is the connection sweep's (`_sweep_connections`), not aiohttp's: its
    # timer per connection was re-armed by a callback after every frame received, and made
    # every closed connection a reference cycle for the garbage collector. Without autoping
    # the reader sees the client's pongs (the heartbeat's answers) and answers its pings.
    ws = web.WebSocketResponse(
        autoping=False, max_msg_size=hard_frame_limit(config) + 1, compress=False
    )
    transport = request.transport
    await ws.prepare(request)
    conn = Connection(ws, app[SERVICES], app[ROUTER], address, group)
    app[SOCKETS].add(conn)
    hello_timer = asyncio.get_running_loop().call_later(config.hello_timeout, _hello_overdue, conn)
    try:
        while not ws.closed:
            msg = await ws.receive()  # idle clients are closed by the sweep, not a timer each
            if msg.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                if pacer.behind():  # let the loop's overdue timers run first (`LoopPacer`)
                    await pacer.catch_up()
                await conn.handle_frame(msg.data)
                if conn.close_requested:
                    break  # `finish` closes, after the replies already sent or queued
            elif msg.type == WSMsgType.PONG:
                conn.pong_at = time.monotonic()
            elif msg.type == WSMsgType.PING:
                with contextlib.suppress(ConnectionError, RuntimeError):
                    await ws.pong(msg.data)
            elif msg.type == WSMsgType.ERROR:
                log.info("websocket error: %s", ws.exception())
                break
            else:  # CLOSE, CLOSING, CLOSED
                break
    finally:
        hello_timer.cancel()
        await conn.finish()
        app[SOCKETS].discard(conn)
        await app[SERVICES].race_fanout.detach(conn.session)
        _drop_traceback(ws.exception())
        _drop_read_callback(transport)
    return ws


def _hello_overdue(conn: Connection) -> None:
    """No `welcome` within `--hello-timeout`: close (1008, "hello timeout")."""
    if conn.session.player is None:
        conn.close_soon(*HELLO_TIMEOUT_CLOSE)


def _drop_traceback(exc: BaseException | None) -> None:
    """Free a closed connection by reference counting, not the cyclic garbage collector.

    When a client goes away without a close frame, aiohttp's `close()` keeps the error of
    writing its own close frame (`ws.exception()`); that error's traceback, and the `EofStream`
    it was raised while handling, hold the response's frames, so the response, request,
    transport and socket form a cycle (aio-libs/aiohttp#10535 fixed the same for other
    queues). Under connection churn those cycles made the old-generation collections take
    100-200 ms; without the tracebacks nothing refers back and the whole connection is freed
    as soon as the handler returns."""
    for _ in range(8):  # the chain is short; the bound guards against a loop in it
        if exc is None:
            return
        following = exc.__context__ or exc.__cause__
        exc.__traceback__ = None
        exc.__context__ = exc.__cause__ = None
        exc = following


def _drop_read_callback(transport: asyncio.BaseTransport | None) -> None:
    """Free a closed connection's transport by reference counting too.

    asyncio's selector transport (CPython 3.11) keeps its read handler as a bound method of
    itself (`_read_ready_cb`) for its whole life, closed or not: every connection's transport,
    its socket objects and their dicts were a cycle left to the garbage collector (issue #30,
    per-game costs: one per game of Fourteen Out's). Once the transport is closing its reader
    is unregistered and the handler is never called again, so it is dropped; a transport
    still open, or one without that attribute (another loop), is left as it is."""
    if (
        transport is not None
        and transport.is_closing()
        and getattr(transport, "_read_ready_cb", None) is not None
    ):
        transport._read_ready_cb = None  # type: ignore[attr-defined]


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    try:
        # Under HAProxy's check timeout (1.5 s, deploy/haproxy.cfg) so a slow Redis answers 503
        # in words rather than a check that times out.
        await asyncio.wait_for(request.app[SERVICES].redis.ping(), timeout=1.2)
    except Exception as exc:  # the error text (hosts, ports, auth) is logged, never served
        log.warning("readyz: redis not ready: %s: %s", type(exc).__name__, exc)
        return web.json_response({"status": "unavailable"}, status=503)
    return web.json_response({"status": "ready"})


async def metrics(request: web.Request) -> web.Response:
    config = request.app[CONFIG]
    if not scrape_allowed(request.remote, request.headers, config.metrics_token):
        return web.Response(
            status=403,
            text="/metrics: from this host, or with the metrics token (--metrics-token)\n",
            headers={"Cache-Control": "no-store"},
        )
    body = request.app[METRICS].render()
    return web.Response(body=body, content_type="text/plain", charset="utf-8")
