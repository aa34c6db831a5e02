"""The full state of a game as typed, immutable values: what the solvers search.

    state = full_state(new_game("triple-deck", 7))
    state.piles[6].down        # face-down cards of pile 7
    state.stock[0]             # the next card to leave the stock

One frozen, slotted dataclass per game family: `PairingState` (Fourteen Out, Triple
Fourteens), `TriPeaksState` (Triple Triangle) and `TableauState` (the Triple Deck games and
Triple Easthaven). Everything is a tuple of `Card` values, bottom (or first) card first, and
the stock is always in drawing order. Each family builds its own (`Game.full_state`, a hook
of the family's class): nothing here reads a game's fields.

**Server and audit use only.** A full state holds the hidden cards (face-down cards and the
stock order), exactly like `Game.to_json`; never send it to a player (`Game.view` is theirs).
A player's copy built from a view does not know those cards: `full_state` refuses it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, TypeVar

from .cards import Card


@dataclass(frozen=True, slots=True)
class PairingState:
    """Fourteen Out and Triple Fourteens: every card is face up in its pile."""

    #: The cards still in each pile, bottom first (the top card is last).
    piles: tuple[tuple[Card, ...], ...]

    def cards(self) -> Iterator[Card]:
        """Every card still in play."""
        for pile in self.piles:
            yield from pile


@dataclass(frozen=True, slots=True)
class TriPeaksState:
    """Triple Triangle: the 28 tableau positions, the stock and the foundation pile."""

    #: The card at each position 0..27 (row by row, apexes first), None once it is played.
    tableau: tuple[Card | None, ...]
    #: The stock in drawing order: `stock[0]` is the next card drawn.
    stock: tuple[Card, ...]
    #: The foundation pile, bottom first: the last card is the top one plays build on.
    foundation: tuple[Card, ...]

    def cards(self) -> Iterator[Card]:
        """Every card of the deal: tableau, stock and foundation."""
        yield from (c for c in self.tableau if c is not None)
        yield from self.stock
        yield from self.foundation


@dataclass(frozen=True, slots=True)
class PileState:
    """A pile of a tableau game: its cards bottom first, the first `down` of them face down."""

    cards: tuple[Card, ...]
    down: int


@dataclass(frozen=True, slots=True)
class TableauState:
    """Triple Deck, Triple Deck with Kings and Triple Easthaven: Klondike-style piles."""

    piles: tuple[PileState, ...]
    #: The stock in drawing (or dealing) order: `stock[0]` leaves it first.
    stock: tuple[Card, ...]
    #: The waste, bottom first (its top card is last); always empty in Triple Easthaven.
    waste: tuple[Card, ...]
    #: Each foundation, bottom first, in the game's foundation order.
    foundations: tuple[tuple[Card, ...], ...]

    def cards(self) -> Iterator[Card]:
        """Every card of the deal: piles, stock, waste and foundations."""
        for pile in self.piles:
            yield from pile.cards
        yield from self.stock
        yield from self.waste
        for foundation in self.foundations:
            yield from foundation


GameState = PairingState | TriPeaksState | TableauState


def known_cards(cards: Iterable[Card | None]) -> tuple[Card, ...]:
    """The cards as a tuple; a hidden card (None: a player's copy) has no full state, so this
    raises ValueError. For the families' `Game.full_state` hooks."""
    given = tuple(cards)
    out = tuple(c for c in given if c is not None)
    if len(out) != len(given):
        raise ValueError("a player's copy has no full state: its hidden cards are unknown")
    return out


StateT_co = TypeVar("StateT_co", bound=GameState, covariant=True)
StateT = TypeVar("StateT", bound=GameState)


class HasFullState(Protocol[StateT_co]):
    """A game: each family's `Game.full_state` hook returns its own state type."""

    def full_state(self) -> StateT_co: ...


def full_state(game: HasFullState[StateT]) -> StateT:
    """The full state of `game`, hidden cards included (server and audit use only): its
    family's `Game.full_state` hook, typed by family (a `PairingGame` gives a `PairingState`).

    Raises ValueError for a player's copy built from a view (it does not know the hidden
    cards) and TypeError for a game class of no known family.
    """
    return game.full_state()


__all__ = [
    "GameState",
    "HasFullState",
    "PairingState",
    "PileState",
    "TableauState",
    "TriPeaksState",
    "full_state",
    "known_cards",
]
