"""Solvers: decide whether a position can be won (or how much it can score) with full
information, and suggest hints.

    result = solve(new_game("fourteen-out", 7), max_seconds=1.0)
    result.verdict        # "winnable", "impossible" or "unknown" (budget ran out)
    result.solution       # move texts that Game.play accepts from the position solved
    hint(game)            # the first move of such a line, or None

The Triple Deck games are scored: their search maximises `game.score` and reports
`best_score`, `max_score` and whether the best score is proven `optimal`.
"""

from __future__ import annotations

import time

from ..errors import SolverLineError
from ..game import Game
from . import easthaven, pairing, tripeaks, tripledeck  # noqa: F401  (register them)
from .base import (
    IMPOSSIBLE,
    UNKNOWN,
    WINNABLE,
    Budget,
    SolveResult,
    SolveStats,
    Verdict,
    check_line,
    deep_recursion,
    solver_for,
)

#: Default time budget of `hint`, in seconds.
HINT_SECONDS = 2.0


def solve(
    game: Game,
    *,
    max_nodes: int | None = None,
    max_seconds: float | None = None,
    cpu_time: bool = False,
) -> SolveResult:
    """Search the game's current position (full information; the game is not modified).

    With no budget the search runs until it decides. `cpu_time` counts `max_seconds` in this
    process's CPU time instead of wall time (benchmarks on a shared machine). The returned
    line is replayed through the engine on a copy before it is handed back.
    """
    budget = Budget(max_nodes, max_seconds, time.process_time if cpu_time else time.perf_counter)
    if game.over:
        verdict: Verdict = WINNABLE if game.won else IMPOSSIBLE
        result = SolveResult(verdict, stats=budget.stats())
        if game.scored:
            result.best_score = result.max_score = game.score
            result.optimal = True
        return result
    with deep_recursion():
        result = solver_for(game)(game, budget).search()
    if result.solution:
        end = check_line(game, result.solution)
        # Checked in every build (an assert would be gone under `python -O`): a line that
        # does not do what the solver claims must never certify a deal.
        if result.verdict == WINNABLE and not game.scored and not end.won:
            raise SolverLineError("the solver's line does not win")
        if result.best_score is not None and end.score != result.best_score:
            raise SolverLineError(
                f"the solver's line scores {end.score}, not the claimed {result.best_score}"
            )
    return result


def hint(
    game: Game, *, max_nodes: int | None = None, max_seconds: float | None = HINT_SECONDS
) -> str | None:
    """The first move of a winning line from the current position (for the scoring games: of
    the best line found), or None when none is known within the budget."""
    return hinted_move(solve(game, max_nodes=max_nodes, max_seconds=max_seconds))


def hinted_move(result: SolveResult) -> str | None:
    """The move a search's result gives as a hint: the first of a winning line, or of the
    best line a scoring game's search found; None when it found neither."""
    if result.solution and (result.verdict == WINNABLE or result.best_score is not None):
        return result.solution[0]
    return None


__all__ = [
    "HINT_SECONDS",
    "IMPOSSIBLE",
    "UNKNOWN",
    "WINNABLE",
    "SolveResult",
    "SolveStats",
    "Verdict",
    "hint",
    "hinted_move",
    "solve",
]
