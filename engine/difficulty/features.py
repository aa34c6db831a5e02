"""The measured features of a deal: what the solver's search and a greedy line say about it.

`measure` runs, on one deal:

1. the full-information solver (`engine.solvers.solve`): whether the deal is winnable, the
   length of the winning line it found (`line_moves`) and its search effort (`nodes`);
2. a probe of every legal first move: the solver again from the position after it, with a
   small node budget; a move proven lost is a dead end (`losing_first_moves`,
   `dead_end_share`);
3. a walk along the winning line: the legal moves at each position (`branching`, their mean)
   and the cards turned face up on the way (`reveals`; `hidden_share` is their share of the
   line's moves: how much of the line was played on cards unknown when the deal began);
4. the noise-free greedy player (`player.play` at `Level.GREEDY`), playing from its view:
   the share of the winning points it reaches (`greedy_share`; 1.0 when it wins). A deal a
   full-information search wins but a greedy line does not needs foresight or luck with
   the hidden cards;
5. `PLAYOUTS` games of the casual simulated player (noisy, from its view): the share won
   (`playout_wins`) and the mean share of the points reached (`playout_share`), a Monte
   Carlo estimate of how a person without the hidden cards fares.

Budgets: with `max_nodes` everything is counted in nodes (the solver gets `max_nodes`, each
first-move probe `probe_nodes(max_nodes)`), so the features are a pure function of the deal
and the budget; with only `max_seconds` the solver gets half of it and the probes share the
rest (interactive use: results may vary with the machine's load).
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass

from ..game import Game
from ..solvers import IMPOSSIBLE, WINNABLE, solve
from ..state import TableauState, TriPeaksState
from ..variants import new_game
from .player import Level, max_points, play


@dataclass(frozen=True, slots=True)
class Features:
    """What the solver's search and a greedy line measure on one deal."""

    #: Moves of the solver's winning line (for the Triple Deck games: of its best line); 0
    #: when it found none.
    line_moves: int
    #: Positions the solver expanded to find that line (or to give up).
    nodes: int
    #: Legal moves in the first position.
    first_moves: int
    #: First moves after which the solver proved the deal lost (within the probe budget).
    losing_first_moves: int
    #: losing_first_moves / first_moves (0.0 with no first move).
    dead_end_share: float
    #: Mean number of legal moves at the positions of the winning line.
    branching: float
    #: Cards the winning line turned face up: face-down pile cards, and stock cards drawn
    #: (each counted once, however often a redeal shows it again).
    reveals: int
    #: reveals / line_moves: the share of the line played on cards hidden at the start.
    hidden_share: float
    #: Share of a won game's points the noise-free greedy player reaches from its view.
    greedy_share: float
    #: Share of `PLAYOUTS` games of the casual simulated player that won (Monte Carlo
    #: playouts from the player's view, on random streams no calibration game uses).
    playout_wins: float
    #: Mean share of a won game's points those playouts reached.
    playout_share: float

    @property
    def log_nodes(self) -> float:
        return math.log10(max(1, self.nodes))


#: Playouts of the casual simulated player per deal, and their first trial number (the
#: calibration plays trials 0, 1, ...: its games never repeat a playout's random stream).
PLAYOUTS = 4
PLAYOUT_TRIAL = 1000

#: Fraction of the node budget each first-move probe gets, and its floor.
PROBE_SHARE = 0.05
MIN_PROBE_NODES = 200


def probe_nodes(max_nodes: int) -> int:
    """The node budget of one first-move probe for a deal rated with `max_nodes`."""
    return max(MIN_PROBE_NODES, int(max_nodes * PROBE_SHARE))


@dataclass(frozen=True, slots=True)
class Measured:
    """`measure`'s answer: the verdict, the best score for scored games, and the features."""

    winnable: bool
    decided: bool  # the solver decided (winnable or proven impossible) within the budget
    best_score: int | None
    features: Features


def measure(
    variant: str,
    seed: int,
    *,
    max_nodes: int | None,
    max_seconds: float | None,
    cpu_time: bool = False,
) -> Measured:
    """Measure a deal's features (see the module's text for the budgets)."""
    clock = time.process_time if cpu_time else time.perf_counter
    start = clock()
    game = new_game(variant, seed)
    if max_nodes is not None:
        result = solve(game, max_nodes=max_nodes, cpu_time=cpu_time)
    else:
        half = None if max_seconds is None else max_seconds / 2
        result = solve(game, max_seconds=half, cpu_time=cpu_time)
    winnable = result.verdict == WINNABLE
    decided = result.verdict in (WINNABLE, IMPOSSIBLE)
    line = list(result.solution)

    first = _legal(game)
    losing = 0
    for move in first:
        child = copy.deepcopy(game)
        child.apply(move)
        if max_nodes is not None:
            probe = solve(child, max_nodes=probe_nodes(max_nodes), cpu_time=cpu_time)
        else:
            left = 0.0 if max_seconds is None else max_seconds - (clock() - start)
            share = max(0.001, left / (2 * max(1, len(first))))
            probe = solve(child, max_seconds=share, cpu_time=cpu_time)
        if probe.verdict == IMPOSSIBLE:
            losing += 1

    branching_total = 0
    pile_reveals = 0
    drawn = 0
    pile_places = _pile_places(game)
    walker = copy.deepcopy(game)
    for text in line:
        branching_total += len(_legal(walker))
        for reveal in walker.play(text).reveals:
            if reveal.at in pile_places:
                pile_reveals += 1
            else:  # a stock card drawn: the waste, or Tri Peaks' foundation
                drawn += 1
    # A stock card is hidden only until it is first drawn (Triple Deck's redeals show the
    # same cards again): count at most the stock's size.
    reveals = pile_reveals + min(drawn, _stock_size(game))
    greedy = play(variant, seed, Level.GREEDY)
    full = max_points(game)
    playouts = [play(variant, seed, Level.CASUAL, PLAYOUT_TRIAL + i) for i in range(PLAYOUTS)]
    features = Features(
        line_moves=len(line),
        nodes=result.stats.nodes,
        first_moves=len(first),
        losing_first_moves=losing,
        dead_end_share=round(losing / len(first), 6) if first else 0.0,
        branching=round(branching_total / len(line), 6) if line else 0.0,
        reveals=reveals,
        hidden_share=round(reveals / len(line), 6) if line else 0.0,
        greedy_share=round(greedy.points / full, 6),
        playout_wins=round(sum(p.won for p in playouts) / PLAYOUTS, 6),
        playout_share=round(sum(p.points for p in playouts) / (PLAYOUTS * full), 6),
    )
    return Measured(winnable, decided, result.best_score, features)


def _legal(game: Game) -> list[str]:
    """The legal moves' texts, without judging whether the game is over (Triple Easthaven's
    judgement is a search; a position on a winning line is not over anyway)."""
    game.defer_over()
    return [str(m) for m in game.legal_moves()]


def _pile_places(game: Game) -> frozenset[str]:
    """The places a face-down pile card turns at: pile numbers 1..n (tableau positions for
    Tri Peaks); stock cards turn on the waste or the foundation pile."""
    state = game.full_state()
    if isinstance(state, TriPeaksState):
        return frozenset(str(i + 1) for i in range(len(state.tableau)))
    if isinstance(state, TableauState):
        return frozenset(str(i + 1) for i in range(len(state.piles)))
    return frozenset()


def _stock_size(game: Game) -> int:
    state = game.full_state()
    if isinstance(state, TriPeaksState | TableauState):
        return len(state.stock)
    return 0
