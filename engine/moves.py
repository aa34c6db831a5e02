"""Moves and what they did, as small immutable values with a text form.

A move's text is one to three whitespace-separated tokens: a source, an optional destination and
an optional card count, e.g. ``3 7``, ``19``, ``d``, ``w f``, ``3 5 2``, ``f8H 4``. `Move.parse`
reads the syntax only; a game's `parse_move` checks it against the variant and the position.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from .cards import Card
from .errors import IllegalMove
from .views import Event, MoveEvent, RevealEvent

_TOKEN: Final = re.compile(r"^[A-Za-z0-9]{1,4}$")
UNDO: Final = "undo"


class Move:
    """A move: source, destination ("" when the variant needs none) and card count.

    `counted` (ignored by equality) writes the count even when it is 1: pile-to-pile moves of
    the tableau games are written ``3 5 1`` because their short form ``3 5`` may mean more cards.
    """

    # The move path's value classes are plain classes with read-only (Final) attributes rather
    # than frozen dataclasses: compiled (setup.py), one is built in ~25 ns instead of ~360 (a
    # frozen dataclass's __init__ sets each field through object.__setattr__).
    __slots__ = ("count", "counted", "dst", "src")

    def __init__(self, src: str, dst: str = "", count: int = 1, counted: bool = False) -> None:
        self.src: Final = src
        self.dst: Final = dst
        self.count: Final = count
        self.counted: Final = counted

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Move):
            return NotImplemented
        return self.src == other.src and self.dst == other.dst and self.count == other.count

    def __hash__(self) -> int:
        return hash((self.src, self.dst, self.count))

    def __repr__(self) -> str:
        return f"Move(src={self.src!r}, dst={self.dst!r}, count={self.count!r})"

    # Copies and pickles go through the constructor: compiled, these classes have no
    # no-argument construction for the default protocol to fill in.
    def __reduce__(self) -> tuple[type[Move], tuple[str, str, int, bool]]:
        return Move, (self.src, self.dst, self.count, self.counted)

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
        return cls(
            tokens[0].lower() if tokens[0].isalpha() else tokens[0],
            tokens[1].lower() if len(tokens) > 1 else "",
            count,
        )


@functools.lru_cache(maxsize=4096)
def parse_text(text: str) -> Move:
    """`Move.parse`, remembered: the same few texts come again and again (a move is a
    value, so sharing one is safe); a text that is not a move raises every time."""
    return Move.parse(text)


@functools.lru_cache(maxsize=4096)
def token_count(text: str) -> int:
    """How many whitespace-separated tokens a move's text has (short forms have fewer)."""
    return len(text.split())


class Transfer:
    """Cards that went from one place to another (places as in the view: ``3``, ``w``, ``f``...)."""

    __slots__ = ("cards", "dst", "src")

    def __init__(self, cards: tuple[Card, ...], src: str, dst: str) -> None:
        self.cards: Final = cards
        self.src: Final = src
        self.dst: Final = dst

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Transfer):
            return NotImplemented
        return self.cards == other.cards and self.src == other.src and self.dst == other.dst

    def __hash__(self) -> int:
        return hash((self.cards, self.src, self.dst))

    def __repr__(self) -> str:
        return f"Transfer(cards={self.cards!r}, src={self.src!r}, dst={self.dst!r})"

    def __reduce__(self) -> tuple[type[Transfer], tuple[tuple[Card, ...], str, str]]:
        return Transfer, (self.cards, self.src, self.dst)

    def to_json(self) -> MoveEvent:
        return {
            "type": "move",
            "cards": [c.text for c in self.cards],
            "from": self.src,
            "to": self.dst,
        }


class Reveal:
    """A card turned face up at a place; `card` is None on a client copy that cannot know it."""

    __slots__ = ("at", "card")

    def __init__(self, card: Card | None, at: str) -> None:
        self.card: Final = card
        self.at: Final = at

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Reveal):
            return NotImplemented
        return self.card is other.card and self.at == other.at

    def __hash__(self) -> int:
        return hash((self.card, self.at))

    def __repr__(self) -> str:
        return f"Reveal(card={self.card!r}, at={self.at!r})"

    def __reduce__(self) -> tuple[type[Reveal], tuple[Card | None, str]]:
        return Reveal, (self.card, self.at)

    def to_json(self) -> RevealEvent:
        return {"type": "reveal", "card": self.card.text if self.card else None, "at": self.at}


class MoveResult:
    """What applying a move (or an undo) did: `transfers`, then `extra` events (Triple Deck's
    recycle, no transfer or reveal), then `reveals`."""

    __slots__ = ("extra", "move", "reveals", "transfers", "undo")

    def __init__(
        self,
        move: str,
        transfers: tuple[Transfer, ...] = (),
        reveals: tuple[Reveal, ...] = (),
        undo: bool = False,
        extra: tuple[Event, ...] = (),
    ) -> None:
        self.move: Final = move
        self.transfers: Final = transfers
        self.reveals: Final = reveals
        self.undo: Final = undo
        self.extra: Final = extra

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MoveResult):
            return NotImplemented
        return (
            self.move == other.move
            and self.transfers == other.transfers
            and self.reveals == other.reveals
            and self.undo == other.undo
            and self.extra == other.extra
        )

    __hash__ = None  # type: ignore[assignment]  # `extra` holds dicts, as a dataclass's would

    def __repr__(self) -> str:
        return (
            f"MoveResult(move={self.move!r}, transfers={self.transfers!r}, "
            f"reveals={self.reveals!r}, undo={self.undo!r}, extra={self.extra!r})"
        )

    def __reduce__(
        self,
    ) -> tuple[
        type[MoveResult],
        tuple[str, tuple[Transfer, ...], tuple[Reveal, ...], bool, tuple[Event, ...]],
    ]:
        return MoveResult, (self.move, self.transfers, self.reveals, self.undo, self.extra)

    @property
    def revealed_hidden(self) -> bool:
        return bool(self.reveals)

    def events(self) -> list[Event]:
        """The move as a list of JSON-able events, in the order they happened."""
        out: list[Event] = []
        if self.undo:
            out.append({"type": "undo"})
        for t in self.transfers:
            out.append(t.to_json())
        out.extend(self.extra)
        for r in self.reveals:
            out.append(r.to_json())
        return out
