"""Handlers of a player's token and devices (`ACCOUNT_ROUTES`): ``token.rotate``,
``token.revoke_all`` (version 5), ``signin.code`` and ``signin.redeem`` (version 7),
``devices`` and ``device.revoke`` (version 9).

Both need protocol version 5. The new token replaces the session's own at once; after
``token.revoke_all`` the player's epoch goes up and every other session of the player is
closed by the session sweep (`server.app`) of whichever process holds it: at once on every
process (the revocation is published on the player's channel, `pubsub.SessionsRevoked`),
within `server.app.SESSION_SWEEP_S` seconds should that message be lost.
"""

from __future__ import annotations

import protocol as p
from server.handlers.games import welcome
from server.players.devices import RevokeRefused
from server.players.registry import Player
from server.runtime.errors import LimitReached, NotTrusted, TokenRevoked
from server.transport.address import address_network
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
    session.services.sessions_revoked.set()  # the old token's other sessions close now
    return p.TokenReply(id=req.id, player_id=player.id, token=token)


def _not_trusted(session: Session, exc: NotTrusted) -> p.ProtocolError:
    """`not_trusted_yet` from version 9 on; versions 5 to 8 know `limit_reached`."""
    code = p.ErrorCode.NOT_TRUSTED_YET if session.speaks(p.DEVICES) else p.ErrorCode.LIMIT_REACHED
    return p.ProtocolError(str(exc), code=code)


async def token_revoke_all(session: Session, req: p.TokenRevokeAll) -> p.ServerMessage:
    player = session.require_player()
    _need_v5(session, req.type)
    try:
        session.player, token = await session.services.players.rotate(
            player, revoke_all=True, trust_ms=session.services.devices.trust_ms
        )
    except NotTrusted as exc:
        raise _not_trusted(session, exc) from None
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
    issued = await session.services.signin.issue(player)  # TokenRevoked: a dead token
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
    if version < p.DEVICES and (req.name is not None or req.device is not None):
        raise p.ProtocolError(
            f"'name' and 'device' need protocol version {p.DEVICES}", code=p.ErrorCode.BAD_REQUEST
        )
    try:
        done = await session.services.signin.redeem(
            req.code,
            session.group,
            address_network(session.address),
            name=req.name,
            device_name=req.device or "",
        )
    except LimitReached as exc:
        raise p.ProtocolError(str(exc), code=p.ErrorCode.LIMIT_REACHED) from None
    session.device = done.device
    return await welcome(
        session, req.id, version, done.player, done.token, new_player=False, features=req.features
    )


def _need_v9(session: Session, what: str) -> None:
    if not session.speaks(p.DEVICES):
        raise p.ProtocolError(
            f"'{what}' needs protocol version {p.DEVICES}", code=p.ErrorCode.UNKNOWN_TYPE
        )


async def _devices_reply(session: Session, req_id: int, player: Player) -> p.DevicesReply:
    devices, trusted_at = await session.services.devices.list(player)
    if not devices:
        raise TokenRevoked("this session's token was revoked; say hello again")
    return p.DevicesReply(
        id=req_id,
        devices=tuple(
            p.DeviceInfo(
                device=d.id,
                name=d.name,
                how=d.how,
                signed_in_at=d.signed_in_at_ms,
                current=d.current,
                can_revoke=d.can_revoke,
            )
            for d in devices
        ),
        trusted_at=trusted_at,
    )


async def devices_get(session: Session, req: p.DevicesGet) -> p.ServerMessage:
    """The player's devices, as this device sees them (which it may revoke)."""
    player = session.require_player()
    _need_v9(session, req.type)
    return await _devices_reply(session, req.id, player)


async def device_revoke(session: Session, req: p.DeviceRevoke) -> p.ServerMessage:
    """Sign one device out; answered by the devices left."""
    player = session.require_player()
    _need_v9(session, req.type)
    why = await session.services.devices.revoke(player, req.device)
    if why is RevokeRefused.TOKEN_DEAD:
        raise TokenRevoked("this session's token was revoked; say hello again")
    if why is RevokeRefused.NO_SUCH_DEVICE:
        raise p.ProtocolError(f"no device {req.device!r}", code=p.ErrorCode.NOT_FOUND)
    if why is RevokeRefused.SELF:
        raise p.ProtocolError(
            "this is the device asking: sign it out by forgetting its token, or revoke it "
            "from another device",
            code=p.ErrorCode.BAD_REQUEST,
        )
    if why is RevokeRefused.NOT_TRUSTED:
        raise p.ProtocolError(
            "this device signed in with a code recently: until its trust period ends it may "
            "sign out only devices that signed in after it",
            code=p.ErrorCode.NOT_TRUSTED_YET,
        )
    session.services.sessions_revoked.set()  # this process's sweep closes its sessions now
    return await _devices_reply(session, req.id, player)


#: A player's token and devices.
ACCOUNT_ROUTES = (
    Router()
    .on(p.TokenRotate, token_rotate)
    .on(p.TokenRevokeAll, token_revoke_all)
    .on(p.SigninCode, signin_code)
    .on(p.SigninRedeem, signin_redeem)
    .on(p.DevicesGet, devices_get)
    .on(p.DeviceRevoke, device_revoke)
)
