"""The move's append script as written flat for redis-server's CPU (issue #30): every check the
old script made still holds, on a real Redis, and a game in flight goes on across a rolling
upgrade (processes running the old script beside processes running the new one)."""

from __future__ import annotations

import datetime as dt

import pytest
import redis.asyncio

from server.games.store import GameStore
from server.redis import keys
from server.redis.batch import LuaScript
from server.runtime.errors import Conflict, DayOver, GameOver, InvalidInput, NotFound

D = dt.date(2030, 6, 15)
T0 = 1_907_755_200_000  # 2030-06-15 12:00 UTC
DAY_END = T0 + 12 * 3_600_000

#: The append script before issue #30's change (main at 41de6ad, the functions it used
#: inlined as they were): what a process not yet upgraded runs.
OLD_APPEND = """
local function push_move(game, log, times, text, now, seq, last)
  redis.call('RPUSH', times, math.max(0, tonumber(now) - (tonumber(last) or tonumber(now))))
  if redis.call('RPUSH', log, text) == 1 then
    local ttl = redis.call('PTTL', game)
    if ttl > 0 then
      redis.call('PEXPIRE', log, ttl)
      redis.call('PEXPIRE', times, ttl)
    end
  end
  redis.call('HSET', game, 'last_move_at_ms', now, 'seq', seq + 1)
  return seq + 1
end
local function day_over(game, status, day_end, now)
  if day_end <= 0 then return false end
  if redis.call('HEXISTS', game, 'day_over') == 1 then return true end
  if now < day_end then return false end
  if status == 'playing' then redis.call('HSET', game, 'day_over', now) end
  return true
end
local st = redis.call('HMGET', KEYS[1], 'status', 'seq', 'last_move_at_ms')
if not st[1] then return {-1, 0} end
local seq = tonumber(st[2])
if day_over(KEYS[1], st[1], tonumber(ARGV[5] or '0'), tonumber(ARGV[3])) then return {-5, seq} end
if st[1] ~= 'playing' then return {-2, seq} end
if seq ~= tonumber(ARGV[1]) then return {-3, seq} end
if seq >= tonumber(ARGV[4]) then return {-4, seq} end
return {0, push_move(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[3], seq, st[3])}
"""


async def started(store: GameStore, pid: str = "p1") -> keys.DailyGameKeys:
    gid = (await store.start_daily("triple-deck", D, pid, 7, T0)).game_id
    k = keys.parse_game_id(gid)
    assert isinstance(k, keys.DailyGameKeys) and k.end_ms == DAY_END
    return k


async def stored(r: redis.asyncio.Redis, k: keys.DailyGameKeys) -> tuple[object, ...]:
    """Everything an append writes: the log, the times, the record's seq, last move, mark."""
    return (
        await r.lrange(k.log, 0, -1),
        await r.lrange(k.times, 0, -1),
        await r.hmget(k.game, ["seq", "last_move_at_ms", "day_over", "status"]),
    )


async def test_an_append_answers_the_new_seq_as_a_plain_integer(
    redis_client: redis.asyncio.Redis,
) -> None:
    """The reply that saves redis-server a deferred-length array per move; refusals keep
    their {code, seq} pair."""
    store = GameStore(redis_client)
    k = await started(store)
    args = (0, "d", T0 + 5, 100, DAY_END)
    assert await store.batch.eval(store._append, (k.game, k.log, k.times), args) == 1
    assert await store.batch.eval(store._append, (k.game, k.log, k.times), args) == [-3, 1]
    assert await store.append(k.game, k.log, k.times, 1, "d", T0 + 9, DAY_END) == 2
    rec, moves, times = await store.load_played(k.game_id)
    assert (rec.seq, rec.last_move_at_ms, moves, times) == (2, T0 + 9, ["d", "d"], [5, 4])


async def test_a_move_is_refused_once_another_process_marked_the_day_over(
    redis_client: redis.asyncio.Redis,
) -> None:
    """The first process whose clock passes midnight marks the game; a process whose clock is
    behind reads the mark in the script's one HMGET and is refused too (no HEXISTS now)."""
    ahead, behind = GameStore(redis_client), GameStore(redis_client)
    k = await started(ahead)
    assert await behind.append_move(k.game_id, 0, "d", T0 + 1) == 1
    with pytest.raises(DayOver) as late:
        await ahead.append_move(k.game_id, 1, "d", DAY_END)
    assert late.value.current_seq == 1
    assert await redis_client.hget(k.game, "day_over") == str(DAY_END)
    before = await stored(redis_client, k)
    with pytest.raises(DayOver):
        await behind.append_move(k.game_id, 1, "d", DAY_END - 60_000)
    with pytest.raises(DayOver):
        await behind.add_hint(k.game_id, DAY_END - 60_000)
    assert await stored(redis_client, k) == before


async def test_a_hint_past_midnight_closes_the_game_for_every_process(
    redis_client: redis.asyncio.Redis,
) -> None:
    ahead, behind = GameStore(redis_client), GameStore(redis_client)
    k = await started(ahead)
    assert await behind.add_hint(k.game_id, T0 + 1) == 1
    with pytest.raises(DayOver):
        await ahead.add_hint(k.game_id, DAY_END + 1)
    assert await redis_client.hget(k.game, "day_over") == str(DAY_END + 1)
    with pytest.raises(DayOver):
        await behind.append_move(k.game_id, 0, "d", T0 + 2)
    assert await redis_client.hget(k.game, "hints") == "1"
    assert await redis_client.llen(k.log) == 0


async def test_a_hint_counts_only_at_the_position_it_was_searched_at(
    redis_client: redis.asyncio.Redis,
) -> None:
    """Cheater review 4, L2: a hint searched at seq 0 while a move went in meanwhile (another
    process, or this one) is of a position left: refused as stale and not counted."""
    store = GameStore(redis_client)
    k = await started(store)
    assert await store.add_hint(k.game_id, T0 + 1, 0) == 1
    assert await store.append_move(k.game_id, 0, "d", T0 + 2) == 1
    with pytest.raises(Conflict):
        await store.add_hint(k.game_id, T0 + 3, 0)
    assert await redis_client.hget(k.game, "hints") == "1"
    assert await store.add_hint(k.game_id, T0 + 4, 1) == 2
    assert await store.add_hint(k.game_id, T0 + 5) == 3  # no position given: any


async def test_a_finished_game_past_its_day_is_over_for_the_day_and_left_unmarked(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = GameStore(redis_client)
    k = await started(store)
    await store.append_move(k.game_id, 0, "d", T0 + 1)
    await redis_client.hset(k.game, "status", "finished")
    with pytest.raises(GameOver) as over:
        await store.append_move(k.game_id, 1, "d", T0 + 2)
    assert over.value.current_seq == 1
    with pytest.raises(GameOver):
        await store.add_hint(k.game_id, T0 + 2)
    before = await stored(redis_client, k)
    with pytest.raises(DayOver):  # the day's refusal first, as before
        await store.append_move(k.game_id, 1, "d", DAY_END)
    with pytest.raises(DayOver):
        await store.add_hint(k.game_id, DAY_END)
    assert await stored(redis_client, k) == before  # no mark on a finished game


async def test_every_refusal_writes_nothing(redis_client: redis.asyncio.Redis) -> None:
    store = GameStore(redis_client, max_moves=2)
    k = await started(store)
    await store.append_move(k.game_id, 0, "a", T0 + 1)
    before = await stored(redis_client, k)
    with pytest.raises(Conflict) as stale:
        await store.append_move(k.game_id, 0, "b", T0 + 2)
    assert stale.value.current_seq == 1
    with pytest.raises(Conflict):
        await store.append_move(k.game_id, 2, "b", T0 + 2)
    assert await stored(redis_client, k) == before
    assert await store.append_move(k.game_id, 1, "b", T0 + 3) == 2
    full = await stored(redis_client, k)
    with pytest.raises(InvalidInput):  # the log is full
        await store.append_move(k.game_id, 2, "c", T0 + 4)
    assert await stored(redis_client, k) == full
    other = keys.parse_game_id(keys.daily_game_id("triple-deck", D, "nobody"))
    with pytest.raises(NotFound):
        await store.append(other.game, other.log, other.times, 0, "a", T0, DAY_END)
    assert not await redis_client.exists(other.game, other.log, other.times)


async def test_a_game_in_flight_goes_on_across_a_rolling_upgrade(
    redis_client: redis.asyncio.Redis,
) -> None:
    """Old and new processes append to the same game in turn (the stored shape is the same):
    seq, log, times and TTLs agree, and each one's day-over mark stops the other."""
    new = GameStore(redis_client)
    old = LuaScript.of(OLD_APPEND)
    k = await started(new)
    ks = (k.game, k.log, k.times)

    async def old_append(seq: int, move: str, now: int) -> object:
        return await new.batch.eval(old, ks, (seq, move, now, 100, DAY_END))

    assert await old_append(0, "a", T0 + 10) == [0, 1]  # the old process's first move
    assert await new.append_move(k.game_id, 1, "b", T0 + 30) == 2
    assert await old_append(2, "c", T0 + 60) == [0, 3]
    assert await new.append_move(k.game_id, 3, "d", T0 + 100) == 4
    assert await old_append(3, "x", T0 + 110) == [-3, 4]  # stale for the old one too
    rec, moves, times = await new.load_played(k.game_id)
    assert (rec.seq, rec.last_move_at_ms) == (4, T0 + 100)
    assert (moves, times) == (["a", "b", "c", "d"], [10, 20, 30, 40])
    ttl = await redis_client.pttl(k.game)
    assert ttl > 0
    for x in ks[1:]:  # the log and times inherit the record's TTL (the old first move's)
        assert abs(await redis_client.pttl(x) - ttl) < 5_000

    # The new process marks the day over; the old one reads the mark (HEXISTS) and stops.
    with pytest.raises(DayOver):
        await new.append_move(k.game_id, 4, "e", DAY_END + 5)
    assert await old_append(4, "e", T0 + 200) == [-5, 4]

    # And the other way round, on another game: the old mark stops the new process.
    k2 = await started(new, "p2")
    ks = (k2.game, k2.log, k2.times)
    assert await old_append(0, "a", DAY_END) == [-5, 0]
    assert await redis_client.hget(k2.game, "day_over") == str(DAY_END)
    with pytest.raises(DayOver):
        await new.append_move(k2.game_id, 0, "a", T0 + 5)
    assert await redis_client.llen(k2.log) == 0


async def test_a_run_of_appends_answers_and_stores_as_its_calls_one_by_one(
    redis_client: redis.asyncio.Redis,
) -> None:
    """Random appends (stale, to finished games, past the move limit, past the day's end,
    first moves with their TTLs) to two copies of the same games: one copy call by call
    (`_APPEND_LUA`), the other in runs (`_APPEND_MANY_LUA`, issue #30): the same replies and
    the same stored keys."""
    import asyncio
    import random

    rng = random.Random(30)
    one, many = GameStore(redis_client, max_moves=6), GameStore(redis_client, max_moves=6)
    n = 6
    ones = [await started(one, f"o{i}") for i in range(n)]
    manys = [await started(many, f"m{i}") for i in range(n)]
    seqs = [0] * n
    kinds: set[str] = set()
    doubled = 0

    def outcome(r: object) -> object:
        return (
            (type(r).__name__, getattr(r, "current_seq", None)) if isinstance(r, Exception) else r
        )

    for round_ in range(40):
        # Some games twice in a run: the second call sees the first one's write.
        picked = [rng.randrange(n) for _ in range(rng.randint(2, n + 2))]
        planned = list(seqs)
        if rng.random() < 0.1:  # a game finished elsewhere
            i = rng.choice(range(n))
            for k in (ones[i], manys[i]):
                await redis_client.hset(k.game, "status", "finished")
        calls = []
        for i in picked:
            expected = planned[i] if rng.random() < 0.8 else planned[i] + rng.choice((-1, 1))
            planned[i] += 1
            now = T0 + 1_000 * round_ + i if rng.random() < 0.95 else DAY_END + round_
            calls.append((i, expected, f"m{round_}", now))
        by_one: list[object] = []
        for i, expected, move, now in calls:
            k = ones[i]
            try:
                by_one.append(
                    await one.append(k.game, k.log, k.times, expected, move, now, DAY_END)
                )
            except Exception as exc:
                by_one.append(exc)
        in_runs = await asyncio.gather(
            *(
                many.append(manys[i].game, manys[i].log, manys[i].times, e, move, now, DAY_END)
                for i, e, move, now in calls
            ),
            return_exceptions=True,
        )
        assert [outcome(r) for r in in_runs] == [outcome(r) for r in by_one], round_
        for (i, *_), r in zip(calls, by_one, strict=True):
            if isinstance(r, int):
                seqs[i] = r
        kinds.update(type(r).__name__ for r in by_one)
        twice = {i for i in picked if picked.count(i) > 1}
        doubled += sum(isinstance(by_one[n], int) for n, (i, *_) in enumerate(calls) if i in twice)
    assert kinds == {"int", "Conflict", "GameOver", "DayOver", "InvalidInput"}, kinds
    assert doubled > 10, "games appended to twice in one run"
    assert many._append.many is not None and one._append.many is not None
    assert await redis_client.script_exists(many._append.many.sha) == [True], "runs ran"
    for a, b in zip(ones, manys, strict=True):
        assert await stored(redis_client, a) == await stored(redis_client, b)
        assert (await redis_client.pttl(a.log) > 0) == (await redis_client.pttl(b.log) > 0)
        assert (await redis_client.pttl(a.times) > 0) == (await redis_client.pttl(b.times) > 0)


async def test_the_fields_a_move_reads_lead_a_new_games_record(
    redis_client: redis.asyncio.Redis,
) -> None:
    """A small hash is a list Redis searches from its head: the status, seq and last move
    time every append reads and writes are its first fields (issue #30)."""
    store = GameStore(redis_client)
    k = await started(store)
    assert await redis_client.object("encoding", k.game) == "ziplist"
    fields = list(await redis_client.hgetall(k.game))
    assert fields[:3] == ["status", "seq", "last_move_at_ms"], fields
