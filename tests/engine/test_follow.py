"""A player's copy kept current from the server's moves and reveal events (`Game.follow`)."""

from __future__ import annotations

import random

import pytest

from engine import VARIANT_IDS, IllegalMove, OutOfSync, Reveal, from_view, new_game, parse_card


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_a_copy_following_the_server_sees_exactly_the_players_view(variant: str) -> None:
    for seed in range(8):
        rng = random.Random(seed)
        server = new_game(variant, seed)
        copy = from_view(server.view())
        for _ in range(250):
            if server.over:
                break
            if server.can_undo() and rng.random() < 0.1:
                text = "undo"
            else:
                text = str(rng.choice(list(server.legal_moves())))
            result = server.play(text)
            copy.follow(text, result.reveals, over=server.over)
            assert copy.view() == server.view(), (seed, text)


def test_a_reveal_at_another_place_than_the_copys_is_out_of_sync() -> None:
    server = new_game("triple-triangle", 3)
    copy = from_view(server.view())
    result = server.play("d")
    with pytest.raises(OutOfSync):
        copy.follow("d", (Reveal(result.reveals[0].card, "7"),))


def test_reveals_in_a_game_without_hidden_cards_are_out_of_sync() -> None:
    server = new_game("fourteen-out", 1)
    copy = from_view(server.view())
    move = str(next(server.legal_moves()))
    with pytest.raises(OutOfSync):
        copy.follow(move, (Reveal(parse_card("AS"), "1"),))


def test_an_undo_the_copy_has_no_snapshot_for_is_refused() -> None:
    server = new_game("fourteen-out", 1)
    server.play(str(next(server.legal_moves())))
    copy = from_view(server.view())  # built after the move: no snapshot to go back to
    with pytest.raises(IllegalMove, match="no move to undo"):
        copy.follow("undo")


def test_the_servers_verdict_replaces_the_copys() -> None:
    server = new_game("triple-deck", 5)
    copy = from_view(server.view())
    text = str(next(server.legal_moves()))
    result = server.play(text)
    copy.follow(text, result.reveals, over=True)
    assert copy.over and not server.over
