"""Handlers of profiles, daily history and spectating (`SOCIAL_ROUTES`)."""

from __future__ import annotations

import datetime as dt

import protocol as p
from engine import VARIANT_IDS
from protocol.spoken import as_spoken
from server.transport.router import Router
from server.transport.session import Session


def _variant(name: str) -> str:
    if name not in VARIANT_IDS:
        raise p.ProtocolError(
            f"unknown variant {name!r}; one of: {', '.join(VARIANT_IDS)}",
            code=p.ErrorCode.NOT_FOUND,
        )
    return name


async def profile_get(session: Session, req: p.ProfileGet) -> p.ServerMessage:
    me = session.require_player()
    profiles = session.services.profiles
    who = await profiles.player(me, req.player_id, req.name)
    return await profiles.profile(req.id, me, who, months=session.speaks(p.TIERS))


async def history_get(session: Session, req: p.HistoryGet) -> p.ServerMessage:
    me = session.require_player()
    variant = _variant(req.variant)
    profiles = session.services.profiles
    who = await profiles.player(me, req.player_id, None)
    before = dt.date.fromisoformat(req.before) if req.before else None
    return await profiles.page(req.id, who, variant, before, req.limit)


async def race_list(session: Session, req: p.RaceList) -> p.ServerMessage:
    session.require_player()
    variant = _variant(req.variant) if req.variant is not None else None
    races = await session.services.spectators.running(variant, req.limit)
    return as_spoken(p.RaceListReply(id=req.id, races=tuple(races)), session.version)


async def race_watch(session: Session, req: p.RaceWatch) -> p.ServerMessage:
    session.require_player()
    watching = await session.services.spectators.watch(session, req.id, req.race_id)
    return as_spoken(watching, session.version)


async def race_unwatch(session: Session, req: p.RaceUnwatch) -> p.ServerMessage:
    session.require_player()
    await session.services.spectators.unwatch(session, req.race_id)
    return p.RaceUnwatched(id=req.id, race_id=req.race_id)


#: Profiles, history pages and spectating.
SOCIAL_ROUTES = (
    Router()
    .on(p.ProfileGet, profile_get)
    .on(p.HistoryGet, history_get)
    .on(p.RaceList, race_list)
    .on(p.RaceWatch, race_watch)
    .on(p.RaceUnwatch, race_unwatch)
)
