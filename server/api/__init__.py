"""The public read-only HTTP API under ``/api/v1/`` (docs/api.md): JSON, streams and open data.

`setup_api(app, services, proxies, config)` adds its routes and middleware to the app; the
server's composition root (`server.app`) calls it once. Modules: `routes` (the JSON
endpoints and the middleware: rate limits, CORS, errors), `streams` (live board, race
events), `opendata` (a closed day's results), `delayed` (a race as of the spectator delay ago),
`etags` (cache headers), `ratelimit`, `views`
(the JSON shapes), `errors`, `dump` (the command line dumping days to files) and
``openapi.json`` (the OpenAPI 3.1 document served at ``/api/v1/openapi.json``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Final

from aiohttp import web

from server.api.errors import ApiError, ApiErrorCode
from server.api.ratelimit import RateLimiter
from server.api.routes import (
    API,
    PREFIX,
    ApiContext,
    api_middleware,
    int_param,
    load_openapi,
    setup_routes,
    tier_param,
    variant_param,
)
from server.api.streams import BoardFeeds, serve_race
from server.boards.leaderboard import MAX_LIMIT
from server.config import Config
from server.redis import keys
from server.services import Services
from server.transport.address import (
    ConnectionCounter,
    TrustedProxies,
    address_group,
    client_address,
)

__all__ = ["API", "PREFIX", "setup_api"]

FEEDS: Final = web.AppKey("api_feeds", BoardFeeds)
STREAMS_OPEN: Final = web.AppKey("api_streams_open", ConnectionCounter)


def setup_api(
    app: web.Application,
    services: Callable[[web.Application], Services],
    proxies: TrustedProxies,
    config: Config,
) -> None:
    """Serve ``/api/v1/`` from ``app``, reading through ``services(app)`` (set at startup)."""
    app[API] = ApiContext(
        services=lambda: services(app),
        proxies=proxies,
        limiter=RateLimiter(config.api_rate, config.api_burst),
        openapi=load_openapi(),
    )
    app[FEEDS] = BoardFeeds(lambda: services(app))
    app[STREAMS_OPEN] = ConnectionCounter(config.api_streams_per_address)
    app.middlewares.append(api_middleware)
    app.router.add_get(PREFIX + "/live/{variant}/board", live_board)
    app.router.add_get(PREFIX + "/races/{race_id}/events", race_events)
    setup_routes(app)
    app.cleanup_ctx.append(_feeds_ctx)
    app.on_shutdown.append(_end_streams)  # before the server waits for open requests


async def _end_streams(app: web.Application) -> None:
    app[FEEDS].end_all()


async def _feeds_ctx(app: web.Application) -> AsyncIterator[None]:
    yield
    await app[FEEDS].aclose()


def _stream_group(request: web.Request) -> str:
    ctx = request.app[API]
    address = client_address(request.remote, request.headers.get("X-Forwarded-For"), ctx.proxies)
    group = address_group(address)
    if not request.app[STREAMS_OPEN].acquire(group):
        raise ApiError(
            ApiErrorCode.RATE_LIMITED,
            "too many open streams from this address; close one first",
            retry_after_s=10,
        )
    return group


def _head(request: web.Request) -> web.Response:
    """A stream's headers only (``HEAD``): no stream, no slot."""
    sse = "text/event-stream" in request.headers.get("Accept", "")
    return web.Response(
        headers={
            "Content-Type": "text/event-stream" if sse else "application/x-ndjson",
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
        }
    )


async def live_board(request: web.Request) -> web.StreamResponse:
    """Today's board of a variant (of one tier: ``?tier=``) as it fills: NDJSON, or SSE
    (``Accept: text/event-stream``)."""
    variant = variant_param(request.match_info["variant"])
    tier = tier_param(request)
    top = int_param(request, "top", 10, 0, MAX_LIMIT)
    if request.method == "HEAD":
        return _head(request)
    group = _stream_group(request)
    try:
        return await request.app[FEEDS].serve(request, variant, top, tier)
    finally:
        request.app[STREAMS_OPEN].release(group)


async def race_events(request: web.Request) -> web.StreamResponse:
    """A race's events for spectators (the WebSocket's `race.watch`: delayed, lagging boards)."""
    race_id = request.match_info["race_id"]
    if not keys.valid_race_id(race_id):
        raise ApiError(ApiErrorCode.NOT_FOUND, "no such race")
    if request.method == "HEAD":
        await request.app[API].services().races.load(race_id)  # NotFound: 404
        return _head(request)
    group = _stream_group(request)
    try:
        return await serve_race(request, request.app[API].services(), request.app[FEEDS], race_id)
    finally:
        request.app[STREAMS_OPEN].release(group)
