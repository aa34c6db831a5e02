"""Handler of free play (`FREE_ROUTES`): ``free.start`` (protocol version 7)."""

from __future__ import annotations

import protocol as p
from engine import VARIANT_IDS
from server.handlers.games import game_reply
from server.runtime.errors import LimitReached
from server.transport.router import Router
from server.transport.session import Session


async def free_start(session: Session, req: p.FreeStart) -> p.ServerMessage:
    """A new unranked game of ``variant`` on a random deal (`server.games.free`)."""
    player = session.require_player()
    if not session.speaks(p.ACCOUNTS):
        raise p.ProtocolError(
            f"'{req.type}' needs protocol version {p.ACCOUNTS}", code=p.ErrorCode.UNKNOWN_TYPE
        )
    if req.variant not in VARIANT_IDS:
        raise p.ProtocolError(
            f"unknown variant {req.variant!r}; one of: {', '.join(VARIANT_IDS)}",
            code=p.ErrorCode.NOT_FOUND,
        )
    try:
        live = await session.services.free.start(req.variant, player.id)
    except LimitReached as exc:
        raise p.ProtocolError(str(exc), code=p.ErrorCode.LIMIT_REACHED) from None
    return await game_reply(session, req.id, live)


#: Free play.
FREE_ROUTES = Router().on(p.FreeStart, free_start)
