"""Triple Easthaven: a greedy best-first search that looks for a win (it never proves a loss).

The depth-first search of `engine.solvers.easthaven.search` commits to its early moves: a deal it
could win by a different arrangement before the second stock deal is lost in the millions of
positions below the first. This search instead keeps every position it has seen in one queue
ordered by an estimate of the work left and always expands the most promising one, so it can
drop a hopeless branch at any depth. It shares the depth-first search's move generation
(forced foundation plays, the run rules, foundation returns only onto a run head's slot):
those cuts may lose wins but never make a line illegal, and every line found is replayed
through the engine before it is returned.

Positions are packed into bytes (`_pack`): the queue holds hundreds of thousands of them.
"""

from __future__ import annotations

import heapq
from typing import Final

from ...easthaven import PILES
from ...state import TableauState
from ..base import Budget
from .search import BACK, FIT, PILE, SLOT, UP, EasthavenSearch, SearchMove

#: Weights of the estimate: a face-down card costs more than a card off the foundations
#: (it hides what lies under it), and a break in a pile (a card that does not build on the
#: one beneath) costs one: a break must be undone before the cards under it can go up.
DOWN_WEIGHT: Final = 3
#: The queue is cut back to its best `QUEUE_KEEP` entries whenever it holds twice as many
#: (memory; the entries dropped are the least promising ones).
QUEUE_KEEP: Final = 300_000
_FC: Final = 13  # offset of the foundation counts in a packed position
_PILES_AT: Final = _FC + 56


class BestFirst:
    """One best-first search from a starting position; `run` returns the winning line."""

    __slots__ = ("base_stock", "budget", "search")

    def __init__(self, state: TableauState, total: int, budget: Budget) -> None:
        self.search = EasthavenSearch(state, total, budget)
        self.search.load()
        self.base_stock = list(self.search.stock)  # the whole stock, next card last
        self.budget = budget

    def pack(self) -> bytes:
        """The current position of `search` as bytes: face-down counts, stock size, the
        foundation counts per suit and height, then each pile's size and cards."""
        s = self.search
        out = bytearray(s.down)
        out.append(len(s.stock))
        for row in s.fc:
            out += bytes(row)
        for pile in s.piles:
            out.append(len(pile))
            out += bytes(pile)
        return bytes(out)

    def unpack(self, packed: bytes) -> None:
        """Load a packed position into `search`."""
        s = self.search
        s.down = list(packed[:PILES])
        s.stock = self.base_stock[: packed[PILES]]
        s.fc = [list(packed[_FC + 14 * k : _FC + 14 * k + 14]) for k in range(4)]
        s.on_found = sum(h * n for row in s.fc for h, n in enumerate(row))
        piles, at = [], _PILES_AT
        for _ in range(PILES):
            n = packed[at]
            piles.append(list(packed[at + 1 : at + 1 + n]))
            at += 1 + n
        s.piles = piles

    def pile_breaks(self, i: int) -> int:
        """Breaks in pile i's face-up cards: cards that do not build on the one beneath."""
        s = self.search
        pile = s.piles[i]
        breaks = 0
        for k in range(s.down[i] + 1, len(pile)):
            if FIT[pile[k]] != SLOT[pile[k - 1]]:
                breaks += 1
        return breaks

    def estimate(self, breaks: int) -> int:
        """Work left, roughly: cards off the foundations (stock included), face-down cards
        (weighted) and `breaks` between face-up cards; stock cards count as breaks too, so a
        deal is not penalised for the cards it lays on the piles."""
        s = self.search
        return s.total - s.on_found + DOWN_WEIGHT * sum(s.down) + len(s.stock) + breaks

    def key(self, packed: bytes) -> int:
        """The position's identity in this search: the hash of its packed form, with the
        piles sorted once the stock is empty (they are interchangeable then). A collision
        could only hide a position from this search, never make a line illegal."""
        s = self.search
        if s.stock:
            return hash(packed)
        head = bytes(s.down) + packed[PILES:_PILES_AT]
        return hash(
            head + b"".join(sorted(bytes([s.down[i], *s.piles[i], 255]) for i in range(PILES)))
        )

    def run(self) -> list[SearchMove] | None:
        """Search until a win (its line) or until every position reachable through the shared
        move generation was expanded (None); raises OutOfBudget."""
        s = self.search
        if s.on_found == s.total:
            return []
        start = self.pack()
        root = self.key(start)
        # Positions expanded: key -> (the parent's key, the move from there, packed). A
        # queued position is only (estimate, order, key, parent key, move): rebuilt from its
        # parent when it comes out, which keeps the queue small.
        done: dict[int, tuple[int, SearchMove | None, bytes]] = {}
        queue: list[tuple[int, int, int, int, SearchMove | None]] = [(0, 0, root, root, None)]
        count = 0
        every = range(PILES)
        while queue:
            _, _, key, parent, how = heapq.heappop(queue)
            if key in done:
                continue
            self.budget.tick(0)
            if how is None:
                here = start
            else:
                self.unpack(done[parent][2])
                s.play(how)
                here = self.pack()
            done[key] = (parent, how, here)
            self.unpack(here)
            breaks = [self.pile_breaks(i) for i in every]
            total_breaks = sum(breaks)
            for move in s.generate():
                card, note = s.play(move)
                child = self.key(self.pack())
                if child not in done:
                    if s.on_found == s.total:
                        done[child] = (key, move, b"")
                        return self.line(done, child)
                    touched = _touched(move)
                    b = total_breaks
                    for i in touched:
                        b += self.pile_breaks(i) - breaks[i]
                    count += 1
                    heapq.heappush(queue, (self.estimate(b), -count, child, key, move))
                s.unplay(move, card, note)
            if len(queue) > 2 * QUEUE_KEEP:
                queue = heapq.nsmallest(QUEUE_KEEP, queue)
                heapq.heapify(queue)
        return None

    @staticmethod
    def line(done: dict[int, tuple[int, SearchMove | None, bytes]], key: int) -> list[SearchMove]:
        """The moves from the start to the position of `key`."""
        out = []
        while True:
            parent, move, _ = done[key]
            if move is None:
                break
            out.append(move)
            key = parent
        out.reverse()
        return out


_ALL_PILES: Final = tuple(range(PILES))


def _touched(move: SearchMove) -> tuple[int, ...]:
    """The piles whose cards a move changes."""
    kind, a, b, _ = move
    if kind == PILE:
        return (a, b)
    if kind == UP:
        return (a,)
    if kind == BACK:
        return (b,)
    return _ALL_PILES
