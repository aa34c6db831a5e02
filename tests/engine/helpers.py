"""Shared helpers for the engine tests: card multisets from JSON, crafted positions, random play."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from typing import TypeVar

from engine import Game, OverState, new_game
from engine.cards import Card, full_deck, parse_card
from engine.game import HIDDEN
from engine.views import (
    EASTHAVEN_VARIANTS,
    PAIRING_VARIANTS,
    TRIPEAKS_VARIANTS,
    TRIPLE_DECK_VARIANTS,
    EasthavenStateJson,
    Event,
    OrientedCard,
    PairingStateJson,
    StateJson,
    TriPeaksStateJson,
    TripleDeckStateJson,
)

G = TypeVar("G", bound=Game)

#: Keys of the full state whose cards the player never sees.
HIDDEN_KEYS = frozenset({"stock"})


def C(text: str) -> Card:
    """A card from its text."""
    return parse_card(text)


def cards(texts: str) -> list[Card]:
    """Cards from space-separated texts."""
    return [parse_card(t) for t in texts.split()]


def _is_card(text: str) -> bool:
    try:
        parse_card(text)
    except ValueError:
        return False
    return True


def state_cards(state: Mapping[str, object]) -> Counter[str]:
    """Every card text anywhere in a `to_json()` state (face-down, stock, discard included)."""
    out: Counter[str] = Counter()

    def walk(value: object, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k != "variant":
                    walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and _is_card(value):
            out[value] += 1

    walk(state)
    return out


def visible_cards(state: Mapping[str, object]) -> Counter[str]:
    """The cards of a full state that a player may see: face up, waste and foundations.

    The pairing games' discard is public but the view reports only its size, so it is left out.
    """
    out: Counter[str] = Counter()
    for key, value in state.items():
        if key in HIDDEN_KEYS or key in ("variant", "discard"):
            continue
        out += _visible_in(value)
    return out


def _visible_in(value: object) -> Counter[str]:
    out: Counter[str] = Counter()
    if isinstance(value, dict):
        if "card" in value and "up" in value:
            if value["up"]:
                out[str(value["card"])] += 1
            return out
        for v in value.values():
            out += _visible_in(v)
    elif isinstance(value, list):
        for v in value:
            out += _visible_in(v)
    elif isinstance(value, str) and _is_card(value):
        out[value] += 1
    return out


def view_cards(view: Mapping[str, object]) -> Counter[str]:
    """Every card text in a view (`??` and other strings are not cards)."""
    return state_cards(view)


def hidden_count(state: Mapping[str, object]) -> int:
    """Face-down cards plus stock cards of a full state."""
    stock = state.get("stock")
    total = len(stock) if isinstance(stock, list) else 0

    def walk(value: object) -> int:
        if isinstance(value, dict):
            if "card" in value and "up" in value:
                return 0 if value["up"] else 1
            return sum(walk(v) for v in value.values())
        if isinstance(value, list):
            return sum(walk(v) for v in value)
        return 0

    return total + sum(walk(v) for k, v in state.items() if k != "stock")


def view_hidden_count(view: Mapping[str, object]) -> int:
    """Hidden cards a view accounts for: `??` entries, pile `down` counts and the stock size."""
    stock = view.get("stock", 0)
    assert isinstance(stock, int)  # a view's stock is its size
    total = stock
    tableau = view.get("tableau")
    if isinstance(tableau, list):
        total += sum(1 for t in tableau if t == HIDDEN)
    piles = view.get("piles")
    if isinstance(piles, list) and piles and isinstance(piles[0], dict):
        total += sum(int(p["down"]) for p in piles)
    return total


def deck(variant_cls: type[Game]) -> Counter[str]:
    """The variant's full card multiset."""
    return Counter(c.text for c in full_deck(variant_cls.ranks) * variant_cls.decks)


def fresh(variant: str, **state: object) -> Game:
    """A game of `variant` (seed 1) with private state attributes overwritten."""
    game = new_game(variant, 1)
    for name, value in state.items():
        setattr(game, name, value)
    game._history = []
    game._verdict = OverState.UNJUDGED
    return game


def as_kind(game: Game, kind: type[G]) -> G:
    """`game` as the game family (class) the test built it as."""
    assert isinstance(game, kind), f"{type(game).__name__} is not a {kind.__name__}"
    return game


def new_as(kind: type[G], variant: str, seed: object) -> G:
    """`new_game(variant, seed)` as the game family `kind` the variant belongs to."""
    return as_kind(new_game(variant, seed), kind)


def fresh_as(kind: type[G], variant: str, **state: object) -> G:
    """`fresh(variant, **state)` as the game family `kind` the variant belongs to."""
    return as_kind(fresh(variant, **state), kind)


# A full state narrowed to its family by its `variant`, like `engine.views.pairing_view` does
# for views: AssertionError when the state is another family's.


def pairing_state(state: StateJson) -> PairingStateJson:
    """`state` as a pairing game's full state."""
    assert state["variant"] in PAIRING_VARIANTS, state["variant"]
    return state


def tripeaks_state(state: StateJson) -> TriPeaksStateJson:
    """`state` as a Tri Peaks full state."""
    assert state["variant"] in TRIPEAKS_VARIANTS, state["variant"]
    return state


def tableau_state(state: StateJson) -> TripleDeckStateJson | EasthavenStateJson:
    """`state` as a tableau game's full state (the Triple Deck games or Triple Easthaven)."""
    assert state["variant"] in TRIPLE_DECK_VARIANTS or state["variant"] in EASTHAVEN_VARIANTS
    return state


def easthaven_state(state: StateJson) -> EasthavenStateJson:
    """`state` as a Triple Easthaven full state."""
    assert state["variant"] in EASTHAVEN_VARIANTS, state["variant"]
    return state


def triple_deck_state(state: StateJson) -> TripleDeckStateJson:
    """`state` as a Triple Deck full state (with its waste)."""
    assert state["variant"] in TRIPLE_DECK_VARIANTS, state["variant"]
    return state


def revealed(events: list[Event]) -> list[str | None]:
    """The cards of move events that must all be reveals."""
    out: list[str | None] = []
    for event in events:
        assert event["type"] == "reveal", event
        out.append(event["card"])
    return out


def placed(tableau: list[OrientedCard | None]) -> list[OrientedCard]:
    """A Tri Peaks state's tableau where every position must still hold a card (a deal)."""
    out = [entry for entry in tableau if entry is not None]
    assert len(out) == len(tableau), "a position was played"
    return out


def random_play(
    game: Game, rng: random.Random, max_moves: int, undo_chance: float = 0.15
) -> list[str]:
    """Play random legal moves (and some undos); returns the log as text lines."""
    log: list[str] = []
    for _ in range(max_moves):
        if game.over:
            break
        if game.can_undo() and rng.random() < undo_chance:
            game.undo()
            log.append("undo")
            continue
        moves = list(game.legal_moves())
        move = rng.choice(moves)
        game.apply(move)
        log.append(str(move))
    return log
