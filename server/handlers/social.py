"""Handlers of profiles, daily history and spectating (`SOCIAL_HANDLERS`)."""

from __future__ import annotations

import datetime as dt

import protocol as p
from engine import VARIANT_IDS
from server.handlers.games import HandlerTable
from server.races.spectate import spectators_of
from server.transport.connection import Connection


def _variant(name: str) -> str:
    if name not in VARIANT_IDS:
        raise p.ProtocolError(
            f"unknown variant {name!r}; one of: {', '.join(VARIANT_IDS)}",
            code=p.ErrorCode.NOT_FOUND,
        )
    return name


async def profile_get(conn: Connection, req: p.ProfileGet) -> p.ServerMessage:
    me = conn.require_player()
    profiles = conn.services.profiles
    who = await profiles.player(me, req.player_id, req.name)
    return await profiles.profile(req.id, me, who)


async def history_get(conn: Connection, req: p.HistoryGet) -> p.ServerMessage:
    me = conn.require_player()
    variant = _variant(req.variant)
    profiles = conn.services.profiles
    who = await profiles.player(me, req.player_id, None)
    before = dt.date.fromisoformat(req.before) if req.before else None
    return await profiles.page(req.id, who, variant, before, req.limit)


async def race_list(conn: Connection, req: p.RaceList) -> p.ServerMessage:
    conn.require_player()
    variant = _variant(req.variant) if req.variant is not None else None
    races = await spectators_of(conn.services).running(variant, req.limit)
    return p.RaceListReply(id=req.id, races=tuple(races))


async def race_watch(conn: Connection, req: p.RaceWatch) -> p.ServerMessage:
    conn.require_player()
    return await spectators_of(conn.services).watch(conn, req.id, req.race_id)


async def race_unwatch(conn: Connection, req: p.RaceUnwatch) -> p.ServerMessage:
    conn.require_player()
    await spectators_of(conn.services).unwatch(conn, req.race_id)
    return p.RaceUnwatched(id=req.id, race_id=req.race_id)


#: Profiles, history pages and spectating.
SOCIAL_HANDLERS: HandlerTable = {
    p.ProfileGet: profile_get,
    p.HistoryGet: history_get,
    p.RaceList: race_list,
    p.RaceWatch: race_watch,
    p.RaceUnwatch: race_unwatch,
}
