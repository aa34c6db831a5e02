"""``solitaire signin-code``, ``solitaire signin CODE``, ``solitaire devices`` and
``solitaire device-revoke DEVICE``: the same player on several devices.

``signin-code`` (on a device where the player is signed in) shows a one-time code, single use,
valid 5 minutes; ``signin CODE`` (on the new device, or in another terminal profile) redeems
it and stores the token the server gives this device under the profile chosen by ``--name`` or
``--profile`` (the default one otherwise); ``--account NAME`` counts the attempt against that
account instead of this address (protocol 9). ``devices`` lists the devices signed in as the
player and ``device-revoke`` signs one out (protocol 9, docs/protocol.md §16). No token is
ever printed (protocol 7, docs/protocol.md §14).
"""

from __future__ import annotations

import argparse

import protocol as p
from protocol.signin import normalize_code

from . import render
from .commands import Ctx, UsageError, open_session
from .config import Identity
from .session import RequestFailed, ServerSession


async def cmd_signin_code(args: argparse.Namespace, ctx: Ctx) -> int:
    """Show a one-time code that signs another device in as this player."""
    session = await open_session(ctx)
    try:
        try:
            reply = await session.request(lambda rid: p.SigninCode(id=rid), p.SigninCodeReply)
        except RequestFailed as exc:
            if exc.code == p.ErrorCode.UNKNOWN_TYPE:
                raise UsageError("this server has no sign-in codes (protocol 7)") from None
            raise
        minutes = max(1, round((reply.expires_at - session.server_now_ms()) / 60_000))
    finally:
        await session.close()
    if ctx.out.json:
        ctx.out.emit({"command": "signin-code", "code": reply.code, "expires_at": reply.expires_at})
    else:
        ctx.out.show(render.signin_code(reply.code, minutes))
    return 0


async def cmd_signin(args: argparse.Namespace, ctx: Ctx) -> int:
    """Sign this device in with a code shown by another one (`signin-code`)."""
    if normalize_code(args.code) is None:
        raise UsageError(f"not a sign-in code (8 letters and digits, like K7QM-4XHT): {args.code}")
    profile: str | None = ctx.args.profile or ctx.args.name
    url = ctx.url
    replacing = ctx.store.get(url, profile)
    if replacing is not None:  # its token would be lost: that player could never come back
        where = f"profile {profile}" if profile else "the default profile"
        raise UsageError(
            f"{replacing.name} is signed in under {where} of {url} already; "
            "sign in under another one with --profile NAME"
        )

    def save(welcome: p.Welcome) -> None:
        assert welcome.token is not None
        identity = Identity(welcome.token, welcome.name, welcome.player_id)
        ctx.store.keep(url, identity, profile, replacing=replacing)

    session = ServerSession(
        url,
        code=args.code,
        code_account=args.account,
        on_token=save,
        on_notice=lambda text: ctx.err.print(render.notice(text)),
    )
    try:
        try:
            welcome = await session.connect()
        except RequestFailed as exc:
            if exc.code == p.ErrorCode.UNKNOWN_TYPE:
                raise UsageError("this server has no sign-in codes (protocol 7)") from None
            if exc.code == p.ErrorCode.BAD_REQUEST and args.account:
                raise UsageError("this server cannot sign in by account (protocol 9)") from None
            if exc.code == p.ErrorCode.INVALID_CODE:
                raise UsageError(
                    "that code is wrong, used or expired: show a new one with "
                    "'solitaire signin-code' on the other device"
                ) from None
            raise
    finally:
        await session.close()
    if ctx.out.json:
        ctx.out.emit(
            {
                "command": "signin",
                "player_id": welcome.player_id,
                "name": welcome.name,
                "profile": profile,
            }
        )
    else:
        ctx.out.show(render.signed_in(welcome.name, url, profile))
    return 0


async def _devices(session: ServerSession, revoke: str | None) -> p.DevicesReply:
    """The device list, after signing ``revoke`` out when given."""
    try:
        if revoke is None:
            return await session.request(lambda rid: p.DevicesGet(id=rid), p.DevicesReply)
        return await session.request(
            lambda rid: p.DeviceRevoke(id=rid, device=revoke), p.DevicesReply
        )
    except RequestFailed as exc:
        if exc.code == p.ErrorCode.UNKNOWN_TYPE:
            raise UsageError("this server has no device list (protocol 9)") from None
        if exc.code in (
            p.ErrorCode.NOT_FOUND,
            p.ErrorCode.NOT_TRUSTED_YET,
            p.ErrorCode.BAD_REQUEST,
        ):
            raise UsageError(exc.message) from None
        raise


def _emit(ctx: Ctx, command: str, reply: p.DevicesReply, now_ms: int) -> None:
    if ctx.out.json:
        ctx.out.emit(
            {
                "command": command,
                "devices": [
                    {
                        "device": d.device,
                        "name": d.name,
                        "how": d.how,
                        "signed_in_at": d.signed_in_at,
                        "current": d.current,
                        "can_revoke": d.can_revoke,
                    }
                    for d in reply.devices
                ],
                "trusted_at": reply.trusted_at,
            }
        )
    else:
        ctx.out.show(render.devices_table(reply.devices, reply.trusted_at, now_ms))


async def cmd_devices(args: argparse.Namespace, ctx: Ctx) -> int:
    """List the devices signed in as this player (protocol 9)."""
    session = await open_session(ctx)
    try:
        reply = await _devices(session, None)
        now = session.server_now_ms()
    finally:
        await session.close()
    _emit(ctx, "devices", reply, now)
    return 0


async def cmd_device_revoke(args: argparse.Namespace, ctx: Ctx) -> int:
    """Sign one device out (its token dies, its sessions close); list the devices left."""
    session = await open_session(ctx)
    try:
        reply = await _devices(session, args.device)
        now = session.server_now_ms()
    finally:
        await session.close()
    if not ctx.out.json:
        ctx.err.print(render.notice(f"Device {args.device} was signed out."))
    _emit(ctx, "device-revoke", reply, now)
    return 0


__all__ = ["cmd_device_revoke", "cmd_devices", "cmd_signin", "cmd_signin_code"]
