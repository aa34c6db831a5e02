"""``solitaire signin-code`` and ``solitaire signin CODE``: the same player on another device.

``signin-code`` (on a device where the player is signed in) shows a one-time code, single use,
valid 5 minutes; ``signin CODE`` (on the new device, or in another terminal profile) redeems
it and stores the token the server gives this device under the profile chosen by ``--name`` or
``--profile`` (the default one otherwise). No token is ever printed (protocol 7, docs/protocol.md
§14).
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
        on_token=save,
        on_notice=lambda text: ctx.err.print(render.notice(text)),
    )
    try:
        try:
            welcome = await session.connect()
        except RequestFailed as exc:
            if exc.code == p.ErrorCode.UNKNOWN_TYPE:
                raise UsageError("this server has no sign-in codes (protocol 7)") from None
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


__all__ = ["cmd_signin", "cmd_signin_code"]
