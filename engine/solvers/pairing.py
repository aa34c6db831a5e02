"""Fourteen Out and Triple Fourteens: depth-first search over pile heights.

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

from ..moves import Move
from ..pairing import PairingGame
from .base import IMPOSSIBLE, UNKNOWN, WINNABLE, OutOfBudget, Solver, SolveResult, register


@register
class PairingSolver(Solver):
    family = PairingGame

    def search(self) -> SolveResult:
        game = self.game
        assert isinstance(game, PairingGame)
        piles = [tuple(c.rank for c in p) for p in game._piles]
        heights = list(game._heights)
        n = len(piles)
        # cls[i][h][c]: how many partners the bottom h cards of pile i need from other piles
        # in rank class c (ranks c and 14 - c; for the 7s, twice the 7s). A class is stuck when
        # some pile needs more than remain (Hall's condition for matching across piles).
        cls: list[list[tuple[int, ...]]] = []
        for p in piles:
            counts = [0] * 14
            rows: list[tuple[int, ...]] = [(0,) * 8]
            for r in p:
                counts[r] += 1
                rows.append((0, *(counts[c] + counts[14 - c] for c in range(1, 7)), 2 * counts[7]))
            cls.append(rows)
        rem = [0] * 8  # remaining cards of rank c (= of rank 14 - c); rem[7]: the 7s
        unbalanced = [0] * 14
        for i, p in enumerate(piles):
            for r in p[: heights[i]]:
                unbalanced[r] += 1
                if r <= 7:
                    rem[r] += 1
        if (any(unbalanced[r] != unbalanced[14 - r] for r in range(1, 7)) or rem[7] % 2
                or any(cls[i][heights[i]][c] > rem[c] for i in range(n) for c in range(1, 8))):
            return SolveResult(IMPOSSIBLE, stats=self.budget.stats())
        budget = self.budget
        weight = [1] * n
        for i in range(1, n):
            weight[i] = weight[i - 1] * (len(piles[i - 1]) + 1)
        seen: set[int] = set()
        path: list[tuple[int, int]] = []
        pile_range = range(n)

        def dfs(depth: int, left: int, key: int) -> bool:
            budget.tick(depth)
            buckets: list[list[int]] = [[] for _ in range(14)]
            for i in pile_range:
                h = heights[i]
                if h:
                    buckets[piles[i][h - 1]].append(i)
            moves: list[tuple[int, int]] = []
            safe: tuple[int, int] | None = None
            for r in range(1, 7):
                a, b = buckets[r], buckets[14 - r]
                if a and b:
                    if len(a) == rem[r] and len(b) == rem[r]:
                        safe = (a[0], b[0])
                        break
                    moves.extend([(i, j) for i in a for j in b])
            sevens = buckets[7]
            if safe is None and len(sevens) >= 2:
                if len(sevens) == rem[7]:
                    safe = (sevens[0], sevens[1])
                else:
                    moves.extend([(i, j) for k, i in enumerate(sevens) for j in sevens[k + 1 :]])
            if safe is not None:
                moves = [safe]
            elif len(moves) > 1:
                def order(m: tuple[int, int]) -> tuple[int, int]:
                    i, j = m
                    r = piles[i][heights[i] - 1]
                    c = r if r <= 7 else 14 - r
                    heights[i] -= 1
                    heights[j] -= 1
                    worst = max(cls[k][heights[k]][c] for k in pile_range)
                    heights[i] += 1
                    heights[j] += 1
                    return (rem[c] - 1 - worst, heights[i] + heights[j])

                moves.sort(key=order, reverse=True)
            for i, j in moves:
                child = key - weight[i] - weight[j]
                if child in seen:
                    budget.tt_hits += 1
                    continue
                seen.add(child)
                r = piles[i][heights[i] - 1]
                c = r if r <= 7 else 14 - r
                heights[i] -= 1
                heights[j] -= 1
                rem[c] -= 1
                path.append((i, j))
                if left == 2:
                    return True
                rc = rem[c]
                if all(cls[k][heights[k]][c] <= rc for k in pile_range) and dfs(
                        depth + 1, left - 2, child):
                    return True
                path.pop()
                heights[i] += 1
                heights[j] += 1
                rem[c] += 1
            return False

        try:
            left = sum(heights)
            key0 = sum(h * w for h, w in zip(heights, weight, strict=True))
            won = left == 0 or dfs(0, left, key0)
        except OutOfBudget:
            return SolveResult(UNKNOWN, stats=budget.stats())
        if not won:
            return SolveResult(IMPOSSIBLE, stats=budget.stats())
        line = [str(Move(str(min(i, j) + 1), str(max(i, j) + 1))) for i, j in path]
        return SolveResult(WINNABLE, line, budget.stats())
