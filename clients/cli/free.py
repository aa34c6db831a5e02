"""``solitaire free VARIANT``: free play on the server (protocol 7): an unranked game of a
random deal, on no leaderboard, resumed by its id (``--resume GAME_ID``). ``practice`` stays
the offline game with a seed of one's choice."""

from __future__ import annotations

import argparse

import protocol as p

from . import render
from .commands import Ctx, UsageError, _check_variant, _show, open_session, script_source
from .games import ServerGame
from .play import interactive, scripted
from .render import JsonDoc
from .session import RequestFailed


async def cmd_free(args: argparse.Namespace, ctx: Ctx) -> int:
    """Deal a free game of VARIANT (or resume one by id) and play it."""
    moves_source: str | None = args.moves
    if ctx.out.json and moves_source is None and not args.show:
        moves_source = "-"
    lines = script_source(moves_source, ctx)
    session = await open_session(ctx)
    try:
        _check_variant(session, args.variant)
        try:
            if args.resume:
                gid = args.resume
                state = await session.request(
                    lambda rid: p.GameGet(id=rid, game_id=gid), p.GameState
                )
            else:
                state = await session.request(
                    lambda rid: p.FreeStart(id=rid, variant=args.variant), p.GameState
                )
        except RequestFailed as exc:
            if exc.code == p.ErrorCode.UNKNOWN_TYPE:
                raise UsageError("this server has no free play (protocol 7)") from None
            raise
        if not state.free:
            raise UsageError(f"{state.game_id} is not a free game")
        if state.variant != args.variant:
            raise UsageError(f"{state.game_id} is a game of {state.variant}")
        game = ServerGame(session, state)
        info: JsonDoc = {
            "command": "free",
            "variant": game.variant,
            "game_id": game.game_id,
            "free": True,
        }
        if args.show:
            if not ctx.out.json:
                ctx.out.show(render.free_intro(game.game_id))
            return _show(game, ctx, info)
        if lines is not None:
            return await scripted(game, lines, ctx.out, info)
        ctx.out.show(render.free_intro(game.game_id))
        hint = f"Resume it with: solitaire free {game.variant} --resume {game.game_id}"
        return await interactive(game, ctx.out, ctx.reader, session, resume_hint=hint)
    finally:
        await session.close()


__all__ = ["cmd_free"]
