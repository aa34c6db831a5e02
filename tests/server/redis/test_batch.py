"""Group commit: the appends of one event-loop iteration share one pipeline (real Redis)."""

from __future__ import annotations

import asyncio
import datetime as dt
import tomllib
from pathlib import Path

import pytest
import redis.asyncio
import redis.exceptions
from packaging.requirements import Requirement

from server.boards.leaderboard import BoardRef
from server.config import Config
from server.games.store import FinalResult, GameStore
from server.players.history import DayRank
from server.redis import keys
from server.redis.batch import Batcher, LuaScript
from server.runtime.clock import ManualClock
from server.runtime.errors import Conflict, GameOver, StoreUnavailable
from server.runtime.metrics import Metrics
from server.services import Services

DAY = dt.date(2030, 6, 15)
ROOT = Path(__file__).resolve().parents[3]


async def _games(store: GameStore, n: int) -> list[str]:
    ids = [keys.daily_game_id("fourteen-out", DAY, f"p_{i}") for i in range(n)]
    for gid in ids:
        await store.start_game(gid, "daily", "fourteen-out", 1, 1_000)
    return ids


async def test_appends_of_one_iteration_go_in_one_pipeline(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = GameStore(redis_client)
    ids = await _games(store, 40)
    before = store.batch.batches
    seqs = await asyncio.gather(*(store.append_move(gid, 0, "1 2", 2_000) for gid in ids))
    assert seqs == [1] * 40
    assert store.batch.batches - before == 1
    for gid in ids:  # every acknowledged append is in Redis
        assert await redis_client.lrange(keys.parse_game_id(gid).log, 0, -1) == ["1 2"]


async def test_a_failed_append_fails_only_its_own_move(redis_client: redis.asyncio.Redis) -> None:
    store = GameStore(redis_client)
    ok, stale, done = await _games(store, 3)
    await store.finish(
        done,
        FinalResult(
            won=False, over=True, resigned=True, cleared=0, score=0, points=0, time_ms=1, moves=0
        ),
        "p_2",
        3_000,
        None,
        0,
    )
    results = await asyncio.gather(
        store.append_move(ok, 0, "1 2", 2_000),
        store.append_move(stale, 5, "1 2", 2_000),  # the game is at 0, not 5
        store.append_move(done, 0, "1 2", 2_000),
        return_exceptions=True,
    )
    assert results[0] == 1
    assert isinstance(results[1], Conflict) and not isinstance(results[1], GameOver)
    assert isinstance(results[2], GameOver)
    assert await redis_client.llen(keys.parse_game_id(stale).log) == 0


async def test_appends_survive_a_flushed_script_cache(redis_client: redis.asyncio.Redis) -> None:
    store = GameStore(redis_client)
    (gid,) = await _games(store, 1)
    await redis_client.script_flush()
    assert await store.append_move(gid, 0, "1 2", 2_000) == 1
    await redis_client.script_flush()
    assert await store.append_move(gid, 1, "3 4", 2_000) == 2


async def test_an_outage_fails_every_append_of_the_batch_as_unavailable(redis_url: str) -> None:
    client = redis.asyncio.Redis.from_url(
        "redis://127.0.0.1:1",
        decode_responses=True,
        socket_connect_timeout=0.2,
        retry_on_timeout=False,
    )
    store = GameStore(client)
    gids = [keys.daily_game_id("fourteen-out", DAY, f"p_{i}") for i in range(3)]
    try:
        results = await asyncio.gather(
            *(store.append_move(g, 0, "1 2", 1) for g in gids), return_exceptions=True
        )
    finally:
        await client.aclose()
    assert all(isinstance(r, StoreUnavailable) for r in results), results


@pytest.mark.parametrize("text", ["", "x" * 129])
async def test_move_text_is_checked_before_it_is_queued(
    redis_client: redis.asyncio.Redis, text: str
) -> None:
    store = GameStore(redis_client)
    (gid,) = await _games(store, 1)
    with pytest.raises(Exception, match="move text"):
        await store.append_move(gid, 0, text, 1)
    assert store.appends == 0


async def test_a_large_batch_wakes_its_callers_a_chunk_per_iteration(
    redis_client: redis.asyncio.Redis,
) -> None:
    """Every append of a 50-move batch gets its own result, and other work runs between the
    chunks of callers woken (so one batch does not hold the loop for all its replies)."""
    from server.redis.batch import RESOLVE_CHUNK

    store = GameStore(redis_client)
    ids = await _games(store, 50)
    order: list[str] = []

    async def play(gid: str) -> int:
        seq = await store.append_move(gid, 0, "1 2", 2_000)
        order.append("reply")
        if len(order) == 1:  # other work, ready as soon as the first caller is woken
            asyncio.get_running_loop().call_soon(order.append, "other")
        return seq

    before = store.batch.batches
    assert await asyncio.gather(*(play(g) for g in ids)) == [1] * 50
    assert store.batch.batches - before == 1
    assert order.index("other") <= RESOLVE_CHUNK + 1 < 50, "it ran before the later chunks"


async def test_a_kept_connection_closed_by_redis_is_replaced(
    redis_client: redis.asyncio.Redis,
) -> None:
    """The log keeps its connection between batches; one Redis closed meanwhile (a restart,
    a CLIENT KILL, an idle timeout) is noticed before use, and the next batch still lands."""
    store = GameStore(redis_client)
    (gid,) = await _games(store, 1)
    assert await store.append_move(gid, 0, "1 2", 2_000) == 1
    assert store.batch.connection is not None, "the connection is kept for the next batch"
    assert store.batch.connects == 1
    me = await redis_client.client_id()
    for client in await redis_client.client_list():
        if int(client["id"]) != me:
            await redis_client.client_kill_filter(_id=client["id"])
    assert await store.append_move(gid, 1, "3 4", 3_000) == 2
    assert store.batch.connects == 2
    assert await redis_client.lrange(keys.parse_game_id(gid).log, 0, -1) == ["1 2", "3 4"]
    await store.batch.aclose()
    assert store.batch.connection is None


async def test_other_commands_share_the_batch_and_their_scripts_load_on_demand(
    redis_client: redis.asyncio.Redis,
) -> None:
    """`eval` and `run` go in the same pipeline as the appends of their iteration; a script
    Redis does not know (flushed) is loaded and run; an error reply fails only its command."""
    log = Batcher(redis_client)
    incr = LuaScript.of("return redis.call('INCRBY', KEYS[1], ARGV[1])")
    await redis_client.set("{t}:str", "x")
    await redis_client.script_flush()
    before = log.batches
    results = await asyncio.gather(
        log.eval(incr, ("{t}:n",), (5,)),
        log.run("{t}:s", "SADD", "{t}:s", "a", "b"),
        log.run("{t}:str", "HGET", "{t}:str", "x"),  # a string key: WRONGTYPE
        log.eval(incr, ("{t}:n",), (2,)),
        return_exceptions=True,
    )
    assert log.batches - before == 1
    assert results[0] == 5 and results[1] == 2 and results[3] == 7
    assert isinstance(results[2], redis.exceptions.ResponseError)
    await log.aclose()


def test_redis_py_is_pinned_to_the_range_tested() -> None:
    """pyproject.toml admits one redis-py major; the image's pin and the installed version
    are inside it (the server relies on public redis-py API that moves between majors)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    spec = next(
        Requirement(d) for d in project["dependencies"] if Requirement(d).name == "redis"
    ).specifier
    assert spec.contains("8.1.0") and not spec.contains("9.0.0") and not spec.contains("5.0.0")
    pinned = next(
        line.split("==")[1]
        for line in (ROOT / "deploy" / "constraints.txt").read_text().splitlines()
        if line.startswith("redis==")
    )
    assert spec.contains(pinned) and spec.contains(redis.__version__)


def test_the_server_reads_no_private_attributes_of_redis_py_or_the_standard_library() -> None:
    """No slot map or node internals of redis-py (`nodes_manager`, `acquire_connection`), no
    subclass of its `PubSub`, no `ProcessPoolExecutor._processes`: the public API only."""
    private = ("nodes_manager", "acquire_connection", "(PubSub)", "._processes", '"_processes"')
    found = [
        f"{path.relative_to(ROOT)}: {word}"
        for path in sorted((ROOT / "server").rglob("*.py"))
        for word in private
        if word in path.read_text()
    ]
    assert found == []


def test_every_script_runs_through_the_batcher() -> None:
    """No redis-py `Script` outside `server/redis`: every store's scripts are `LuaScript`s run
    by the app's one `Batcher` (group commit, loaded on demand, routed by slot on a cluster)."""
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "server").rglob("*.py"))
        if path.parent.name != "redis" or path.parent.parent.name != "server"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "register_script" in line
    ]
    assert found == []


async def test_the_services_share_one_batcher_for_every_script(
    redis_client: redis.asyncio.Redis,
) -> None:
    """The scripts that ran as redis-py `Script`s (enlist, a frozen rank, the board's reads,
    a race win) go in the app's one group commit: one pipeline for one iteration's calls."""
    services = Services.build(Config(), ManualClock(0), redis_client, Metrics())
    batch = services.store.batch
    for holder in (services.leaderboard, services.races.boards, services.deals):
        assert holder.batch is batch
    board = BoardRef.daily("fourteen-out", DAY)
    gid = keys.daily_game_id("fourteen-out", DAY, "p_1")
    await services.races.boards.add_win("triple-deck", DAY, "p_2", "race-1")  # warm: HMGET
    batches, commands = batch.batches, batch.commands
    await asyncio.gather(
        services.store.enlist("fourteen-out", DAY, gid, 1_000),
        services.store.history.freeze_rank("p_1", "fourteen-out", DAY, DayRank(1, 1)),
        services.leaderboard.top(board),
        services.leaderboard.around(board, "p_1"),
    )
    assert (batch.batches - batches, batch.commands - commands) == (1, 4)
    assert await redis_client.zscore(keys.daily_started("fourteen-out", DAY), gid) is not None
    wins = keys.race_wins_board("triple-deck", DAY)
    assert await redis_client.zscore(wins, "p_2") == 1


async def test_a_command_resp_cannot_carry_fails_alone(redis_client: redis.asyncio.Redis) -> None:
    """A caller's argument RESP cannot carry (a float: a bug) fails that command with a
    TypeError; the rest of its batch is written and answered (an error escaping the flush
    left every command of the batch, other players' too, waiting for good)."""
    batch = Batcher(redis_client)
    good = batch.run_soon("bt:good", "SET", "bt:good", "1")
    bad = batch.run_soon("bt:bad", "SET", "bt:bad", 1.5)  # type: ignore[arg-type]
    after = batch.run_soon("bt:good", "GET", "bt:good")
    assert await asyncio.wait_for(good, 5) == "OK"
    with pytest.raises(TypeError):
        await asyncio.wait_for(bad, 5)
    assert await asyncio.wait_for(after, 5) == "1"
    assert await redis_client.exists("bt:bad") == 0
    assert await batch.run("bt:good", "GET", "bt:good") == "1", "the next batch is answered too"
