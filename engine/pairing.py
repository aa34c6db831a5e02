"""Fourteen Out and Triple Fourteens: remove pairs of top cards whose values sum to 14."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from .cards import Card, parse_card
from .game import Game, pile_number
from .moves import Move, MoveResult, Transfer
from .snapshots import Snapshot
from .state import PairingState
from .views import PairingStateBody, PairingVariant, PairingViewBody, View, pairing_view

DISCARD = "f"


class PairingGame(Game):
    """All cards dealt face up into piles; a move removes two top cards summing to 14.

    Move text: two pile numbers, ``3 7`` (written smaller first).
    """

    id: ClassVar[PairingVariant]
    pile_sizes: ClassVar[tuple[int, ...]]

    _piles: list[tuple[Card, ...]]
    _heights: list[int]

    def _deal(self, cards: list[Card]) -> None:
        self._piles = []
        start = 0
        for size in self.pile_sizes:
            self._piles.append(tuple(cards[start : start + size]))
            start += size
        self._heights = [len(p) for p in self._piles]

    def _top(self, i: int) -> Card | None:
        h = self._heights[i]
        return self._piles[i][h - 1] if h else None

    @property
    def won(self) -> bool:
        return not any(self._heights)

    @property
    def cleared(self) -> int:
        return self.total_cards - sum(self._heights)

    def _snapshot(self) -> Snapshot:
        """The piles' heights (the cards never change place)."""
        return ("heights", tuple(self._heights))

    def _restore(self, snapshot: Snapshot) -> None:
        if snapshot[0] != "heights":
            raise ValueError(f"{self.id} takes no {snapshot[0]!r} snapshot")
        self._heights = list(snapshot[1])

    def full_state(self) -> PairingState:
        return PairingState(tuple(p[:h] for p, h in zip(self._piles, self._heights, strict=True)))

    def _generate(self) -> Iterator[Move]:
        tops = [(i, c.rank) for i, c in enumerate(map(self._top, range(len(self._piles)))) if c]
        for a, (i, ri) in enumerate(tops):
            for j, rj in tops[a + 1 :]:
                if ri + rj == 14:
                    yield Move(str(i + 1), str(j + 1))

    def _canonical(self, move: Move, text: str) -> Move:
        a = pile_number(move.src, len(self._piles))
        b = pile_number(move.dst, len(self._piles))
        if a is not None and b is not None and a > b and move.count == 1:
            return Move(move.dst, move.src)
        return move

    def _reason(self, move: Move) -> str | None:
        n = len(self._piles)
        a, b = pile_number(move.src, n), pile_number(move.dst, n)
        if a is None or b is None or move.count != 1:
            return f"name two piles from 1 to {n}, like '3 7'"
        if a == b:
            return "the two cards must come from different piles"
        ca, cb = self._top(a), self._top(b)
        if ca is None or cb is None:
            return f"pile {(a if ca is None else b) + 1} is empty"
        if ca.rank + cb.rank != 14:
            return f"{ca} and {cb} sum to {ca.rank + cb.rank}, not 14"
        return None

    def _do(self, move: Move) -> MoveResult:
        out = []
        for token in (move.src, move.dst):
            i = int(token) - 1
            top = self._top(i)
            assert top is not None
            self._heights[i] -= 1
            out.append(Transfer((top,), token, DISCARD))
        return MoveResult(str(move), tuple(out))

    def _is_over(self) -> bool:
        seen = [0] * 14
        for i in range(len(self._piles)):
            top = self._top(i)
            if top is not None:
                if seen[14 - top.rank]:
                    return False
                seen[top.rank] += 1
        return True

    def _removed(self) -> list[str]:
        return [c.text for i, p in enumerate(self._piles) for c in p[self._heights[i] :]]

    def _state_json(self) -> PairingStateBody:
        return {
            "piles": [
                [{"card": c.text, "up": True} for c in p[: self._heights[i]]]
                for i, p in enumerate(self._piles)
            ],
            "discard": self._removed(),  # the removed cards, pile by pile
        }

    def _view_json(self) -> PairingViewBody:
        return {
            "piles": [[c.text for c in p[: self._heights[i]]] for i, p in enumerate(self._piles)],
            "discard": self.cleared,
        }

    def _load_view(self, view: View) -> None:
        piles = pairing_view(view)["piles"]
        if len(piles) != len(self.pile_sizes):
            raise ValueError(f"{self.id} has {len(self.pile_sizes)} piles")
        self._piles = [tuple(parse_card(t) for t in p) for p in piles]
        self._heights = [len(p) for p in self._piles]


class FourteenOut(PairingGame):
    id = "fourteen-out"
    title = "Fourteen Out"
    pile_sizes = (5,) * 4 + (4,) * 8


class TripleFourteens(PairingGame):
    id = "triple-fourteens"
    title = "Triple Fourteens"
    decks = 3
    pile_sizes = (7,) * 12 + (6,) * 12
