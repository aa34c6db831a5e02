"""Triple Easthaven's solver: best-first search for a win on most of the budget, then the
depth-first search (which alone can prove a deal impossible), then the line shortened.

The searches live in `search` (move generation, sound and heuristic cuts, the depth-first
search), `bestfirst` and `lines`.
"""

from __future__ import annotations

import contextlib

from ...easthaven import TripleEasthaven
from ...state import full_state
from ..base import IMPOSSIBLE, UNKNOWN, WINNABLE, OutOfBudget, Solver, SolveResult, register
from .bestfirst import BestFirst
from .lines import shorten
from .search import EasthavenSearch, SearchMove

#: Share of the budget the best-first search gets before the depth-first search starts.
BESTFIRST_SHARE = 0.75
#: Share of the budget left that shortening a winning line may use, and a cap in nodes (one
#: node per move replayed).
SHORTEN_SHARE = 0.5
SHORTEN_NODES = 200_000


@register
class EasthavenSolver(Solver):
    """Best-first for a win (`BESTFIRST_SHARE` of the budget), then the depth-first search,
    which alone can prove a deal impossible; a line found is then shortened (`SHORTEN_SHARE`
    of what is left, at most `SHORTEN_NODES`)."""

    family = TripleEasthaven

    def search(self) -> SolveResult:
        game = self.game
        assert isinstance(game, TripleEasthaven)
        state, budget = full_state(game), self.budget
        line: list[SearchMove] | None = None
        first = budget.share(BESTFIRST_SHARE)
        with contextlib.suppress(OutOfBudget):
            line = BestFirst(state, game.total_cards, first).run()
        budget.absorb(first)
        search = EasthavenSearch(state, game.total_cards, budget)
        if line is None:
            try:
                budget.check()
                won = search.run()
            except OutOfBudget:
                return SolveResult(UNKNOWN, stats=budget.stats())
            if not won:
                return SolveResult(
                    UNKNOWN if search.heuristic else IMPOSSIBLE, stats=budget.stats()
                )
            line = list(search.path)
        polish = budget.share(SHORTEN_SHARE, SHORTEN_NODES)
        line = shorten(search, line, polish)
        budget.absorb(polish)
        return SolveResult(WINNABLE, [m.text() for m in line], budget.stats())
