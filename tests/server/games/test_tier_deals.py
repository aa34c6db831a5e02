"""The day's tier deals (issue #28 part 2): certified by `engine.difficulty.find_tiers` in
the solver pool, once per variant and day across processes, never on a request; a tier with
no deal in the budget is absent, and says so."""

from __future__ import annotations

import datetime as dt
import json

import redis.asyncio

from engine.difficulty import Tier, rate
from engine.difficulty.calibrate import simulated_difficulty
from engine.difficulty.player import Level, play
from server.games.deals import DailyDeals, DayTiers, SolverPool, tier_candidate_seed
from server.redis import keys
from server.runtime.clock import ManualClock

DAY = dt.date(2030, 6, 15)
VARIANT = "fourteen-out"
SECRET = b"tiers"
NODES = 3_000


def deals(client: redis.asyncio.Redis, clock: ManualClock, budget: int) -> DailyDeals:
    return DailyDeals(
        client, clock, SECRET, SolverPool(1), certify=True, tier_nodes=NODES, tier_deals=budget
    )


async def test_tiers_are_the_first_deal_of_each_tier_stored_once_for_every_process(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    a, b = deals(redis_client, clock, 12), deals(redis_client, clock, 12)
    try:
        found = await a.tiers(VARIANT, DAY)
        candidates = [tier_candidate_seed(SECRET, VARIANT, DAY, i) for i in range(12)]
        assert found.deals, "some tier found among twelve candidates"
        assert keys.DAILY_TIER not in found.deals, "the medium tier is the daily deal"
        for tier, deal in found.deals.items():
            rating = rate(VARIANT, deal.seed, max_nodes=NODES)  # deterministic for the budget
            assert rating.tier is not None and rating.tier.value == tier
            assert deal.certified and deal.par == rating.features.line_moves
            first = next(
                s for s in candidates if rate(VARIANT, s, max_nodes=NODES).tier == rating.tier
            )
            assert deal.seed == first, "the first candidate of its tier, in order"
        # Another process serves the stored tiers without certifying (peek finds them).
        assert await b.peek_tiers(VARIANT, DAY) == found
        assert await b.tiers_for_request(VARIANT, DAY) == found
    finally:
        a.pool.close()
        b.pool.close()


async def test_a_tier_with_no_deal_in_budget_is_absent_and_stored_as_such(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    one = deals(redis_client, clock, 1)
    try:
        found = await one.tiers(VARIANT, DAY)
        assert len(found.deals) <= 1, "one candidate rates in one tier at most"
        raw = await redis_client.get(keys.daily_tiers(VARIANT, DAY))
        assert raw is not None
        stored = json.loads(raw)
        own = [t.value for t in Tier.ordered() if t.value != keys.DAILY_TIER]
        assert sorted(stored) == sorted(own), "every own tier is stored, found or not"
        assert [t for t in own if stored[t] is None] == [t for t in own if t not in found.deals]
        assert DayTiers.load(VARIANT, DAY, raw) == found
    finally:
        one.pool.close()


async def test_a_request_never_certifies(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    d = deals(redis_client, clock, 12)
    try:
        assert await d.tiers_for_request(VARIANT, DAY) is None, "not certified yet: none"
        assert d.pool.worker_pids() == set(), "no certification started by the request"
        assert await redis_client.get(keys.daily_tiers_lock(VARIANT, DAY)) is None
        assert await redis_client.get(keys.daily_tiers(VARIANT, DAY)) is None
    finally:
        d.pool.close()


async def test_the_certified_tiers_are_ordered_by_the_simulated_players(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """Issue #28 item 6: on a fixed set of days the server's tier deals, as it certifies them
    (default node budget), are harder tier by tier for the engine's simulated players:
    their mean loss-and-points-left rises from easy to hard to expert."""
    d = DailyDeals(redis_client, clock, b"tiers-order", SolverPool(1), certify=True)
    try:
        by_tier: dict[str, list[float]] = {}
        for day in range(1, 9):
            found = await d.tiers(VARIANT, dt.date(2030, 6, day))
            for tier, deal in found.deals.items():
                games = [
                    play(VARIANT, deal.seed, lv, k) for lv in Level.calibration() for k in range(4)
                ]
                by_tier.setdefault(tier, []).append(simulated_difficulty(games))
        assert {t: len(v) for t, v in by_tier.items()} == {"easy": 8, "hard": 8, "expert": 8}
        mean = {t: sum(v) / len(v) for t, v in by_tier.items()}
        assert mean["easy"] < mean["hard"] < mean["expert"], mean
    finally:
        d.pool.close()
