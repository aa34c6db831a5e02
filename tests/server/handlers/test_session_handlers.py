"""Handlers run on a `Session` alone: no socket, no connection, the real services on a real
Redis. What the client would have been sent is collected from the session's `send`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import redis.asyncio

import protocol as p
from server.config import Config
from server.games.service import LiveGame
from server.handlers.routes import app_router
from server.redis import keys
from server.runtime.clock import ManualClock
from server.runtime.metrics import Metrics
from server.services import Services
from server.transport.session import NotAuthenticated, Session


async def test_a_player_says_hello_and_plays_a_move_without_a_socket(
    redis_client: redis.asyncio.Redis, clock: ManualClock, tmp_path: Path
) -> None:
    config = replace(Config(), data_dir=tmp_path, daily_secret=b"session", certify_deals=False)
    services = Services.build(config, clock, redis_client, Metrics())
    sent: list[p.ServerMessage] = []
    session = Session(services, sent.append, "192.0.2.7")
    router = app_router()
    try:
        with pytest.raises(NotAuthenticated):
            await router.dispatch(session, p.DailyStart(id=1, variant="fourteen-out"))
        welcome = await router.dispatch(session, p.Hello(id=2, versions=(5,), name="nosock"))
        assert isinstance(welcome, p.Welcome) and welcome.version == 5
        assert session.player is not None and session.player.name == "nosock"
        assert session.version == 5 and session.speaks(p.LEAN_MOVES)
        assert session.after_reply, "the pushes that follow the welcome wait for it"

        heard: list[tuple[str, int]] = []

        async def listener(live: LiveGame) -> None:
            heard.append((live.record.game_id, live.seq))

        services.games.on_played.append(listener)
        game = await router.dispatch(session, p.DailyStart(id=3, variant="fourteen-out"))
        assert isinstance(game, p.GameState) and game.seq == 0
        live = await services.games.get(game.game_id, session.player.id)
        move = str(next(iter(live.game.legal_moves())))
        moved = await router.dispatch(
            session, p.Move(id=4, game_id=game.game_id, move=move, expected_seq=0)
        )
        assert isinstance(moved, p.Moved) and (moved.seq, moved.move) == (1, move)
        k = keys.parse_game_id(game.game_id)
        assert await redis_client.lrange(k.log, 0, -1) == [move], "durable before the reply"
        undone = await router.dispatch(session, p.Undo(id=6, game_id=game.game_id, with_view=True))
        assert isinstance(undone, p.Moved) and (undone.seq, undone.move) == (2, "undo")
        assert undone.view is not None and undone.view["variant"] == "fourteen-out"
        assert await redis_client.lrange(k.log, 0, -1) == [move, "undo"]
        # The service told its listener of each write, durable, before the reply.
        assert heard == [(game.game_id, 1), (game.game_id, 2)]
        assert services.metrics.moves.value("fourteen-out") == 2

        profile = await router.dispatch(session, p.ProfileGet(id=5))
        assert isinstance(profile, p.Profile) and profile.name == "nosock"
        assert sent == [], "nothing was pushed: every answer was a reply"
    finally:
        await services.store.batch.aclose()
        services.deals.pool.close()
        await services.games.aclose()
