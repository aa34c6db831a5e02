"""Handlers of the race requests (registered into `handlers.HANDLERS`)."""

from __future__ import annotations

import datetime as dt

import protocol as p
from engine import VARIANT_IDS

from .connection import Connection
from .daily import utc_date
from .handlers import HANDLERS, handles
from .racehub import RaceHub, race_info
from .ratings import RatingRow


def _variant(name: str) -> str:
    if name not in VARIANT_IDS:
        raise p.ProtocolError(f"unknown variant {name!r}", code=p.ErrorCode.NOT_FOUND)
    return name


def _hub(conn: Connection) -> RaceHub:
    hub = conn.services.hub
    assert hub is not None, "the race hub starts with the app"
    return hub


async def _room(conn: Connection, req_id: int, race_id: str, since: int | None = None
                ) -> p.RaceRoom:
    s = conn.services
    race = await s.races.store.load(race_id)
    me = conn.require_player().id
    events = await s.races.store.events_since(race_id, since) if since is not None else []
    return p.RaceRoom(id=req_id, race=race_info(race, s.clock.now_ms(), me),
                      events=tuple(events[-1000:]))


@handles(p.RaceQueue)
async def race_queue(conn: Connection, req: p.RaceQueue) -> p.ServerMessage:
    player = conn.require_player()
    variant = _variant(req.variant)
    hub = _hub(conn)
    await hub.watch_player(conn, player.id)  # before queueing: a match is announced there
    hub.queued[conn] = (variant, req.size)
    waiting, race_id = await conn.services.races.queue(player.id, player.name, variant,
                                                       req.size)
    if race_id is not None:
        hub.queued.pop(conn, None)
    return p.RaceQueued(id=req.id, variant=variant, size=req.size, waiting=waiting)


@handles(p.RaceLeave)
async def race_leave(conn: Connection, req: p.RaceLeave) -> p.ServerMessage:
    player = conn.require_player()
    _hub(conn).queued.pop(conn, None)
    if not await conn.services.races.leave(player.id):
        raise p.ProtocolError("not waiting in a queue or a room", code=p.ErrorCode.NOT_FOUND)
    return p.RaceLeft(id=req.id)


@handles(p.RaceCreate)
async def race_create(conn: Connection, req: p.RaceCreate) -> p.ServerMessage:
    player = conn.require_player()
    race_id = await conn.services.races.create_room(player.id, player.name,
                                                    _variant(req.variant), req.size)
    await _hub(conn).attach(conn, race_id)
    return await _room(conn, req.id, race_id)


@handles(p.RaceJoin)
async def race_join(conn: Connection, req: p.RaceJoin) -> p.ServerMessage:
    player = conn.require_player()
    race_id = await conn.services.races.join_room(player.id, player.name, req.code)
    await _hub(conn).attach(conn, race_id)
    return await _room(conn, req.id, race_id)


@handles(p.RaceStart)
async def race_start(conn: Connection, req: p.RaceStart) -> p.ServerMessage:
    player = conn.require_player()
    await conn.services.races.start_room(player.id, req.race_id)
    await _hub(conn).attach(conn, req.race_id)
    return await _room(conn, req.id, req.race_id)


@handles(p.RaceGet)
async def race_get(conn: Connection, req: p.RaceGet) -> p.ServerMessage:
    player = conn.require_player()
    s = conn.services
    race = await s.races.store.load(req.race_id)
    if player.id in race.names() and race.status != "finished":
        await _hub(conn).attach(conn, req.race_id)
        await s.races.store.touch(req.race_id, [player.id], s.clock.now_ms())
    return await _room(conn, req.id, req.race_id, since=req.since)


def _day(conn: Connection, board: str, date: str | None) -> dt.date | None:
    if board == "rating":
        return None
    return dt.date.fromisoformat(date) if date else utc_date(conn.services.clock.now_ms())


def _entry(row: RatingRow, names: dict[str, str], me: str) -> p.RatingEntry:
    return p.RatingEntry(rank=row.rank, player_id=row.player_id,
                         name=names.get(row.player_id, "?"), rating=row.rating, wins=row.wins,
                         losses=row.losses, played=row.played, me=row.player_id == me)


async def _board_reply(conn: Connection, req_id: int, variant: str, board: str,
                       day: dt.date | None, offset: int, rows: list[RatingRow]) -> p.RaceBoard:
    s = conn.services
    me = conn.require_player().id
    names = await s.players.names([r.player_id for r in rows])
    return p.RaceBoard(id=req_id, variant=variant, board=board,
                       total=await s.races.boards.total(variant, board, day), offset=offset,
                       entries=tuple(_entry(r, names, me) for r in rows),
                       date=day.isoformat() if day else None)


@handles(p.RaceTop)
async def race_top(conn: Connection, req: p.RaceTop) -> p.ServerMessage:
    variant, day = _variant(req.variant), _day(conn, req.board, req.date)
    rows = await conn.services.races.boards.top(variant, req.board, day, req.offset, req.limit)
    return await _board_reply(conn, req.id, variant, req.board, day, req.offset, rows)


@handles(p.RaceAround)
async def race_around(conn: Connection, req: p.RaceAround) -> p.ServerMessage:
    player = conn.require_player()
    variant, day = _variant(req.variant), _day(conn, req.board, req.date)
    rows = await conn.services.races.boards.around(variant, req.board, day, player.id, req.k)
    offset = rows[0].rank - 1 if rows else 0
    return await _board_reply(conn, req.id, variant, req.board, day, offset, rows)


@handles(p.RaceRank)
async def race_rank(conn: Connection, req: p.RaceRank) -> p.ServerMessage:
    player = conn.require_player()
    s = conn.services
    variant, day = _variant(req.variant), _day(conn, req.board, req.date)
    row = await s.races.boards.rank(variant, req.board, day, player.id)
    names = await s.players.names([player.id])
    return p.RaceRankReply(id=req.id, variant=variant, board=req.board,
                           total=await s.races.boards.total(variant, req.board, day),
                           entry=_entry(row, names, player.id) if row else None,
                           date=day.isoformat() if day else None)


@handles(p.RaceRecent)
async def race_recent(conn: Connection, req: p.RaceRecent) -> p.ServerMessage:
    player = conn.require_player()
    variant = _variant(req.variant)
    items = await conn.services.races.boards.recent(variant, player.id, req.limit)
    races = tuple(p.RaceSummary(race_id=i["race_id"], variant=i["variant"],
                                finished_at=i["finished_at"], place=i["place"],
                                racers=i["racers"], won=i["won"],
                                rating_before=i["rating_before"], rating_after=i["rating_after"])
                  for i in items)
    return p.RaceHistory(id=req.id, variant=variant, races=races)


def register() -> None:
    """Check at import of the app that every request has a handler."""
    missing = set(p.CLIENT_MESSAGES.values()) - set(HANDLERS)
    assert not missing, f"requests without a handler: {missing}"
