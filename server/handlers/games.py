"""Request handlers of the session, daily games and daily leaderboards (`GAME_ROUTES`).

A handler gets the session (`server.transport.session`) and a validated request and returns the
reply; it raises ProtocolError, ServerError or IllegalMove for error replies
(`server.transport.connection.error_reply`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import logging
import time
from collections.abc import Coroutine, Mapping

import protocol as p
from engine import UNDO, VARIANT_IDS, IllegalMove
from engine.patches import view_patch
from engine.views import Event, View, json_maps
from engine.words import log_words, move_text, played_text, safe_moves, symbols
from protocol.events import ActiveRace, DailyGame
from protocol.fields import RULES_FREE
from protocol.messages import Finish
from protocol.spoken import as_spoken
from protocol.version import DESCRIPTORS, RESUME, TIERS
from server.boards.leaderboard import BoardRef, Entry
from server.games.announce import result_of, with_entry
from server.games.daily import utc_date
from server.games.descriptors import VARIANT_INFO, VARIANT_INFO_RULES_FREE
from server.games.monthindex import MonthGame
from server.games.service import LiveGame
from server.games.store import GameRecord
from server.handlers.tiers import day_tiers, game_par, games_of_day, start_tier_game
from server.players.registry import Player
from server.races.model import RaceState, RaceStatus
from server.redis import keys
from server.runtime.errors import (
    Conflict,
    LimitReached,
    NotStarted,
)
from server.services import Services
from server.transport.address import address_network
from server.transport.router import Router
from server.transport.session import Session

log = logging.getLogger(__name__)

#: The `hello.features` this server takes up (others are ignored).
FEATURES: frozenset[str] = frozenset({RULES_FREE})


def _variant(name: str) -> str:
    if name not in VARIANT_IDS:
        raise p.ProtocolError(
            f"unknown variant {name!r}; one of: {', '.join(VARIANT_IDS)}",
            code=p.ErrorCode.NOT_FOUND,
        )
    return name


def board_date(session: Session, text: str | None) -> dt.date:
    """A leaderboard's day (daily, tier or race wins): today when absent; a day after today
    is `not_found`, as in the HTTP API (its board is empty and its par, of a deal certified
    ahead, is not told before its day)."""
    today = utc_date(session.services.clock.now_ms())
    date = dt.date.fromisoformat(text) if text else today
    if date > today:
        raise p.ProtocolError(
            f"{date.isoformat()} has not begun yet (today is {today.isoformat()} UTC)",
            code=p.ErrorCode.NOT_FOUND,
        )
    return date


def entry_of(e: Entry, me: str | None) -> p.LeaderboardEntry:
    return p.LeaderboardEntry(
        rank=e.rank,
        player_id=e.player_id,
        name=e.name,
        won=e.won,
        cleared=e.cleared,
        score=e.score,
        time_ms=e.time_ms,
        moves=e.moves,
        finished_at=e.finished_at_ms,
        me=e.player_id == me,
        hints=e.hints,
    )


# -- session -------------------------------------------------------------------------------


async def hello(session: Session, req: p.Hello) -> p.ServerMessage:
    if session.player is not None:
        raise p.ProtocolError("already said hello on this connection", code=p.ErrorCode.CONFLICT)
    version = p.negotiate(req.versions)
    players = session.services.players
    token: str | None = None
    player: Player | None
    if req.name is not None:
        try:
            network = address_network(session.address)
            player, token = await players.register(req.name, session.group, network)
        except LimitReached as exc:  # `limit_reached` is a version 5 code
            code = p.ErrorCode.LIMIT_REACHED if version >= p.FAIR_PLAY else p.ErrorCode.RATE_LIMITED
            raise p.ProtocolError(str(exc), code=code) from None
    else:
        assert req.token is not None
        player = await players.authenticate(req.token)
    if player is None:
        raise p.ProtocolError("unknown token", code=p.ErrorCode.NOT_AUTHENTICATED)
    return await welcome(
        session,
        req.id,
        version,
        player,
        token,
        new_player=token is not None,
        features=req.features,
    )


async def welcome(
    session: Session,
    req_id: int,
    version: int,
    player: Player,
    token: str | None,
    *,
    new_player: bool,
    features: tuple[str, ...] | None,
) -> p.Welcome:
    """Sign the session in as ``player`` and answer ``welcome`` (``token`` given to a new
    player or a device signed in by a code, `server.handlers.account.signin_redeem`)."""
    session.player, session.version = player, version
    session.features = frozenset(features or ()) & FEATURES
    rules_free = RULES_FREE in session.features
    s = session.services
    now = s.clock.now_ms()
    resume = version >= RESUME
    race: RaceState | None = None
    queued: str | None = None
    daily: tuple[DailyGame, ...] | None = () if resume else None
    today = utc_date(now)
    played: dict[MonthGame, GameRecord] | None = None
    if not new_player:  # a new player has no race, queue or game yet: nothing to read
        # The race's and queue's reads queued now go out with the day's index (one round
        # trip for the three, not two: issue #30, a returning player's `hello`).
        standing = s.races.store.standing_soon(player.id)
        try:
            if resume or version >= TIERS:
                played = await games_of_day(s, player.id, today)
        except BaseException:
            standing.add_done_callback(_read_out)  # its own failure is not this one's
            raise
        race, queued = await s.races.standing(player.id, standing)
        if resume:
            daily = _daily_games(played or {}, version)
    # After the welcome (never before it): this connection hears of every race the player
    # enters from any connection, follows the race or queue the player is in, wherever it
    # was joined, and gets the race's state at once.
    session.after_reply.append(functools.partial(s.race_fanout.watch_player, session, player.id))
    if race is not None:
        session.after_reply.append(functools.partial(resume_race, session, race.race_id))
    elif queued is not None:
        session.after_reply.append(
            functools.partial(s.matchmaking.resume, session, player.id, queued)
        )
    tiers = None
    if version >= TIERS:
        cells = await day_tiers(s, player.id, [today], today, played=not new_player, known=played)
        tiers = cells[today]
    return p.Welcome(
        id=req_id,
        version=version,
        player_id=player.id,
        name=player.name,
        server_time=now,
        variants=VARIANT_IDS,
        token=token,
        race=_active_race(race, player.id, now) if resume and race else None,
        daily=daily,
        variant_info=(VARIANT_INFO_RULES_FREE if rules_free else VARIANT_INFO)
        if version >= DESCRIPTORS
        else None,
        features=tuple(sorted(session.features)) if features is not None else None,
        tiers=tiers,
    )


def _read_out(reads: asyncio.Future[tuple[object, object]]) -> None:
    """Take a failed read's error, left behind by a request that failed first (else asyncio
    logs it as never retrieved)."""
    if not reads.cancelled():
        reads.exception()


def _active_race(race: RaceState, pid: str, now: int) -> ActiveRace:
    status = race.shown_status(now)
    return ActiveRace(
        race_id=race.race_id,
        variant=race.variant,
        status=status.value,
        game_id=None if status is RaceStatus.OPEN else keys.race_game_id(race.race_id, pid),
    )


def _daily_games(played: Mapping[MonthGame, GameRecord], version: int) -> tuple[DailyGame, ...]:
    """The player's ranked games of the day (``played``: `games_of_day`), in the order of
    the variants, then of the tiers; version 8: every tier's (labelled), older versions
    the daily game (medium) only."""
    tiers = keys.TIER_NAMES if version >= TIERS else (keys.DAILY_TIER,)
    ranked = {(g.variant, g.tier): r for g, r in played.items() if not g.catchup}
    return tuple(
        DailyGame(
            variant=r.variant,
            game_id=r.game_id,
            finished=r.finished,
            tier=r.tier if version >= TIERS else None,
        )
        for v in VARIANT_IDS
        for t in tiers
        if (r := ranked.get((v, t))) is not None
    )


async def resume_race(session: Session, race_id: str) -> None:
    """Re-attach a (re)connected racer to their race on this process and push its state:
    `race.update`, then `race.started` with their game when it has started. Their presence
    is marked at once, so no process forfeits them."""
    s = session.services
    pid = session.require_player().id
    fanout = s.race_fanout
    await fanout.attach(session, race_id)
    now = s.clock.now_ms()
    race = await s.races.load(race_id)  # after attaching: an end now is seen either way
    if race.status is RaceStatus.FINISHED or pid not in race.names():
        await fanout.detach_from(session, race_id)
        if pid in race.names():  # it ended meanwhile: the final race, with the results
            session.send(as_spoken(p.RaceUpdate(race=race.info(now, pid)), session.version))
        return
    if race.status is not RaceStatus.OPEN:
        await s.races.mark_seen(race_id, [pid], now, fanout.instance)
    fanout.remember(race)
    session.send(as_spoken(p.RaceUpdate(race=race.info(now, pid)), session.version))
    if race.status is RaceStatus.RUNNING and race.start_at is not None and now >= race.start_at:
        await fanout.send_started(race, now, s.races.start_view)


async def ping(session: Session, req: p.Ping) -> p.ServerMessage:
    return p.Pong(id=req.id, server_time=session.services.clock.now_ms())


# -- daily games -----------------------------------------------------------------------------


async def game_reply(session: Session, req_id: int, live: LiveGame) -> p.GameState:
    s = session.services
    live, entry = await with_entry(s.games, s.leaderboard, live)
    par = None
    if live.record.kind == "daily":
        par = await game_par(s, live.record)
    view = s.games.view(live)
    resume = session.version is not None and session.version >= p.RESUME
    rules_free = RULES_FREE in session.features
    tiers = session.speaks(TIERS) and live.record.kind == "daily"
    return p.GameState(
        id=req_id,
        game_id=live.record.game_id,
        variant=live.record.variant,
        date=live.record.date.isoformat(),
        view=view,
        seq=live.seq,
        started_at=live.record.started_at_ms,
        server_time=session.services.clock.now_ms(),
        elapsed_ms=live.elapsed_ms,
        finished=live.record.finished,
        result=result_of(live, entry, session.version),
        par=par,
        hints=live.record.hints,
        log=tuple(live.log) if resume else None,
        log_text=_log_words(s, live) if resume and rules_free else None,
        safe=None if live.record.finished or not rules_free else _safe(s, live),
        hint_penalty_ms=s.config.hint_penalty_ms
        if rules_free and live.record.kind == "daily"
        else None,
        free=True if live.record.kind == "free" and session.speaks(p.ACCOUNTS) else None,
        tier=live.record.tier if tiers else None,
        catchup=live.record.catchup if tiers else None,
    )


def _safe(s: Services, live: LiveGame, view: View | None = None) -> tuple[p.SafeMove, ...]:
    """The foundation moves safe to play for the player now (`engine.words.safe_moves`),
    in words; their engine time is counted. `view`: the game's view, if made already."""
    started = time.perf_counter()
    if view is None:
        view = s.games.told(live)
    safe = tuple(
        p.SafeMove(move=str(m), text=move_text(view, m)) for m in safe_moves(live.game, view)
    )
    s.games.count_engine(live.record.variant, time.perf_counter() - started)
    return safe


def _words_said(live: LiveGame, text: str) -> None:
    """A lean reply's `text`: the words of move `live.seq`, kept when the earlier ones are."""
    if live.words is not None and len(live.words) == live.seq - 1:
        live.words.append(text)


def _log_words(s: Services, live: LiveGame) -> tuple[str, ...] | None:
    """The game's moves in card words: as kept, or by `engine.words.log_words` (a replay from
    the seed, counted as engine time); None if the log does not replay (never expected)."""
    if live.words is not None and len(live.words) == live.seq:
        return tuple(live.words)
    started = time.perf_counter()
    try:
        words = log_words(live.record.variant, live.record.seed, live.log)
    except IllegalMove:
        log.exception("game %s: its log does not replay", live.record.game_id)
        return None
    finally:
        s.games.count_engine(live.record.variant, time.perf_counter() - started)
    live.words = words
    return tuple(words)


async def daily_start(session: Session, req: p.DailyStart) -> p.ServerMessage:
    player = session.require_player()
    variant = _variant(req.variant)
    s = session.services
    if req.tier is not None or req.date is not None:
        _need_tiers(session, "'tier' and 'date'")
        live, _ = await start_tier_game(session, variant, req.tier or keys.DAILY_TIER, req.date)
        return await game_reply(session, req.id, live)
    date = utc_date(s.clock.now_ms())
    deal = await s.deals.get(variant, date)
    live = await s.games.start_daily(variant, date, player.id, deal.seed)
    return await game_reply(session, req.id, live)


def _need_tiers(session: Session, what: str) -> None:
    if not session.speaks(TIERS):
        raise p.BadRequest(
            f"{what} need protocol version {TIERS}; this connection speaks {session.version}"
        )


def _board(session: Session, variant: str, date: dt.date, tier: str | None) -> BoardRef:
    if tier is not None:
        _need_tiers(session, "leaderboards per 'tier'")
    return BoardRef.daily(_variant(variant), date, tier)


async def _board_par(session: Session, variant: str, date: dt.date, tier: str | None) -> int | None:
    if tier is None or tier == keys.DAILY_TIER:
        deal = await session.services.deals.peek(variant, date)
        return deal.par if deal else None
    found = await session.services.deals.peek_tiers(variant, date)
    tier_deal = found.deals.get(tier) if found else None
    return tier_deal.par if tier_deal else None


async def game_get(session: Session, req: p.GameGet) -> p.ServerMessage:
    player = session.require_player()
    games = session.services.games
    live = await games.current(req.game_id, player.id)
    if live.race_id is not None and session.services.clock.now_ms() < live.record.started_at_ms:
        # A race game's cards reach nobody before the start (docs/fairplay.md).
        raise NotStarted("the race has not started yet: its deal comes with race.started")
    if games.day_over(live) and not live.record.finished:  # closed lazily when read
        live = await games.close_day(req.game_id, player.id, player.name)
    return await game_reply(session, req.id, live)


async def _join(session: Session, race_id: str) -> None:
    """A racer's session hears its race from here on (before the move, so that the race's
    events the move causes reach it too)."""
    await session.services.race_fanout.attach(session, race_id)


async def _play(
    session: Session,
    req_id: int,
    game_id: str,
    text: str,
    expected_seq: int | None,
    with_view: bool,
) -> p.ServerMessage:
    """decode -> `GameService.play` (engine, store, listeners) -> encode."""
    player = session.require_player()
    version = session.version or 0
    if with_view and version < p.MOVE_VIEWS:
        raise p.BadRequest(
            f"'with_view' needs protocol version {p.MOVE_VIEWS}; this connection speaks {version}"
        )
    if (race_id := keys.race_of_game(game_id, player.id)) is not None:
        await _join(session, race_id)
    # Version 2 clients follow the events; version 1 gets the whole view every move, and
    # version 4 when it asks (a client without a rules engine).
    try:
        played = await session.services.games.play(
            game_id,
            player.id,
            player.name,
            text,
            expected_seq,
            with_view=with_view or version < p.LEAN_MOVES,
        )
    except IllegalMove as e:  # the reason speaks cards as people write them: 3♦, not 3D
        raise IllegalMove(e.move_text, symbols(e.reason)) from None
    live = played.live
    lean = played.view is None and RULES_FREE in session.features
    said, changes, safe = _follow(session, live, played.events) if lean else (None, None, None)
    if said is not None:
        _words_said(live, said)
    return p.Moved(
        id=req_id,
        game_id=game_id,
        move=played.move,
        seq=live.seq,
        events=json_maps(played.events),
        view=played.view,
        elapsed_ms=live.elapsed_ms,
        finished=live.record.finished,
        result=result_of(live, played.entry, version),
        text=said,
        changes=changes,
        safe=safe,
    )


def _follow(
    session: Session, live: LiveGame, events: list[Event]
) -> tuple[str, dict[str, object], tuple[p.SafeMove, ...]]:
    """What a lean `moved` adds for a client without the rules (the browser): the move in
    words, what it changed in the view (`engine.patches`), and the safe foundation moves
    (none once the game is finished). Its engine time is counted."""
    s = session.services
    started = time.perf_counter()
    view = s.games.told(live)  # `over` as the reply's `finished` says (not a verdict unsaid)
    out = played_text(view, events), view_patch(view, events)
    s.games.count_engine(live.record.variant, time.perf_counter() - started)
    return (*out, () if live.record.finished else _safe(s, live, view))


def move(session: Session, req: p.Move) -> Coroutine[object, None, p.ServerMessage]:
    # `_play`'s coroutine itself, not one awaiting it: a frame less on every move.
    return _play(session, req.id, req.game_id, req.move, req.expected_seq, bool(req.with_view))


def undo(session: Session, req: p.Undo) -> Coroutine[object, None, p.ServerMessage]:
    return _play(session, req.id, req.game_id, UNDO, req.expected_seq, bool(req.with_view))


def _finished(session: Session, req_id: int, live: LiveGame, entry: Entry) -> p.Finished:
    result = result_of(live, entry, session.version)
    if result is None:  # a finished game always has its result
        raise Conflict("the game has no result")
    return p.Finished(id=req_id, game_id=live.record.game_id, result=result)


async def resign(session: Session, req: p.Resign) -> p.ServerMessage:
    player = session.require_player()
    if (race_id := keys.race_of_game(req.game_id, player.id)) is not None:
        await _join(session, race_id)
    live, entry = await session.services.games.resign(req.game_id, player.id, player.name)
    return _finished(session, req.id, live, entry)


async def finish(session: Session, req: Finish) -> p.ServerMessage:
    """End a Triple Deck game as it stands (finished, not resigned: RULINGS.md)."""
    player = session.require_player()
    if not session.speaks(RESUME):
        raise p.ProtocolError(
            "'finish' needs protocol version 3; use 'resign'", code=p.ErrorCode.UNKNOWN_TYPE
        )
    if (race_id := keys.race_of_game(req.game_id, player.id)) is not None:
        await _join(session, race_id)
    live, entry = await session.services.games.finish(req.game_id, player.id, player.name)
    return _finished(session, req.id, live, entry)


# -- leaderboards ----------------------------------------------------------------------------


async def leaderboard_top(session: Session, req: p.LeaderboardTop) -> p.ServerMessage:
    player = session.require_player()
    date = board_date(session, req.date)
    board = _board(session, req.variant, date, req.tier)
    lb = session.services.leaderboard
    entries = await lb.top(board, req.offset, req.limit)
    par = await _board_par(session, req.variant, date, req.tier)
    return p.Leaderboard(
        id=req.id,
        variant=req.variant,
        date=date.isoformat(),
        kind="daily",
        total=await lb.total(board),
        offset=req.offset,
        entries=tuple(entry_of(e, player.id) for e in entries),
        par=par,
        tier=req.tier,
    )


async def leaderboard_around(session: Session, req: p.LeaderboardAround) -> p.ServerMessage:
    player = session.require_player()
    date = board_date(session, req.date)
    board = _board(session, req.variant, date, req.tier)
    lb = session.services.leaderboard
    entries = await lb.around(board, player.id, req.k)
    par = await _board_par(session, req.variant, date, req.tier)
    return p.Leaderboard(
        id=req.id,
        variant=req.variant,
        date=date.isoformat(),
        kind="daily",
        total=await lb.total(board),
        offset=entries[0].rank - 1 if entries else 0,
        entries=tuple(entry_of(e, player.id) for e in entries),
        par=par,
        tier=req.tier,
    )


async def leaderboard_rank(session: Session, req: p.LeaderboardRank) -> p.ServerMessage:
    player = session.require_player()
    date = board_date(session, req.date)
    board = _board(session, req.variant, date, req.tier)
    lb = session.services.leaderboard
    entry = await lb.rank(board, player.id)
    return p.PlayerRank(
        id=req.id,
        variant=req.variant,
        date=date.isoformat(),
        total=await lb.total(board),
        entry=entry_of(entry, player.id) if entry else None,
        tier=req.tier,
    )


#: Session, daily play and daily leaderboards.
GAME_ROUTES = (
    Router()
    .on(p.Hello, hello)
    .on(p.Ping, ping)
    .on(p.DailyStart, daily_start)
    .on(p.GameGet, game_get)
    .on(p.Move, move)
    .on(p.Undo, undo)
    .on(p.Resign, resign)
    .on(Finish, finish)
    .on(p.LeaderboardTop, leaderboard_top)
    .on(p.LeaderboardAround, leaderboard_around)
    .on(p.LeaderboardRank, leaderboard_rank)
)
