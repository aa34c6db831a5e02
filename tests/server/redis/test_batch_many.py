"""A run of one script's calls as one call of its `LuaScript.many` (issue #30), on a real
Redis: one EVALSHA for the run, each caller its own reply or error, nothing merged across
another command, and every failure path failing exactly the calls it must."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
import redis.asyncio
import redis.exceptions

from server.games.store import GameStore
from server.redis import keys
from server.redis.batch import MANY_MAX, Batcher, LuaScript
from server.runtime.errors import Conflict, StoreUnavailable
from tests.support.commandstats import commands_run

DAY = dt.date(2030, 6, 15)
T0 = 1_907_755_200_000  # 2030-06-15 12:00 UTC


async def _games(store: GameStore, n: int) -> list[keys.GameKeys]:
    out = []
    for i in range(n):
        gid = keys.daily_game_id("triple-deck", DAY, f"p_{i}")
        await store.start_game(gid, "daily", "triple-deck", 1, T0)
        out.append(keys.parse_game_id(gid))
    return out


def _append(store: GameStore, k: keys.GameKeys, seq: int, move: str = "d") -> asyncio.Future[int]:
    return asyncio.ensure_future(store.append(k.game, k.log, k.times, seq, move, T0 + 10))


async def test_a_run_of_appends_is_one_script_call_and_each_caller_gets_its_own_reply(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = GameStore(redis_client)
    games = await _games(store, 5)
    await store.append(games[0].game, games[0].log, games[0].times, 0, "d", T0 + 1)
    await asyncio.gather(_append(store, games[1], 0), _append(store, games[2], 0))  # loaded
    before = await commands_run(redis_client)
    # games[0] is at seq 1: its expected 0 is stale; the others are at 0 or 1.
    results = await asyncio.gather(
        _append(store, games[0], 0),
        _append(store, games[1], 1, "h"),
        _append(store, games[3], 0, "s"),
        _append(store, games[4], 0),
        return_exceptions=True,
    )
    ran = await commands_run(redis_client)
    assert ran["evalsha"] - before["evalsha"] == 1, "the four appends ran as one script call"
    assert ran["rpush"] - before["rpush"] == 6, "three moves written, two lists each"
    assert isinstance(results[0], Conflict) and results[0].current_seq == 1
    assert list(results[1:]) == [2, 1, 1]
    assert await redis_client.lrange(games[1].log, 0, -1) == ["d", "h"]
    assert await redis_client.lrange(games[3].log, 0, -1) == ["s"]
    assert await redis_client.lrange(games[0].log, 0, -1) == ["d"]
    assert await redis_client.hmget(games[4].game, ["seq", "last_move_at_ms"]) == [
        "1",
        str(T0 + 10),
    ]


async def test_an_error_in_one_call_fails_that_caller_alone(
    redis_client: redis.asyncio.Redis,
) -> None:
    """A call that raises inside the script (a key of the wrong type here) fails its own
    caller; the calls before and after it are written and acknowledged."""
    store = GameStore(redis_client)
    a, bad, c = await _games(store, 3)
    await redis_client.set(bad.log, "not a list")
    results = await asyncio.gather(
        _append(store, a, 0), _append(store, bad, 0), _append(store, c, 0), return_exceptions=True
    )
    assert results[0] == 1 and results[2] == 1, results
    assert isinstance(results[1], redis.exceptions.ResponseError), results
    assert "WRONGTYPE" in str(results[1])
    assert await redis_client.lrange(a.log, 0, -1) == ["d"]
    assert await redis_client.lrange(c.log, 0, -1) == ["d"]


async def test_a_run_longer_than_the_most_a_call_takes_goes_as_several(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = GameStore(redis_client)
    games = await _games(store, MANY_MAX + 3)
    await asyncio.gather(*(_append(store, k, 0) for k in games[:2]))  # the script loaded
    before = await commands_run(redis_client)
    seqs = await asyncio.gather(*(_append(store, k, 0) for k in games[2:]))
    assert seqs == [1] * (MANY_MAX + 1)
    ran = await commands_run(redis_client)
    assert ran["evalsha"] - before["evalsha"] == 2  # MANY_MAX calls, then the one left


async def test_no_run_spans_another_command(redis_client: redis.asyncio.Redis) -> None:
    """Calls on either side of another command of the same batch stay on their side of it:
    the command sees the first append written and the second not yet."""
    store = GameStore(redis_client)
    a, b = await _games(store, 2)
    await asyncio.gather(_append(store, a, 0), _append(store, b, 0))
    before = await commands_run(redis_client)
    batches = store.batch.batches

    def append(k: keys.GameKeys) -> asyncio.Future[object]:
        args = (1, "h", T0 + 20, store.max_moves, 0)
        return store.batch.eval_soon(store._append, (k.game, k.log, k.times), args)

    replies = [  # queued in one go: one batch
        append(a),
        store.batch.run_soon(a.log, "LLEN", a.log),
        store.batch.run_soon(b.log, "LLEN", b.log),
        append(b),
    ]
    assert await asyncio.gather(*replies) == [2, 2, 1, 2]
    assert store.batch.batches - batches == 1
    ran = await commands_run(redis_client)
    assert ran["evalsha"] - before["evalsha"] == 2


async def test_a_run_after_the_script_cache_is_flushed_is_loaded_and_answered(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = GameStore(redis_client)
    games = await _games(store, 3)
    await redis_client.script_flush()
    assert await asyncio.gather(*(_append(store, k, 0) for k in games)) == [1, 1, 1]
    assert [await redis_client.llen(k.log) for k in games] == [1, 1, 1]


async def test_a_connection_lost_under_a_run_fails_each_of_itscommands_run(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = GameStore(redis_client)
    games = await _games(store, 3)
    await asyncio.gather(*(_append(store, k, 0) for k in games))  # connected, loaded
    run = [_append(store, k, 1) for k in games]
    await asyncio.sleep(0)  # queued
    await asyncio.sleep(0)  # written
    conn = store.batch.connection
    assert conn is not None and conn.owed == 1, "the three calls wait on one reply"
    conn.close()
    results = await asyncio.gather(*run, return_exceptions=True)
    assert all(isinstance(r, StoreUnavailable) for r in results), results


COUNT = "return tonumber(redis.call('INCRBY', KEYS[1], ARGV[1]))"
COUNT_MANY = """
local out = {}
for i = 1, #KEYS do out[i] = tonumber(redis.call('INCRBY', KEYS[i], ARGV[i])) end
return out
"""


async def test_a_script_answering_other_than_one_element_a_call_fails_the_run(
    redis_client: redis.asyncio.Redis,
) -> None:
    """A `many` that breaks its contract fails each of its callers with a clear error, and
    the batch's other commands are answered as usual."""
    batch = Batcher(redis_client)
    broken = LuaScript.of(COUNT, many="return {1}", arity=(1, 1))
    results = await asyncio.gather(
        batch.eval_soon(broken, ("c1",), (1,)),
        batch.eval_soon(broken, ("c2",), (1,)),
        batch.run_soon("c3", "INCR", "c3"),
        return_exceptions=True,
    )
    assert all(isinstance(r, redis.exceptions.ResponseError) for r in results[:2]), results
    assert "2 calls" in str(results[0])
    assert results[2] == 1


async def test_calls_of_another_arity_go_one_by_one(redis_client: redis.asyncio.Redis) -> None:
    batch = Batcher(redis_client)
    count = LuaScript.of(COUNT, many=COUNT_MANY, arity=(1, 1))
    assert count.many is not None
    for script in (count, count.many):
        await redis_client.script_load(script.source)
    await asyncio.gather(*(batch.eval_soon(count, (f"k{i}",), (1,)) for i in range(3)))
    before = await commands_run(redis_client)
    results = await asyncio.gather(
        batch.eval_soon(count, ("k0",), (2,)),
        batch.eval_soon(count, ("k1",), (2, "extra")),  # another arity: no run
        batch.eval_soon(count, ("k2",), (5,)),
    )
    assert list(results) == [3, 3, 6]
    assert (await commands_run(redis_client))["evalsha"] - before["evalsha"] == 3
    again = await asyncio.gather(*(batch.eval_soon(count, (f"k{i}",), (1,)) for i in range(3)))
    assert again == [4, 4, 7]
    assert (await commands_run(redis_client))["evalsha"] - before["evalsha"] == 4
    # A call of another arity cuts a run: the calls on either side still go as one each.
    cut = await asyncio.gather(
        *(batch.eval_soon(count, (f"k{i}",), (1,)) for i in range(3)),
        batch.eval_soon(count, ("k3",), (1, "extra")),
        *(batch.eval_soon(count, (f"k{i}",), (1,)) for i in range(3)),
    )
    assert list(cut) == [5, 5, 8, 1, 6, 6, 9]
    assert (await commands_run(redis_client))["evalsha"] - before["evalsha"] == 7


def test_a_script_for_several_calls_needs_their_arity() -> None:
    with pytest.raises(ValueError, match="arity"):
        LuaScript.of(COUNT, many=COUNT_MANY)


@pytest.mark.parametrize("bad", [1.5, True])
async def test_an_argument_resp_cannot_carry_fails_its_call_alone(
    redis_client: redis.asyncio.Redis, bad: object
) -> None:
    batch = Batcher(redis_client)
    count = LuaScript.of(COUNT, many=COUNT_MANY, arity=(1, 1))
    results = await asyncio.gather(
        batch.eval_soon(count, ("k0",), (1,)),
        batch.eval_soon(count, ("k1",), (bad,)),  # type: ignore[arg-type]
        batch.eval_soon(count, ("k2",), (1,)),
        return_exceptions=True,
    )
    assert results[0] == 1 and results[2] == 1, results
    assert isinstance(results[1], TypeError), results
    before = await commands_run(redis_client)
    assert await asyncio.gather(*(batch.eval_soon(count, (f"k{i}",), (1,)) for i in range(3))) == [
        2,
        1,
        2,
    ]
    assert (await commands_run(redis_client))["evalsha"] - before["evalsha"] == 1, "runs again"
