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

from ..tripeaks import COVERED_BY, COVERS, DRAW, TABLEAU, TriPeaks
from .base import (
    IMPOSSIBLE,
    UNKNOWN,
    WINNABLE,
    OutOfBudget,
    Solver,
    SolveResult,
    register,
    require_full_state,
)

_COVER_MASK = tuple(sum(1 << q for q in COVERED_BY[p]) for p in range(TABLEAU))
_COVERS = COVERS


def _adjacent_ranks(r: int) -> tuple[int, int]:
    return (r % 13) + 1, ((r - 2) % 13) + 1


_NEXT = tuple(_adjacent_ranks(r) if r else (0, 0) for r in range(14))


@register
class TriPeaksSolver(Solver):
    family = TriPeaks

    def search(self) -> SolveResult:
        game = self.game
        assert isinstance(game, TriPeaks)
        require_full_state(game._stock, (c for c, up in zip(game._cards, game._present,
                                                             strict=True) if up))
        ranks = [c.rank if c is not None else 0 for c in game._cards]
        stock = [c.rank for c in reversed(game._stock) if c is not None]  # in drawing order
        n_stock = len(stock)
        mask0 = sum(1 << p for p in range(TABLEAU) if game._present[p])
        top0 = game._foundation[-1].rank
        # below[p]: the cards p covers, directly or not (they can only go after p).
        below = [0] * TABLEAU
        for p in reversed(positions_all := range(TABLEAU)):
            for q in _COVERS[p]:
                below[p] |= 1 << q | below[q]
        # needs[p]: the tableau cards that could ever lead to playing p (adjacent rank, not
        # under p).
        needs = [sum(1 << q for q in positions_all if ranks[q] in _NEXT[ranks[p]]) & ~below[p]
                 for p in positions_all]
        # stock_adj[d]: bit r set when stock cards d.. hold a card adjacent to rank r.
        stock_adj = [0] * (n_stock + 1)
        for d in range(n_stock - 1, -1, -1):
            up_, down_ = _NEXT[stock[d]]
            stock_adj[d] = stock_adj[d + 1] | 1 << up_ | 1 << down_
        # nostock[d]: positions whose rank has no adjacent card left in the stock after d draws.
        nostock = [sum(1 << p for p in positions_all if not stock_adj[d] >> ranks[p] & 1)
                   for d in range(n_stock + 1)]
        # by_rank[r]: positions holding rank r; plays_for[r]: positions playable on rank r.
        by_rank = [sum(1 << p for p in positions_all if ranks[p] == r) for r in range(14)]
        plays_for = [by_rank[a] | by_rank[b] for a, b in _NEXT]
        budget = self.budget
        seen: set[int] = set()
        path: list[int] = []  # positions played, -1 for a draw
        cover_mask = _COVER_MASK

        def freed(child: int, p: int) -> int:
            """The cards that playing p (leaving `child`) turns face up, as a mask."""
            out = 0
            for q in _COVERS[p]:
                if child >> q & 1 and not child & cover_mask[q]:
                    out |= 1 << q
            return out

        def dfs(mask: int, free: int, drawn: int, top: int, depth: int) -> bool:
            budget.tick(depth)
            ready = free & plays_for[top]
            # Dead end: a card that nothing left can ever reach (no adjacent card in the stock
            # or in the tableau outside the cards it covers) and that cannot be played now.
            stuck = mask & nostock[drawn] & ~ready
            while stuck:
                low = stuck & -stuck
                stuck ^= low
                if not mask & needs[low.bit_length() - 1]:
                    return False
            plays: list[tuple[int, int, int]] = []
            while ready:
                low = ready & -ready
                ready ^= low
                p = low.bit_length() - 1
                child = mask ^ low
                if not child:
                    path.append(p)
                    return True
                plays.append((freed(child, p), p, child))
            if len(plays) > 1:
                plays.sort(key=lambda t: t[0].bit_count(), reverse=True)
            for new, p, child in plays:
                r = ranks[p]
                key = child | drawn << 28 | r << 33
                if key in seen:
                    budget.tt_hits += 1
                    continue
                seen.add(key)
                path.append(p)
                if dfs(child, (free ^ (1 << p)) | new, drawn, r, depth + 1):
                    return True
                path.pop()
            if drawn < n_stock:
                r = stock[drawn]
                key = mask | (drawn + 1) << 28 | r << 33
                if key in seen:
                    budget.tt_hits += 1
                    return False
                seen.add(key)
                path.append(-1)
                if dfs(mask, free, drawn + 1, r, depth + 1):
                    return True
                path.pop()
            return False

        try:
            free0 = sum(1 << p for p in positions_all
                        if mask0 >> p & 1 and not mask0 & cover_mask[p])
            won = mask0 == 0 or dfs(mask0, free0, 0, top0, 0)
        except OutOfBudget:
            return SolveResult(UNKNOWN, stats=budget.stats())
        if not won:
            return SolveResult(IMPOSSIBLE, stats=budget.stats())
        return SolveResult(WINNABLE, [DRAW if p < 0 else str(p + 1) for p in path],
                           budget.stats())
