"""Race ratings and race boards against a real Redis."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
import redis.asyncio

from server.races.model import RaceSummary
from server.races.ratings import RECENT_MAX, RaceBoards, Rating, display, rate, rate_race
from server.redis import keys

VARIANT = "fourteen-out"
DAY = dt.date(2030, 6, 15)
T0 = 1_907_755_200_000


DAY_MS = 86_400_000


def summary(n: int, racers: int = 2, same_day: bool = False) -> RaceSummary:
    """Race `n`, of and finished on day `n` after DAY (a pair is rated once a day), or on
    DAY."""
    at = T0 + n if same_day else T0 + n * DAY_MS
    day = DAY if same_day else DAY + dt.timedelta(days=n)
    return RaceSummary(
        race_id=f"{day:%Y%m%d}-race{n:08d}", variant=VARIANT, finished_at=at, racers=racers
    )


def test_a_new_player_shows_1000() -> None:
    assert Rating.fresh().shown == 1000
    assert display(25.0, 25 / 3) == 1000
    assert Rating.load(None) == Rating.fresh() == Rating.load("")


def test_rate_moves_winner_up_loser_down_and_counts() -> None:
    before = {"a": Rating.fresh(), "b": Rating.fresh()}
    after = rate(before, {"a": 1, "b": 2})
    assert after["a"].mu > before["a"].mu > after["b"].mu
    assert after["a"].shown > 1000 > after["b"].shown
    assert (after["a"].wins, after["a"].losses, after["a"].played) == (1, 0, 1)
    assert (after["b"].wins, after["b"].losses, after["b"].played) == (0, 1, 1)
    assert Rating.load(after["a"].dump()) == after["a"]


def test_beating_a_stronger_player_gains_more() -> None:
    weak, strong = Rating(20.0, 5.0), Rating(32.0, 5.0)
    upset = rate({"w": weak, "s": strong}, {"w": 1, "s": 2})["w"].mu - weak.mu
    expected = rate({"w": weak, "s": Rating(20.0, 5.0)}, {"w": 1, "s": 2})["w"].mu - weak.mu
    assert upset > expected > 0


def test_three_racers_ordered_by_place() -> None:
    fresh = Rating.fresh()
    after = rate({"a": fresh, "b": fresh, "c": fresh}, {"c": 1, "a": 2, "b": 3})
    assert after["c"].mu > after["a"].mu > after["b"].mu
    assert after["a"].losses == 1, "only first place is a win"


async def test_apply_stores_ratings_board_and_history(redis_client: redis.asyncio.Redis) -> None:
    boards = RaceBoards(redis_client, 30)
    changes = await boards.apply(summary(1), {"winner": 1, "loser": 2})
    (w0, w1), (l0, l1) = changes["winner"], changes["loser"]
    assert w0 == l0 == 1000 and w1 > 1000 > l1
    top = await boards.top(VARIANT, "rating", None, 0, 10)
    assert [(r.rank, r.player_id, r.rating) for r in top] == [(1, "winner", w1), (2, "loser", l1)]
    assert (top[0].wins, top[0].losses, top[0].played) == (1, 0, 1)
    assert (top[1].wins, top[1].losses, top[1].played) == (0, 1, 1)
    recent = await boards.recent(VARIANT, "loser", 5)
    assert [(r.place, r.won, r.rating_before, r.rating_after) for r in recent] == [
        (2, False, 1000, l1)
    ]
    assert await boards.total(VARIANT, "rating", None) == 2


async def test_a_race_is_applied_once(redis_client: redis.asyncio.Redis) -> None:
    boards = RaceBoards(redis_client, 30)
    first = await boards.apply(summary(1), {"a": 1, "b": 2})
    await boards.apply(summary(2), {"b": 1, "a": 2})  # a later race between them
    again = await boards.apply(summary(1), {"a": 1, "b": 2})
    assert again == first, "applied once; a repeat reports the changes it applied"
    row = await boards.rank(VARIANT, "rating", None, "a")
    assert row is not None and row.played == 2
    assert len(await boards.recent(VARIANT, "a", 10)) == 2


async def test_a_repeat_leaves_out_a_racer_whose_recent_race_was_trimmed(
    redis_client: redis.asyncio.Redis,
) -> None:
    boards = RaceBoards(redis_client, 30)
    first = await boards.apply(summary(0), {"a": 1, "b": 2})
    for n in range(1, RECENT_MAX + 1):  # b races on: race 0 falls off b's recent races
        await boards.apply(summary(n), {"b": 1, f"x{n}": 2})
    assert await boards.apply(summary(0), {"a": 1, "b": 2}) == {"a": first["a"]}


async def test_concurrent_applies_of_different_races_all_count(
    redis_client: redis.asyncio.Redis,
) -> None:
    boards = RaceBoards(redis_client, 30)
    await asyncio.gather(*(boards.apply(summary(n), {"a": 1, "b": 2}) for n in range(6)))
    a, b = await boards.top(VARIANT, "rating", None, 0, 2)
    assert (a.player_id, a.wins, a.played) == ("a", 6, 6)
    assert (b.player_id, b.losses, b.played) == ("b", 6, 6)


async def test_boards_rank_by_rating_and_around(redis_client: redis.asyncio.Redis) -> None:
    boards = RaceBoards(redis_client, 30)
    # p0 beats everyone, p1 everyone but p0, ...: ratings end up ordered p0 > p1 > ... > p4.
    n = 0
    for i in range(5):
        for j in range(i + 1, 5):
            n += 1
            await boards.apply(summary(n), {f"p{i}": 1, f"p{j}": 2})
    top = await boards.top(VARIANT, "rating", None, 0, 10)
    assert [r.player_id for r in top] == ["p0", "p1", "p2", "p3", "p4"]
    assert [r.rating for r in top] == sorted((r.rating for r in top), reverse=True)
    page = await boards.top(VARIANT, "rating", None, 2, 2)
    assert [(r.rank, r.player_id) for r in page] == [(3, "p2"), (4, "p3")]
    around = await boards.around(VARIANT, "rating", None, "p3", 1)
    assert [(r.rank, r.player_id) for r in around] == [(3, "p2"), (4, "p3"), (5, "p4")]
    assert await boards.rank(VARIANT, "rating", None, "nobody") is None
    assert await boards.around(VARIANT, "rating", None, "nobody", 2) == []


async def test_forfeit_placed_last_counts_as_a_loss(redis_client: redis.asyncio.Redis) -> None:
    """The referee places forfeits last; rated that way they are losses like any other."""
    boards = RaceBoards(redis_client, 30)
    changes = await boards.apply(summary(1, 3), {"a": 1, "b": 2, "quitter": 3})
    assert changes["quitter"][1] < changes["b"][1] < changes["a"][1]
    row = await boards.rank(VARIANT, "rating", None, "quitter")
    assert row is not None and (row.wins, row.losses, row.rank) == (0, 1, 3)


async def test_wins_board_is_per_day_and_expires(redis_client: redis.asyncio.Redis) -> None:
    boards = RaceBoards(redis_client, 30)
    for n, pid in enumerate(("a", "b", "a")):
        assert await boards.add_win(VARIANT, DAY, pid, summary(n).race_id)
    await boards.add_win(VARIANT, DAY + dt.timedelta(days=1), "b", summary(3).race_id)
    rows = await boards.top(VARIANT, "wins", DAY, 0, 10)
    assert [(r.player_id, r.rating) for r in rows] == [("a", 2), ("b", 1)]
    ttl = await redis_client.ttl(keys.race_wins_board(VARIANT, DAY))
    assert 0 < ttl <= 30 * 86_400
    with pytest.raises(ValueError):
        await boards.top(VARIANT, "wins", None, 0, 10)


async def test_a_race_win_counts_once(redis_client: redis.asyncio.Redis) -> None:
    boards = RaceBoards(redis_client, 30)
    race = summary(1).race_id
    counted = await asyncio.gather(*(boards.add_win(VARIANT, DAY, "a", race) for _ in range(4)))
    assert sorted(counted) == [False, False, False, True]
    assert not await boards.add_win(VARIANT, DAY, "a", race)
    assert await boards.add_win(VARIANT, DAY, "a", summary(2).race_id), "another race counts"
    rows = await boards.top(VARIANT, "wins", DAY, 0, 10)
    assert [(r.player_id, r.rating) for r in rows] == [("a", 2)]
    ttl = await redis_client.ttl(keys.race_wins_applied(VARIANT, DAY))
    assert 0 < ttl <= 30 * 86_400


async def test_recent_keeps_newest_first_and_is_capped(redis_client: redis.asyncio.Redis) -> None:
    boards = RaceBoards(redis_client, 30)
    for n in range(RECENT_MAX + 3):
        await boards.apply(summary(n), {"a": 1, "b": 2})
    recent = await boards.recent(VARIANT, "a", 1000)
    assert len(recent) == RECENT_MAX
    assert recent[0].race_id == summary(RECENT_MAX + 2).race_id
    assert recent[0].rating_before == recent[1].rating_after


async def test_two_players_are_rated_against_each_other_once_a_day(
    redis_client: redis.asyncio.Redis,
) -> None:
    """The boost of issue #24: main beats alt again and again. Only the first race of the
    day between them counts; a race with a third racer that repeats the pair is unrated for
    everyone; the next UTC day they count once more."""
    boards = RaceBoards(redis_client, 30)
    first = await boards.apply(summary(1, same_day=True), {"main": 1, "alt": 2})
    assert first["main"][1] > 1000
    for n in (2, 3):
        assert await boards.apply(summary(n, same_day=True), {"main": 1, "alt": 2}) == {}
    assert await boards.apply(summary(4, 3, same_day=True), {"x": 1, "main": 2, "alt": 3}) == {}
    row = await boards.rank(VARIANT, "rating", None, "main")
    assert row is not None and (row.rating, row.played) == (first["main"][1], 1)
    assert await boards.rank(VARIANT, "rating", None, "x") is None
    assert len(await boards.recent(VARIANT, "main", 10)) == 1
    # An unrated race is still applied once: a repeat reads back nothing.
    assert await boards.apply(summary(2, same_day=True), {"main": 1, "alt": 2}) == {}
    nextday = await boards.apply(summary(5), {"main": 1, "alt": 2})
    assert nextday["main"][1] > first["main"][1], "a new UTC day: the pair counts again"


def test_no_real_attempt_gives_nobody_points() -> None:
    fresh = Rating.fresh()
    two = rate_race({"main": fresh, "alt": fresh}, {"main": 1, "alt": 2}, frozenset({"alt"}))
    assert two["main"] == fresh, "the winner gains nothing from a racer who did not try"
    assert two["alt"].shown < 1000 and two["alt"].losses == 1, "who did not try loses"
    three = {"a": fresh, "b": fresh, "c": fresh}
    # c made no real attempt (even placed first by cards): a and b are rated between them.
    out = rate_race(three, {"c": 1, "a": 2, "b": 3}, frozenset({"c"}))
    assert out["a"] == rate({"a": fresh, "b": fresh}, {"a": 1, "b": 2})["a"]
    assert out["c"].shown < 1000 and out["c"].wins == 0


def test_giving_up_never_raises_the_shown_rating() -> None:
    """Two racers who both forfeit tie for last: OpenSkill shrinks both sigmas, which raised
    both shown ratings after a loss (a newcomer saw 1000 -> 1032 with 0 wins, 1 loss)."""
    fresh = Rating.fresh()
    both = rate_race({"a": fresh, "b": fresh}, {"a": 1, "b": 1}, frozenset({"a", "b"}))
    assert rate({"a": fresh, "b": fresh}, {"a": 1, "b": 1})["a"].shown > 1000  # the old way
    for pid in ("a", "b"):
        assert both[pid].shown == 1000 and (both[pid].losses, both[pid].played) == (1, 1)
    three = {"a": fresh, "b": fresh, "c": fresh}
    out = rate_race(three, {"a": 1, "b": 2, "c": 2}, frozenset({"b", "c"}))
    assert all(out[p].shown <= 1000 for p in ("b", "c"))


async def test_apply_with_no_real_attempt(redis_client: redis.asyncio.Redis) -> None:
    boards = RaceBoards(redis_client, 30)
    changes = await boards.apply(summary(1), {"main": 1, "alt": 2}, frozenset({"alt"}))
    assert changes["main"] == (1000, 1000) and changes["alt"][1] < 1000
    assert await boards.rank(VARIANT, "rating", None, "main") is None, "main was not rated"


async def stats_of(r: redis.asyncio.Redis, pid: str) -> Rating:
    raw = await r.hget(keys.rating_stats(VARIANT), pid)
    return Rating.load(raw.decode() if isinstance(raw, bytes) else raw)


async def test_a_provisional_racer_moves_nobody(redis_client: redis.asyncio.Redis) -> None:
    """A racer with fewer distinct rivals than the threshold is provisional: it loses to
    anyone who tried but gains only over established racers, and nobody gains from beating
    it (`RatedRace.weighty` leaves it out); rivals count real attempts only, each rival
    once, kept in the stats JSON."""
    boards = RaceBoards(redis_client, 30, provisional_rivals=2)
    # Two new players: the loser loses, the winner gains nothing (its rival is provisional).
    first = await boards.rate(summary(1), {"main": 1, "r1": 2})
    assert first.changes["main"][1] == 1000 > first.changes["r1"][1]
    assert first.weighty == frozenset(), "both provisional: no win to count"
    await boards.rate(summary(2), {"main": 1, "r1": 2})  # the same rival again: still one
    await boards.rate(summary(3), {"main": 1, "quitter": 2}, frozenset({"quitter"}))
    rivals = (await stats_of(redis_client, "main")).rivals
    assert rivals == ("r1",), "a repeat and a racer who did not try: no"
    await boards.rate(summary(4), {"main": 1, "r2": 2})
    main = await stats_of(redis_client, "main")
    assert main.rivals == ("r1", "r2") and not main.provisional(2)
    alt = await boards.rate(summary(5), {"main": 1, "alt": 2})
    assert alt.changes["main"][0] == alt.changes["main"][1], "a provisional loss gives nothing"
    assert alt.changes["alt"][1] < 1000, "its own rating moves"
    assert alt.weighty == frozenset({"main"})
    after = await stats_of(redis_client, "main")
    assert (after.mu, after.sigma) == (main.mu, main.sigma) and after.rivals[-1] == "alt"
    assert Rating.load('{"mu": 25, "sigma": 8}').rivals == (), "stats of before: no rivals"


def test_a_provisional_racer_is_rated_from_the_racers_who_tried_only() -> None:
    """Cheater review F3: rated from the whole race, a fresh account gained +138 over an alt
    that only queued and resigned. Now: alone among those who tried, it keeps its rating;
    with another who tried, it is rated against that one only."""
    fresh = Rating.fresh()
    two = rate_race(
        {"main": fresh, "alt": fresh},
        {"main": 1, "alt": 2},
        frozenset({"alt"}),
        frozenset({"main"}),
    )
    assert two["main"] == fresh and two["alt"].shown < 1000
    three = {"main": fresh, "real": fresh, "alt": fresh}
    out = rate_race(
        three, {"main": 1, "real": 2, "alt": 3}, frozenset({"alt"}), frozenset({"main"})
    )
    assert out["main"] == rate({"main": fresh, "real": fresh}, {"main": 1, "real": 2})["main"]
    assert out["real"] == fresh, "nobody gains from a provisional racer either"


def test_a_race_adds_one_rival_at_most() -> None:
    """Cheater review F2: six accounts of one person certified each other (5 rivals each) in
    one group race; a race now counts one rival, the best placed one not met yet."""
    r = Rating.fresh().met(["b", "c", "d"])
    assert r.rivals == ("b",)
    assert r.met(["b", "c", "d"]).rivals == ("b", "c")
    assert r.met(["b"]) is r


def test_a_provisional_racer_gains_only_over_established_racers() -> None:
    """Review F-H: alts that clear one card are real attempts; a fresh main rated from them
    went 1000 -> 1529 in five races and left provisional status on alts alone. Now a
    provisional racer loses to anyone who tried but gains only over established racers."""
    fresh, strong = Rating.fresh(), Rating(mu=30.0, sigma=4.0, rivals=("a", "b", "c", "d", "e"))
    provisional = frozenset({"main", "alt"})
    won = rate_race({"main": fresh, "alt": fresh}, {"main": 1, "alt": 2}, frozenset(), provisional)
    assert won["main"] == fresh, "no gain over a provisional rival"
    assert won["alt"].shown < 1000, "a provisional loser loses all the same"
    three = {"main": fresh, "alt": fresh, "pro": strong}
    out = rate_race(three, {"main": 1, "pro": 2, "alt": 3}, frozenset(), provisional)
    assert out["main"] == rate({"main": fresh, "pro": strong}, {"main": 1, "pro": 2})["main"]
    lost = rate_race({"main": fresh, "alt": fresh}, {"alt": 1, "main": 2}, frozenset(), provisional)
    assert lost["main"].shown < 1000, "a loss to a provisional racer counts"


async def test_the_pair_rule_goes_by_the_races_day_not_its_finish(
    redis_client: redis.asyncio.Redis,
) -> None:
    """Review C1 over midnight: a group race dealt at 23:58, its loser and an alt out of it
    and racing each other from 00:00 (the next day's claims), the throwaway race ending
    first: judged by the finish day, the pair was rated "today" when the group race ended,
    and the group race went unrated for everyone. Each race is judged by its own day."""
    boards = RaceBoards(redis_client, 30)
    group = RaceSummary(
        race_id="20300615-groupmidnt", variant=VARIANT, finished_at=T0 + DAY_MS, racers=3
    )
    throwaway = RaceSummary(
        race_id="20300616-throwaway1", variant=VARIANT, finished_at=T0 + DAY_MS, racers=2
    )
    await boards.claim_pairs(VARIANT, group.race_id, ["honest", "loser", "alt"])
    await boards.claim_pairs(VARIANT, throwaway.race_id, ["loser", "alt"])
    assert await boards.apply(throwaway, {"loser": 1, "alt": 2}), "its own day: rated"
    rated = await boards.apply(group, {"honest": 1, "loser": 2, "alt": 3})
    assert set(rated) == {"honest", "loser", "alt"}, "the group race stays rated"
    later = RaceSummary(
        race_id="20300616-samedayrm", variant=VARIANT, finished_at=T0 + DAY_MS + 1, racers=2
    )
    await boards.claim_pairs(VARIANT, later.race_id, ["loser", "alt"])
    assert await boards.apply(later, {"loser": 1, "alt": 2}) == {}, "once a day all the same"
