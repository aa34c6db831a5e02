"""The Triple Deck games' simulated players and calibrated tiers (engine/difficulty,
issue #28): the player sees only the view, plays better than the shared player did and keeps
a spread between levels; the tiers order its results."""

from __future__ import annotations

import statistics

import pytest

from engine import new_game
from engine.difficulty import Tier
from engine.difficulty import tripledeck_player as tdp
from engine.difficulty.calibrate import Report, calibrate
from engine.difficulty.player import Level, PlayOutcome, play

VARIANTS = ("triple-deck", "triple-deck-kings")
NODES = 20_000


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_player_is_deterministic_and_play_uses_it(variant: str) -> None:
    a = play(variant, 4, Level.CASUAL, 1)
    assert a == tdp.play(variant, 4, Level.CASUAL, 1) == play(variant, 4, Level.CASUAL, 1)
    assert a.max_points == (936 if variant == "triple-deck" else 1092)
    assert a.won == (a.points == a.max_points)
    assert a.moves <= tdp.MAX_MOVES_PER_CARD * new_game(variant, 4).total_cards


def test_time_counts_decisions_glances_and_dead_ends() -> None:
    # A turn with moves worth playing is a decision (Hick's law over them and the draw), a
    # draw with nothing noticed a glance, a fruitless pass a look over the whole table.
    skill = Level.SKILLED.skill
    assert tdp.Tally(glances=8).seconds(skill) == pytest.approx(8 * tdp.GLANCE * skill.base_s)
    decision = tdp.Tally(decisions=1, bits=1.0).seconds(skill)
    assert decision == pytest.approx(skill.think_s(1))
    assert decision > tdp.Tally(glances=1).seconds(skill)
    dead_end = tdp.Tally(fruitless=1).seconds(skill)
    assert dead_end == pytest.approx(skill.per_bit_s * tdp.DEAD_END_BITS)
    for level in Level.calibration():
        outcome, tally = tdp.play_tallied("triple-deck", 11, level, 2)
        assert outcome == play("triple-deck", 11, level, 2)
        assert outcome.seconds == round(tally.seconds(level.skill), 3)
        assert outcome.moves <= tally.glances + tally.decisions <= outcome.moves + 1
        assert tally.glances > 0 and tally.decisions > 0


def _games(variant: str, level: Level, seeds: range) -> list[PlayOutcome]:
    return [play(variant, seed, level, 0) for seed in seeds]


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_players_win_and_keep_a_spread_between_levels(variant: str) -> None:
    # 30 deals: the shared player's greedy line cleared 6 of them (Kings: 1), its noisy
    # levels 2 to 5; this one's greedy line clears 27 (25), and attention separates the
    # levels (docs/deals.md, "The Triple Deck games' player").
    seeds = range(300, 330)
    by_level = {lv: _games(variant, lv, seeds) for lv in (Level.GREEDY, *Level.calibration())}
    wins = {lv: sum(o.won for o in games) for lv, games in by_level.items()}
    left = {
        lv: statistics.fmean(1 - o.points / o.max_points for o in games)
        for lv, games in by_level.items()
    }
    assert wins[Level.GREEDY] >= 20
    assert wins[Level.SKILLED] > wins[Level.NOVICE]
    assert left[Level.NOVICE] > left[Level.CASUAL] > left[Level.GREEDY]
    novice_s = statistics.fmean(o.seconds for o in by_level[Level.NOVICE])
    skilled_s = statistics.fmean(o.seconds for o in by_level[Level.SKILLED])
    assert novice_s > 1.5 * skilled_s


def _outcomes(report: Report) -> tuple[list[float], list[float]]:
    tiers = report.tiers()
    return (
        [report.pooled(t).win_rate for t in tiers],
        [report.pooled(t).mean_left for t in tiers],
    )


#: Fixed deals among the check seeds (fit 0..599, check 100000..; docs/deals.md) that the
#: models in code tier easy and expert: the first ten of each.
FIXED: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "triple-deck": (
        (100003, 100012, 100026, 100029, 100031, 100035, 100050, 100060, 100066, 100073),
        (100005, 100008, 100014, 100032, 100037, 100047, 100056, 100062, 100077, 100088),
    ),
    "triple-deck-kings": (
        (100002, 100005, 100008, 100011, 100016, 100017, 100022, 100023, 100024, 100033),
        (100003, 100006, 100018, 100019, 100026, 100027, 100030, 100035, 100036, 100039),
    ),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_tiers_order_the_players_results_on_a_small_fixed_set(variant: str) -> None:
    # Ten games per level on each deal: the model in code tiers them easy and expert, and
    # the expert deals leave more points than the easy ones. The gap is small (a Triple
    # Deck deal's outcome is mostly the luck of the draw-three order for a player who
    # cannot see the stock). Triple Deck's refitted model (playouts and greedy line, 36
    # games a fit deal, separated cuts) orders the win rate too: 47 % won on the easy deals,
    # 41 % on the expert ones, 3.9 % and 4.4 % of the points left. With Kings the win rate is within
    # noise on twenty deals (40 % won on the easy ones, 41 % on the expert), so it is the
    # slow test's.
    easy, expert = FIXED[variant]
    report = calibrate(variant, (*easy, *expert), per_deal_nodes=50_000, trials=10)
    assert report.deals == {Tier.EASY: len(easy), Tier.EXPERT: len(expert)}
    wins, left = _outcomes(report)
    assert left[0] < left[-1]
    if variant == "triple-deck":
        assert wins[0] > wins[-1] + 0.05


@pytest.mark.slow
@pytest.mark.timeout(1800)  # about 2 CPU minutes
def test_the_check_on_unseen_deals_kings() -> None:
    # The documented check (docs/deals.md, "Calibration figures"): the 300 unseen deals,
    # four games per level, pooled over the levels: the win rate never rises and the points
    # left never fall from easy to expert. The modelled time does not follow (flat within
    # 1 %, the expert tier the slowest).
    report = calibrate(
        "triple-deck-kings", range(100_000, 100_300), per_deal_nodes=50_000, trials=4
    )
    assert report.tiers() == list(Tier.ordered())
    assert report.outcome == "wins and points share"
    assert report.monotonic(), report.table()
    seconds = [report.pooled(t).mean_seconds for t in report.tiers()]
    assert max(seconds) < 1.02 * min(seconds)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # about 8 CPU minutes
def test_the_check_on_unseen_deals_triple_deck() -> None:
    # Plain Triple Deck's check: 600 unseen deals, twelve games per level, with the cuts
    # placed where the fit deals' tiers differ most (calibrate.separated_cuts). Pooled over
    # the levels the win rate falls (44.3, 42.3, 40.3, 35.9 %) and the points left rise
    # (3.88, 4.12, 4.45, 4.81 %) from easy to expert: calibrated. The modelled time is flat
    # (755 to 762 s): a lost game still plays the stock through (docs/deals.md).
    report = calibrate("triple-deck", range(100_000, 100_600), per_deal_nodes=50_000, trials=12)
    assert report.tiers() == list(Tier.ordered())
    assert [report.deals[t] for t in report.tiers()] == [63, 391, 63, 83]
    assert report.outcome == "wins and points share"
    assert report.monotonic(), report.table()
    wins, _ = _outcomes(report)
    assert wins[0] > wins[-1] + 0.07
    seconds = [report.pooled(t).mean_seconds for t in report.tiers()]
    assert max(seconds) < 1.02 * min(seconds)
