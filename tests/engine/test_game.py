"""Rules every variant shares: undo, illegal moves, move parsing, variants, events, and the
end of a game (outcome, over state)."""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest

from engine import (
    VARIANT_IDS,
    IllegalMove,
    Move,
    Outcome,
    OverState,
    Termination,
    UnknownVariant,
    from_view,
    new_game,
)
from engine.easthaven import TripleEasthaven
from engine.game import Game
from engine.tripledeck import TripleDeck

from .helpers import cards, fresh, random_play


def without_moves(state: Mapping[str, object]) -> dict[str, object]:
    return {k: v for k, v in state.items() if k != "moves"}


def test_six_variants() -> None:
    assert VARIANT_IDS == (
        "fourteen-out",
        "triple-fourteens",
        "triple-triangle",
        "triple-deck",
        "triple-deck-kings",
        "triple-easthaven",
    )
    with pytest.raises(UnknownVariant):
        new_game("klondike", 1)


def test_undo_restores_exact_state_and_counts_as_a_move() -> None:
    game = new_game("fourteen-out", 1)
    before = game.to_json()
    game.apply("1 7")
    game.apply("3 10")
    assert game.can_undo()
    result = game.undo()
    assert result.events() == [{"type": "undo"}]
    game.undo()
    assert without_moves(game.to_json()) == without_moves(before)
    assert game.moves == 4 and game.result()["moves"] == 4
    assert not game.can_undo()
    with pytest.raises(IllegalMove, match="no move to undo"):
        game.undo()


def test_undo_refused_after_turning_a_face_down_card() -> None:
    game = fresh(
        "triple-easthaven",
        _piles=[cards("2C AH")] + [cards("5C KD")] * 11,
        _down=[1] * 12,
        _stock=cards("QS"),
        _foundations=[[] for _ in range(12)],
    )
    game.apply("1 f")
    assert not game.can_undo() and game.view()["can_undo"] is False
    with pytest.raises(IllegalMove, match="revealed hidden cards"):
        game.undo()


@pytest.mark.parametrize(
    ("variant", "move"), [("triple-triangle", "d"), ("triple-deck", "d"), ("triple-easthaven", "d")]
)
def test_undo_refused_after_drawing_or_dealing(variant: str, move: str) -> None:
    game = new_game(variant, 1)
    game.apply(move)
    assert not game.can_undo()
    state = game.to_json()
    with pytest.raises(IllegalMove):
        game.undo()
    assert game.to_json() == state


def test_undo_only_reaches_back_to_the_last_reveal() -> None:
    game = new_game("triple-triangle", 1)  # 19 (7H) and 21 (7C) play on the 6H
    game.apply("19")
    assert game.can_undo()
    game.undo()
    game.apply("d")
    assert not game.can_undo()


def test_undo_not_allowed_once_the_game_is_over() -> None:
    game = fresh(
        "fourteen-out",
        _piles=[tuple(cards("KC")), tuple(cards("AH"))] + [()] * 10,
        _heights=[1, 1] + [0] * 10,
    )
    game.apply("1 2")
    assert game.over and not game.can_undo()
    with pytest.raises(IllegalMove, match="over"):
        game.undo()


@pytest.mark.parametrize(
    ("variant", "text", "reason"),
    [
        ("fourteen-out", "1 2", "sum to"),
        ("fourteen-out", "1 13", "name two piles"),
        ("fourteen-out", "x", "name two piles"),
        ("triple-triangle", "1", "covered"),
        ("triple-triangle", "29", "position from 1 to 28"),
        ("triple-deck", "w f", "waste is empty"),
        ("triple-deck", "1 2", "does not build on"),
        ("triple-deck", "1 8", "pile from 1 to 7"),
        ("triple-easthaven", "f 1", "foundations are empty"),
        ("triple-easthaven", "1 1", "same pile"),
        ("triple-easthaven", "1 2 3", "only 1 card"),
        ("triple-easthaven", "", "not a move"),
        ("triple-easthaven", "1 2 3 4", "not a move"),
        ("triple-easthaven", "1 2 0", "card count"),
    ],
)
def test_illegal_move_names_move_and_reason_and_changes_nothing(
    variant: str, text: str, reason: str
) -> None:
    game = new_game(variant, 1)
    state, view = game.to_json(), game.view()
    with pytest.raises(IllegalMove) as info:
        game.apply(text)
    assert reason in info.value.reason
    assert str(info.value) == f"illegal move {info.value.move_text!r}: {info.value.reason}"
    assert text.split()[:1] == info.value.move_text.split()[:1] or not text
    assert game.to_json() == state and game.view() == view and game.moves == 0


def test_move_text_round_trips() -> None:
    assert str(Move("3", "7")) == "3 7" and str(Move("d")) == "d"
    assert str(Move("3", "5", 2)) == "3 5 2" and str(Move("3", "5", 1, counted=True)) == "3 5 1"
    assert Move("3", "5", 1, counted=True) == Move("3", "5")
    assert Move.parse(" W  F ") == Move("w", "f")
    assert Move.parse("f8H 5") == Move("f8H", "5")


def test_tableau_count_one_onto_empty_pile_survives_the_log() -> None:
    """Regression: `3 5` alone means the whole run onto an empty pile, so one card is `3 5 1`."""
    game = fresh(
        "triple-easthaven",
        _piles=[cards("9S 8H"), []] + [cards("5C KD")] * 10,
        _down=[0, 0] + [1] * 10,
        _stock=cards("QS"),
        _foundations=[[] for _ in range(12)],
    )
    move = game.parse_move("1 2 1")
    assert str(move) == "1 2 1" and game.parse_move(str(move)) == move
    assert str(game.apply(move).move) == "1 2 1"


def test_events_of_a_tableau_move_with_reveal() -> None:
    game = fresh(
        "triple-deck",
        _piles=[cards("4C 8H"), cards("9S")] + [[]] * 5,
        _down=[1, 0, 0, 0, 0, 0, 0],
        _stock=cards("AS"),
        _waste=[],
        _foundations=[[] for _ in range(12)],
    )
    result = game.apply("1 2")
    assert result.events() == [
        {"type": "move", "cards": ["8H"], "from": "1", "to": "2"},
        {"type": "reveal", "card": "4C", "at": "1"},
    ]


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_result_and_view_keys(variant: str) -> None:
    game: Game = new_game(variant, 2)
    assert set(game.result()) == {"won", "over", "score", "cleared", "moves"}
    assert game.result() == {"won": False, "over": False, "score": 0, "cleared": 0, "moves": 0}
    assert game.view()["variant"] == variant and game.view()["can_undo"] is False
    assert game.to_json()["seed"] == 2


def test_seal_forgets_the_undo_snapshots_and_keeps_the_position() -> None:
    game = new_game("triple-deck", 3)
    for _ in range(6):
        game.apply(next(iter(game.legal_moves())))
    view, moves = game.view(), game.moves
    assert game.can_undo() or game._history[-1] is None
    game.seal()
    assert not game.can_undo() and game._history == []
    assert {k: v for k, v in game.view().items() if k != "can_undo"} == {
        k: v for k, v in view.items() if k != "can_undo"
    }
    assert game.moves == moves and game.view()["can_undo"] is False
    with pytest.raises(IllegalMove, match="no move to undo"):
        game.undo()


def test_outcome_is_none_while_the_game_goes_on_and_typed_at_its_end() -> None:
    game = fresh(
        "fourteen-out",
        _piles=[tuple(cards("KC")), tuple(cards("AH")), tuple(cards("QS"))] + [()] * 9,
        _heights=[1, 1, 1] + [0] * 9,
    )
    assert game.outcome() is None and game.result()["over"] is False
    game.apply("1 2")  # the Queen is left alone: a dead end
    outcome = game.outcome()
    assert outcome == Outcome(Termination.DEAD_END, game.score, game.cleared, 1)
    assert not outcome.won and outcome.to_json() == game.result()
    won = fresh(
        "fourteen-out",
        _piles=[tuple(cards("KC")), tuple(cards("AH"))] + [()] * 10,
        _heights=[1, 1] + [0] * 10,
    )
    won.apply("1 2")
    outcome = won.outcome()
    assert outcome is not None and outcome.termination is Termination.WON and outcome.won
    assert outcome.to_json() == won.result() == {**won.result(), "won": True, "over": True}


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_outcome_agrees_with_the_result_map_through_play(variant: str) -> None:
    rng = random.Random(variant)
    for seed in range(3):
        game = new_game(variant, seed)
        random_play(game, rng, 400, undo_chance=0.05)
        outcome = game.outcome()
        if outcome is None:
            assert not game.result()["over"]
        else:
            assert outcome.to_json() == game.result()


def state(game: Game) -> OverState:
    """`game.over_state` (a call: mypy keeps no narrowing of it from one line to the next)."""
    return game.over_state


def test_one_over_state_replaces_the_flag_and_the_deferral_mark() -> None:
    game = new_game("triple-deck", 1)
    assert state(game) is OverState.UNJUDGED
    assert not game.over and state(game) is OverState.LIVE  # judged
    game.defer_over()
    assert state(game) is OverState.DEFERRED and not game.over  # answered, not judged
    assert state(game) is OverState.DEFERRED
    game.apply(next(iter(game.legal_moves())))  # a move ends the deferral
    assert state(game) in (OverState.UNJUDGED, OverState.LIVE)
    game.settle_over(True)
    assert state(game) is OverState.OVER and game.over and not game.can_undo()
    game.settle_over(False)
    assert state(game) is OverState.LIVE and game.can_undo() is bool(game._history[-1])
    view = game.view()
    view["over"] = True
    assert state(from_view(view)) is OverState.OVER  # the server's verdict stands


def test_a_family_restores_only_its_own_snapshots() -> None:
    """The snapshot union is closed: a tag of another variant is refused, not misread."""
    easthaven = new_game("triple-easthaven", 1)
    assert isinstance(easthaven, TripleEasthaven)
    with pytest.raises(ValueError, match="'draw' snapshot"):
        easthaven._restore(("draw", 3, 4))
    deck = new_game("triple-deck", 1)
    assert isinstance(deck, TripleDeck)
    snapshot = deck._snapshot()
    assert snapshot[0] == "deck"
    before = deck.to_json()
    deck.apply("d")
    deck._restore(snapshot)
    assert without_moves(deck.to_json()) == without_moves(before)
