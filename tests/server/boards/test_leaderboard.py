"""Rank-key encoding and leaderboard queries against a real Redis."""

from __future__ import annotations

import datetime as dt
import json
import random
import time

import pytest
import redis.asyncio
from hypothesis import given
from hypothesis import strategies as st

from server.boards.leaderboard import (
    MAX_MOVES,
    MAX_POINTS,
    MAX_TIME_MS,
    BoardEntries,
    BoardRef,
    Entry,
    Leaderboard,
    PendingEntry,
    RankKey,
    board_expire_at,
    decode_rank_key,
    encode_rank_key,
    prepare_entry,
)
from server.games.store import FinalResult, GameStore
from server.redis import keys

D = dt.date(2030, 6, 15)
T0 = 1_907_755_200_000
BOARD = BoardRef.daily("klondike", D)

rank_keys = st.integers(min_value=0, max_value=2**53 - 1)
fields = st.builds(
    RankKey,
    won=st.booleans(),
    points=st.integers(0, MAX_POINTS),
    time_ms=st.integers(0, MAX_TIME_MS),
    moves=st.integers(0, MAX_MOVES),
    hinted=st.booleans(),
)


def kept(f: RankKey) -> RankKey:
    """What a key keeps of ``f``: a hint only on a result not won."""
    return f._replace(hinted=f.hinted and not f.won)


@given(st.one_of(rank_keys, st.integers(2**52, 2**53 - 1).map(lambda k: 2 * k)))
def test_rank_key_round_trip_from_int(key: int) -> None:
    assert encode_rank_key(*decode_rank_key(key)) == key


@given(fields)
def test_rank_key_round_trip_from_fields(f: RankKey) -> None:
    key = encode_rank_key(*f)
    assert 0 <= key < 2**54 and (key < 2**53 or key % 2 == 0)
    assert int(float(key)) == key  # exact as a Redis (double) score
    assert int(float(repr(float(key)))) == key  # and through its text, as Redis sends it
    assert decode_rank_key(key) == kept(f)


@given(fields, fields)
def test_rank_key_order_is_lexicographic(a: RankKey, b: RankKey) -> None:
    """Won first; then, among results not won, those without a hint; then the fields."""

    def sort_tuple(f: RankKey) -> tuple[int, int, int, int, int]:
        return (not f.won, f.hinted and not f.won, -f.points, f.time_ms, f.moves)

    ka, kb = encode_rank_key(*a), encode_rank_key(*b)
    assert (ka < kb) == (sort_tuple(a) < sort_tuple(b))


def test_a_key_stored_before_hints_ranked_keeps_its_place() -> None:
    """The layout below 2**53 is unchanged: boards written before need no rewrite."""
    assert (
        encode_rank_key(False, 61, 845_000, 230)
        == 1 << 52 | (2047 - 61) << 41 | (845_000 << 14) | 230
    )
    assert encode_rank_key(True, 936, 60_000, 80, True) == encode_rank_key(True, 936, 60_000, 80)


def test_rank_key_saturates() -> None:
    assert decode_rank_key(encode_rank_key(True, 5000, 10**12, 10**9)) == RankKey(
        True, MAX_POINTS, MAX_TIME_MS, MAX_MOVES
    )
    assert decode_rank_key(encode_rank_key(False, -3, -1, -1)) == RankKey(False, 0, 0, 0)
    assert encode_rank_key(False, 0, MAX_TIME_MS, MAX_MOVES) == 2**53 - 1
    with pytest.raises(ValueError):
        decode_rank_key(2**53 + 1)  # odd: no key
    with pytest.raises(ValueError):
        decode_rank_key(2**54)
    with pytest.raises(ValueError):
        decode_rank_key(-1)


async def _finish(
    store: GameStore,
    pid: str,
    *,
    won: bool = True,
    points: int = 52,
    time_ms: int = 100_000,
    moves: int = 100,
    at: int = 0,
    hints: int = 0,
    board: BoardRef = BOARD,
) -> Entry:
    rec = await store.start_daily(board.variant, board.date, pid, seed=7, now_ms=T0)
    for _ in range(hints):  # counted on the record first: a finish must carry the stored count
        await store.add_hint(rec.game_id, T0)
    result = FinalResult(
        won=won,
        over=not won,
        resigned=False,
        cleared=points,
        score=points * 5,
        points=points,
        time_ms=time_ms,
        moves=moves,
        hints=hints,
    )
    _, entry = await store.finish(rec.game_id, result, f"n_{pid}", T0 + at, None, rec.seq)
    return entry


async def test_ordering_rules(redis_client: redis.asyncio.Redis) -> None:
    store, lb = GameStore(redis_client), Leaderboard(redis_client)
    # Expected order, best first; each neighbour pair differs in exactly one rule.
    specs: list[tuple[str, dict[str, int | bool]]] = [
        ("early", dict(at=5_000)),  # identical to "late" but finished earlier
        ("late", dict(at=6_000)),
        ("moremoves", dict(moves=101)),  # more moves
        ("slower", dict(time_ms=100_010, moves=1)),  # 10 ms slower: any move count
        ("fewerpts", dict(points=51, time_ms=1_000, moves=1)),  # fewer points beats time
        ("lost", dict(won=False, points=52, time_ms=1, moves=1)),  # not won: below all wins
        ("lost40", dict(won=False, points=40, time_ms=1, moves=1)),
        ("lost40slow", dict(won=False, points=40, time_ms=2_000, moves=1)),
        ("lost40slowm", dict(won=False, points=40, time_ms=2_000, moves=2)),
        ("zero", dict(won=False, points=0, time_ms=0, moves=0)),
    ]
    shuffled = specs[:]
    random.Random(1).shuffle(shuffled)
    for pid, kw in shuffled:
        await _finish(store, pid, at=kw.pop("at", 1_000), **kw)  # type: ignore[arg-type]

    top = await lb.top(BOARD, 0, 50)
    assert [e.player_id for e in top] == [pid for pid, _ in specs]
    assert [e.rank for e in top] == list(range(1, 11))
    assert await lb.total(BOARD) == 10


async def test_time_ranks_to_the_millisecond(redis_client: redis.asyncio.Redis) -> None:
    store, lb = GameStore(redis_client), Leaderboard(redis_client)
    await _finish(store, "slow", time_ms=13, at=1_000)  # finished first, 1 ms slower
    await _finish(store, "fast", time_ms=12, at=2_000)
    await _finish(store, "b", time_ms=100_001, moves=10)
    await _finish(store, "a", time_ms=100_000, moves=11)  # 1 ms faster beats fewer moves
    assert [e.player_id for e in await lb.top(BOARD)] == ["fast", "slow", "a", "b"]


async def test_entry_fields(redis_client: redis.asyncio.Redis) -> None:
    store, lb = GameStore(redis_client), Leaderboard(redis_client)
    entry = await _finish(store, "p1", won=False, points=30, time_ms=12_345, moves=77, hints=3)
    assert entry == Entry(
        rank=1,
        player_id="p1",
        name="n_p1",
        won=False,
        cleared=30,
        score=150,
        points=30,
        time_ms=12_345,
        moves=77,
        finished_at_ms=T0,
        hints=3,
    )
    assert await lb.rank(BOARD, "p1") == entry


async def _board_of(n: int, redis_client: redis.asyncio.Redis) -> Leaderboard:
    store = GameStore(redis_client)
    for i in range(n):  # p00 best ... p{n-1} worst
        await _finish(store, f"p{i:02d}", time_ms=10_000 * (i + 1))
    return Leaderboard(redis_client)


async def test_top_offset_limit(redis_client: redis.asyncio.Redis) -> None:
    lb = await _board_of(10, redis_client)
    assert [(e.rank, e.player_id) for e in await lb.top(BOARD, 0, 3)] == [
        (1, "p00"),
        (2, "p01"),
        (3, "p02"),
    ]
    assert [(e.rank, e.player_id) for e in await lb.top(BOARD, 8, 5)] == [(9, "p08"), (10, "p09")]
    assert await lb.top(BOARD, 10, 5) == []
    assert await lb.top(BOARD, 0, 0) == []
    assert len(await lb.top(BOARD, -5, 1000)) == 10
    assert await lb.top(BoardRef.daily("spider", D)) == []
    assert await lb.total(BoardRef.daily("spider", D)) == 0


@pytest.mark.parametrize(
    ("pid", "k", "ranks"),
    [
        ("p00", 2, [1, 2, 3]),  # top edge: up to k above, k below (issue 12)
        ("p01", 2, [1, 2, 3, 4]),
        ("p04", 2, [3, 4, 5, 6, 7]),  # middle: centred
        ("p08", 2, [7, 8, 9, 10]),  # bottom edge: never more than k above
        ("p09", 2, [8, 9, 10]),
        ("p09", 0, [10]),
        ("p05", 20, list(range(1, 11))),  # window larger than the board
    ],
)
async def test_around(
    redis_client: redis.asyncio.Redis, pid: str, k: int, ranks: list[int]
) -> None:
    lb = await _board_of(10, redis_client)
    rows = await lb.around(BOARD, pid, k)
    assert [e.rank for e in rows] == ranks
    assert [e.player_id for e in rows] == [f"p{r - 1:02d}" for r in ranks]
    assert pid in [e.player_id for e in rows]


async def test_around_small_board_and_unknown(redis_client: redis.asyncio.Redis) -> None:
    lb = await _board_of(3, redis_client)
    assert [e.rank for e in await lb.around(BOARD, "p02", 2)] == [1, 2, 3]
    assert await lb.around(BOARD, "nobody", 2) == []
    assert await lb.rank(BOARD, "nobody") is None
    entry = await lb.rank(BOARD, "p01")
    assert entry is not None and entry.rank == 2


async def test_rank_changes_as_others_finish(redis_client: redis.asyncio.Redis) -> None:
    store, lb = GameStore(redis_client), Leaderboard(redis_client)
    first = await _finish(store, "slow", time_ms=50_000)
    assert first.rank == 1
    better = await _finish(store, "fast", time_ms=40_000)
    assert better.rank == 1
    assert (await lb.rank(BOARD, "slow")).rank == 2  # type: ignore[union-attr]


async def test_retention_ttl(redis_client: redis.asyncio.Redis) -> None:
    store = GameStore(redis_client, retention_days=90)
    await _finish(store, "p1")
    # Board and game keys expire at 00:00 UTC of D + 90 days; past days stay queryable.
    expire_at = board_expire_at(D, 90)
    assert expire_at == int(dt.datetime(2030, 9, 13, tzinfo=dt.UTC).timestamp())
    expected = expire_at - time.time()
    for key in (
        BOARD.board_key,
        BOARD.members_key,
        BOARD.entries_key,
        keys.daily_game("klondike", D, "p1"),
    ):
        assert abs(await redis_client.ttl(key) - expected) < 5, key
    assert len(await Leaderboard(redis_client).top(BOARD)) == 1


def _pending(pid: str, time_ms: int, at: int) -> PendingEntry:
    e = prepare_entry(
        player_id=pid,
        name=f"n_{pid}",
        won=True,
        cleared=52,
        score=52,
        points=52,
        time_ms=time_ms,
        moves=10,
        finished_at_ms=at,
    )
    return PendingEntry(e.score, e.member, e.data, board_expire_at(D, 90))


def test_pending_entries_round_trip() -> None:
    p = _pending("p1", 1_234, T0)
    assert PendingEntry.loads(p.dumps()) == p


async def test_the_boards_step_is_idempotent_and_keeps_the_first_entry(
    redis_client: redis.asyncio.Redis,
) -> None:
    """Run twice (a retry, a recovery racing the finisher) it writes one row; a different
    entry for the same player never replaces the first (one ranked attempt per board)."""
    entries = BoardEntries(redis_client)
    k = keys.parse_game_id(keys.daily_game_id("klondike", D, "p1"))
    assert isinstance(k, keys.DailyGameKeys)
    first = _pending("p1", 50_000, T0)
    assert (await entries.write(k, first))[0] == 1
    rank, raw = await entries.write(k, first)
    assert rank == 1 and '"time_ms":50000' in raw
    rank, raw = await entries.write(k, _pending("p1", 1_000, T0 + 5))  # better, later: ignored
    assert rank == 1 and '"time_ms":50000' in raw
    assert await redis_client.zcard(BOARD.board_key) == 1
    assert await redis_client.hlen(BOARD.members_key) == 1
    assert await entries.write(k, None) == (rank, raw)  # only reads
    other = keys.parse_game_id(keys.daily_game_id("klondike", D, "p2"))
    assert isinstance(other, keys.DailyGameKeys)
    assert await entries.write(other, None) == (0, "")  # no entry: nothing written
    assert [e.player_id for e in await Leaderboard(redis_client).top(BOARD)] == ["p1"]


@given(
    name=st.text(max_size=40),
    won=st.booleans(),
    figures=st.lists(st.integers(0, 2**45), min_size=6, max_size=6),
    hints=st.integers(0, 100),
    expire_at=st.integers(0, 2**40),
)
def test_entry_json_is_json_dumps_byte_for_byte(
    name: str, won: bool, figures: list[int], hints: int, expire_at: int
) -> None:
    """`prepare_entry` and `PendingEntry.dumps` write their JSON out by hand (every finish
    makes both, issue #30): the stored bytes stay those of ``json.dumps``, so boards and
    records written before and after read alike."""
    cleared, score, points, time_ms, moves, finished_at = figures
    e = prepare_entry(
        player_id="p1",
        name=name,
        won=won,
        cleared=cleared,
        score=score,
        points=points,
        time_ms=time_ms,
        moves=moves,
        finished_at_ms=finished_at,
        hints=hints,
    )
    data = {
        "name": name,
        "won": won,
        "cleared": cleared,
        "score": score,
        "points": points,
        "time_ms": time_ms,
        "moves": moves,
        "finished_at": finished_at,
        "hints": hints,
    }
    assert e.data == json.dumps(data, separators=(",", ":"))
    pending = PendingEntry(e.score, e.member, e.data, expire_at)
    stored = {"score": e.score, "member": e.member, "data": e.data, "exp": expire_at}
    assert pending.dumps() == json.dumps(stored, separators=(",", ":"))
    assert PendingEntry.loads(pending.dumps()) == pending
