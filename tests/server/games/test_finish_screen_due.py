"""A daily finish screened from the cached game in two round trips (issue #30): the game's step
runs beside the read of the account's fair-play mark, so it leaves the game "finished, screen
due" until the mark is known. On a real Redis: a process that dies between the two trips never
lets a marked account's result reach a board (every reader reads the mark first), an unmarked
one's is written by the next reader, and a stale cache writes nothing."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
import redis.asyncio

from server.boards.leaderboard import BoardEntries, BoardRef, Leaderboard, PendingEntry
from server.fairplay.screen import Reason, Verdict
from server.games.service import GameService
from server.games.store import FinalResult, GameStore, PlayedLog
from server.players.history import DailyResult, History
from server.redis import keys
from server.redis.batch import Command
from server.runtime.clock import ManualClock
from server.runtime.errors import Conflict, StoreUnavailable

D = dt.date(2030, 6, 15)
T0 = 1_907_755_200_000
WIN = FinalResult(
    won=True, over=True, resigned=False, cleared=52, score=520, points=52, time_ms=90_000, moves=3
)


class DiesAfterTheFirstTrip(BoardEntries):
    """A process that dies (or whose Redis fails) after the first round trip of a finish: its
    second (the board's step, or a marked account's hold) never runs."""

    async def write(self, k: keys.DailyGameKeys, entry: PendingEntry | None) -> tuple[int, str]:
        raise StoreUnavailable("died between the two round trips")

    async def hold(self, k: keys.DailyGameKeys, verdict: str) -> list[str]:
        raise StoreUnavailable("died between the two round trips")


class HistoryDiesToo(History):
    """The same process's history record of that second trip: it never runs either."""

    def record_soon(
        self,
        result: DailyResult,
        *,
        crowns: tuple[str, int] | None = None,
        game_id: str | None = None,
    ) -> asyncio.Future[object]:
        failed: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        failed.set_exception(StoreUnavailable("died between the two round trips"))
        return failed


async def _played(redis_client: redis.asyncio.Redis, store: GameStore, pid: str) -> str:
    """A Klondike game of ``pid`` with two moves logged, 4 s and 6 s apart."""
    gid = (await store.start_daily("klondike", D, pid, 1, T0)).game_id
    await store.append_move(gid, 0, "a", T0 + 4_000)
    await store.append_move(gid, 1, "b", T0 + 10_000)
    return gid


async def _cut_short(redis_client: redis.asyncio.Redis, pid: str, *, marked: bool) -> str:
    """Finish ``pid``'s game from a cached log, dying after the first round trip."""
    if marked:
        await redis_client.hset(keys.fairplay_marked(), pid, "{}")
    store = GameStore(redis_client)
    store.entries = DiesAfterTheFirstTrip(redis_client, commit=store.batch)
    store.history = HistoryDiesToo(redis_client, commit=store.batch)
    gid = await _played(redis_client, store, pid)
    cached = PlayedLog(["a", "b"], [4_000, 6_000], T0 + 10_000)
    with pytest.raises(StoreUnavailable):  # the player is told `unavailable`, no result
        await store.finish(gid, WIN, "Alice", T0 + 90_000, "c", 2, played=cached)
    k = keys.parse_game_id(gid)
    assert isinstance(k, keys.DailyGameKeys)
    raw = await redis_client.hgetall(k.game)
    # Finished, owed to the board and "screen due": the mark was not known to the step.
    assert raw["status"] == "finished" and raw["pending"] == "1" and "held" not in raw
    assert not Verdict.loads(str(raw["screen"])).held
    assert await redis_client.hget(k.entries, pid) is None
    assert await redis_client.zscore(k.outbox, gid) is not None
    assert await redis_client.sismember(keys.history_pending(pid), gid)
    return gid


@pytest.mark.parametrize("read", ["top", "around", "game"])
async def test_a_marked_accounts_result_cut_short_is_held_by_its_next_reader(
    redis_client: redis.asyncio.Redis, read: str
) -> None:
    gid = await _cut_short(redis_client, "cheat", marked=True)
    board, lb = BoardRef.daily("klondike", D), Leaderboard(redis_client)
    if read == "game":  # the player's resume, the history on a profile read, the desk
        record = await GameStore(redis_client).get(gid)
        assert record.flagged and record.pending_entry is None
    rows = await (lb.top(board) if read == "top" else lb.around(board, "cheat"))
    assert rows == [] and await lb.total(board) == 0  # never on the board
    raw = await redis_client.hgetall(keys.daily_game("klondike", D, "cheat"))
    assert "pending" not in raw and "screen" not in raw
    verdict = Verdict.loads(str(raw["held"]))
    assert verdict.reasons == (Reason.ACCOUNT_MARKED,)
    assert verdict.evidence.intervals_ms == (4_000, 6_000, 80_000)  # the cached log's
    assert await redis_client.zscore(keys.fairplay_held(), gid) is not None  # on the desk
    assert await redis_client.zcard(board.outbox_key) == 0
    # Its history: held results are in none (the profile read drops it from the outbox).
    store = GameStore(redis_client)
    await store.record_history(await store.get(gid))
    assert await History(redis_client).pending("cheat") == []
    assert await redis_client.zcard(keys.history_days("cheat", "klondike")) == 0


@pytest.mark.parametrize("read", ["top", "game"])
async def test_an_unmarked_result_cut_short_is_written_by_its_next_reader(
    redis_client: redis.asyncio.Redis, read: str
) -> None:
    gid = await _cut_short(redis_client, "amy", marked=False)
    board, lb = BoardRef.daily("klondike", D), Leaderboard(redis_client)
    if read == "game":
        # As if the history's master had refused the outbox beside the step (a cluster):
        # the game's load records the history itself.
        await redis_client.srem(keys.history_pending("amy"), gid)
        record = await GameStore(redis_client).get(gid)
        assert not record.flagged and record.pending_entry is None and record.screen is None
        assert await redis_client.zcard(keys.history_days("amy", "klondike")) == 1
    rows = await lb.top(board)
    assert [(e.rank, e.player_id, e.won) for e in rows] == [(1, "amy", True)]
    raw = await redis_client.hgetall(keys.daily_game("klondike", D, "amy"))
    assert "pending" not in raw and "screen" not in raw and "held" not in raw
    assert await redis_client.zcard(board.outbox_key) == 0
    assert await redis_client.zcard(keys.fairplay_held()) == 0
    # Its history: the profile read records it from the outbox (the stored game).
    store = GameStore(redis_client)
    await store.record_history(await store.get(gid))
    assert await History(redis_client).pending("amy") == []
    assert await redis_client.zcard(keys.history_days("amy", "klondike")) == 1


async def test_a_retried_finish_resolves_a_due_screen_before_the_board(
    redis_client: redis.asyncio.Redis,
) -> None:
    """The player retries (or another process finishes) a game a crash left "screen due";
    the account was marked: the retry holds it instead of ranking it."""
    gid = await _cut_short(redis_client, "cheat", marked=True)
    store = GameStore(redis_client)
    for cached in (PlayedLog(["a", "b", "c"], [4_000, 6_000, 80_000], T0 + 90_000), None):
        record, entry = await store.finish(gid, WIN, "Alice", T0 + 99_000, None, 3, played=cached)
        assert record.flagged and entry.rank == 0
        assert await redis_client.hlen(keys.daily_members("klondike", D)) == 0


async def test_a_marked_accounts_finish_from_the_cache_is_held(
    redis_client: redis.asyncio.Redis,
) -> None:
    await redis_client.hset(keys.fairplay_marked(), "cheat", "{}")
    store = GameStore(redis_client)
    gid = await _played(redis_client, store, "cheat")
    cached = PlayedLog(["a", "b"], [4_000, 6_000], T0 + 10_000)
    record, entry = await store.finish(gid, WIN, "C", T0 + 90_000, "c", 2, played=cached)
    assert record.flagged and entry.rank == 0 and record.screen is None
    assert Verdict.loads(record.held or "").reasons == (Reason.ACCOUNT_MARKED,)
    assert await redis_client.zscore(keys.fairplay_held(), gid) is not None
    assert await Leaderboard(redis_client).top(BoardRef.daily("klondike", D)) == []
    assert await redis_client.hget(keys.daily_game("klondike", D, "cheat"), "pending") is None


async def test_a_stale_cache_writes_nothing(redis_client: redis.asyncio.Redis) -> None:
    store = GameStore(redis_client)
    gid = await _played(redis_client, store, "p1")
    stale = PlayedLog(["a"], [4_000], T0 + 4_000)  # cached before the second move
    with pytest.raises(Conflict):
        await store.finish(gid, WIN, "A", T0 + 90_000, "c", 1, played=stale)
    raw = await redis_client.hgetall(keys.daily_game("klondike", D, "p1"))
    assert raw["status"] == "playing" and raw["seq"] == "2" and "screen" not in raw


async def test_the_cached_times_are_the_stored_ones_across_processes(
    redis_client: redis.asyncio.Redis,
) -> None:
    """Two processes play one game: the times each caches are Redis's; the one whose cache
    went stale is refused at the step and resigns the stored game, screened on its times."""
    await redis_client.hset(keys.fairplay_marked(), "p1", "{}")  # held: the verdict is kept
    clock = ManualClock(T0)
    a, b = GameService(GameStore(redis_client), clock), GameService(GameStore(redis_client), clock)
    live = await a.start_daily("triple-deck", D, "p1", 7)
    clock.advance(3_000)
    await a.play(live.record.game_id, "p1", "A", "d", 0)
    clock.advance(5_000)
    await a.play(live.record.game_id, "p1", "A", "d", 1)
    other = await b.get(live.record.game_id, "p1")  # loaded from Redis
    assert other.times == [3_000, 5_000] == a._cache[live.record.game_id].times
    clock.advance(7_000)
    await b.play(live.record.game_id, "p1", "A", "d", 2)
    clock.advance(1_000)
    resigned, entry = await a.resign(live.record.game_id, "p1", "A")  # a's cache: 2 moves
    assert resigned.seq == 3 and resigned.times == [3_000, 5_000, 7_000]
    assert resigned.record.flagged and entry.rank == 0
    verdict = Verdict.loads(resigned.record.held or "")
    assert verdict.evidence.intervals_ms == (3_000, 5_000, 7_000)
    times = await redis_client.lrange(keys.daily_times("triple-deck", D, "p1"), 0, -1)
    assert [int(t) for t in times] == [3_000, 5_000, 7_000]


async def test_a_brief_step_returns_the_record_redis_holds(
    redis_client: redis.asyncio.Redis,
) -> None:
    """With the cached record, the step sends nothing back: the finished record made from the
    cache is the stored one; a hint added elsewhere since it was cached makes it stale."""
    store = GameStore(redis_client)
    start = await store.start_daily("klondike", D, "p1", 1, T0)
    await store.append_move(start.game_id, 0, "a", T0 + 4_000)
    await store.append_move(start.game_id, 1, "b", T0 + 10_000)
    cached = PlayedLog(["a", "b"], [4_000, 6_000], T0 + 10_000, start)
    assert await store.add_hint(start.game_id, T0 + 11_000) == 1  # another process's hint
    with pytest.raises(Conflict):  # the result counts no hint: refused, nothing written
        await store.finish(start.game_id, WIN, "A", T0 + 90_000, "c", 2, played=cached)
    hinted = FinalResult(True, True, False, 52, 520, 52, 120_000, 3, hints=1)
    record, entry = await store.finish(
        start.game_id, hinted, "A", T0 + 90_000, "c", 2, played=cached
    )
    assert record == await store.get(start.game_id)
    assert record.result == hinted and record.seq == 3 and record.last_move_at_ms == T0 + 90_000
    assert entry.rank == 1 and entry.hints == 1
    tier = await store.start_tier("klondike", D, "p1", "hard", 1, T0)  # no final move
    cached = PlayedLog([], [], T0, tier)
    record, _ = await store.finish(tier.game_id, WIN, "A", T0 + 5_000, None, 0, played=cached)
    assert record == await store.get(tier.game_id)
    assert record.seq == 0 and record.last_move_at_ms == T0 and record.tier == "hard"


async def test_a_brief_steps_reply_is_a_plain_integer(redis_client: redis.asyncio.Redis) -> None:
    """Issue #30 (redis-server per finish): a brief step finished as sent answers the integer
    0, not a one-element Lua table (a deferred-length reply, which moves it and every later
    reply of its pipeline to the client's reply list); its refusals keep their tables."""
    store = GameStore(redis_client)
    replies: list[asyncio.Future[object]] = []

    def observed(batch: list[tuple[Command, asyncio.Future[object]]]) -> None:
        replies.extend(f for c, f in batch if c.script is store._finish_game)  # the game's step

    store.batch.observe = observed
    start = await store.start_daily("klondike", D, "p1", 1, T0)
    await store.append_move(start.game_id, 0, "a", T0 + 4_000)
    cached = PlayedLog(["a"], [4_000], T0 + 4_000, start)
    with pytest.raises(Conflict):  # a stale seq: refused with its table
        await store.finish(start.game_id, WIN, "A", T0 + 90_000, "b", 0, played=cached)
    assert [f.result() for f in replies] == [[-3, 1]]
    replies.clear()
    record, entry = await store.finish(start.game_id, WIN, "A", T0 + 90_000, "b", 1, played=cached)
    assert replies[0].result() == 0 and type(replies[0].result()) is int
    assert record == await store.get(start.game_id) and record.seq == 2 and entry.rank == 1
