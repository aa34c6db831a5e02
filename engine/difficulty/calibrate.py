"""Fitting the difficulty model, checking it with simulated players, refitting from results.

* `fit_model(samples)`: from (features, difficulty) samples, a `Model`: the terms are
  standardised over the samples, the weights are a ridge least-squares fit of the difficulty
  on them (`RIDGE`), and the cuts are the scores' quantiles `TIER_QUANTILES` (so about 35 %
  of the deals are easy, 30 % medium, 23 % hard and 12 % expert); for the variants in
  `SEPARATED_CUTS` (plain Triple Deck) the cuts are where the samples' tiers differ most in
  difficulty (`separated_cuts`).
* `simulated_difficulty(outcomes)`: a deal's difficulty for the simulated players: the
  share of their games lost plus the share of the points they left (the latter tells deals
  apart where nobody wins, such as Triple Easthaven's for a greedy player).
* `calibrate(variant, seeds, ...)`: rates the seeds, plays each rated deal at every
  `Level.calibration()` level `trials` times, and reports per tier and level the win rate,
  the moves and the modelled seconds (`Report`); `Report.monotonic()` checks that the win
  rate falls and the points left rise from easy to expert; with fewer than `MIN_WINS` wins
  in all (the scored Triple Deck games) the points share alone is the ordered outcome.
* `refit(results, variant)`: the same fit from real games, (features, won, seconds) rows:
  a deal's difficulty is then its loss rate plus its players' time relative to the
  variant's median (`TIME_WEIGHT`). Needs `MIN_RESULTS` rows and `MIN_DEALS` deals.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field

from . import model_for
from .features import Features, Measured, measure
from .model import TERMS, Model, Tier, standardise, term_values
from .player import Level, PlayOutcome, play

#: Share of the deals below each cut (easy | medium | hard | expert).
TIER_QUANTILES: tuple[float, float, float] = (0.35, 0.65, 0.88)
#: Ridge penalty of the weight fit (on standardised terms; keeps collinear terms tame).
RIDGE = 1.0
#: Weight of the time term in a real result's difficulty.
TIME_WEIGHT = 0.5
#: Real results needed before `refit` answers.
MIN_RESULTS = 200
MIN_DEALS = 20
#: Wins (all tiers and levels) below which a check orders the points share alone: a full
#: clear of a scored Triple Deck game is too rare for the simulated players to rank tiers.
MIN_WINS = 10
#: Variants whose cuts are placed where the fit deals' tiers differ most (`separated_cuts`)
#: rather than at `TIER_QUANTILES`: plain Triple Deck, whose score is weak (a deal's outcome
#: is mostly luck) and whose quantile tiers tied on the win rate (docs/deals.md).
SEPARATED_CUTS = frozenset({"triple-deck"})
#: Least share of the fit deals in each tier of `separated_cuts`: the server looks for each
#: day's tiers among 60 candidate deals, and misses a 10 % tier on 0.2 % of the days.
MIN_TIER_SHARE = 0.10
#: Terms a variant's fit leaves out (weight, mean and spread 0). Triple Easthaven's solver
#: proves its deals after a number of nodes set by the budget (about half of it, whatever
#: the deal), so there `log_nodes` measures the budget (the server rates at --tier-nodes),
#: not the deal.
#: Plain Triple Deck keeps the playouts and the greedy line only: on its fit deals (0 .. 599,
#: 36 games a deal) the solver's terms added nothing out of sample (two-fold correlation of
#: the score with a deal's difficulty 0.316 without them, 0.287 with them; docs/deals.md).
LEFT_OUT: dict[str, frozenset[str]] = {
    "triple-easthaven": frozenset({"log_nodes"}),
    "triple-deck": frozenset(
        {"dead_end_share", "log_nodes", "line_moves", "branching", "hidden_share"}
    ),
}


@dataclass(frozen=True, slots=True)
class Sample:
    """One deal for a fit: its features and how hard it proved (higher is harder)."""

    features: Features
    difficulty: float


@dataclass(frozen=True, slots=True)
class Result:
    """One real game: the deal's features, whether the player won and the seconds taken."""

    features: Features
    won: bool
    seconds: float


def _solve(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """Solve a small symmetric positive-definite system by Gaussian elimination."""
    n = len(rhs)
    a = [[*row, rhs[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        p = a[col][col]
        if abs(p) < 1e-12:
            continue
        for r in range(n):
            if r != col:
                f = a[r][col] / p
                if f:
                    for c in range(col, n + 1):
                        a[r][c] -= f * a[col][c]
    return [a[i][n] / a[i][i] if abs(a[i][i]) >= 1e-12 else 0.0 for i in range(n)]


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile of `values` (linear interpolation between order statistics)."""
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def separated_cuts(
    scores: Sequence[float], difficulties: Sequence[float], *, min_share: float = MIN_TIER_SHARE
) -> tuple[float, float, float]:
    """The three cuts of the samples' scores that make the tiers differ most in difficulty:
    the least of the three gaps between adjacent tiers' mean difficulty is the largest (on a
    tie, the spread of the tiers' means is: their sum of squares about the overall mean,
    weighted by the tiers' sizes), and every tier holds at least `min_share` of the
    samples. A cut lies halfway between two distinct scores, at one of the boundaries
    nearest each whole percent of the samples. ValueError when no three cuts fit."""
    if len(scores) != len(difficulties):
        raise ValueError("one difficulty per score")
    pairs = sorted(zip(scores, difficulties, strict=True))
    n = len(pairs)
    # i: a boundary (the first i samples below it) between two distinct scores.
    bounds = [i for i in range(1, n) if pairs[i - 1][0] < pairs[i][0]]
    candidates = sorted(
        {min(bounds, key=lambda i: (abs(i - n * pct / 100), i)) for pct in range(1, 100)}
        if bounds
        else set()
    )
    prefix = [0.0]
    for _, d in pairs:
        prefix.append(prefix[-1] + d)
    least = math.ceil(min_share * n)
    overall = prefix[n] / n if n else 0.0
    best: tuple[float, float, tuple[int, int, int]] | None = None
    for a, b, c in itertools.combinations(candidates, 3):
        edges = (0, a, b, c, n)
        if any(hi - lo < least for lo, hi in itertools.pairwise(edges)):
            continue
        means = [(prefix[hi] - prefix[lo]) / (hi - lo) for lo, hi in itertools.pairwise(edges)]
        gap = min(y - x for x, y in itertools.pairwise(means))
        spread = sum(
            (hi - lo) * (m - overall) ** 2
            for (lo, hi), m in zip(itertools.pairwise(edges), means, strict=True)
        )
        if best is None or (gap, spread) > best[:2]:
            best = (gap, spread, (a, b, c))
    if best is None:
        raise ValueError(f"no three cuts leave {min_share:.0%} of {n} samples in each tier")
    lo, mid, hi = ((pairs[i - 1][0] + pairs[i][0]) / 2 for i in best[2])
    return (lo, mid, hi)


def fit_model(
    samples: Sequence[Sample], *, leave_out: Collection[str] = (), separated: bool = False
) -> Model:
    """A model whose score is the ridge fit of the samples' difficulty on the standardised
    terms, with cuts at `TIER_QUANTILES` of the samples' scores (`separated`: where the
    samples' tiers differ most, `separated_cuts`). Needs two samples or more. The terms named
    in `leave_out` get weight 0 (their mean and spread are 0 too)."""
    if len(samples) < 2:
        raise ValueError("a fit needs two samples or more")
    out = [i for i, name in enumerate(TERMS) if name in leave_out]
    raw = [
        tuple(0.0 if i in out else x for i, x in enumerate(term_values(s.features)))
        for s in samples
    ]
    means, spreads = standardise(raw)
    z = [
        [(x - m) / (s if s > 0 else 1.0) for x, m, s in zip(row, means, spreads, strict=True)]
        for row in raw
    ]
    target_mean = sum(s.difficulty for s in samples) / len(samples)
    y = [s.difficulty - target_mean for s in samples]
    k = len(TERMS)
    gram = [[sum(row[i] * row[j] for row in z) for j in range(k)] for i in range(k)]
    for i in range(k):
        gram[i][i] += RIDGE
    rhs = [sum(row[i] * t for row, t in zip(z, y, strict=True)) for i in range(k)]
    weights = tuple(round(w, 6) for w in _solve(gram, rhs))
    partial = Model(means, spreads, weights, (0.0, 0.0, 0.0))
    scores = [partial.score(s.features) for s in samples]
    if separated:
        cuts = separated_cuts(scores, [s.difficulty for s in samples])
    else:
        cuts = (
            quantile(scores, TIER_QUANTILES[0]),
            quantile(scores, TIER_QUANTILES[1]),
            quantile(scores, TIER_QUANTILES[2]),
        )
    lo, mid, hi = (round(c, 6) for c in cuts)
    return Model(means, spreads, weights, (lo, mid, hi))


def simulated_difficulty(outcomes: Sequence[PlayOutcome]) -> float:
    """Loss rate plus the mean share of points left, over a deal's simulated games."""
    if not outcomes:
        raise ValueError("no games")
    lost = sum(0 if o.won else 1 for o in outcomes) / len(outcomes)
    left = sum(1 - o.points / o.max_points for o in outcomes) / len(outcomes)
    return lost + left


def refit(results: Iterable[Result], variant: str | None = None) -> Model:
    """Fit a variant's model from real games (see the module's text); ValueError with too few
    results or deals. Games of one deal share its features: they are grouped by them. For
    `variant`, as `fit_played` does: without its `LEFT_OUT` terms, with its kind of cuts."""
    rows = list(results)
    deals: dict[Features, list[Result]] = {}
    for row in rows:
        deals.setdefault(row.features, []).append(row)
    if len(rows) < MIN_RESULTS or len(deals) < MIN_DEALS:
        raise ValueError(
            f"refit needs {MIN_RESULTS} results on {MIN_DEALS} deals; "
            f"got {len(rows)} on {len(deals)}"
        )
    median = statistics.median(r.seconds for r in rows) or 1.0
    samples = []
    for features, games in deals.items():
        lost = sum(0 if g.won else 1 for g in games) / len(games)
        slow = statistics.fmean(g.seconds for g in games) / median
        samples.append(Sample(features, lost + TIME_WEIGHT * slow))
    return fit_model(
        samples,
        leave_out=LEFT_OUT.get(variant or "", frozenset()),
        separated=variant in SEPARATED_CUTS,
    )


@dataclass(frozen=True, slots=True)
class Played:
    """One calibration deal: what was measured and the simulated games, level by level."""

    seed: int
    measured: Measured
    games: dict[Level, tuple[PlayOutcome, ...]]

    def outcomes(self) -> list[PlayOutcome]:
        return [o for games in self.games.values() for o in games]


def collect(
    variant: str,
    seeds: Iterable[int],
    *,
    per_deal_nodes: int,
    trials: int = 2,
    progress: Callable[[int], None] | None = None,
) -> list[Played]:
    """Measure each seed and play it at every calibration level `trials` times."""
    out = []
    for count, seed in enumerate(seeds, start=1):
        measured = measure(variant, seed, max_nodes=per_deal_nodes, max_seconds=None)
        games = {
            level: tuple(play(variant, seed, level, trial) for trial in range(trials))
            for level in Level.calibration()
        }
        out.append(Played(seed, measured, games))
        if progress is not None:
            progress(count)
    return out


def fit_played(played: Sequence[Played], variant: str | None = None) -> Model:
    """A model fitted on the winnable deals of a collection and their simulated games (for
    `variant`, without its `LEFT_OUT` terms)."""
    return fit_model(
        [
            Sample(p.measured.features, simulated_difficulty(p.outcomes()))
            for p in played
            if p.measured.winnable
        ],
        leave_out=LEFT_OUT.get(variant or "", frozenset()),
        separated=variant in SEPARATED_CUTS,
    )


@dataclass(slots=True)
class Cell:
    """A tier's results at one level: games, wins, moves and modelled seconds."""

    games: int = 0
    wins: int = 0
    moves: int = 0
    seconds: float = 0.0
    points_left: float = 0.0

    def add(self, outcome: PlayOutcome) -> None:
        self.games += 1
        self.wins += outcome.won
        self.moves += outcome.moves
        self.seconds += outcome.seconds
        self.points_left += 1 - outcome.points / outcome.max_points

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def mean_moves(self) -> float:
        return self.moves / self.games if self.games else 0.0

    @property
    def mean_seconds(self) -> float:
        return self.seconds / self.games if self.games else 0.0

    @property
    def mean_left(self) -> float:
        return self.points_left / self.games if self.games else 0.0


@dataclass(slots=True)
class Report:
    """A calibration's figures: deals per tier, and per (tier, level) a `Cell`."""

    variant: str
    rated: int = 0
    unrated: int = 0
    deals: dict[Tier, int] = field(default_factory=dict)
    cells: dict[tuple[Tier, Level], Cell] = field(default_factory=dict)

    def tiers(self) -> list[Tier]:
        return [t for t in Tier.ordered() if self.deals.get(t)]

    def pooled(self, tier: Tier) -> Cell:
        """A tier's games at every level together."""
        total = Cell()
        for level in Level.calibration():
            c = self.cells[(tier, level)]
            total.games += c.games
            total.wins += c.wins
            total.moves += c.moves
            total.seconds += c.seconds
            total.points_left += c.points_left
        return total

    def wins_count(self) -> bool:
        """Whether the win rate is an outcome the tiers must order: the simulated players
        won at least `MIN_WINS` games over all tiers. Below that (the scored Triple Deck
        games, where a full clear is rare for them) the outcome is the points share alone."""
        return sum(self.pooled(t).wins for t in self.tiers()) >= MIN_WINS

    @property
    def outcome(self) -> str:
        """The outcome `monotonic` orders: "wins and points share" or "points share"."""
        return "wins and points share" if self.wins_count() else "points share"

    def monotonic(self) -> bool:
        """Over the tiers that have deals, all levels pooled: the share of points left never
        falls from easy to expert, and (when wins are not too rare, `wins_count`) the win
        rate never rises."""
        cells = [self.pooled(t) for t in self.tiers()]
        wins = self.wins_count()
        return all(
            (not wins or b.win_rate <= a.win_rate) and b.mean_left >= a.mean_left
            for a, b in itertools.pairwise(cells)
        )

    def time_falls(self) -> bool:
        """Whether the modelled seconds per game, all levels pooled, never rise from easy to
        expert (a harder deal is lost sooner). `monotonic` does not ask it: in Tri Peaks every
        game runs through the stock and the time is flat (docs/deals.md)."""
        cells = [self.pooled(t) for t in self.tiers()]
        return all(b.mean_seconds <= a.mean_seconds for a, b in itertools.pairwise(cells))

    def table(self) -> str:
        """The figures as a Markdown table."""
        lines = [
            f"{self.variant}: {self.rated} deals rated, {self.unrated} not certified; "
            f"outcome ordered: {self.outcome}",
            "",
            "| tier | deals | level | win rate | points left | moves | seconds |",
            "|---|---|---|---|---|---|---|",
        ]
        for tier in self.tiers():
            rows = [(lv.skill.name, self.cells[(tier, lv)]) for lv in Level.calibration()]
            for name, c in [*rows, ("all", self.pooled(tier))]:
                lines.append(
                    f"| {tier.value} | {self.deals[tier]} | {name} | "
                    f"{c.win_rate:.0%} | {c.mean_left:.1%} | {c.mean_moves:.0f} | "
                    f"{c.mean_seconds:.0f} |"
                )
        return "\n".join(lines)


def tabulate(variant: str, played: Sequence[Played], model: Model) -> Report:
    """Tier each winnable deal with `model` and sum its simulated games into the tier."""
    report = Report(variant)
    for tier in Tier.ordered():
        for level in Level.calibration():
            report.cells[(tier, level)] = Cell()
    for p in played:
        if not p.measured.winnable:
            report.unrated += 1
            continue
        tier = model.tier(model.score(p.measured.features))
        report.rated += 1
        report.deals[tier] = report.deals.get(tier, 0) + 1
        for level, games in p.games.items():
            for game in games:
                report.cells[(tier, level)].add(game)
    return report


def calibrate(
    variant: str,
    seeds: Iterable[int],
    *,
    per_deal_nodes: int,
    trials: int = 2,
    model: Model | None = None,
    progress: Callable[[int], None] | None = None,
) -> Report:
    """Collect the seeds and tabulate them with `model` (default: the variant's own)."""
    played = collect(
        variant, seeds, per_deal_nodes=per_deal_nodes, trials=trials, progress=progress
    )
    return tabulate(variant, played, model if model is not None else model_for(variant))
