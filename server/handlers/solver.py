"""Handlers of hints, revealed seeds and move-log export (`SOLVER_ROUTES`)."""

from __future__ import annotations

import datetime as dt
import math

import protocol as p
from engine.words import move_text
from protocol.fields import RULES_FREE
from server.games.daily import utc_date
from server.games.deals import timed_hint
from server.redis import keys
from server.redis.keys import RaceGameKeys, parse_game_id
from server.redis.quota import HOUR_MS, hourly_spent, spend_hourly, take_hourly
from server.runtime.errors import GameOver, NotFound, SolverBusy
from server.transport.router import Router
from server.transport.session import Session


async def hint(session: Session, req: p.Hint) -> p.ServerMessage:
    player = session.require_player()
    s = session.services
    # The game as Redis holds it (`current`): the player's moves may have gone through
    # another process, and a hint of the position left would be wrong and still charged
    # (cheater review 4, L2). The count below checks the position again.
    live = await s.games.current(req.game_id, player.id)
    if live.record.kind == "race":  # daily and free games take hints
        raise p.ProtocolError("no hints in races", code=p.ErrorCode.CONFLICT)
    if live.record.catchup:  # one secret deal per variant, day and tier, crowned by everyone
        raise p.ProtocolError(
            "no hints in catch-up games: every player plays the same catch-up deal, and a"
            " hinted line could be replayed by another account for crowns",
            code=p.ErrorCode.CONFLICT,
        )
    await s.games.ensure_day_open(live, player.name)
    if live.record.finished:
        raise GameOver("the game is over")
    pool = s.deals.pool
    seq = live.seq  # the position searched
    async with s.hints.slot(player.id):  # one in flight per player, a bounded queue
        budget = await _solver_budget(session, player.id)
        if live.record.kind == "free":  # unranked: a few an hour, on spare capacity only
            if not pool.spare_free():  # refused before it is counted
                raise SolverBusy(
                    "the solver is busy with today's deals and daily hints; free-game hints "
                    "wait for a free worker: retry in a few seconds"
                )
            await _count_free_hint(session, player.id)
            answer = await pool.run_spare(timed_hint, live.game, s.config.hint_budget_s)
        else:  # behind certification (`SolverPool.run_hint`)
            answer = await pool.run_hint(timed_hint, live.game, s.config.hint_budget_s)
        if budget is not None:  # charged move found or not: a fruitless search costs the same
            await spend_hourly(s.store.batch, budget, max(1, math.ceil(answer.took_s * 1000)))
    move = answer.move
    hints = live.record.hints
    # A hint given counts against the player, and so does a search that proved the game lost:
    # it knows the face-down cards, so "no winning move" after a move, then a move after its
    # undo, would tell which moves lose for free. One that ran out of time tells nothing.
    if move is not None or answer.lost:
        hints = await s.games.add_hint(live, player.name, seq)
    return p.HintReply(
        id=req.id,
        game_id=req.game_id,
        move=move,
        hints=hints,
        penalty_ms=hints * s.config.hint_penalty_ms,
        text=move_text(live.game.view(), live.game.parse_move(move))
        if move and RULES_FREE in session.features
        else None,
    )


async def _solver_budget(session: Session, pid: str) -> str | None:
    """The key of the player's hourly solver budget for hints
    (`Config.hint_solver_ms_per_hour`; None: no budget); `limit_reached` once this hour's
    hints took it all. Checked before the search, charged after it with what it took."""
    s = session.services
    limit = s.config.hint_solver_ms_per_hour
    if not limit:
        return None
    now = s.clock.now_ms()
    key = keys.hint_solver_ms(pid, now // HOUR_MS)
    if await hourly_spent(s.store.batch, key) >= limit:
        wait_min = math.ceil((HOUR_MS - now % HOUR_MS) / 60_000)
        raise p.ProtocolError(
            f"your hints took their {limit / 1000:g} s of solver time this hour (a search"
            f" that finds no move counts too); try again in {wait_min} min",
            code=p.ErrorCode.LIMIT_REACHED,
        )
    return key


async def _count_free_hint(session: Session, pid: str) -> None:
    """One free-game hint of the player's hour (`Config.free_hints_per_hour`); every hint
    the solver takes up counts (a search costs the same whether it finds a move or not);
    `limit_reached` past them."""
    s = session.services
    key = keys.free_hints(pid, s.clock.now_ms() // HOUR_MS)
    if not await take_hourly(s.store.batch, key, s.config.free_hints_per_hour):
        raise p.ProtocolError(
            f"free games take {s.config.free_hints_per_hour} hints an hour; try again later",
            code=p.ErrorCode.LIMIT_REACHED,
        )


#: How long a client is told to wait before asking again for the seeds of a day not closed.
SEEDS_RETRY_MS = 5_000


async def daily_seeds(session: Session, req: p.DailySeeds) -> p.ServerMessage:
    session.require_player()
    s = session.services
    date = dt.date.fromisoformat(req.date)
    if req.tier is not None and not session.speaks(p.TIERS):
        raise p.BadRequest(f"'tier' needs protocol version {p.TIERS}")
    try:
        seeds = await s.deals.revealed(date, req.tier)
    except ValueError as exc:
        raise p.ProtocolError(str(exc), code=p.ErrorCode.NOT_FOUND) from None
    # Over by this process's clock is not enough: published once every game of the day is
    # settled, which the closed marker in Redis says (`server.games.rollover`).
    if not await s.day_closer.day_closed(date):
        raise p.ProtocolError(
            f"the seeds of {req.date} are published once every game of that day is settled"
            f" (closed at the day's end); retry in {SEEDS_RETRY_MS // 1000} s",
            code=p.ErrorCode.NOT_FOUND,
        )
    return p.SeedsReply(id=req.id, date=req.date, seeds=dict(seeds), tier=req.tier)


async def game_export(session: Session, req: p.GameExport) -> p.ServerMessage:
    player = session.require_player()
    s = session.services
    ref = parse_game_id(req.game_id)
    record, moves = await s.store.load(req.game_id)
    today = utc_date(s.clock.now_ms())
    if isinstance(ref, RaceGameKeys):
        race = await s.races.store.load(ref.race_id)
        if player.id not in race.names():  # a race's seed would show spectators the stock
            raise p.ProtocolError(
                "a race's games are exported to its racers only", code=p.ErrorCode.NOT_FOUND
            )
        over = race.status == "finished"
    else:  # its day over and every game of it settled (the closed marker in Redis)
        over = record.date < today and await s.day_closer.day_closed(record.date)
        if record.catchup:  # its deal is the day's catch-up deal: secret till the month closes
            over = over and await s.day_closer.month_closed(record.date)
    if not over or not record.finished:
        if record.player_id != player.id and not isinstance(ref, RaceGameKeys):
            # Another player's daily game not published yet answers as a missing one: a
            # different answer would tell anyone whether that player has started the day's
            # deal (cheater review 4, L1); the HTTP replay answers so too.
            raise NotFound("no such game")
        raise p.ProtocolError(
            "a game's moves are published once its race is over, or its day is over and"
            f" every game of it settled; retry in {SEEDS_RETRY_MS // 1000} s",
            code=p.ErrorCode.NOT_FOUND,
        )
    return p.ExportReply(
        id=req.id,
        game_id=req.game_id,
        variant=record.variant,
        seed=record.seed,
        moves=tuple(moves),
        date=record.date.isoformat() if record.kind == "daily" else None,
    )


#: Hints, revealed seeds and move-log export.
SOLVER_ROUTES = (
    Router().on(p.Hint, hint).on(p.DailySeeds, daily_seeds).on(p.GameExport, game_export)
)
