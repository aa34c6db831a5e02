"""Handlers of the race requests (`RACE_HANDLERS`)."""

from __future__ import annotations

import datetime as dt

import protocol as p
from engine import VARIANT_IDS
from server.games.daily import utc_date
from server.handlers.games import HandlerTable
from server.races.model import RaceStatus
from server.races.ratings import RatingRow
from server.runtime.errors import LimitReached
from server.transport.connection import Connection


def _variant(name: str) -> str:
    if name not in VARIANT_IDS:
        raise p.ProtocolError(f"unknown variant {name!r}", code=p.ErrorCode.NOT_FOUND)
    return name


async def _room(
    conn: Connection, req_id: int, race_id: str, since: int | None = None
) -> p.RaceRoom:
    s = conn.services
    race = await s.races.load(race_id)
    me = conn.require_player().id
    events = await s.races.events_since(race_id, since) if since is not None else []
    return p.RaceRoom(
        id=req_id,
        race=race.info(s.clock.now_ms(), me),
        events=tuple(e.to_wire() for e in events[-1000:]),
    )


async def race_queue(conn: Connection, req: p.RaceQueue) -> p.ServerMessage:
    player = conn.require_player()
    variant = _variant(req.variant)
    waiting, _ = await conn.services.matchmaking.queue(
        conn, player.id, player.name, variant, req.size, conn.address
    )
    return p.RaceQueued(id=req.id, variant=variant, size=req.size, waiting=waiting)


async def race_leave(conn: Connection, req: p.RaceLeave) -> p.ServerMessage:
    player = conn.require_player()
    if not await conn.services.matchmaking.leave(conn, player.id):
        raise p.ProtocolError("not waiting in a queue or a room", code=p.ErrorCode.NOT_FOUND)
    return p.RaceLeft(id=req.id)


def _limit_error(conn: Connection, exc: LimitReached) -> p.ProtocolError:
    """`limit_reached` from version 5 on; older clients know `rate_limited`."""
    code = p.ErrorCode.LIMIT_REACHED
    if conn.version is None or conn.version < p.FAIR_PLAY:
        code = p.ErrorCode.RATE_LIMITED
    return p.ProtocolError(str(exc), code=code)


async def race_create(conn: Connection, req: p.RaceCreate) -> p.ServerMessage:
    player = conn.require_player()
    try:
        race_id = await conn.services.races.create_room(
            player.id, player.name, _variant(req.variant), req.size
        )
    except LimitReached as exc:
        raise _limit_error(conn, exc) from None
    await conn.services.race_fanout.attach(conn, race_id)
    await conn.services.races.announce(player.id, race_id)
    return await _room(conn, req.id, race_id)


async def race_join(conn: Connection, req: p.RaceJoin) -> p.ServerMessage:
    player = conn.require_player()
    race_id = await conn.services.races.join_room(player.id, player.name, req.code)
    await conn.services.race_fanout.attach(conn, race_id)
    await conn.services.races.announce(player.id, race_id)
    return await _room(conn, req.id, race_id)


async def race_start(conn: Connection, req: p.RaceStart) -> p.ServerMessage:
    player = conn.require_player()
    await conn.services.races.start_room(player.id, req.race_id)
    await conn.services.race_fanout.attach(conn, req.race_id)
    return await _room(conn, req.id, req.race_id)


async def race_get(conn: Connection, req: p.RaceGet) -> p.ServerMessage:
    player = conn.require_player()
    s = conn.services
    race = await s.races.load(req.race_id)
    if player.id in race.names() and race.status is not RaceStatus.FINISHED:
        await s.race_fanout.attach(conn, req.race_id)
        await s.races.mark_seen(req.race_id, [player.id], instance=s.race_fanout.instance)
    return await _room(conn, req.id, req.race_id, since=req.since)


def _day(conn: Connection, board: str, date: str | None) -> dt.date | None:
    if board == "rating":
        return None
    return dt.date.fromisoformat(date) if date else utc_date(conn.services.clock.now_ms())


def _entry(row: RatingRow, names: dict[str, str], me: str) -> p.RatingEntry:
    return p.RatingEntry(
        rank=row.rank,
        player_id=row.player_id,
        name=names.get(row.player_id, "?"),
        rating=row.rating,
        wins=row.wins,
        losses=row.losses,
        played=row.played,
        me=row.player_id == me,
    )


async def _board_reply(
    conn: Connection,
    req_id: int,
    variant: str,
    board: str,
    day: dt.date | None,
    offset: int,
    rows: list[RatingRow],
) -> p.RaceBoard:
    s = conn.services
    me = conn.require_player().id
    names = await s.players.names([r.player_id for r in rows])
    return p.RaceBoard(
        id=req_id,
        variant=variant,
        board=board,
        total=await s.races.board_total(variant, board, day),
        offset=offset,
        entries=tuple(_entry(r, names, me) for r in rows),
        date=day.isoformat() if day else None,
    )


async def race_top(conn: Connection, req: p.RaceTop) -> p.ServerMessage:
    variant, day = _variant(req.variant), _day(conn, req.board, req.date)
    rows = await conn.services.races.board_top(variant, req.board, day, req.offset, req.limit)
    return await _board_reply(conn, req.id, variant, req.board, day, req.offset, rows)


async def race_around(conn: Connection, req: p.RaceAround) -> p.ServerMessage:
    player = conn.require_player()
    variant, day = _variant(req.variant), _day(conn, req.board, req.date)
    rows = await conn.services.races.board_around(variant, req.board, day, player.id, req.k)
    offset = rows[0].rank - 1 if rows else 0
    return await _board_reply(conn, req.id, variant, req.board, day, offset, rows)


async def race_rank(conn: Connection, req: p.RaceRank) -> p.ServerMessage:
    player = conn.require_player()
    s = conn.services
    variant, day = _variant(req.variant), _day(conn, req.board, req.date)
    row = await s.races.board_rank(variant, req.board, day, player.id)
    names = await s.players.names([player.id])
    return p.RaceRankReply(
        id=req.id,
        variant=variant,
        board=req.board,
        total=await s.races.board_total(variant, req.board, day),
        entry=_entry(row, names, player.id) if row else None,
        date=day.isoformat() if day else None,
    )


async def race_recent(conn: Connection, req: p.RaceRecent) -> p.ServerMessage:
    player = conn.require_player()
    variant = _variant(req.variant)
    items = await conn.services.races.recent(variant, player.id, req.limit)
    races = tuple(i.to_wire() for i in items)
    return p.RaceHistory(id=req.id, variant=variant, races=races)


#: Race rooms, the queue and race boards.
RACE_HANDLERS: HandlerTable = {
    p.RaceQueue: race_queue,
    p.RaceLeave: race_leave,
    p.RaceCreate: race_create,
    p.RaceJoin: race_join,
    p.RaceStart: race_start,
    p.RaceGet: race_get,
    p.RaceTop: race_top,
    p.RaceAround: race_around,
    p.RaceRank: race_rank,
    p.RaceRecent: race_recent,
}
