"""A player's copy kept current from the server's moves and reveal events (`Game.follow`)."""

from __future__ import annotations

import json
import random

import pytest

from engine import VARIANT_IDS, IllegalMove, OutOfSync, Reveal, from_view, new_game, parse_card
from engine.game import HIDDEN


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


def _hidden_count(view: object) -> int:
    return json.dumps(view).count(f'"{HIDDEN}"')


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_a_copy_that_turns_a_card_itself_writes_it_face_down(variant: str) -> None:
    """A copy rebuilt with `from_view` that plays a move turning a face-down pile card cannot
    know the card: its next view writes it as hidden ("??"), never "None", and reads back."""
    turned = 0
    for seed in range(6):
        rng = random.Random(seed)
        server = new_game(variant, seed)
        for _ in range(120):
            server.defer_over()
            options = list(server.legal_moves())
            if not options:
                break
            for move in options:
                if move.src == "d":  # a draw shows stock cards, which a copy drops
                    continue
                copy = from_view(server.view())
                copy.defer_over()
                before = _hidden_count(copy.view())
                result = copy.apply(copy.parse_move(str(move)))
                copy.defer_over()  # Triple Easthaven's game-over check is a search
                view = copy.view()
                assert "None" not in json.dumps(view), (seed, str(move))
                unknown = sum(1 for r in result.reveals if r.card is None)
                turned += unknown
                # Tri Peaks writes a face-down place as hidden already; a pile game writes
                # its face-down cards as a count, so a turned unknown card adds one.
                grows = 0 if variant == "triple-triangle" else unknown
                assert _hidden_count(view) == before + grows, (seed, str(move))
                reread = from_view(view)
                reread.defer_over()
                assert reread.view() == {**view, "can_undo": False}  # a new copy: no history
            server.apply(rng.choice(options))
    if variant not in ("fourteen-out", "triple-fourteens"):
        assert turned > 0  # the variant has face-down cards, and some were turned
