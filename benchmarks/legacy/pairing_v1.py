"""The pairing solver as it stood before issue #17, kept for side-by-side benchmarks.

Fourteen Out and Triple Fourteens: depth-first search over pile heights.

The deal is fixed, so the tuple of pile heights is the whole position and serves as the
transposition key. Only ranks matter. Pruning:

* dead position: Hall's condition per rank class (ranks r and 14 - r): the cards of a pile
  must find partners in other piles, so no pile may hold more of the class than remain of
  either rank (for the 7s: half of them);
* safe pairs: when every remaining card of ranks r and 14 - r is a top card, removing any such
  pair now is as good as any other order (an exchange argument: the piles under those cards
  are frozen until they go), so it is the only move tried;
* move ordering: pairs taking from the tallest piles first (they bury the most cards).
"""

from __future__ import annotations

from functools import cache
from operator import getitem
from typing import NamedTuple

from engine.moves import Move
from engine.pairing import PairingGame
from engine.solvers.base import (
    IMPOSSIBLE,
    UNKNOWN,
    WINNABLE,
    Budget,
    OutOfBudget,
    Solver,
    SolveResult,
)
from engine.state import PairingState, full_state


class _Pair(NamedTuple):
    """A search move: remove the top cards of piles `a` and `b` (0-based)."""

    a: int
    b: int

    def text(self) -> str:
        return str(Move(str(min(self.a, self.b) + 1), str(max(self.a, self.b) + 1)))


def _class_needs(pile: tuple[int, ...]) -> list[list[int]]:
    """Column c, row h: how many partners the bottom h cards of the pile need from other piles
    in rank class c (ranks c and 14 - c; for the 7s, twice the 7s). Column 0 is unused."""
    counts = [0] * 14
    cols: list[list[int]] = [[0] for _ in range(8)]
    for r in pile:
        counts[r] += 1
        for c in range(1, 7):
            cols[c].append(counts[c] + counts[14 - c])
        cols[7].append(2 * counts[7])
    return cols


@cache
def _pair_table(n: int) -> tuple[tuple[_Pair, ...], ...]:
    """table[i][j]: the move taking piles i and j, built once per pile count."""
    return tuple(tuple(_Pair(i, j) for j in range(n)) for i in range(n))


#: The rank class of each rank: ranks r and 14 - r pair up.
_CLASS = tuple(r if r <= 7 else 14 - r for r in range(14))


class _PairingSearch:
    """The mutable state of one search: pile heights, the cards left per class, the path."""

    __slots__ = (
        "budget",
        "heights",
        "needs",
        "pairs",
        "path",
        "pile_range",
        "piles",
        "rem",
        "seen",
        "weight",
    )

    def __init__(self, state: PairingState, budget: Budget) -> None:
        self.budget = budget
        self.piles = [tuple(c.rank for c in p) for p in state.piles]
        self.heights = [len(p) for p in self.piles]
        self.pile_range = range(len(self.piles))
        # needs[c][i][h]: see `_class_needs`. A class is stuck when some pile needs more than
        # remain (Hall's condition for matching across piles).
        cols = [_class_needs(p) for p in self.piles]
        self.needs = [[col[c] for col in cols] for c in range(8)]
        self.rem = [0] * 8  # remaining cards of rank c (= of rank 14 - c); rem[7]: the 7s
        for p in self.piles:
            for r in p:
                if r <= 7:
                    self.rem[r] += 1
        # The transposition key: the heights in mixed radix.
        self.weight = [1] * len(self.piles)
        for i in self.pile_range[1:]:
            self.weight[i] = self.weight[i - 1] * (len(self.piles[i - 1]) + 1)
        self.pairs = _pair_table(len(self.piles))
        self.seen: set[int] = set()
        self.path: list[_Pair] = []

    def hopeless(self) -> bool:
        """Dead before any search: unbalanced ranks, an odd number of 7s or Hall's condition."""
        count = [0] * 14
        for p in self.piles:
            for r in p:
                count[r] += 1
        return (
            any(count[r] != count[14 - r] for r in range(1, 7))
            or count[7] % 2 == 1
            or any(not self.hall_holds(c) for c in range(1, 8))
        )

    def hall_holds(self, c: int) -> bool:
        """No pile needs more partners of class c than remain."""
        return max(map(getitem, self.needs[c], self.heights)) <= self.rem[c]

    def run(self) -> bool:
        """Search from the start; True when the piles can all be cleared (the line in `path`)."""
        left = sum(self.heights)
        key = sum(h * w for h, w in zip(self.heights, self.weight, strict=True))
        return left == 0 or self.dfs(0, left, key)

    def dfs(self, depth: int, left: int, key: int) -> bool:
        """Search on with `left` cards in the piles; `key` is the position's key."""
        self.budget.tick(depth)
        piles, heights, rem, weight = self.piles, self.heights, self.rem, self.weight
        seen, needs = self.seen, self.needs
        for pair in self.moves():
            i, j = pair
            child = key - weight[i] - weight[j]
            if child in seen:
                self.budget.tt_hits += 1
                continue
            seen.add(child)
            c = _CLASS[piles[i][heights[i] - 1]]
            heights[i] -= 1
            heights[j] -= 1
            rem[c] -= 1
            self.path.append(pair)
            if left == 2:
                return True
            # Hall's condition for the class (`hall_holds`, inline: no call in this loop).
            if max(map(getitem, needs[c], heights)) <= rem[c] and self.dfs(
                depth + 1, left - 2, child
            ):
                return True
            self.path.pop()
            heights[i] += 1
            heights[j] += 1
            rem[c] += 1
        return False

    def moves(self) -> list[_Pair]:
        """The pairs to try: a safe pair alone, or every pair in the order worth trying."""
        piles, heights, rem, pairs = self.piles, self.heights, self.rem, self.pairs
        buckets: list[list[int]] = [[] for _ in range(14)]
        for i in self.pile_range:
            h = heights[i]
            if h:
                buckets[piles[i][h - 1]].append(i)
        moves: list[_Pair] = []
        for r in range(1, 7):
            a, b = buckets[r], buckets[14 - r]
            if a and b:
                if len(a) == rem[r] and len(b) == rem[r]:
                    return [pairs[a[0]][b[0]]]
                moves.extend([pairs[i][j] for i in a for j in b])
        sevens = buckets[7]
        if len(sevens) >= 2:
            if len(sevens) == rem[7]:
                return [pairs[sevens[0]][sevens[1]]]
            moves.extend([pairs[i][j] for k, i in enumerate(sevens) for j in sevens[k + 1 :]])
        if len(moves) > 1:
            moves.sort(key=self.order_key, reverse=True)
        return moves

    def order_key(self, pair: _Pair) -> tuple[int, int]:
        """Pairs that keep the most slack in Hall's condition, then from the tallest piles."""
        i, j = pair
        heights = self.heights
        c = _CLASS[self.piles[i][heights[i] - 1]]
        heights[i] -= 1
        heights[j] -= 1
        worst = max(map(getitem, self.needs[c], heights))
        heights[i] += 1
        heights[j] += 1
        return (self.rem[c] - 1 - worst, heights[i] + heights[j])


class PairingSolver(Solver):
    family = PairingGame

    def search(self) -> SolveResult:
        assert isinstance(self.game, PairingGame)
        search = _PairingSearch(full_state(self.game), self.budget)
        if search.hopeless():
            return SolveResult(IMPOSSIBLE, stats=self.budget.stats())
        try:
            won = search.run()
        except OutOfBudget:
            return SolveResult(UNKNOWN, stats=self.budget.stats())
        if not won:
            return SolveResult(IMPOSSIBLE, stats=self.budget.stats())
        return SolveResult(WINNABLE, [pair.text() for pair in search.path], self.budget.stats())
