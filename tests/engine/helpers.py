"""Shared helpers for the engine tests: card multisets from JSON, crafted positions, random play."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from engine import Game, new_game
from engine.cards import Card, full_deck, parse_card
from engine.game import HIDDEN

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


def state_cards(state: Any) -> Counter[str]:
    """Every card text anywhere in a `to_json()` state (face-down, stock, discard included)."""
    out: Counter[str] = Counter()

    def walk(value: Any, key: str = "") -> None:
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


def visible_cards(state: dict[str, Any]) -> Counter[str]:
    """The cards of a full state that a player may see: face up, waste and foundations.

    The pairing games' discard is public but the view reports only its size, so it is left out.
    """
    out: Counter[str] = Counter()
    for key, value in state.items():
        if key in HIDDEN_KEYS or key in ("variant", "discard"):
            continue
        out += _visible_in(value)
    return out


def _visible_in(value: Any) -> Counter[str]:
    out: Counter[str] = Counter()
    if isinstance(value, dict):
        if "card" in value and "up" in value:
            if value["up"]:
                out[value["card"]] += 1
            return out
        for v in value.values():
            out += _visible_in(v)
    elif isinstance(value, list):
        for v in value:
            out += _visible_in(v)
    elif isinstance(value, str) and _is_card(value):
        out[value] += 1
    return out


def view_cards(view: dict[str, Any]) -> Counter[str]:
    """Every card text in a view (`??` and other strings are not cards)."""
    return state_cards(view)


def hidden_count(state: dict[str, Any]) -> int:
    """Face-down cards plus stock cards of a full state."""
    total = len(state.get("stock", [])) if isinstance(state.get("stock"), list) else 0

    def walk(value: Any) -> int:
        if isinstance(value, dict):
            if "card" in value and "up" in value:
                return 0 if value["up"] else 1
            return sum(walk(v) for v in value.values())
        if isinstance(value, list):
            return sum(walk(v) for v in value)
        return 0

    return total + sum(walk(v) for k, v in state.items() if k != "stock")


def view_hidden_count(view: dict[str, Any]) -> int:
    """Hidden cards a view accounts for: `??` entries, pile `down` counts and the stock size."""
    total = int(view.get("stock", 0))
    if "tableau" in view:
        total += sum(1 for t in view["tableau"] if t == HIDDEN)
    if "piles" in view and view["piles"] and isinstance(view["piles"][0], dict):
        total += sum(int(p["down"]) for p in view["piles"])
    return total


def deck(variant_cls: type[Game]) -> Counter[str]:
    """The variant's full card multiset."""
    return Counter(c.text for c in full_deck(variant_cls.ranks) * variant_cls.decks)


def fresh(variant: str, **state: Any) -> Game:
    """A game of `variant` (seed 1) with private state attributes overwritten."""
    game = new_game(variant, 1)
    for name, value in state.items():
        setattr(game, name, value)
    game._history = []
    game._over = None
    return game


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
