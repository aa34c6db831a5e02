"""Property tests: random legal play of every variant keeps the engine's invariants.

Per step: cards are conserved, the view holds exactly the visible cards (never a hidden one,
counted as multisets so identical cards of multi-deck games are handled), hidden cards are
accounted for by counts, every legal move's text round-trips, a player's copy built from the
view lists the same legal moves and the same `over`, and undo restores the exact state. At the
end the move log replays on a fresh deal to the identical full state.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import VARIANT_IDS, Game, from_view, new_game

from .helpers import deck, hidden_count, state_cards, view_cards, view_hidden_count, visible_cards

MAX_MOVES = {
    "fourteen-out": 30,
    "triple-fourteens": 80,
    "triple-triangle": 60,
    "triple-deck": 60,
    "triple-deck-kings": 60,
    "triple-easthaven": 50,
}
EXAMPLES = 20


def without_moves(state: Mapping[str, object]) -> dict[str, object]:
    return {k: v for k, v in state.items() if k not in ("moves", "can_undo")}


def check_position(game: Game) -> None:
    state, view = game.to_json(), game.view()
    assert state_cards(state) == deck(type(game)), "cards are conserved"
    assert view_cards(view) == visible_cards(state), "the view shows exactly the visible cards"
    assert view_hidden_count(view) == hidden_count(state)
    assert game.result() == {k: state[k] for k in ("won", "over", "score", "cleared", "moves")}
    assert game.won <= game.over
    legal = list(game.legal_moves())
    assert not legal if game.over else legal or type(game).may_finish
    for move in legal:
        parsed = game.parse_move(str(move))
        assert parsed == move and str(parsed) == str(move)
        assert game.is_legal(move)
    copy = from_view(view)
    assert copy.over == game.over
    assert [str(m) for m in copy.legal_moves()] == [str(m) for m in legal]
    assert copy.won == game.won and copy.cleared == game.cleared and copy.score == game.score


def play(variant: str, seed: int, rng: random.Random) -> tuple[Game, list[str]]:
    game = new_game(variant, seed)
    log: list[str] = []
    for _ in range(MAX_MOVES[variant]):
        check_position(game)
        if game.over:
            break
        if game.can_undo() and rng.random() < 0.2:
            game.undo()
            log.append("undo")
            continue
        move = rng.choice(list(game.legal_moves()))
        before = game.to_json()
        result = game.apply(move)
        log.append(str(move))
        if game.can_undo():  # undo restores the exact state; then play the move again
            assert not result.revealed_hidden
            game.undo()
            assert without_moves(game.to_json()) == without_moves(before)
            game.apply(move)
            log += ["undo", str(move)]
        else:
            assert result.revealed_hidden or game.over
    return game, log


@pytest.mark.parametrize("variant", VARIANT_IDS)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64 - 1), choices=st.integers(0, 2**32))
def test_random_play_keeps_invariants(variant: str, seed: int, choices: int) -> None:
    game, log = play(variant, seed, random.Random(choices))
    replay = new_game(variant, seed)
    for line in log:
        replay.play(line)
    assert replay.to_json() == game.to_json()
    assert replay.moves == len(log)


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_long_random_games_end_consistently(variant: str) -> None:
    """Whole games (capped) keep the card count and end with over == no legal moves."""
    rng = random.Random(variant)
    for seed in range(3):
        game = new_game(variant, seed)
        for _ in range(400):
            if game.over:
                break
            game.apply(rng.choice(list(game.legal_moves())))
        assert state_cards(game.to_json()) == deck(type(game))
        # Every variant: a game that is not over has a move (for those a player may have to
        # finish, at least a draw or a shuttle move), and one that is over has none.
        assert game.over == (not list(game.legal_moves()))
        if game.over and not type(game).may_finish:
            assert game.won or not list(game._generate())  # over only when stuck
