"""``solitaire token rotate`` and ``solitaire token revoke-all``: replace the stored token.

``rotate`` swaps the token for a new one (the old one stops working); ``revoke-all`` does the
same and signs out every other session of the player, on every device: use it when the token
may have been copied. The new token replaces the stored one at once (`TokenStore`).
"""

from __future__ import annotations

import argparse

import protocol as p

from . import render
from .commands import Ctx, UsageError, open_session
from .config import Identity
from .session import RequestFailed

#: What each action says once done.
DONE = {
    "rotate": "Your token was replaced; the old one no longer works.",
    "revoke-all": "Your token was replaced and every other session of yours was signed out.",
}


async def cmd_token(args: argparse.Namespace, ctx: Ctx) -> int:
    """Replace the stored token (``rotate``) or revoke every session (``revoke-all``)."""
    session = await open_session(ctx)
    try:
        welcome = session.welcome
        assert welcome is not None
        try:
            if args.action == "rotate":
                reply = await session.request(lambda rid: p.TokenRotate(id=rid), p.TokenReply)
            else:
                reply = await session.request(lambda rid: p.TokenRevokeAll(id=rid), p.TokenReply)
        except RequestFailed as exc:
            if exc.code == p.ErrorCode.UNKNOWN_TYPE:
                raise UsageError("this server cannot replace tokens (protocol 5)") from None
            raise
        session.token = reply.token  # a reconnect from here on uses the new one
        ctx.store.put(ctx.url, Identity(reply.token, welcome.name, reply.player_id), ctx.profile)
    finally:
        await session.close()
    if ctx.out.json:
        ctx.out.emit({"command": "token", "action": args.action, "player_id": reply.player_id})
    else:
        ctx.err.print(render.notice(DONE[args.action]))
    return 0


__all__ = ["cmd_token"]
