"""Following which dealt cards a racer has seen (`server.races.seen`), on the real engine."""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine import VARIANT_IDS, Game, new_game
from engine.views import json_map
from server.races.seen import Sightings, TrackingError, places_of

HIDDEN_VARIANTS = ("triple-triangle", "triple-deck", "triple-deck-kings", "triple-easthaven")
SEED = 5


def cards(view: Any) -> list[str]:
    """Every card written in a view, in order, "??" included (the variant's name left out)."""
    if isinstance(view, dict):
        return [c for k, v in view.items() if k != "variant" for c in cards(v)]
    if isinstance(view, list):
        return [c for v in view for c in cards(v)]
    return [view] if isinstance(view, str) else []


def face_up(game: Game, seen: Sightings) -> set[int]:
    """The labels of the cards face up in the game's view now."""
    places = places_of(json_map(game.to_json()))
    return {
        label
        for name, cards_ in places.items()
        for label, (_, up) in zip(seen.labels[name], cards_, strict=True)
        if up
    }


def held_back(game: Game, seen: Sightings, shown: set[int]) -> int:
    """How many cards the racer has seen that are not in `shown`."""
    assert not seen.hides or face_up(game, seen) <= seen.seen
    return len(seen.seen - shown)


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_random_play_with_undos_is_followed(variant: str) -> None:
    """Labels follow every move and undo; every card face up is among the racer's sightings,
    and `after` names exactly the labels first seen; the pairing games hide nothing at all."""
    for seed in range(1, 6):
        game, rng = new_game(variant, seed), random.Random(seed)
        seen = Sightings(game)
        assert seen.hides == (variant in HIDDEN_VARIANTS)
        for _ in range(150):
            moves = list(game.legal_moves())
            if not moves:
                break
            before = set(seen.seen)
            if game.can_undo() and rng.random() < 0.2:
                game.undo()
                new = seen.after(game, True)
            else:
                game.apply(rng.choice(moves))
                new = seen.after(game, False)
            assert new == seen.seen - before
            assert held_back(game, seen, seen.seen) == 0
        assert seen.dealt_up <= seen.seen


#: Cards one draw turns up: three to the waste, one to the foundation pile, one on each pile.
DRAWN = {"triple-triangle": 1, "triple-deck": 3, "triple-deck-kings": 3, "triple-easthaven": 12}


@pytest.mark.parametrize("variant", HIDDEN_VARIANTS)
def test_another_racers_draws_are_held_back_until_one_draws_them_too(variant: str) -> None:
    """Racer A draws twice, racer B not at all: of what A has seen, B has not seen exactly the
    cards A drew; once B has drawn the same cards (the same deal), B has seen all of them: the
    labels name the same physical cards in both games."""
    a, b = new_game(variant, SEED), new_game(variant, SEED)
    seen_a, seen_b = Sightings(a), Sightings(b)
    for _ in range(2):
        a.apply("d")
        seen_a.after(a, False)
    assert held_back(a, seen_a, seen_a.seen & seen_b.seen) == 2 * DRAWN[variant]
    b.apply("d")
    seen_b.after(b, False)
    assert held_back(a, seen_a, seen_a.seen & seen_b.seen) == DRAWN[variant]
    b.apply("d")
    seen_b.after(b, False)
    assert held_back(a, seen_a, seen_a.seen & seen_b.seen) == 0
    assert seen_a.seen == seen_b.seen


def test_a_move_no_move_makes_is_refused() -> None:
    game = new_game("triple-deck", SEED)
    seen = Sightings(game)
    game.apply("d")
    seen.after(game, False)
    with pytest.raises(TrackingError):
        seen.after(new_game("triple-deck", SEED + 1), False)  # another deal altogether
