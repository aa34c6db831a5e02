"""Player histories on a real Redis: exactly-once days, streak runs in any order, trimming."""

from __future__ import annotations

import asyncio
import datetime as dt
import json

import redis.asyncio
from hypothesis import given
from hypothesis import strategies as st

from server.games.store import FinalResult, GameStore
from server.players.history import DailyResult, DayRank, History, day_number, percentile_bp
from server.redis import keys

D = dt.date(2030, 6, 15)
V = "fourteen-out"


def result(
    date: dt.date,
    *,
    won: bool = True,
    time_ms: int = 60_000,
    score: int = 52,
    pid: str = "p1",
    variant: str = V,
) -> DailyResult:
    return DailyResult(
        variant=variant,
        date=date,
        player_id=pid,
        won=won,
        resigned=not won,
        cleared=score,
        score=score,
        points=score,
        time_ms=time_ms,
        moves=30,
        hints=0,
        finished_at_ms=1_907_755_200_000,
    )


def days(*offsets: int) -> list[dt.date]:
    return [D + dt.timedelta(days=o) for o in offsets]


async def test_streaks_in_order_and_totals(redis_client: redis.asyncio.Redis) -> None:
    h = History(redis_client)
    for i, date in enumerate(days(0, 1, 2, 4, 5)):
        assert await h.record(result(date, won=i != 1, time_ms=50_000 + i, score=40 + i))
    [s] = await h.stats("p1", [V], D + dt.timedelta(days=5))
    assert (s.played, s.won) == (5, 4)
    assert (s.streak, s.longest_streak) == (2, 3)  # days 4-5; days 0-2
    assert (s.won_streak, s.longest_won_streak) == (2, 2)  # won 0, 2, 4, 5
    assert s.best_time_ms == 50_000 and s.best_score == 44
    assert s.last_played == D + dt.timedelta(days=5)
    # Alive through the next day (today's game may still come), gone the day after.
    [s6] = await h.stats("p1", [V], D + dt.timedelta(days=6))
    [s7] = await h.stats("p1", [V], D + dt.timedelta(days=7))
    assert (s6.streak, s7.streak, s7.longest_streak) == (2, 0, 3)


async def test_a_day_recorded_late_joins_its_runs(redis_client: redis.asyncio.Redis) -> None:
    h = History(redis_client)
    for date in days(0, 1, 3, 4, 5):
        await h.record(result(date))
    [before] = await h.stats("p1", [V], D + dt.timedelta(days=5))
    assert (before.streak, before.longest_streak) == (3, 3)
    await h.record(result(D + dt.timedelta(days=2)))  # the gap filled late
    [after] = await h.stats("p1", [V], D + dt.timedelta(days=5))
    assert (after.streak, after.longest_streak, after.played) == (6, 6, 6)


async def test_out_of_order_recording_gives_the_same_streaks(
    redis_client: redis.asyncio.Redis,
) -> None:
    order = [3, 0, 5, 1, 4, 2, 8, 7]
    h = History(redis_client)
    for o in order:
        await h.record(result(D + dt.timedelta(days=o), pid="shuffled"))
    for o in sorted(order):
        await h.record(result(D + dt.timedelta(days=o), pid="sorted"))
    today = D + dt.timedelta(days=8)
    [a] = await h.stats("shuffled", [V], today)
    [b] = await h.stats("sorted", [V], today)
    assert a == b
    assert (a.streak, a.longest_streak) == (2, 6)


async def test_concurrent_records_count_once(redis_client: redis.asyncio.Redis) -> None:
    h1, h2 = History(redis_client), History(redis_client)  # two processes
    r = result(D)
    done = await asyncio.gather(*(h.record(r) for h in (h1, h2, h1, h2)))
    assert sorted(done) == [False, False, False, True]
    [s] = await h1.stats("p1", [V], D)
    assert (s.played, s.won, s.streak) == (1, 1, 1)


async def test_old_days_are_trimmed_but_the_longest_run_stays(
    redis_client: redis.asyncio.Redis,
) -> None:
    h = History(redis_client, keep_days=5)
    for date in days(0, 1, 2, 3, 10, 11):
        await h.record(result(date))
    assert await redis_client.zcard(keys.history_days("p1", V)) == 2
    assert await redis_client.hlen(keys.history_results("p1", V)) == 2
    [s] = await h.stats("p1", [V], D + dt.timedelta(days=11))
    assert (s.played, s.streak, s.longest_streak) == (6, 2, 4)


async def test_pages_newest_first(redis_client: redis.asyncio.Redis) -> None:
    h = History(redis_client)
    for date in days(0, 1, 2, 3, 4):
        await h.record(result(date))
    first, cursor = await h.page("p1", V, None, 2)
    assert [e.result.date for e in first] == days(4, 3) and cursor == days(3)[0]
    second, cursor = await h.page("p1", V, cursor, 2)
    assert [e.result.date for e in second] == days(2, 1)
    last, cursor = await h.page("p1", V, cursor, 2)
    assert [e.result.date for e in last] == days(0) and cursor is None


async def test_frozen_rank_counts_once_in_the_percentile(redis_client: redis.asyncio.Redis) -> None:
    h = History(redis_client)
    for date in days(0, 1):
        await h.record(result(date))
    await h.freeze_rank("p1", V, D, DayRank(1, 5))
    await h.freeze_rank("p1", V, D, DayRank(5, 5))  # ignored: already frozen
    await h.freeze_rank("p1", V, D + dt.timedelta(days=1), DayRank(3, 5))
    await h.freeze_rank("p1", V, D + dt.timedelta(days=9), DayRank(1, 5))  # no such day
    [s] = await h.stats("p1", [V], D)
    assert s.percentile_bp == (10_000 + 5_000) // 2
    entries, _ = await h.page("p1", V, None, 10)
    assert [e.rank for e in entries] == [DayRank(3, 5), DayRank(1, 5)]
    assert await redis_client.hlen(keys.history_ranks("p1", V)) == 2


def test_percentile() -> None:
    assert percentile_bp(1, 1) == percentile_bp(1, 10) == 10_000
    assert percentile_bp(10, 10) == 0
    assert percentile_bp(2, 3) == 5_000
    assert day_number(dt.date(1970, 1, 2)) == 1


async def test_finishing_a_daily_game_records_it(redis_client: redis.asyncio.Redis) -> None:
    store = GameStore(redis_client)
    rec = await store.start_daily(V, D, "p1", 7, 1_907_755_200_000)
    won = FinalResult(
        won=True,
        over=True,
        resigned=False,
        cleared=52,
        score=52,
        points=52,
        time_ms=9_000,
        moves=26,
    )
    await store.finish(rec.game_id, won, "alice", 1_907_755_209_000, None, 0)
    await store.finish(rec.game_id, won, "alice", 1_907_755_210_000, None, 0)  # a retry
    [s] = await store.history.stats("p1", [V], D)
    assert (s.played, s.won, s.streak, s.best_time_ms) == (1, 1, 1, 9_000)
    assert await store.history.pending("p1") == []
    entries, _ = await store.history.page("p1", V, None, 5)
    assert [e.result.game_id for e in entries] == [rec.game_id]


def test_a_players_history_keys_share_one_slot() -> None:
    names = [
        keys.history_days("p1", V),
        keys.history_won("p1", V),
        keys.history_results("p1", V),
        keys.history_ranks("p1", V),
        keys.history_stats("p1", V),
        keys.history_pending("p1"),
    ]
    assert all("{h:p1}" in k for k in names) and len(set(names)) == len(names)
    assert "{r:20300615-abcdef}" in keys.race_watchers("20300615-abcdef")


@given(
    won=st.booleans(),
    resigned=st.booleans(),
    figures=st.lists(st.integers(0, 2**45), min_size=6, max_size=6),
    hints=st.integers(0, 100),
)
def test_a_stored_result_is_json_dumps_byte_for_byte(
    won: bool, resigned: bool, figures: list[int], hints: int
) -> None:
    """`DailyResult.dumps` writes its JSON out by hand (every daily finish makes one, issue
    #30): the stored bytes stay those of ``json.dumps``, and it reads back the same."""
    cleared, score, points, time_ms, moves, finished_at = figures
    r = DailyResult(
        variant=V,
        date=D,
        player_id="p1",
        won=won,
        resigned=resigned,
        cleared=cleared,
        score=score,
        points=points,
        time_ms=time_ms,
        moves=moves,
        hints=hints,
        finished_at_ms=finished_at,
    )
    reference = {
        "won": won,
        "resigned": resigned,
        "cleared": cleared,
        "score": score,
        "points": points,
        "time_ms": time_ms,
        "moves": moves,
        "hints": hints,
        "finished_at": finished_at,
    }
    assert r.dumps() == json.dumps(reference, separators=(",", ":"))
    assert DailyResult.loads(V, D, "p1", r.dumps()) == r


async def _inner_calls(r: redis.asyncio.Redis) -> dict[str, int]:
    """Calls per command so far (`INFO commandstats`; a script's inner commands counted)."""
    stats = await r.info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}


async def test_a_days_record_reads_and_writes_its_stats_once(
    redis_client: redis.asyncio.Redis,
) -> None:
    """Issue #30 (redis-server per game): the record script reads the stats hash with one
    HMGET and writes it with one HSET (counts, runs and bests together), and takes the newest
    kept day from the played run's end: a won day is 7 commands (SREM, HSETNX, ZADD ×2,
    HMGET, HSET, ZRANGEBYSCORE), a lost one 6, where the script before ran 14-16 and 10-11.
    Its figures stay those of the commands one by one (the streak tests above)."""
    h = History(redis_client)
    await h.record(result(D - dt.timedelta(days=1), won=True, time_ms=70_000, score=30))
    for won, expected in ((True, 7), (False, 6)):
        before = await _inner_calls(redis_client)
        await h.record(result(D if won else D + dt.timedelta(days=1), won=won))
        after = await _inner_calls(redis_client)
        inner = {
            c: n - before.get(c, 0)
            for c, n in after.items()
            if c not in ("evalsha", "eval", "info", "script") and n != before.get(c, 0)
        }
        assert sum(inner.values()) == expected, inner
        assert inner["hset"] == 1 and inner["hmget"] == 1 and "hincrby" not in inner
    [s] = await h.stats("p1", [V], D + dt.timedelta(days=1))
    assert (s.played, s.won, s.streak, s.won_streak, s.longest_won_streak) == (3, 2, 3, 2, 2)
    assert (s.best_time_ms, s.best_score) == (60_000, 52)
