"""Difficulty of a deal: measured features, a score per variant and four tiers.

    rating = rate("triple-triangle", 7, max_nodes=50_000)
    rating.winnable, rating.features, rating.score, rating.tier      # Tier.EASY .. Tier.EXPERT
    find_tiers("fourteen-out", range(100), per_deal_nodes=50_000, budget_deals=100)
    # {Tier.EASY: Rating(...), Tier.MEDIUM: ..., ...}: the first deal of each tier

A deal is rated only when the full-information solver proves it winnable within the budget
(for the Triple Deck games too: a line putting every card on the foundations, the full
score); otherwise its tier is None. The features (`Features`) come from the solver's search,
probes of the first moves and a greedy player's line (`features`); the score is a weighted
sum of standardised features with per-variant data fixed in code (`model`); the tiers are
calibrated with simulated players (`player`, `calibrate`) and can be refitted from real
results (`calibrate.refit`). docs/deals.md, "Difficulty", has the formula and the figures.

Pure Python, no I/O; deterministic for a node budget (`max_nodes`): then the time budget is
not used, so every process rates a deal the same. A time budget alone is for interactive use.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .features import Features, measure
from .model import MODELS, Model, Tier

#: Default time budget of `rate` (seconds) when no node budget is given.
DEFAULT_SECONDS = 10.0


@dataclass(frozen=True)
class Rating:
    """A deal's difficulty: `tier` is None when the deal is not certified winnable within the
    budget (then `score` is still computed from what was measured)."""

    variant: str
    seed: int
    winnable: bool
    features: Features
    score: float
    tier: Tier | None


def model_for(variant: str) -> Model:
    """The variant's score data; KeyError for an unknown variant."""
    return MODELS[variant]


def rate(
    variant: str,
    seed: int,
    *,
    max_seconds: float = DEFAULT_SECONDS,
    max_nodes: int | None = None,
    cpu_time: bool = False,
) -> Rating:
    """Rate one deal. With `max_nodes` the answer depends only on (variant, seed, max_nodes);
    without it, the search runs for at most about `max_seconds` (wall time, or this process's
    CPU time with `cpu_time`). Raises UnknownVariant / ValueError for a bad variant or seed."""
    measured = measure(  # raises UnknownVariant for an unknown variant
        variant,
        seed,
        max_nodes=max_nodes,
        max_seconds=None if max_nodes is not None else max_seconds,
        cpu_time=cpu_time,
    )
    model = model_for(variant)
    score = model.score(measured.features)
    tier = model.tier(score) if measured.winnable else None
    return Rating(variant, seed, measured.winnable, measured.features, score, tier)


def find_tiers(
    variant: str, seeds: Iterable[int], *, per_deal_nodes: int, budget_deals: int
) -> dict[Tier, Rating]:
    """The first deal of each tier among `seeds`, rated in order with `per_deal_nodes` each,
    looking at `budget_deals` seeds at most; stops once every tier has a deal. A tier with no
    deal among the seeds looked at is absent."""
    found: dict[Tier, Rating] = {}
    for count, seed in enumerate(seeds):
        if count >= budget_deals or len(found) == len(Tier):
            break
        rating = rate(variant, seed, max_nodes=per_deal_nodes)
        if rating.tier is not None and rating.tier not in found:
            found[rating.tier] = rating
    return {tier: found[tier] for tier in Tier.ordered() if tier in found}


__all__ = [
    "DEFAULT_SECONDS",
    "Features",
    "Model",
    "Rating",
    "Tier",
    "find_tiers",
    "model_for",
    "rate",
]
