"""Handlers of a player's token and devices (`ACCOUNT_ROUTES`): ``token.rotate``,
``token.revoke_all`` (version 5), ``signin.code`` and ``signin.redeem`` (version 7).

Both need protocol version 5. The new token replaces the session's own at once; after
``token.revoke_all`` the player's epoch goes up and every other session of the player is
closed by the session sweep (`server.app`) of whichever process holds it: at once on this
process, within `server.app.SESSION_SWEEP_S` seconds on the others.
"""

from __future__ import annotations

import protocol as p
from server.handlers.games import welcome
from server.runtime.errors import LimitReached
from server.transport.address import address_group, address_network
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


def _need_v7(session: Session, what: str) -> None:
    if not session.speaks(p.ACCOUNTS):
        raise p.ProtocolError(
            f"'{what}' needs protocol version {p.ACCOUNTS}", code=p.ErrorCode.UNKNOWN_TYPE
        )


async def signin_code(session: Session, req: p.SigninCode) -> p.ServerMessage:
    """A one-time code that signs another device in as this player (the old one dies)."""
    player = session.require_player()
    _need_v7(session, req.type)
    issued = await session.services.signin.issue(player)
    return p.SigninCodeReply(id=req.id, code=issued.code, expires_at=issued.expires_at_ms)


async def signin_redeem(session: Session, req: p.SigninRedeem) -> p.ServerMessage:
    """Sign this connection in with a code instead of ``hello``: ``welcome`` with a token of
    this device's own. Counted per client address (`limit_reached` past the limit)."""
    if session.player is not None:
        raise p.ProtocolError("already signed in on this connection", code=p.ErrorCode.CONFLICT)
    version = p.negotiate(req.versions)
    if version < p.ACCOUNTS:
        raise p.ProtocolError(
            f"'{req.type}' needs protocol version {p.ACCOUNTS}", code=p.ErrorCode.UNKNOWN_TYPE
        )
    try:
        player, token = await session.services.signin.redeem(
            req.code, address_group(session.address), address_network(session.address)
        )
    except LimitReached as exc:
        raise p.ProtocolError(str(exc), code=p.ErrorCode.LIMIT_REACHED) from None
    return await welcome(
        session, req.id, version, player, token, new_player=False, features=req.features
    )


#: A player's token and devices.
ACCOUNT_ROUTES = (
    Router()
    .on(p.TokenRotate, token_rotate)
    .on(p.TokenRevokeAll, token_revoke_all)
    .on(p.SigninCode, signin_code)
    .on(p.SigninRedeem, signin_redeem)
)
