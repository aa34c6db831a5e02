"""Cards: interned immutable values, written as in RULINGS.md (`10H`, `QS`, `AD`).

Identical cards of a multi-deck game are the very same object, so identity, equality and
hashing agree and a card costs one pointer.
"""

from __future__ import annotations

from typing import Final

SUITS: Final = "CDHS"
RANK_TEXT: Final = ("", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
QUEEN: Final = 12
KING: Final = 13


class Card:
    """A playing card. Build cards with `card(rank, suit)` or `parse_card(text)`."""

    __slots__ = ("code", "rank", "red", "suit", "text")

    rank: int
    suit: str
    red: bool
    code: int
    text: str

    def __init__(self, rank: int, suit: str) -> None:
        self.rank = rank
        self.suit = suit
        self.red = suit in "DH"
        self.code = SUITS.index(suit) * 13 + rank - 1
        self.text = RANK_TEXT[rank] + suit

    def __repr__(self) -> str:
        return f"Card({self.text})"

    def __str__(self) -> str:
        return self.text

    def __reduce__(self) -> tuple[object, tuple[int, str]]:
        return (card, (self.rank, self.suit))


_ALL: Final = [Card(rank, suit) for suit in SUITS for rank in range(1, 14)]
_BY_TEXT: Final = {c.text: c for c in _ALL}


def card(rank: int, suit: str) -> Card:
    """The interned card of this rank (1..13) and suit (C, D, H or S)."""
    if not 1 <= rank <= 13 or len(suit) != 1 or suit not in SUITS:
        raise ValueError(f"no such card: rank {rank!r}, suit {suit!r}")
    return _ALL[SUITS.index(suit) * 13 + rank - 1]


def parse_card(text: str) -> Card:
    """Parse `10H`, `qs`, `Ad`; raises ValueError for anything else."""
    found = _BY_TEXT.get(text.strip().upper())
    if found is None:
        raise ValueError(f"not a card: {text!r}")
    return found


def full_deck(ranks: range = range(1, 14)) -> list[Card]:
    """One deck in the canonical order used before shuffling: suits C, D, H, S; ranks ascending."""
    return [_ALL[s * 13 + r - 1] for s in range(4) for r in ranks]
