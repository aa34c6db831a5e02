"""Handlers of a player's token (`ACCOUNT_ROUTES`): ``token.rotate``, ``token.revoke_all``.

Both need protocol version 5. The new token replaces the session's own at once; after
``token.revoke_all`` the player's epoch goes up and every other session of the player is
closed by the session sweep (`server.app`) of whichever process holds it: at once on this
process, within `server.app.SESSION_SWEEP_S` seconds on the others.
"""

from __future__ import annotations

import protocol as p
from server.transport.router import Router
from server.transport.session import Session


def _need_v5(session: Session, what: str) -> None:
    if session.version is None or session.version < p.FAIR_PLAY:
        raise p.ProtocolError(
            f"'{what}' needs protocol version {p.FAIR_PLAY}", code=p.ErrorCode.UNKNOWN_TYPE
        )


async def token_rotate(session: Session, req: p.TokenRotate) -> p.ServerMessage:
    player = session.require_player()
    _need_v5(session, req.type)
    session.player, token = await session.services.players.rotate(player)
    return p.TokenReply(id=req.id, player_id=player.id, token=token)


async def token_revoke_all(session: Session, req: p.TokenRevokeAll) -> p.ServerMessage:
    player = session.require_player()
    _need_v5(session, req.type)
    session.player, token = await session.services.players.rotate(player, revoke_all=True)
    session.services.sessions_revoked.set()  # this process's sweep closes the others now
    return p.TokenReply(id=req.id, player_id=player.id, token=token)


#: A player's token.
ACCOUNT_ROUTES = Router().on(p.TokenRotate, token_rotate).on(p.TokenRevokeAll, token_revoke_all)
