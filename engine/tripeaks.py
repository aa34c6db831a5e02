"""Triple Triangle (Tri Peaks): play uncovered cards one rank above or below the foundation top.

Positions are numbered 1-28 row by row: apexes 1-3, then 4-9, 10-18 and the face-up bottom row
19-28. Move text: a position (``19``) plays that card; ``d`` draws the stock's top card.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar, Final

from .cards import Card, parse_card
from .errors import OutOfSync
from .game import HIDDEN, Game, card_or_hidden, card_text, pile_number
from .moves import Move, MoveResult, Reveal, Transfer
from .snapshots import Snapshot
from .state import TriPeaksState, known_cards
from .views import TriPeaksStateBody, TriPeaksVariant, TriPeaksViewBody, View, tripeaks_view

TABLEAU: Final = 28
DRAW: Final = "d"
FOUNDATION: Final = "f"


def _covering() -> tuple[tuple[int, ...], ...]:
    """For each position, the positions covering it (RULINGS.md, triple-triangle)."""
    cover: list[list[int]] = [[] for _ in range(TABLEAU)]
    for k in range(9):  # row 4 (18..27) covers row 3 (9..17)
        cover[9 + k] = [18 + k, 19 + k]
    for p in range(3):
        for i in range(2):  # row 3 covers row 2 (3..8)
            cover[3 + 2 * p + i] = [9 + 3 * p + i, 10 + 3 * p + i]
        cover[p] = [3 + 2 * p, 4 + 2 * p]  # row 2 covers the apexes
    return tuple(tuple(c) for c in cover)


COVERED_BY: Final = _covering()
COVERS: Final = tuple(
    tuple(q for q in range(TABLEAU) if p in COVERED_BY[q]) for p in range(TABLEAU)
)


def adjacent(a: int, b: int) -> bool:
    """One rank apart, with King and Ace adjacent."""
    return (a - b) % 13 in (1, 12)


class TriPeaks(Game):
    id: ClassVar[TriPeaksVariant] = "triple-triangle"
    title = "Triple Triangle (Tri Peaks)"

    _cards: list[Card | None]
    _present: list[bool]
    _stock: list[Card | None]  # next card to draw last
    _foundation: list[Card]

    def _deal(self, cards: list[Card]) -> None:
        self._cards = list(cards[:TABLEAU])
        self._present = [True] * TABLEAU
        self._foundation = [cards[TABLEAU]]
        self._stock = list(reversed(cards[TABLEAU + 1 :]))

    def _uncovered(self, pos: int) -> bool:
        present = self._present
        return not any(present[q] for q in COVERED_BY[pos])

    @property
    def won(self) -> bool:
        return not any(self._present)

    @property
    def cleared(self) -> int:
        return TABLEAU - sum(self._present)

    def _snapshot(self) -> Snapshot:
        return ("peaks", tuple(self._present), len(self._stock), len(self._foundation))

    def full_state(self) -> TriPeaksState:
        placed = tuple(zip(self._cards, self._present, strict=True))
        known_cards(c for c, up in placed if up)  # refuse a player's copy
        tableau = tuple(c if up else None for c, up in placed)
        return TriPeaksState(tableau, known_cards(reversed(self._stock)), tuple(self._foundation))

    def _restore(self, snapshot: Snapshot) -> None:
        if snapshot[0] != "peaks":
            raise ValueError(f"{self.id} takes no {snapshot[0]!r} snapshot")
        _, present, _stock_len, foundation_len = snapshot
        self._present = list(present)
        del self._foundation[foundation_len:]

    def _playable(self) -> Iterator[int]:
        top = self._foundation[-1].rank
        for pos in range(TABLEAU):
            if self._present[pos] and self._uncovered(pos):
                c = self._cards[pos]
                if c is not None and adjacent(c.rank, top):
                    yield pos

    def _generate(self) -> Iterator[Move]:
        for pos in self._playable():
            yield Move(str(pos + 1))
        if self._stock:
            yield Move(DRAW)

    def _reason(self, move: Move) -> str | None:
        if move.dst or move.count != 1:
            return "name one position from 1 to 28, or 'd' to draw"
        if move.src == DRAW:
            return None if self._stock else "the stock is empty"
        pos = pile_number(move.src, TABLEAU)
        if pos is None:
            return "name one position from 1 to 28, or 'd' to draw"
        if not self._present[pos]:
            return f"position {pos + 1} is empty"
        if not self._uncovered(pos):
            return f"position {pos + 1} is covered"
        c, top = self._cards[pos], self._foundation[-1]
        if c is None or not adjacent(c.rank, top.rank):
            return f"{c} is not one rank above or below {top}"
        return None

    def _do(self, move: Move) -> MoveResult:
        if move.src == DRAW:
            drawn = self._stock.pop()
            assert drawn is not None, "a player's copy cannot know the drawn card"
            self._foundation.append(drawn)
            return MoveResult(
                str(move), (Transfer((drawn,), "s", FOUNDATION),), (Reveal(drawn, FOUNDATION),)
            )
        pos = int(move.src) - 1
        c = self._cards[pos]
        assert c is not None
        self._present[pos] = False
        self._foundation.append(c)
        reveals = tuple(
            Reveal(self._cards[q], str(q + 1))
            for q in COVERS[pos]
            if self._present[q] and self._uncovered(q)
        )
        return MoveResult(str(move), (Transfer((c,), move.src, FOUNDATION),), reveals)

    def _learn(self, move: Move, reveals: Sequence[Reveal]) -> None:
        """A draw reveals the stock's next card; a play reveals the cards it uncovers."""
        if move.src == DRAW:
            if len(reveals) != 1 or not self._stock:
                raise OutOfSync("a draw reveals exactly the stock's next card")
            self._stock[-1] = reveals[0].card
            return
        for r in reveals:
            pos = pile_number(r.at, TABLEAU)
            if pos is None or not self._present[pos]:
                raise OutOfSync(f"nothing face down to reveal at {r.at!r}")
            self._cards[pos] = r.card

    def _is_over(self) -> bool:
        return not self._stock and next(self._playable(), None) is None

    def _state_json(self) -> TriPeaksStateBody:
        return {
            "tableau": [
                {"card": str(c), "up": self._uncovered(i)} if self._present[i] else None
                for i, c in enumerate(self._cards)
            ],
            "stock": [str(c) for c in reversed(self._stock)],
            "foundation": [c.text for c in self._foundation],
        }

    def _view_json(self) -> TriPeaksViewBody:
        return {
            "tableau": [
                (card_text(c) if self._uncovered(i) else HIDDEN) if self._present[i] else None
                for i, c in enumerate(self._cards)
            ],
            "stock": len(self._stock),
            "foundation": [c.text for c in self._foundation],
        }

    def _load_view(self, view: View) -> None:
        view = tripeaks_view(view)
        tableau = view["tableau"]
        if len(tableau) != TABLEAU:
            raise ValueError("a Tri Peaks tableau has 28 positions")
        self._present = [t is not None for t in tableau]
        self._cards = [card_or_hidden(t) for t in tableau]
        self._stock = [None] * int(view["stock"])
        self._foundation = [parse_card(t) for t in view["foundation"]]
