"""The solvers as they stood before issue #17 (Triple Easthaven, Fourteen Out and Triple
Fourteens), unregistered, so `benchmarks/solver_bench.py` can run old and new side by side.

    legacy_solve(new_game("triple-easthaven", 7), max_seconds=10.0)
"""

from __future__ import annotations

import time

from engine import Game
from engine.easthaven import TripleEasthaven
from engine.pairing import PairingGame
from engine.solvers.base import Budget, Solver, SolveResult, deep_recursion

from .easthaven_v1 import EasthavenSolver
from .pairing_v1 import PairingSolver

#: The variants whose solver issue #17 replaced.
LEGACY_VARIANTS = ("fourteen-out", "triple-fourteens", "triple-easthaven")


def legacy_solve(
    game: Game,
    *,
    max_nodes: int | None = None,
    max_seconds: float | None = None,
    cpu_time: bool = False,
) -> SolveResult:
    """Search with the old solver of the game's family (its line is not replayed here);
    `cpu_time` as for `engine.solvers.solve`."""
    cls: type[Solver]
    if isinstance(game, TripleEasthaven):
        cls = EasthavenSolver
    elif isinstance(game, PairingGame):
        cls = PairingSolver
    else:
        raise TypeError(f"no legacy solver for {type(game).__name__}")
    with deep_recursion():
        clock = time.process_time if cpu_time else time.perf_counter
        return cls(game, Budget(max_nodes, max_seconds, clock)).search()


__all__ = ["LEGACY_VARIANTS", "legacy_solve"]
