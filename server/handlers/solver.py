"""Handlers of hints, revealed seeds and move-log export (`SOLVER_HANDLERS`)."""

from __future__ import annotations

import datetime as dt

import protocol as p
from server.games.daily import utc_date
from server.games.deals import hint_for
from server.handlers.games import HandlerTable
from server.redis.keys import RaceGameKeys, parse_game_id
from server.runtime.errors import GameOver
from server.transport.connection import Connection


async def hint(conn: Connection, req: p.Hint) -> p.ServerMessage:
    player = conn.require_player()
    s = conn.services
    live = await s.games.get(req.game_id, player.id)
    if live.record.kind != "daily":
        raise p.ProtocolError("no hints in races", code=p.ErrorCode.CONFLICT)
    if live.record.finished:
        raise GameOver("the game is over")
    async with s.hints.slot(player.id):  # one in flight per player, a bounded queue
        move = await s.deals.pool.run(hint_for, live.game, s.config.hint_budget_s)
    hints = live.record.hints
    if move is not None:  # only a hint actually given counts against the player
        hints = await s.games.add_hint(live)
    return p.HintReply(
        id=req.id,
        game_id=req.game_id,
        move=move,
        hints=hints,
        penalty_ms=hints * s.config.hint_penalty_ms,
    )


async def daily_seeds(conn: Connection, req: p.DailySeeds) -> p.ServerMessage:
    conn.require_player()
    try:
        seeds = await conn.services.deals.revealed(dt.date.fromisoformat(req.date))
    except ValueError as exc:
        raise p.ProtocolError(str(exc), code=p.ErrorCode.NOT_FOUND) from None
    return p.SeedsReply(id=req.id, date=req.date, seeds=dict(seeds))


async def game_export(conn: Connection, req: p.GameExport) -> p.ServerMessage:
    player = conn.require_player()
    s = conn.services
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
    else:
        over = record.date < today
    if not over or not record.finished:
        raise p.ProtocolError(
            "a game's moves are published once its day or race is over", code=p.ErrorCode.NOT_FOUND
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
SOLVER_HANDLERS: HandlerTable = {
    p.Hint: hint,
    p.DailySeeds: daily_seeds,
    p.GameExport: game_export,
}
