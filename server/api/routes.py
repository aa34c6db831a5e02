"""The routes of ``/api/v1/`` (docs/api.md): read-only JSON, each with its cache policy.

Every answer goes through `api_middleware`: per-address rate limit (``429`` with
``Retry-After``), CORS for GET, and errors in the one shape of `server.api.errors`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import redis.exceptions
from aiohttp import web

from engine import VARIANT_IDS, new_game
from engine.views import json_map
from engine.words import log_words
from server.api import etags
from server.api.delayed import delayed_race
from server.api.errors import ApiError, ApiErrorCode, error_response
from server.api.opendata import BuildsBusy, OpenDataFiles, Sources
from server.api.ratelimit import RateLimiter
from server.api.views import (
    BoardJson,
    DayJson,
    DayTierJson,
    DayTiersJson,
    RaceBoardJson,
    ReplayJson,
    ReplayStepJson,
    VariantTiersJson,
    board_entry,
    deal_json,
    plain,
    race_board_row,
    recent_race,
)
from server.boards.leaderboard import MAX_LIMIT, BoardRef, board_expire_at
from server.games.daily import DAY_MS, day_start_ms, utc_date
from server.games.deals import DayTiers, Deal
from server.players.crowns import CROWNS
from server.players.profiles import Profiles
from server.players.registry import Player
from server.races.model import RaceState, RaceStatus
from server.races.ratings import Board
from server.races.spectate import spectator_info
from server.redis import keys
from server.redis.keys import DailyGameKeys
from server.runtime.errors import NotFound, StoreUnavailable
from server.services import Services
from server.transport.address import TrustedProxies, address_group, client_address

__all__ = ["API", "PREFIX", "ApiContext", "api_context", "setup_routes"]

log = logging.getLogger(__name__)

PREFIX: Final = "/api/v1"
OPENAPI_FILE: Final = Path(__file__).with_name("openapi.json")
#: Rows a page holds when the request does not say.
DEFAULT_LIMIT: Final = 20
#: ``Retry-After`` of a results file this process is too busy to build now.
BUSY_RETRY_S: Final = 5
CORS_HEADERS: Final = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
    "Access-Control-Allow-Headers": "If-None-Match, Accept",
    "Access-Control-Expose-Headers": "ETag, Retry-After, Cache-Control",
    "Access-Control-Max-Age": "86400",
}


@dataclass
class ApiContext:
    """What the API's routes need, kept in the app under `API`."""

    services: Callable[[], Services]
    proxies: TrustedProxies
    limiter: RateLimiter
    openapi: bytes
    files: OpenDataFiles = field(default_factory=OpenDataFiles)

    def sources(self) -> Sources:
        s = self.services()
        return Sources(s.redis, s.store, s.leaderboard)


API: Final = web.AppKey("api", ApiContext)


def api_context(request: web.Request) -> ApiContext:
    return request.app[API]


def _services(request: web.Request) -> Services:
    return request.app[API].services()


# -- parameters --------------------------------------------------------------------------------


def variant_param(text: str) -> str:
    if text not in VARIANT_IDS:
        raise ApiError(
            ApiErrorCode.NOT_FOUND, f"unknown variant {text!r}; one of: {', '.join(VARIANT_IDS)}"
        )
    return text


_DATE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DIGITS: Final = re.compile(r"[0-9]{1,16}")


def _date(text: str, today: dt.date) -> dt.date:
    if text == "today":
        return today
    # One spelling per day (fromisoformat also takes week dates: 2026-W48-3): one cache key.
    if not _DATE.fullmatch(text):
        raise ApiError(ApiErrorCode.BAD_REQUEST, f"not a date (YYYY-MM-DD): {text!r}")
    try:
        date = dt.date.fromisoformat(text)
    except ValueError:
        raise ApiError(ApiErrorCode.BAD_REQUEST, f"not a date (YYYY-MM-DD): {text!r}") from None
    if date > today:
        raise ApiError(ApiErrorCode.NOT_FOUND, f"{text} has not begun yet")
    return date


def tier_param(request: web.Request) -> str:
    """The ``tier`` query parameter; the medium tier (the daily game) when absent."""
    text = request.query.get("tier")
    if text is None:
        return keys.DAILY_TIER
    if text not in keys.TIER_NAMES:
        raise ApiError(
            ApiErrorCode.BAD_REQUEST, f"unknown tier {text!r}; one of: {', '.join(keys.TIER_NAMES)}"
        )
    return text


def int_param(request: web.Request, name: str, default: int, lo: int, hi: int) -> int:
    raw = request.query.get(name)
    if raw is None:
        return default
    if not _DIGITS.fullmatch(raw):  # int() also takes "1_0" and other scripts' digits
        raise ApiError(ApiErrorCode.BAD_REQUEST, f"{name} must be an integer")
    value = int(raw)
    if not lo <= value <= hi:
        raise ApiError(ApiErrorCode.BAD_REQUEST, f"{name} must be between {lo} and {hi}")
    return value


def _today(s: Services) -> dt.date:
    return utc_date(s.clock.now_ms())


async def _closed(s: Services, date: dt.date) -> bool:
    """A day whose games can no longer change (over, and every variant's marker set)."""
    return date < _today(s) and await s.day_closer.day_closed(date)


# -- days and boards ---------------------------------------------------------------------------


async def day(request: web.Request) -> web.Response:
    """The day's deals: variants, par, and the seeds once the day is closed."""
    s = _services(request)
    today = _today(s)
    date = _date(request.match_info["date"], today)
    closed = await _closed(s, date)
    deals = []
    for v in VARIANT_IDS:
        deal = await s.deals.peek(v, date)
        deals.append(
            deal_json(
                v,
                deal.par if deal else None,
                bool(deal and deal.certified),
                deal.seed if deal and closed else None,  # secret until the day is closed
            )
        )
    body: DayJson = {
        "date": date.isoformat(),
        "closed": closed,
        "ends_at": day_start_ms(date) + DAY_MS,
        "deals": deals,
    }
    return etags.respond_json(request, body, etags.CLOSED if closed else etags.LIVE)


async def board(request: web.Request) -> web.Response:
    """A day's board of a variant (of one tier: ``?tier=``; the medium tier's is the daily
    board), a page of it: the same rows as ``leaderboard.top``. Catch-up games are on none."""
    s = _services(request)
    today = _today(s)
    date = _date(request.match_info["date"], today)
    variant = variant_param(request.match_info["variant"])
    tier = tier_param(request)
    offset = int_param(request, "offset", 0, 0, 1_000_000)
    limit = int_param(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    closed = await _closed(s, date)
    ref = BoardRef.daily(variant, date, tier)
    rows = await s.leaderboard.top(ref, offset, limit)
    if tier == keys.DAILY_TIER:
        deal = await s.deals.peek(variant, date)
        par = deal.par if deal else None
    else:
        found = await s.deals.peek_tiers(variant, date)
        tier_deal = found.deals.get(tier) if found else None
        par = tier_deal.par if tier_deal else None
    body: BoardJson = {
        "variant": variant,
        "date": date.isoformat(),
        "tier": tier,
        "closed": closed,
        "par": par,
        "total": await s.leaderboard.total(ref),
        "offset": offset,
        "limit": limit,
        "entries": [board_entry(e) for e in rows],
    }
    # A closed day's board changes only by a fair-play review: revalidated, never immutable.
    return etags.respond_json(request, body, etags.REVIEWABLE if closed else etags.LIVE)


def _tier_state(s: Services, date: dt.date, today: dt.date, stored: bool, absent: bool) -> str:
    """A tier's state on a day (`DayTierJson.state`), from what is stored (never computed)."""
    if stored:
        return "dealt"
    if absent:
        return "absent"
    if not s.deals.certify and date >= today:
        return "on_request"  # uncertified: dealt by its first start (a catch-up game plays
        # the day's catch-up deal instead: a past day's tiers are dealt on their day or never)
    return "pending" if date == today else "absent"


def _day_tier(
    s: Services,
    tier: str,
    key: tuple[dt.date, dt.date, bool],
    deal: Deal | None,
    found: DayTiers | None,
    catchups: DayTiers | None,
) -> DayTierJson:
    date, today, closed = key
    if tier == keys.DAILY_TIER:
        stored, absent = deal is not None, False
        par, certified = (deal.par, deal.certified) if deal else (None, False)
        seed = deal.seed if deal else None
    else:
        tier_deal = found.deals.get(tier) if found else None
        stored, absent = tier_deal is not None, found is not None and tier_deal is None
        par, certified = (tier_deal.par, tier_deal.certified) if tier_deal else (None, False)
        seed = tier_deal.seed if tier_deal else None
    return {
        "tier": tier,
        "state": _tier_state(s, date, today, stored, absent),
        "crowns": CROWNS[tier],
        "par": par,
        "certified": certified,
        "seed": seed if closed else None,  # secret until the day is closed
        # ``catchups`` is given once the month is closed only (`DayCloser.month_closed`).
        "catchup_seed": catchup.seed
        if catchups and (catchup := catchups.deals.get(tier))
        else None,
    }


async def tiers(request: web.Request) -> web.Response:
    """The day's tiers of every variant: which exist, their par, the seeds once closed (the
    catch-up deals' seeds once the month is closed)."""
    s = _services(request)
    today = _today(s)
    date = _date(request.match_info["date"], today)
    closed = await _closed(s, date)
    deals, found = await s.deals.peek_days([(v, date) for v in VARIANT_IDS])
    month_closed = closed and await s.day_closer.month_closed(date)
    catchups = (
        await s.deals.peek_catchup_days([(v, date) for v in VARIANT_IDS]) if month_closed else {}
    )
    variants: list[VariantTiersJson] = []
    for v in VARIANT_IDS:
        head = deal_json(v, None, False, None)
        variants.append(
            {
                "variant": v,
                "title": head["title"],
                "par_kind": head["par_kind"],
                "tiers": [
                    _day_tier(
                        s,
                        t,
                        (date, today, closed),
                        deals.get((v, date)),
                        found.get((v, date)),
                        catchups.get((v, date)),
                    )
                    for t in keys.TIER_NAMES
                ],
            }
        )
    body: DayTiersJson = {
        "date": date.isoformat(),
        "closed": closed,
        "ends_at": day_start_ms(date) + DAY_MS,
        "variants": variants,
    }
    # A closed day's tiers are final once its month is closed too (its catch-up seeds show).
    final = month_closed
    return etags.respond_json(request, body, etags.CLOSED if final else etags.LIVE)


async def results(request: web.Request) -> web.Response:
    """Open data: the closed day's every ranked result, gzipped NDJSON."""
    ctx = api_context(request)
    s = ctx.services()
    today = _today(s)
    date = _date(request.match_info["date"], today)
    retention = s.store.retention_days
    if date <= today - dt.timedelta(days=retention):
        raise ApiError(
            ApiErrorCode.NOT_FOUND,
            f"results are kept {retention} days: {date.isoformat()} is no longer published",
        )
    if date < today and not any([await s.deals.peek(v, date) for v in VARIANT_IDS]):
        raise ApiError(
            ApiErrorCode.NOT_FOUND,
            f"no deal of {date.isoformat()} was ever dealt: it has no results to publish",
        )
    if not await _closed(s, date):
        wait_s = 60 if date < today else (day_start_ms(date) + DAY_MS - s.clock.now_ms()) // 1000
        raise ApiError(
            ApiErrorCode.DAY_NOT_CLOSED,
            f"the results of {date.isoformat()} are published once the day is over and every"
            " game of it is settled; retry later",
            retry_after_s=max(1, wait_s),
        )
    try:
        body = await ctx.files.get(ctx.sources(), date, board_expire_at(date, retention))
    except BuildsBusy:
        raise ApiError(
            ApiErrorCode.UNAVAILABLE,
            "this server is building other days' files; retry shortly",
            retry_after_s=BUSY_RETRY_S,
        ) from None
    # A file (gzip), not a compressed answer: clients keep the bytes the ETag names.
    # A fair-play review may still change it: revalidated (a 304 while unchanged), never immutable.
    response = etags.respond_bytes(request, body, "application/gzip", etags.REVIEWABLE)
    response.headers["Content-Disposition"] = (
        f'attachment; filename="results-{date.isoformat()}.ndjson.gz"'
    )
    return response


# -- players -----------------------------------------------------------------------------------


def _profiles(s: Services) -> Profiles:
    return Profiles(
        s.store, s.leaderboard, s.races.boards, s.players, s.clock, day_closed=s.day_closer.closed
    )


async def _player(s: Services, name: str) -> Player:
    pid = await s.players.id_for_name(name)
    found = await s.players.get(pid) if pid else None
    if found is None:
        raise ApiError(ApiErrorCode.NOT_FOUND, f"no player named {name!r}")
    return found


async def profile(request: web.Request) -> web.Response:
    s = _services(request)
    who = await _player(s, request.match_info["name"])
    prof = await _profiles(s).profile(0, who, who, months=True)
    data = plain(prof)
    assert isinstance(data, dict)
    for private in ("id", "type", "me"):
        data.pop(private, None)
    return etags.respond_json(request, data, etags.SHORT)


async def history(request: web.Request) -> web.Response:
    s = _services(request)
    who = await _player(s, request.match_info["name"])
    variant = variant_param(request.match_info["variant"])
    before_text = request.query.get("before")
    before = _date(before_text, _today(s) + dt.timedelta(days=1)) if before_text else None
    limit = int_param(request, "limit", DEFAULT_LIMIT, 1, 50)
    page = await _profiles(s).page(0, who, variant, before, limit)
    data = plain(page)
    assert isinstance(data, dict)
    data.pop("id", None)
    data.pop("type", None)
    data["name"] = who.name
    return etags.respond_json(request, data, etags.SHORT)


async def player_races(request: web.Request) -> web.Response:
    """The player's finished races of a variant, newest first (places, rating changes)."""
    s = _services(request)
    who = await _player(s, request.match_info["name"])
    variant = variant_param(request.match_info["variant"])
    limit = int_param(request, "limit", DEFAULT_LIMIT, 1, 50)
    recent = await s.races.boards.recent(variant, who.id, limit)
    data = {
        "name": who.name,
        "variant": variant,
        "races": [recent_race(r) for r in recent],
    }
    return etags.respond_json(request, data, etags.SHORT)


# -- replays -----------------------------------------------------------------------------------


def _steps(variant: str, seed: int, moves: list[str]) -> list[ReplayStepJson]:
    """Every position of a game as its player saw it: the deal, then one after each move."""
    game = new_game(variant, seed)
    steps: list[ReplayStepJson] = [{"move": None, "text": None, "view": json_map(game.view())}]
    for move, text in zip(moves, log_words(variant, seed, moves), strict=True):
        game.play(move)
        steps.append({"move": move, "text": text, "view": json_map(game.view())})
    return steps


async def replay(request: web.Request) -> web.Response:
    """A finished daily game, position by position, once its day is closed (its seed and
    moves are public then: `game.export`); a race game or an open day's game is not here."""
    s = _services(request)
    game_id = request.match_info["game_id"]
    ref = keys.parse_game_id(game_id)  # NotFound for anything malformed
    if not isinstance(ref, DailyGameKeys):
        raise ApiError(ApiErrorCode.NOT_FOUND, "only daily games are replayed here")
    if not await _closed(s, ref.date):
        raise ApiError(
            ApiErrorCode.NOT_FOUND,
            f"a game of {ref.date.isoformat()} is replayed once the day is over and every game"
            " of it settled",
        )
    if ref.catchup and not await s.day_closer.month_closed(ref.date):
        raise ApiError(
            ApiErrorCode.NOT_FOUND,
            "a catch-up game plays its day's catch-up deal, secret until the month is over: "
            f"replayed once {ref.date:%Y-%m} is closed",
        )
    record, moves = await s.store.load(game_id)
    if not record.finished or record.result is None:
        raise ApiError(ApiErrorCode.NOT_FOUND, "no such finished game")
    player = await s.players.get(record.player_id)
    steps = await asyncio.to_thread(_steps, record.variant, record.seed, moves)
    result = record.result
    body: ReplayJson = {
        "game_id": game_id,
        "variant": record.variant,
        "date": record.date.isoformat(),
        "name": player.name if player is not None else "",
        "won": result.won,
        "resigned": result.resigned,
        "cleared": result.cleared,
        "score": result.score,
        "time_ms": result.time_ms,
        "steps": steps,
    }
    return etags.respond_json(request, body, etags.CLOSED)


# -- races -------------------------------------------------------------------------------------


async def races_live(request: web.Request) -> web.Response:
    """Races in countdown or running now, for spectators (progress only, never a card)."""
    s = _services(request)
    variant_text = request.query.get("variant")
    variant = variant_param(variant_text) if variant_text is not None else None
    limit = int_param(request, "limit", DEFAULT_LIMIT, 1, 50)
    listing = await s.spectators.running(variant, limit)
    now = s.clock.now_ms()
    shown = []
    for item in listing:  # each race's racers as the spectators know them: the delay ago
        try:
            state = await delayed_race(s, await s.races.load(item.race_id))
        except NotFound:
            continue
        shown.append(dataclasses.replace(item, racers=spectator_info(state, now).racers))
    return etags.respond_json(request, {"races": plain(shown)}, etags.LIVE)


def _race_info(state: RaceState, now: int, finished: bool) -> dict[str, object]:
    """A race as a spectator sees it, the same bytes on every process once it is over."""
    info = plain(spectator_info(state, now))
    if not isinstance(info, dict):  # spectator_info is a protocol struct: always an object
        raise ApiError(ApiErrorCode.UNAVAILABLE, "race unreadable")
    info.pop("server_time", None)
    if finished:
        racers = info.get("racers")
        if isinstance(racers, list):  # presence lapses after the end: not part of the result
            for racer in racers:
                if isinstance(racer, dict):
                    racer.pop("connected", None)
    return info


async def races_finished(request: web.Request) -> web.Response:
    """A variant's finished races, newest first, paged by the end time (``before``)."""
    s = _services(request)
    if "variant" not in request.query:
        raise ApiError(ApiErrorCode.BAD_REQUEST, "variant is required: ?variant=<id>")
    variant = variant_param(request.query["variant"])
    limit = int_param(request, "limit", DEFAULT_LIMIT, 1, 50)
    before = int_param(request, "before", 0, 1, 2**53) if "before" in request.query else None
    ids = await s.races.store.finished_ids(variant, before, limit)
    now = s.clock.now_ms()
    rows: list[dict[str, object]] = []
    for race_id in ids:
        try:
            state = await delayed_race(s, await s.races.load(race_id))
        except NotFound:  # its keys expired before the list let it go
            continue
        if state.results is None or state.finished_at is None:
            continue  # its end is not shown yet (the spectator delay)
        rows.append({"race": _race_info(state, now, True), "finished_at": state.finished_at})
    last = rows[-1]["finished_at"] if len(ids) == limit and rows else None
    data: dict[str, object] = {"variant": variant, "races": rows, "next_before": last}
    return etags.respond_json(request, data, etags.LIVE)


async def race(request: web.Request) -> web.Response:
    """A race as a spectator sees it; once finished, its results and every racer's moves."""
    s = _services(request)
    race_id = request.match_info["race_id"]
    if not keys.valid_race_id(race_id):
        raise ApiError(ApiErrorCode.NOT_FOUND, "no such race")
    # As the race stream shows it: nothing newer than the spectator delay.
    state = await delayed_race(s, await s.races.load(race_id))
    now = s.clock.now_ms()
    finished = state.shown_status(now) is RaceStatus.FINISHED and state.results is not None
    data: dict[str, object] = {"race": _race_info(state, now, finished), "finished": finished}
    if finished:
        moves: dict[str, list[str]] = {}
        for pid, name in state.racers:
            try:
                _, log_ = await s.store.load(keys.race_game_id(race_id, pid))
            except NotFound:
                continue
            moves[name] = list(log_)
        data["moves"] = moves
    return etags.respond_json(request, data, etags.CLOSED if finished else etags.LIVE)


async def race_board(request: web.Request) -> web.Response:
    """A variant's race board: by rating, or by races won on one day (``?date=``)."""
    s = _services(request)
    variant = variant_param(request.match_info["variant"])
    try:
        kind = Board(request.match_info["board"])
    except ValueError:
        raise ApiError(ApiErrorCode.NOT_FOUND, "boards: rating, wins") from None
    today = _today(s)
    day_text = request.query.get("date")
    date = _date(day_text, today) if day_text else None
    if kind is Board.WINS and date is None:
        date = today
    if kind is Board.RATING:
        date = None
    offset = int_param(request, "offset", 0, 0, 1_000_000)
    limit = int_param(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    boards = s.races.boards
    rows = await boards.top(variant, kind.value, date, offset, limit)
    names = await s.players.names(r.player_id for r in rows)
    body: RaceBoardJson = {
        "variant": variant,
        "board": kind.value,
        "date": date.isoformat() if date else None,
        "total": await boards.total(variant, kind.value, date),
        "offset": offset,
        "limit": limit,
        "entries": [race_board_row(r, names.get(r.player_id, "")) for r in rows],
    }
    return etags.respond_json(request, body, etags.SHORT)


async def openapi(request: web.Request) -> web.Response:
    return etags.respond_bytes(
        request, api_context(request).openapi, "application/json", etags.STATIC
    )


# -- the middleware ----------------------------------------------------------------------------

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def api_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not request.path.startswith(PREFIX + "/") and request.path != PREFIX:
        return await handler(request)
    ctx = api_context(request)
    try:
        if request.method == "OPTIONS":  # a CORS preflight
            return web.Response(status=204, headers=CORS_HEADERS)
        if request.method not in ("GET", "HEAD"):
            raise ApiError(ApiErrorCode.METHOD_NOT_ALLOWED, "the API is read-only: GET only")
        address = client_address(
            request.remote, request.headers.get("X-Forwarded-For"), ctx.proxies
        )
        wait = ctx.limiter.take(address_group(address))
        if wait > 0:
            raise ApiError(
                ApiErrorCode.RATE_LIMITED,
                "too many requests from this address; retry after the given seconds",
                retry_after_s=RateLimiter.retry_after(wait),
            )
        try:
            response = await handler(request)
        except web.HTTPNotFound:
            raise ApiError(ApiErrorCode.NOT_FOUND, f"no such endpoint: {request.path}") from None
        except web.HTTPMethodNotAllowed:
            raise ApiError(
                ApiErrorCode.METHOD_NOT_ALLOWED, "the API is read-only: GET only"
            ) from None
        except NotFound as exc:
            raise ApiError(ApiErrorCode.NOT_FOUND, str(exc) or "not found") from None
        except (StoreUnavailable, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
            raise ApiError(
                ApiErrorCode.UNAVAILABLE, "storage unavailable; retry shortly", retry_after_s=2
            ) from None
    except ApiError as err:
        response = error_response(err)
    except web.HTTPException:
        raise
    except Exception:
        log.exception("api request failed: %s", request.path)
        response = error_response(ApiError(ApiErrorCode.INTERNAL, "internal error"))
    if not response.prepared:
        response.headers.update(
            {k: v for k, v in CORS_HEADERS.items() if k.startswith("Access-Control-Allow-O")}
        )
        response.headers["Access-Control-Expose-Headers"] = CORS_HEADERS[
            "Access-Control-Expose-Headers"
        ]
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
    return response


def setup_routes(app: web.Application) -> None:
    r = app.router
    r.add_get(PREFIX + "/openapi.json", openapi)
    r.add_get(PREFIX + "/days/{date}", day)
    r.add_get(PREFIX + "/days/{date}/boards/{variant}", board)
    r.add_get(PREFIX + "/days/{date}/tiers", tiers)
    r.add_get(PREFIX + "/days/{date}/results.ndjson.gz", results)
    r.add_get(PREFIX + "/players/{name}", profile)
    r.add_get(PREFIX + "/players/{name}/history/{variant}", history)
    r.add_get(PREFIX + "/players/{name}/races/{variant}", player_races)
    r.add_get(PREFIX + "/games/{game_id}/replay", replay)
    r.add_get(PREFIX + "/races/live", races_live)
    r.add_get(PREFIX + "/races/finished", races_finished)
    r.add_get(PREFIX + "/races/{race_id}", race)
    r.add_get(PREFIX + "/race-boards/{variant}/{board}", race_board)
    r.add_route("OPTIONS", PREFIX + "/{tail:.*}", _options)
    r.add_route("*", PREFIX + "/{tail:.*}", _fallback)


async def _options(request: web.Request) -> web.Response:
    return web.Response(status=204, headers=CORS_HEADERS)


async def _fallback(request: web.Request) -> web.Response:
    raise ApiError(ApiErrorCode.NOT_FOUND, f"no such endpoint: {request.path}")


def load_openapi() -> bytes:
    """The OpenAPI document's bytes, checked to be JSON at startup."""
    raw = OPENAPI_FILE.read_bytes()
    json.loads(raw)
    return raw
