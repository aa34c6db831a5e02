"""Triple Easthaven: shorter winning lines (the day's par is the shortest line found).

A search's line carries detours: a run moved and later moved back, a card sent up and brought
down again. `shorten` deletes moves (one at a time, then pairs that touch the same piles) as
long as the rest still wins, checking each candidate line with the search's own fast rules
(`legal`); the engine replays the result before it leaves the solver.
"""

from __future__ import annotations

from ...cards import parse_card
from ..base import Budget, OutOfBudget
from .search import (
    BACK,
    DEAL,
    FIT,
    PILE,
    RANK,
    SLOT,
    SUIT,
    UP,
    EasthavenSearch,
    SearchMove,
    search_move,
)


def legal(s: EasthavenSearch, move: SearchMove) -> bool:
    """Whether `move` may be played in the current position of `s` (the engine's rules)."""
    kind, a, b, n = move
    piles, down = s.piles, s.down
    if kind == DEAL:
        return bool(s.stock)
    if kind == BACK:
        if not s.fc[SUIT[a]][RANK[a]]:
            return False  # no foundation of the suit has this card on top
        return _accepts(s, b, a)
    pile = piles[a]
    face_up = len(pile) - down[a]
    if face_up <= 0:
        return False
    if kind != PILE:  # a foundation play of the top card
        c = pile[-1]
        return s.fc[SUIT[c]][RANK[c] - 1] > 0
    if a == b or n > face_up:
        return False
    for k in range(1, n):
        if SLOT[pile[-k - 1]] != FIT[pile[-k]]:
            return False  # the n cards do not form a run
    return _accepts(s, b, pile[-n])


def _accepts(s: EasthavenSearch, dst: int, head: int) -> bool:
    pile = s.piles[dst]
    if not pile:
        return True
    return len(pile) > s.down[dst] and FIT[head] == SLOT[pile[-1]]


def wins(s: EasthavenSearch, line: list[SearchMove]) -> bool:
    """Whether `line`, played from the start, is legal and wins (one budget node per move)."""
    s.load()
    budget = s.budget
    for move in line:
        budget.tick(0)
        if not legal(s, move):
            return False
        s.play(move)
    return s.on_found == s.total


def _touches(move: SearchMove) -> frozenset[int]:
    """The piles a move changes (a deal: none that matter for pairing up detours)."""
    kind, a, b, _ = move
    if kind == PILE:
        return frozenset((a, b))
    if kind == BACK:
        return frozenset((b,))
    if kind == DEAL:
        return frozenset()
    return frozenset((a,))


def shorten(s: EasthavenSearch, line: list[SearchMove], budget: Budget) -> list[SearchMove]:
    """A winning line no longer than `line` (a winning line), found by deleting moves while
    `budget` lasts (it spends a node per move replayed and never raises)."""
    s.budget = budget
    best = list(line)
    try:
        improved = True
        while improved:
            improved = False
            i = len(best) - 1
            while i >= 0:  # from the end: late detours are the cheapest to test
                trial = best[:i] + best[i + 1 :]
                if wins(s, trial):
                    best, improved = trial, True
                i -= 1
            for i in range(len(best) - 1, -1, -1):
                if i >= len(best):
                    continue
                piles = _touches(best[i])
                if not piles:
                    continue
                for j in range(i + 1, len(best)):
                    if _touches(best[j]) & piles:
                        trial = best[:i] + best[i + 1 : j] + best[j + 1 :]
                        if wins(s, trial):
                            best, improved = trial, True
                        break  # only the next move on the same piles
    except OutOfBudget:
        pass
    return best


def parse_line(texts: list[str]) -> list[SearchMove]:
    """The search's own moves for a line in move notation as the solver writes it (``3 5 2``,
    ``3 f``, ``d``, ``f8H 5``); raises ValueError for anything else."""
    out = []
    for text in texts:
        parts = text.split()
        if parts == ["d"]:
            out.append(search_move(DEAL, 0, 0, 0))
        elif len(parts) == 2 and parts[0].startswith("f"):
            out.append(search_move(BACK, parse_card(parts[0][1:]).code, int(parts[1]) - 1, 1))
        elif len(parts) == 2 and parts[1] == "f":
            out.append(search_move(UP, int(parts[0]) - 1, 0, 1))
        elif len(parts) == 3:
            out.append(search_move(PILE, int(parts[0]) - 1, int(parts[1]) - 1, int(parts[2])))
        else:
            raise ValueError(f"not a solver move: {text!r}")
    return out
