"""What every solver shares: the result type, budgets, the registry and solution checking.

A solver family is a `Solver` subclass whose `family` class attribute names the game class it
handles; `solver_for` walks the game's class hierarchy, so a variant that subclasses a family
(Triple Deck with Kings, Triple Fourteens) finds its solver without any test on names.
Solvers read a game only through its public API and `engine.state.full_state` (hidden cards
included), copy that into compact structures held by a slotted search object, and search those.
"""

from __future__ import annotations

import copy
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Final, Literal

from ..errors import IllegalMove
from ..game import Game

Verdict = Literal["winnable", "impossible", "unknown"]
WINNABLE: Final = "winnable"
IMPOSSIBLE: Final = "impossible"
UNKNOWN: Final = "unknown"


@dataclass(slots=True)
class SolveStats:
    """Search statistics."""

    nodes: int = 0  # positions expanded
    tt_hits: int = 0  # positions cut off because the transposition table knew them
    elapsed: float = 0.0  # seconds
    max_depth: int = 0  # deepest search ply (a ply may stand for several engine moves)


@dataclass(slots=True)
class SolveResult:
    """A solver's answer for one position.

    `solution` holds move texts that `Game.play` accepts one after the other from the position
    solved: a winning line, or for the scoring games the line reaching `best_score`.
    `best_score`, `max_score` and `optimal` are set for the scoring games only (`optimal`: the
    search proved that no line scores more).
    """

    verdict: Verdict
    solution: list[str] = field(default_factory=list)
    stats: SolveStats = field(default_factory=SolveStats)
    best_score: int | None = None
    max_score: int | None = None
    optimal: bool | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": self.verdict, "solution": list(self.solution)}
        if self.best_score is not None:
            out.update(best_score=self.best_score, max_score=self.max_score, optimal=self.optimal)
        out["stats"] = asdict(self.stats)
        return out


class OutOfBudget(Exception):
    """Raised inside a search when its node or time budget is spent."""


class Budget:
    """Counts nodes and watches the clock; `tick` raises OutOfBudget when either runs out."""

    __slots__ = (
        "clock",
        "deadline",
        "max_depth",
        "max_nodes",
        "next_check",
        "nodes",
        "start",
        "tt_hits",
    )

    CLOCK_EVERY: ClassVar[int] = 256
    _NEVER: ClassVar[int] = 1 << 62

    def __init__(
        self,
        max_nodes: int | None,
        max_seconds: float | None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.clock = clock  # wall time; `time.process_time` for CPU time (benchmarks)
        self.start = clock()
        self.max_nodes = max_nodes
        self.deadline = None if max_seconds is None else self.start + max_seconds
        self.nodes = 0
        self.tt_hits = 0
        self.max_depth = 0
        self.next_check = 0  # the first tick checks both limits

    def share(self, fraction: float, cap: int | None = None) -> Budget:
        """A budget for one phase of a search: `fraction` of the nodes and of the time left
        (each where this budget has one), at most `cap` nodes. Hand it back to `absorb`."""
        nodes = None
        if self.max_nodes is not None:
            nodes = max(0, int(fraction * (self.max_nodes - self.nodes)))
        if cap is not None:
            nodes = cap if nodes is None else min(nodes, cap)
        seconds = None
        if self.deadline is not None:
            seconds = max(0.0, fraction * (self.deadline - self.clock()))
        return Budget(nodes, seconds, self.clock)

    def absorb(self, part: Budget) -> None:
        """Count a phase's work (a budget from `share`) as this budget's own; the next tick
        checks the limits."""
        self.nodes += part.nodes
        self.tt_hits += part.tt_hits
        self.max_depth = max(self.max_depth, part.max_depth)
        self.next_check = self.nodes

    def tick(self, depth: int) -> None:
        """Count a node at this depth (every search calls this once per node: keep it lean)."""
        self.nodes += 1
        if depth > self.max_depth:
            self.max_depth = depth
        if self.nodes >= self.next_check:
            self.check()

    def check(self) -> None:
        """Raise OutOfBudget past the node budget or, every CLOCK_EVERY nodes, past the
        deadline; then note the next node count at which either can bite."""
        nodes = self.nodes
        if self.max_nodes is not None and nodes > self.max_nodes:
            raise OutOfBudget
        if (
            self.deadline is not None
            and nodes % self.CLOCK_EVERY == 0
            and self.clock() > self.deadline
        ):
            raise OutOfBudget
        nxt = self._NEVER
        if self.max_nodes is not None:
            nxt = self.max_nodes + 1
        if self.deadline is not None:
            nxt = min(nxt, (nodes // self.CLOCK_EVERY + 1) * self.CLOCK_EVERY)
        self.next_check = nxt

    def stats(self) -> SolveStats:
        return SolveStats(
            self.nodes, self.tt_hits, round(self.clock() - self.start, 6), self.max_depth
        )


class Solver:
    """One search over one position. Subclasses set `family` and implement `search`."""

    family: ClassVar[type[Game]]

    def __init__(self, game: Game, budget: Budget) -> None:
        self.game = game
        self.budget = budget

    def search(self) -> SolveResult:
        raise NotImplementedError


_REGISTRY: dict[type[Game], type[Solver]] = {}


def register(cls: type[Solver]) -> type[Solver]:
    """Class decorator: make `cls` the solver of its `family` and every subclass of it."""
    _REGISTRY[cls.family] = cls
    return cls


def solver_for(game: Game) -> type[Solver]:
    """The solver class of a game's variant family; raises TypeError when there is none."""
    for klass in type(game).__mro__:
        found = _REGISTRY.get(klass)
        if found is not None:
            return found
    raise TypeError(f"no solver for {type(game).__name__}")


#: Recursion limit while searching: a winning line of the 156-card games is a few hundred plies
#: deep. Python-to-Python calls no longer use the C stack (3.11+), so this is safe.
SEARCH_RECURSION_LIMIT: Final = 20_000


@contextmanager
def deep_recursion(limit: int = SEARCH_RECURSION_LIMIT) -> Iterator[None]:
    """Raise the interpreter's recursion limit for the duration of a search."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def replay(game: Game, solution: list[str]) -> Game:
    """A copy of `game` with `solution` played on it; raises IllegalMove at a bad move.

    `Game.replay` checks every move but does not judge after each one whether the game has
    ended: Triple Easthaven's exact game-over search can take seconds on some positions,
    and a position from which the rest of a line is legal is not over anyway."""
    copy_ = copy.deepcopy(game)
    copy_.replay(solution)
    return copy_


def check_line(game: Game, solution: list[str]) -> Game:
    """Replay a solver's line through the engine; a failure is a solver bug, so it is loud."""
    try:
        return replay(game, solution)
    except IllegalMove as exc:
        raise AssertionError(f"solver produced an illegal line: {exc}") from exc
