"""The difficulty score and the tiers: a documented formula with per-variant data.

A deal's score is a weighted sum of its standardised features (docs/deals.md, "Difficulty"):

    score = sum(weight[f] * (x[f] - mean[f]) / spread[f])  over the model's terms f

where x[f] is the term's value on the deal (`term_values`), and mean, spread and weight are
the variant's `Model` data below. Higher is harder. The tier is where the score falls among
the variant's three cut points (`Model.cuts`, ascending): below the first is easy, then
medium, hard, and expert from the last one up.

The data are fitted by `calibrate.fit_model` on the variant's calibration seeds and written
here by hand (they are part of the code: a tier must not change when a file changes);
`calibrate.refit` fits them again from real results.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from .features import Features


class Tier(enum.Enum):
    """A difficulty tier, easiest first."""

    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"
    EXPERT = "expert"

    @property
    def rank(self) -> int:
        """0 for easy up to 3 for expert."""
        return _RANKS[self]

    @classmethod
    def ordered(cls) -> tuple[Tier, ...]:
        """The tiers, easiest first."""
        return (cls.EASY, cls.MEDIUM, cls.HARD, cls.EXPERT)


_RANKS = {tier: i for i, tier in enumerate(Tier.ordered())}

#: The model's terms, in order: each is a number computed from the features.
TERMS: tuple[str, ...] = (
    "playout_loss",  # 1 - playout_wins
    "playout_gap",  # 1 - playout_share
    "greedy_gap",  # 1 - greedy_share: how far the greedy line falls short
    "dead_end_share",
    "log_nodes",
    "line_moves",
    "branching",
    "hidden_share",
)


def term_values(features: Features) -> tuple[float, ...]:
    """The model's terms on one deal, in `TERMS` order."""
    return (
        1.0 - features.playout_wins,
        1.0 - features.playout_share,
        1.0 - features.greedy_share,
        features.dead_end_share,
        features.log_nodes,
        float(features.line_moves),
        features.branching,
        features.hidden_share,
    )


@dataclass(frozen=True, slots=True)
class Model:
    """One variant's score data: per term its mean, spread and weight; the three cuts."""

    means: tuple[float, ...]
    spreads: tuple[float, ...]
    weights: tuple[float, ...]
    cuts: tuple[float, float, float]

    def score(self, features: Features) -> float:
        total = 0.0
        for x, mean, spread, weight in zip(
            term_values(features), self.means, self.spreads, self.weights, strict=True
        ):
            total += weight * (x - mean) / (spread if spread > 0 else 1.0)
        return round(total, 6)

    def tier(self, score: float) -> Tier:
        for tier, cut in zip(Tier.ordered(), self.cuts, strict=False):
            if score < cut:
                return tier
        return Tier.EXPERT


def standardise(rows: list[tuple[float, ...]]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Means and spreads (population standard deviations) of each term over `rows`."""
    n = len(rows)
    width = len(TERMS)
    means = tuple(sum(r[i] for r in rows) / n for i in range(width))
    spreads = tuple(math.sqrt(sum((r[i] - means[i]) ** 2 for r in rows) / n) for i in range(width))
    return tuple(round(m, 6) for m in means), tuple(round(s, 6) for s in spreads)


# -- the fitted data, per variant: `python -m engine rate --calibrate VARIANT --deals N --fit`
# prints an entry (benchmarks/calibrate.py refits them all; docs/deals.md has the figures).

MODELS: dict[str, Model] = {
    "fourteen-out": Model(
        means=(0.745455, 0.189825, 0.166853, 0.032685, 1.61094, 26.0, 3.919441, 0.0),
        spreads=(0.29034, 0.148611, 0.175435, 0.119274, 0.397407, 0.0, 0.895676, 0.0),
        weights=(0.147124, 0.071848, 0.080472, 0.023871, 0.033595, 0.0, -0.021706, 0.0),
        cuts=(-0.09848, 0.103225, 0.30868),
    ),
    "triple-fourteens": Model(
        means=(0.7075, 0.060449, 0.054616, 0.0, 1.947397, 78.0, 16.458462, 0.0),
        spreads=(0.264705, 0.0392, 0.051109, 0.0, 0.268266, 0.0, 3.061403, 0.0),
        weights=(0.093995, 0.003389, 0.022514, 0.0, -0.005933, 0.0, -0.05485, 0.0),
        cuts=(-0.04571, 0.060746, 0.147837),
    ),
    "triple-triangle": Model(
        means=(0.588129, 0.050874, 0.031603, 0.0, 2.257512, 47.363309, 1.899724, 0.787972),
        spreads=(0.343704, 0.046402, 0.048103, 0.0, 0.876354, 3.007369, 0.093034, 0.014118),
        weights=(0.141656, 0.008393, 0.060464, 0.0, 0.078669, 0.019967, 0.00349, -0.000869),
        cuts=(-0.124303, 0.102145, 0.296618),
    ),
    "triple-deck": Model(
        means=(0.596154, 0.035697, 0.008404, 0.0, 0.0, 0.0, 0.0, 0.0),
        spreads=(0.247381, 0.020226, 0.027402, 0.0, 0.0, 0.0, 0.0, 0.0),
        weights=(0.005384, 0.014751, 0.021392, 0.0, 0.0, 0.0, 0.0, 0.0),
        cuts=(-0.028448, 0.009434, 0.030841),
    ),
    "triple-deck-kings": Model(
        means=(0.616191, 0.035415, 0.008629, 0.0, 2.328327, 417.130872, 3.947976, 0.361148),
        spreads=(0.249214, 0.020356, 0.030242, 0.0, 0.235051, 44.399532, 0.92755, 0.037443),
        weights=(0.013113, -0.001893, 0.006756, 0.0, 0.001417, 0.040891, 0.000356, 0.03967),
        cuts=(-0.006477, 0.004001, 0.014835),
    ),
    "triple-easthaven": Model(
        means=(0.256977, 0.155985, 0.144603, 0.0, 0.0, 265.111628, 46.579119, 0.543985),
        spreads=(0.289262, 0.192953, 0.266238, 0.0, 0.0, 10.325701, 6.235122, 0.021029),
        weights=(-0.146722, 0.384252, 0.11616, 0.0, 0.0, -0.038417, 0.004351, -0.058199),
        cuts=(-0.229853, 0.011354, 0.502757),
    ),
}
