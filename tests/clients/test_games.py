"""ServerGame: a server game's board kept current from protocol messages, without a socket."""

from __future__ import annotations

import protocol as p
from clients.cli.games import ServerGame
from clients.cli.session import ServerSession
from engine import new_game
from engine.views import json_map


def server_game() -> ServerGame:
    view = new_game("triple-easthaven", 7).view()
    state = p.GameState(
        id=1,
        game_id="d.triple-easthaven.2030-06-15.p_me",
        variant=view["variant"],
        date="2030-06-15",
        view=json_map(view),
        seq=0,
        started_at=0,
        server_time=0,
        elapsed_ms=0,
        finished=False,
    )
    return ServerGame(ServerSession("ws://127.0.0.1:9/ws"), state)


def result() -> p.GameResult:
    return p.GameResult(
        won=False,
        over=True,
        cleared=40,
        score=40,
        time_ms=90_000,
        moves=212,
        resigned=False,
        rank=2,
    )


def test_a_game_finished_push_ends_the_game_it_names() -> None:
    game = server_game()
    assert not game.end_from(
        p.GameFinished(game_id="d.other.2030-06-15.p_me", seq=3, result=result())
    )
    assert not game.finished and game.legal_moves()
    assert game.end_from(p.GameFinished(game_id=game.game_id, seq=212, result=result()))
    assert game.finished and game.seq == 212
    assert game.result is not None and game.result.rank == 2 and game.result.over
    assert game.view["over"] and game.legal_moves() == []
