"""The difficulty model (engine/difficulty): features, rating, tiers, simulated players, refit
and `python -m engine rate`."""

from __future__ import annotations

import dataclasses
import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine import new_game
from engine.difficulty import Features, Rating, Tier, find_tiers, rate
from engine.difficulty.calibrate import (
    LEFT_OUT,
    MIN_RESULTS,
    MIN_WINS,
    Cell,
    Report,
    Result,
    Sample,
    calibrate,
    fit_model,
    refit,
    separated_cuts,
)
from engine.difficulty.model import MODELS, TERMS
from engine.difficulty.player import Level, PlayOutcome, play
from engine.errors import UnknownVariant
from engine.solvers import solve
from engine.variants import VARIANT_IDS

ROOT = Path(__file__).resolve().parents[2]
NODES = 20_000


def test_tiers_are_ordered() -> None:
    assert [t.value for t in Tier.ordered()] == ["easy", "medium", "hard", "expert"]
    assert [t.rank for t in Tier.ordered()] == [0, 1, 2, 3]
    assert Tier("hard") is Tier.HARD


def test_every_variant_has_a_model_with_ascending_cuts() -> None:
    assert set(MODELS) == set(VARIANT_IDS)
    for model in MODELS.values():
        assert list(model.cuts) == sorted(model.cuts)


@pytest.mark.parametrize("variant", ["fourteen-out", "triple-triangle"])
def test_rate_is_deterministic_for_a_node_budget(variant: str) -> None:
    first = rate(variant, 5, max_nodes=NODES)
    # A time budget is ignored once a node budget is given: a tiny one changes nothing.
    second = rate(variant, 5, max_nodes=NODES, max_seconds=0.001)
    assert first == second
    assert first.winnable and first.tier is not None
    assert first.score == MODELS[variant].score(first.features)
    assert first.tier is MODELS[variant].tier(first.score)


def test_features_of_a_hand_checked_fourteen_out_deal() -> None:
    # Seed 1's top cards: 6S 3C AS 9H 10S 4H 8C 8H 2C KS 6D 10C. Pairs summing to 14:
    # 6S-8C, 6S-8H, 6D-8C, 6D-8H, AS-KS, 10S-4H, 10C-4H: seven first moves.
    features = rate("fourteen-out", 1, max_nodes=NODES).features
    assert features.first_moves == 7
    assert features.line_moves == 26  # 52 cards, two a move
    assert features.reveals == 0 and features.hidden_share == 0.0  # every card face up
    assert features.losing_first_moves == 0 and features.dead_end_share == 0.0
    assert 1.0 <= features.branching <= 7.0
    assert 0.0 <= features.playout_wins <= 1.0 and 0.0 < features.playout_share <= 1.0


def test_features_of_a_hand_checked_tri_peaks_deal() -> None:
    # Seed 1: 6H on the foundation; the bottom row shows 7H AH 7C 9H KC 3D 8S 2C 6D 10H, so
    # 7H, 7C and the draw are the first moves. A win clears the 28 tableau cards, turning
    # the 18 face-down ones, and every draw turns one stock card (never seen again).
    rating = rate("triple-triangle", 1, max_nodes=NODES)
    line = solve(new_game("triple-triangle", 1), max_nodes=NODES).solution
    features = rating.features
    assert features.first_moves == 3
    assert features.line_moves == len(line) == 28 + line.count("d")
    assert features.reveals == 18 + line.count("d")
    assert features.hidden_share == round(features.reveals / len(line), 6)


def test_an_unproven_deal_has_no_tier() -> None:
    rating = rate("fourteen-out", 1, max_nodes=10)  # too few nodes for a 26-move line
    assert not rating.winnable and rating.tier is None
    assert rating.features.line_moves == 0


def test_a_time_budget_alone_rates_too_and_bad_input_is_refused() -> None:
    rating = rate("fourteen-out", 1, max_seconds=5.0)
    assert rating.winnable and rating.features.line_moves == 26 and rating.tier is not None
    with pytest.raises(UnknownVariant):
        rate("klondike", 1, max_nodes=NODES)
    with pytest.raises(ValueError):
        rate("fourteen-out", -1, max_nodes=NODES)


def test_find_tiers_takes_the_first_deal_of_each_tier_in_order() -> None:
    seeds = list(range(30))
    found = find_tiers("fourteen-out", seeds, per_deal_nodes=NODES, budget_deals=30)
    assert list(found) == [t for t in Tier.ordered() if t in found]
    assert len(found) >= 3
    last = max(r.seed for r in found.values())
    tiers = [rate("fourteen-out", s, max_nodes=NODES).tier for s in seeds[: last + 1]]
    for tier, rating in found.items():
        assert rating.tier is tier and tiers.index(tier) == rating.seed
    # A budget of one deal rates only the first seed.
    one = find_tiers("fourteen-out", seeds, per_deal_nodes=NODES, budget_deals=1)
    assert [r.seed for r in one.values()] == [0]


def test_the_simulated_player_plays_from_its_view_only() -> None:
    # Same deal, same stream: same game. The player's choices cannot depend on the hidden
    # cards: two deals whose visible layouts agree get the same first move.
    a = play("triple-triangle", 3, Level.CASUAL, 0)
    assert a == play("triple-triangle", 3, Level.CASUAL, 0)
    assert a.max_points == 28 and 0 <= a.points <= 28
    assert a.won == (a.points == 28)


def test_tiers_order_the_simulated_players_results() -> None:
    # A fixed small set of deals the model was not fitted on (the full calibration, with
    # the points left monotonic too, is benchmarks/calibrate.py and docs/deals.md): pooled
    # over the skill levels, the win rate falls from easy to expert and the expert deals
    # leave more points than the easy ones.
    report = calibrate("fourteen-out", range(700, 760), per_deal_nodes=NODES, trials=1)
    tiers = report.tiers()
    assert tiers == list(Tier.ordered())
    wins = [report.pooled(t).win_rate for t in tiers]
    left = [report.pooled(t).mean_left for t in tiers]
    assert wins == sorted(wins, reverse=True) and wins[0] > 3 * wins[-1]
    assert left[-1] > 2 * left[0]
    moves = [report.pooled(t).mean_moves for t in tiers]
    assert moves[-1] < moves[0]  # lost games end sooner


def _features(x: float) -> Features:
    return Features(
        line_moves=26,
        nodes=26 + int(100 * x),
        first_moves=6,
        losing_first_moves=0,
        dead_end_share=0.0,
        branching=4.0,
        reveals=0,
        hidden_share=0.0,
        greedy_share=1.0 - x / 2,
        playout_wins=1.0 - x,
        playout_share=1.0 - x / 3,
    )


def test_fit_orders_deals_by_difficulty() -> None:
    samples = [Sample(_features(i / 40), i / 40) for i in range(40)]
    model = fit_model(samples)
    scores = [model.score(s.features) for s in samples]
    assert scores == sorted(scores)
    tiers = [model.tier(s).rank for s in scores]
    assert tiers == sorted(tiers) and tiers[0] == 0 and tiers[-1] == 3


def test_separated_cuts_put_the_tiers_where_the_difficulty_steps() -> None:
    # 100 deals whose difficulty steps up at the 20th, 50th and 80th: the quantile cuts
    # (35, 65, 88 %) would mix the steps; the separated ones find them, halfway between two
    # scores, and keep every tier at least `min_share` of the deals.
    scores = [float(i) for i in range(100)]
    steps = [float((i >= 20) + (i >= 50) + (i >= 80)) for i in range(100)]
    assert separated_cuts(scores, steps) == (19.5, 49.5, 79.5)
    cuts = separated_cuts(scores, steps, min_share=0.25)
    edges = [0, *(sum(s < c for s in scores) for c in cuts), 100]
    assert all(hi - lo >= 25 for lo, hi in itertools.pairwise(edges))
    with pytest.raises(ValueError, match="no three cuts"):
        separated_cuts(scores, steps, min_share=0.3)


def test_separated_cuts_never_split_equal_scores() -> None:
    # Two deals a score (a Triple Deck score takes few values: four playouts): a cut lies
    # between two distinct scores, so equal scores share a tier.
    scores = [float(i // 2) for i in range(60)]
    noisy = [i / 60 + (0.3 if i % 2 else 0.0) for i in range(60)]
    lo, mid, hi = separated_cuts(scores, noisy)
    assert lo < mid < hi
    assert all(c % 1 == 0.5 for c in (lo, mid, hi))


def test_fit_model_places_separated_cuts_for_plain_triple_deck() -> None:
    samples = [Sample(_features(i / 40), (i // 10) / 4) for i in range(40)]
    model = fit_model(samples, separated=True)
    ranks = [model.tier(model.score(s.features)).rank for s in samples]
    assert ranks == [i // 10 for i in range(40)]
    assert fit_model(samples).cuts != model.cuts


def test_refit_from_real_results() -> None:
    # 40 deals, 6 games each; the harder the deal (x), the fewer wins and the more seconds.
    rows = []
    for i in range(40):
        x = i / 40
        for g in range(6):
            rows.append(Result(_features(x), won=g >= 6 * x, seconds=300 + 600 * x))
    model = refit(rows)
    ranks = [model.tier(model.score(_features(i / 40))).rank for i in range(40)]
    assert ranks == sorted(ranks) and ranks[0] == 0 and ranks[-1] == 3
    with pytest.raises(ValueError, match="refit needs"):
        refit(rows[: MIN_RESULTS - 1])
    # A variant's refit is fitted as its calibration was: plain Triple Deck's separated cuts,
    # Easthaven without the node count; the other variants as before.
    assert refit(rows, "fourteen-out") == model
    assert refit(rows, "triple-deck").cuts != model.cuts
    east = refit(rows, "triple-easthaven")
    assert all(
        w == 0
        for name, w in zip(TERMS, east.weights, strict=True)
        if name in LEFT_OUT["triple-easthaven"]
    )
    assert any(
        w != 0
        for name, w in zip(TERMS, model.weights, strict=True)
        if name in LEFT_OUT["triple-easthaven"]
    )


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", "rate", *args],
        text=True,
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )


def test_cli_prints_features_and_tier() -> None:
    expected = rate("fourteen-out", 1, max_nodes=NODES)
    assert expected.tier is not None
    out = _run("fourteen-out", "--seed", "1", "--nodes", str(NODES))
    assert out.returncode == 0, out.stderr
    for field in dataclasses.fields(Features):
        assert field.name in out.stdout
    assert f"tier: {expected.tier.value}" in out.stdout
    out = _run("fourteen-out", "--seed", "1", "--nodes", str(NODES), "--json")
    data = json.loads(out.stdout)
    assert data["tier"] == expected.tier.value and data["score"] == expected.score
    assert Features(**data["features"]) == expected.features


def test_cli_refuses_a_missing_seed() -> None:
    out = _run("fourteen-out")
    assert out.returncode == 2 and "--seed is required" in out.stderr


def test_rating_is_a_frozen_value() -> None:
    rating = rate("fourteen-out", 2, max_nodes=NODES)
    assert isinstance(rating, Rating)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rating.score = 0.0  # type: ignore[misc]


def _outcome(won: bool, points: int) -> PlayOutcome:
    return PlayOutcome(won=won, moves=50, seconds=60.0, points=points, max_points=100)


def _report(per_tier: list[tuple[int, int]]) -> Report:
    # Each tier: (wins, points scored by every game) over 10 games per calibration level.
    report = Report("triple-deck")
    for tier, (wins, points) in zip(Tier.ordered(), per_tier, strict=True):
        report.deals[tier] = 10
        for level in Level.calibration():
            cell = report.cells[(tier, level)] = Cell()
            for game in range(10):
                cell.add(_outcome(game < wins, 100 if game < wins else points))
    return report


def test_points_share_is_the_outcome_when_wins_are_too_rare() -> None:
    # Three stray wins in the hard tier out of 120 games: too few to rank tiers, so the
    # points share alone is ordered (it falls from easy to expert here).
    rare = _report([(0, 80), (0, 60), (1, 40), (0, 20)])
    assert sum(rare.pooled(t).wins for t in rare.tiers()) < MIN_WINS
    assert rare.outcome == "points share" and rare.monotonic()
    assert "outcome ordered: points share" in rare.table()
    # The same points with enough wins out of order: the win rate counts and fails.
    many = _report([(1, 80), (1, 60), (3, 40), (1, 20)])
    assert many.outcome == "wins and points share" and not many.monotonic()
    # Points share out of order fails whatever the wins.
    assert not _report([(0, 60), (0, 80), (0, 40), (0, 20)]).monotonic()
