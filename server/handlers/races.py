"""Handlers of the race requests (`RACE_ROUTES`)."""

from __future__ import annotations

import datetime as dt

import protocol as p
from engine import VARIANT_IDS
from protocol.spoken import as_spoken
from server.handlers.games import board_date
from server.races.model import RaceStatus
from server.races.ratings import RatingRow
from server.runtime.errors import LimitReached
from server.transport.address import address_network
from server.transport.router import Router
from server.transport.session import Session


def _variant(name: str) -> str:
    if name not in VARIANT_IDS:
        raise p.ProtocolError(f"unknown variant {name!r}", code=p.ErrorCode.NOT_FOUND)
    return name


async def _room(
    session: Session, req_id: int, race_id: str, since: int | None = None
) -> p.RaceRoom:
    s = session.services
    race = await s.races.load(race_id)
    me = session.require_player().id
    events = await s.races.events_page(race_id, since) if since is not None else []
    room = p.RaceRoom(
        id=req_id, race=race.info(s.clock.now_ms(), me), events=tuple(e.to_wire() for e in events)
    )
    return as_spoken(room, session.version)


async def race_queue(session: Session, req: p.RaceQueue) -> p.ServerMessage:
    player = session.require_player()
    variant = _variant(req.variant)
    waiting, _ = await session.services.matchmaking.queue(
        session, player.id, player.name, variant, req.size, session.address
    )
    return p.RaceQueued(id=req.id, variant=variant, size=req.size, waiting=waiting)


async def race_leave(session: Session, req: p.RaceLeave) -> p.ServerMessage:
    player = session.require_player()
    if not await session.services.matchmaking.leave(session, player.id):
        raise p.ProtocolError("not waiting in a queue or a room", code=p.ErrorCode.NOT_FOUND)
    return p.RaceLeft(id=req.id)


def _limit_error(session: Session, exc: LimitReached) -> p.ProtocolError:
    """`limit_reached` from version 5 on; older clients know `rate_limited`."""
    code = p.ErrorCode.LIMIT_REACHED
    if session.version is None or session.version < p.FAIR_PLAY:
        code = p.ErrorCode.RATE_LIMITED
    return p.ProtocolError(str(exc), code=code)


async def race_create(session: Session, req: p.RaceCreate) -> p.ServerMessage:
    player = session.require_player()
    try:
        race_id = await session.services.races.create_room(
            player.id, player.name, _variant(req.variant), req.size
        )
    except LimitReached as exc:
        raise _limit_error(session, exc) from None
    await session.services.race_fanout.attach(session, race_id)
    await session.services.races.announce(player.id, race_id)
    return await _room(session, req.id, race_id)


async def race_join(session: Session, req: p.RaceJoin) -> p.ServerMessage:
    player = session.require_player()
    try:
        race_id = await session.services.races.join_room(
            player.id, player.name, req.code, address_network(session.address)
        )
    except LimitReached as exc:
        raise _limit_error(session, exc) from None
    await session.services.race_fanout.attach(session, race_id)
    await session.services.races.announce(player.id, race_id)
    return await _room(session, req.id, race_id)


async def race_start(session: Session, req: p.RaceStart) -> p.ServerMessage:
    player = session.require_player()
    await session.services.races.start_room(player.id, req.race_id)
    await session.services.race_fanout.attach(session, req.race_id)
    return await _room(session, req.id, req.race_id)


async def race_get(session: Session, req: p.RaceGet) -> p.ServerMessage:
    player = session.require_player()
    s = session.services
    race = await s.races.load(req.race_id)
    if player.id in race.names() and race.status is not RaceStatus.FINISHED:
        await s.race_fanout.attach(session, req.race_id)
        await s.races.mark_seen(req.race_id, [player.id], instance=s.race_fanout.instance)
    return await _room(session, req.id, req.race_id, since=req.since)


def _day(session: Session, board: str, date: str | None) -> dt.date | None:
    if board == "rating":
        return None
    return board_date(session, date)


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
    session: Session,
    req_id: int,
    variant: str,
    board: str,
    day: dt.date | None,
    offset: int,
    rows: list[RatingRow],
) -> p.RaceBoard:
    s = session.services
    me = session.require_player().id
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


async def race_top(session: Session, req: p.RaceTop) -> p.ServerMessage:
    variant, day = _variant(req.variant), _day(session, req.board, req.date)
    rows = await session.services.races.board_top(variant, req.board, day, req.offset, req.limit)
    return await _board_reply(session, req.id, variant, req.board, day, req.offset, rows)


async def race_around(session: Session, req: p.RaceAround) -> p.ServerMessage:
    player = session.require_player()
    variant, day = _variant(req.variant), _day(session, req.board, req.date)
    rows = await session.services.races.board_around(variant, req.board, day, player.id, req.k)
    offset = rows[0].rank - 1 if rows else 0
    return await _board_reply(session, req.id, variant, req.board, day, offset, rows)


async def race_rank(session: Session, req: p.RaceRank) -> p.ServerMessage:
    player = session.require_player()
    s = session.services
    variant, day = _variant(req.variant), _day(session, req.board, req.date)
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


async def race_recent(session: Session, req: p.RaceRecent) -> p.ServerMessage:
    player = session.require_player()
    variant = _variant(req.variant)
    items = await session.services.races.recent(variant, player.id, req.limit)
    races = tuple(i.to_wire() for i in items)
    return p.RaceHistory(id=req.id, variant=variant, races=races)


def _need_v7(session: Session, what: str) -> None:
    if not session.speaks(p.ACCOUNTS):
        raise p.ProtocolError(
            f"'{what}' needs protocol version {p.ACCOUNTS}", code=p.ErrorCode.UNKNOWN_TYPE
        )


async def race_rematch(session: Session, req: p.RaceRematch) -> p.ServerMessage:
    """A rematch room for a race that is over, offered to its other racers (version 7)."""
    player = session.require_player()
    _need_v7(session, req.type)
    try:
        room_id = await session.services.rematches.ask(player.id, player.name, req.race_id)
    except LimitReached as exc:
        raise _limit_error(session, exc) from None
    await session.services.race_fanout.attach(session, room_id)
    await session.services.races.announce(player.id, room_id)
    return await _room(session, req.id, room_id)


async def race_decline(session: Session, req: p.RaceDecline) -> p.ServerMessage:
    """Decline a rematch offer (version 7); its asker is told."""
    player = session.require_player()
    _need_v7(session, req.type)
    await session.services.rematches.decline(player.id, player.name, req.race_id)
    return p.RaceDeclined(id=req.id, race_id=req.race_id)


#: Race rooms, the queue and race boards.
RACE_ROUTES = (
    Router()
    .on(p.RaceQueue, race_queue)
    .on(p.RaceLeave, race_leave)
    .on(p.RaceCreate, race_create)
    .on(p.RaceJoin, race_join)
    .on(p.RaceStart, race_start)
    .on(p.RaceGet, race_get)
    .on(p.RaceTop, race_top)
    .on(p.RaceAround, race_around)
    .on(p.RaceRank, race_rank)
    .on(p.RaceRecent, race_recent)
    .on(p.RaceRematch, race_rematch)
    .on(p.RaceDecline, race_decline)
)
