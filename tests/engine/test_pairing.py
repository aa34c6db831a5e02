"""Fourteen Out and Triple Fourteens: deal layout, pairs summing to 14, top cards only, end."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import pytest

from engine import IllegalMove, Move, new_game, shuffled_cards
from engine.cards import Card
from engine.pairing import PairingGame
from engine.views import pairing_view

from .helpers import cards, deck, fresh_as, pairing_state, state_cards

LAYOUTS = {"fourteen-out": [5] * 4 + [4] * 8, "triple-fourteens": [7] * 12 + [6] * 12}


def pairing(variant: str, piles: list[str]) -> PairingGame:
    """A pairing game whose piles are given bottom first, e.g. ["2C 7H", "", "7D"]."""
    n = len(LAYOUTS[variant])
    built = [tuple(cards(p)) for p in piles] + [()] * (n - len(piles))
    return fresh_as(PairingGame, variant, _piles=built, _heights=[len(p) for p in built])


@pytest.mark.parametrize("variant", sorted(LAYOUTS))
@pytest.mark.parametrize("seed", [0, 1, 977])
def test_deal_layout_all_face_up(variant: str, seed: int) -> None:
    game = new_game(variant, seed)
    state = pairing_state(game.to_json())
    assert [len(p) for p in state["piles"]] == LAYOUTS[variant]
    assert all(entry["up"] for pile in state["piles"] for entry in pile)
    assert state_cards(state) == deck(type(game))
    # Dealt in order from the shuffled deck, pile 1 first, each pile bottom first.
    order = shuffled_cards(variant, seed, type(game).decks, type(game).ranks)
    flat = [entry["card"] for pile in state["piles"] for entry in pile]
    assert flat == [c.text for c in order]
    assert pairing_view(game.view())["piles"] == [[e["card"] for e in p] for p in state["piles"]]


def test_triple_fourteens_uses_three_decks() -> None:
    counts = state_cards(new_game("triple-fourteens", 5).to_json())
    assert len(counts) == 52 and set(counts.values()) == {3}


@pytest.mark.parametrize("variant", sorted(LAYOUTS))
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("AC", "KD"),
        ("2H", "QS"),
        ("3D", "JC"),
        ("4S", "10H"),
        ("5C", "9C"),
        ("6D", "8H"),
        ("7H", "7S"),
        ("7C", "7C"),
    ],
)
def test_pairs_summing_to_14_are_removed(variant: str, a: str, b: str) -> None:
    game = pairing(variant, ["2D " + a, "5H " + b])
    assert {str(m) for m in game.legal_moves()} == {"1 2"}
    before = game.cleared
    result = game.apply("1 2")
    assert pairing_state(game.to_json())["piles"][0] == [{"card": "2D", "up": True}]
    assert pairing_state(game.to_json())["piles"][1] == [{"card": "5H", "up": True}]
    assert game.cleared == before + 2 == game.score and game.moves == 1
    assert result.events() == [
        {"type": "move", "cards": [a], "from": "1", "to": "f"},
        {"type": "move", "cards": [b], "from": "2", "to": "f"},
    ]


@pytest.mark.parametrize(("a", "b"), [("7H", "8S"), ("KC", "KD"), ("AC", "QD"), ("6C", "6D")])
def test_pairs_not_summing_to_14_are_illegal(a: str, b: str) -> None:
    game = pairing("fourteen-out", [a, b, "5S", "9D"])
    assert [str(m) for m in game.legal_moves()] == ["3 4"]
    with pytest.raises(IllegalMove, match="not 14"):
        game.apply("1 2")


def test_same_pile_is_not_allowed() -> None:
    game = pairing("fourteen-out", ["7C 7D", "KS", "AS"])
    assert [str(m) for m in game.legal_moves()] == ["2 3"]
    with pytest.raises(IllegalMove, match="different piles"):
        game.apply("1 1")
    game.apply("2 3")
    assert game.over


def test_only_top_cards_pair() -> None:
    game = pairing("fourteen-out", ["KC 5D", "AH 2C", "9S", "QH"])
    assert [str(m) for m in game.legal_moves()] == ["1 3", "2 4"]
    with pytest.raises(IllegalMove, match="sum to 7"):
        game.apply("1 2")


def test_empty_piles_stay_empty() -> None:
    game = pairing("fourteen-out", ["KC", "AH", "6D", "8S 9S", "5C"])
    game.apply("1 2")
    assert (
        pairing_state(game.to_json())["piles"][0] == []
        and pairing_state(game.to_json())["piles"][1] == []
    )
    with pytest.raises(IllegalMove, match="pile 1 is empty"):
        game.apply("1 4")
    game.apply("4 5")
    game.apply("3 4")
    assert game.won
    assert all(p == [] for p in pairing_state(game.to_json())["piles"])
    # Nothing is ever put back: no move can target the emptied piles.
    game2 = pairing("fourteen-out", ["KC", "AH", "3S 6D", "8S"])
    game2.apply("1 2")
    assert [str(m) for m in game2.legal_moves()] == ["3 4"]


def test_written_smaller_pile_first() -> None:
    game = pairing("fourteen-out", ["KC", "3D", "AH"])
    move = game.parse_move("3 1")
    assert move == Move("1", "3") and str(move) == "1 3"


def test_won_when_all_removed_and_over_when_no_pair() -> None:
    game = pairing("fourteen-out", ["6H 5C", "9C", "8D"])
    assert not game.over
    game.apply("1 2")
    assert not game.won and not game.over
    game.apply("1 3")
    assert game.won and game.over and game.cleared == game.total_cards == 52
    stuck = pairing("fourteen-out", ["5C 9H", "8D"])
    assert stuck.over and not stuck.won and list(stuck.legal_moves()) == []
    with pytest.raises(IllegalMove, match="over"):
        stuck.apply("1 2")


def test_seven_plus_seven_ends_game_only_when_paired() -> None:
    assert not pairing("fourteen-out", ["7C", "7C"]).over
    assert pairing("fourteen-out", ["7C", "6C"]).over


@pytest.mark.parametrize("variant", sorted(LAYOUTS))
def test_legal_moves_match_brute_force(variant: str) -> None:
    rng = random.Random(7)
    for seed in range(15):
        game = new_game(variant, seed)
        while not game.over:
            tops: list[tuple[int, Card]] = []
            for i, pile in enumerate(pairing_state(game.to_json())["piles"]):
                if pile:
                    tops.append((i, cards(pile[-1]["card"])[0]))
            expected = {
                f"{i + 1} {j + 1}"
                for (i, a), (j, b) in combinations(tops, 2)
                if a.rank + b.rank == 14
            }
            assert {str(m) for m in game.legal_moves()} == expected
            assert game.over == (not expected)
            if not expected:
                break
            game.apply(rng.choice(sorted(expected)))
        assert game.over


def test_discard_lists_removed_cards() -> None:
    game = pairing("fourteen-out", ["2D KC", "AH"])
    game.apply("1 2")
    assert Counter(pairing_state(game.to_json())["discard"]) == Counter(["KC", "AH"])
    assert pairing_view(game.view())["discard"] == game.cleared
