"""Triple Triangle (Tri Peaks): depth-first search over (tableau bitmask, cards drawn, top rank).

Suits never matter, so the foundation top is only a rank and the whole position is the set of
tableau cards still present, how many stock cards were drawn and the top rank; the three pack
into one integer transposition key. The face-up cards are carried along as a second mask,
updated from the two cards a play can uncover, so a node costs a few bit operations.

* dead end: some card can never be played: no card adjacent to its rank is left in the stock
  or in the tableau outside the cards it covers, and it is not playable now;
* move ordering: plays that turn the most cards face up first, drawing last;
* a play that empties the tableau ends the search at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ..state import TriPeaksState, full_state
from ..tripeaks import COVERED_BY, COVERS, DRAW, TABLEAU, TriPeaks
from .base import (
    IMPOSSIBLE,
    UNKNOWN,
    WINNABLE,
    Budget,
    OutOfBudget,
    Solver,
    SolveResult,
    register,
)

_COVER_MASK = tuple(sum(1 << q for q in COVERED_BY[p]) for p in range(TABLEAU))
_POSITIONS = range(TABLEAU)
#: A draw on the search path (a play is its 0-based position).
_DRAW: Final = -1


def _adjacent_ranks(r: int) -> tuple[int, int]:
    return (r % 13) + 1, ((r - 2) % 13) + 1


_NEXT = tuple(_adjacent_ranks(r) if r else (0, 0) for r in range(14))


def _covered() -> tuple[int, ...]:
    """below[p]: the cards p covers, directly or not (they can only go after p)."""
    below = [0] * TABLEAU
    for p in reversed(_POSITIONS):
        for q in COVERS[p]:
            below[p] |= 1 << q | below[q]
    return tuple(below)


_BELOW = _covered()


def _mask(positions: Iterable[int]) -> int:
    return sum(1 << p for p in positions)


def _freed(child: int, p: int) -> int:
    """The cards that playing p (leaving `child`) turns face up, as a mask."""
    out = 0
    for q in COVERS[p]:
        if child >> q & 1 and not child & _COVER_MASK[q]:
            out |= 1 << q
    return out


def _no_stock_help(ranks: list[int], stock: list[int]) -> list[int]:
    """nostock[d]: the positions whose rank has no adjacent card left in the stock after d
    draws."""
    adjacent = 0  # bit r set when the stock cards still to come hold a card adjacent to r
    out = [_mask(_POSITIONS)]
    for d in range(len(stock) - 1, -1, -1):
        up, down = _NEXT[stock[d]]
        adjacent |= 1 << up | 1 << down
        out.append(_mask(p for p in _POSITIONS if not adjacent >> ranks[p] & 1))
    out.reverse()
    return out


class _TriPeaksSearch:
    """Tables of one deal and the mutable state of its search (seen keys, the path)."""

    __slots__ = (
        "budget",
        "n_stock",
        "needs",
        "nostock",
        "path",
        "plays_for",
        "ranks",
        "seen",
        "stock",
    )

    def __init__(self, state: TriPeaksState, budget: Budget) -> None:
        self.budget = budget
        ranks = self.ranks = [c.rank if c is not None else 0 for c in state.tableau]
        self.stock = [c.rank for c in state.stock]  # in drawing order
        self.n_stock = len(self.stock)
        # needs[p]: the tableau cards that could ever lead to playing p (adjacent rank, not
        # under p).
        self.needs = [
            _mask(q for q in _POSITIONS if ranks[q] in _NEXT[ranks[p]]) & ~_BELOW[p]
            for p in _POSITIONS
        ]
        self.nostock = _no_stock_help(ranks, self.stock)
        # by_rank[r]: positions holding rank r; plays_for[r]: positions playable on rank r.
        by_rank = [_mask(p for p in _POSITIONS if ranks[p] == r) for r in range(14)]
        self.plays_for = [by_rank[a] | by_rank[b] for a, b in _NEXT]
        self.seen: set[int] = set()
        self.path: list[int] = []  # positions played, _DRAW for a draw

    def run(self, state: TriPeaksState) -> bool:
        """Search from the start; True when the tableau can be cleared (the line in `path`)."""
        mask = sum(1 << p for p in _POSITIONS if state.tableau[p] is not None)
        free = sum(1 << p for p in _POSITIONS if mask >> p & 1 and not mask & _COVER_MASK[p])
        won = mask == 0 or self.dfs(mask, free, 0, state.foundation[-1].rank, 0)
        self.path.reverse()  # a winning line is collected from its end as the search unwinds
        return won

    def dfs(self, mask: int, free: int, drawn: int, top: int, depth: int) -> bool:
        """Search on from a position; on a win, push the moves that led there onto `path`."""
        self.budget.tick(depth)
        ready = free & self.plays_for[top]
        # Dead end: a card not playable now, with no adjacent card left in the stock, nor in
        # the tableau outside the cards it covers (inline: a call here costs 3 % of the search).
        stuck = mask & self.nostock[drawn] & ~ready
        needs = self.needs
        while stuck:
            low = stuck & -stuck
            stuck ^= low
            if not mask & needs[low.bit_length() - 1]:
                return False
        if ready == mask and not mask & (mask - 1):  # the last card plays
            self.path.append(mask.bit_length() - 1)
            return True
        seen = self.seen
        for p in self.plays(mask, ready) if ready else ():
            child = mask ^ 1 << p
            r = self.ranks[p]
            key = child | drawn << 28 | r << 33
            if key in seen:
                self.budget.tt_hits += 1
                continue
            seen.add(key)
            if self.dfs(child, free ^ 1 << p | _freed(child, p), drawn, r, depth + 1):
                self.path.append(p)
                return True
        if drawn == self.n_stock:
            return False
        r = self.stock[drawn]  # draw
        key = mask | (drawn + 1) << 28 | r << 33
        if key in seen:
            self.budget.tt_hits += 1
            return False
        seen.add(key)
        if self.dfs(mask, free, drawn + 1, r, depth + 1):
            self.path.append(_DRAW)
            return True
        return False

    @staticmethod
    def plays(mask: int, ready: int) -> list[int]:
        """The positions of the `ready` cards (at least one) in the order to try them: those
        that turn the most cards face up first, then by position."""
        if not ready & (ready - 1):
            return [ready.bit_length() - 1]
        plays: list[tuple[int, int]] = []
        while ready:
            low = ready & -ready
            ready ^= low
            p = low.bit_length() - 1
            plays.append((-_freed(mask ^ low, p).bit_count(), p))
        plays.sort()
        return [p for _, p in plays]


@register
class TriPeaksSolver(Solver):
    family = TriPeaks

    def search(self) -> SolveResult:
        assert isinstance(self.game, TriPeaks)
        state = full_state(self.game)
        search = _TriPeaksSearch(state, self.budget)
        try:
            won = search.run(state)
        except OutOfBudget:
            return SolveResult(UNKNOWN, stats=self.budget.stats())
        if not won:
            return SolveResult(IMPOSSIBLE, stats=self.budget.stats())
        return SolveResult(
            WINNABLE, [DRAW if p == _DRAW else str(p + 1) for p in search.path], self.budget.stats()
        )
