"""Moves and what they did, as small immutable values with a text form.

A move's text is one to three whitespace-separated tokens: a source, an optional destination and
an optional card count, e.g. ``3 7``, ``19``, ``d``, ``w f``, ``3 5 2``, ``f8H 4``. `Move.parse`
reads the syntax only; a game's `parse_move` checks it against the variant and the position.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Final

from .cards import Card
from .errors import IllegalMove
from .views import Event, MoveEvent, RevealEvent

_TOKEN: Final = re.compile(r"^[A-Za-z0-9]{1,4}$")
UNDO: Final = "undo"


@dataclass(frozen=True, slots=True)
class Move:
    """A move: source, destination ("" when the variant needs none) and card count.

    `counted` (ignored by equality) writes the count even when it is 1: pile-to-pile moves of
    the tableau games are written ``3 5 1`` because their short form ``3 5`` may mean more cards.
    """

    src: str
    dst: str = ""
    count: int = 1
    counted: bool = field(default=False, compare=False, repr=False)

    def __str__(self) -> str:
        text = f"{self.src} {self.dst}" if self.dst else self.src
        return f"{text} {self.count}" if self.count != 1 or self.counted else text

    @classmethod
    def parse(cls, text: str) -> Move:
        """Parse the text form; raises IllegalMove when it is not well formed."""
        tokens = text.split()
        if not 1 <= len(tokens) <= 3 or not all(_TOKEN.match(t) for t in tokens):
            raise IllegalMove(text, "not a move: expected 1 to 3 tokens like '3 7', 'd' or '3 5 2'")
        count = 1
        if len(tokens) == 3:
            if not tokens[2].isdigit() or not 1 <= int(tokens[2]) <= 52:
                raise IllegalMove(text, "the card count must be a number from 1 to 52")
            count = int(tokens[2])
        return cls(tokens[0].lower() if tokens[0].isalpha() else tokens[0],
                   tokens[1].lower() if len(tokens) > 1 else "", count)


@functools.lru_cache(maxsize=4096)
def parse_text(text: str) -> Move:
    """`Move.parse`, remembered: the same few texts come again and again (a move is a
    value, so sharing one is safe); a text that is not a move raises every time."""
    return Move.parse(text)


@functools.lru_cache(maxsize=4096)
def token_count(text: str) -> int:
    """How many whitespace-separated tokens a move's text has (short forms have fewer)."""
    return len(text.split())


@dataclass(frozen=True, slots=True)
class Transfer:
    """Cards that went from one place to another (places as in the view: ``3``, ``w``, ``f``...)."""

    cards: tuple[Card, ...]
    src: str
    dst: str

    def to_json(self) -> MoveEvent:
        return {"type": "move", "cards": [c.text for c in self.cards],
                "from": self.src, "to": self.dst}


@dataclass(frozen=True, slots=True)
class Reveal:
    """A card turned face up at a place; `card` is None on a client copy that cannot know it."""

    card: Card | None
    at: str

    def to_json(self) -> RevealEvent:
        return {"type": "reveal", "card": self.card.text if self.card else None, "at": self.at}


@dataclass(frozen=True, slots=True)
class MoveResult:
    """What applying a move (or an undo) did."""

    move: str
    transfers: tuple[Transfer, ...] = ()
    reveals: tuple[Reveal, ...] = ()
    undo: bool = False
    #: Events of no transfer or reveal (Triple Deck's recycle), between the moves and reveals.
    extra: tuple[Event, ...] = field(default=())

    @property
    def revealed_hidden(self) -> bool:
        return bool(self.reveals)

    def events(self) -> list[Event]:
        """The move as a list of JSON-able events, in the order they happened."""
        out: list[Event] = []
        if self.undo:
            out.append({"type": "undo"})
        out.extend(t.to_json() for t in self.transfers)
        out.extend(self.extra)
        out.extend(r.to_json() for r in self.reveals)
        return out
