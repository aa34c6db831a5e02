"""The store's side of the screen, on a real Redis: each move's server time is logged with it,
a finish at machine speed is held (kept, off the board, on the review list), a human-paced one
is ranked."""

from __future__ import annotations

import datetime as dt

import redis.asyncio

from server.boards.leaderboard import BoardRef, Leaderboard
from server.fairplay.screen import Reason, Verdict
from server.games.store import FinalResult, GameStore
from server.redis import keys

D = dt.date(2030, 6, 15)
T0 = 1_907_755_200_000


def won(moves: int, time_ms: int) -> FinalResult:
    return FinalResult(
        won=True,
        over=True,
        resigned=False,
        cleared=52,
        score=52,
        points=52,
        time_ms=time_ms,
        moves=moves,
    )


async def play(store: GameStore, pid: str, gaps: list[int]) -> tuple[str, int]:
    """Start a Fourteen Out game at T0 and log all but the last move ``gaps`` apart."""
    gid = (await store.start_daily("fourteen-out", D, pid, 1, T0)).game_id
    now = T0
    for i, gap in enumerate(gaps[:-1]):
        now += gap
        await store.append_move(gid, i, f"m{i}", now)
    return gid, now + gaps[-1]


async def test_each_move_is_logged_with_its_server_interval(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = GameStore(redis_client)
    gid, _ = await play(store, "p1", [1_500, 700, 2_000, 10])
    times = await redis_client.lrange(keys.daily_times("fourteen-out", D, "p1"), 0, -1)
    assert [int(t) for t in times] == [1_500, 700, 2_000]  # the first from the deal served
    ttl_log = await redis_client.ttl(keys.daily_log("fourteen-out", D, "p1"))
    ttl_times = await redis_client.ttl(keys.daily_times("fourteen-out", D, "p1"))
    assert ttl_log > 0 and abs(ttl_log - ttl_times) <= 1
    assert gid == keys.daily_game_id("fourteen-out", D, "p1")


async def test_a_machine_speed_win_is_held_off_the_board(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = GameStore(redis_client)
    board = BoardRef.daily("fourteen-out", D)
    lb = Leaderboard(redis_client, store.entries)
    gid, end = await play(store, "bot", [2] + [12] * 25)
    record, entry = await store.finish(gid, won(26, end - T0), "bot", end, "last", 25)
    assert record.flagged and record.held is not None and entry.rank == 0
    verdict = Verdict.loads(record.held)
    assert Reason.MACHINE_PACE in verdict.reasons and verdict.evidence.moves == 26
    assert verdict.evidence.intervals_ms[-1] == 12  # the final move's interval counts too
    assert await lb.total(board) == 0 and await lb.top(board) == []
    assert await redis_client.zscore(keys.fairplay_held(), gid) == end
    # Not in its player's history (profiles) either, and nothing owed to it.
    assert await redis_client.zcard(keys.history_days("bot", "fourteen-out")) == 0
    assert await redis_client.scard(keys.history_pending("bot")) == 0
    # Kept: the stored record still has the result and the entry it would have had.
    again = await store.get(gid)
    assert again.result is not None and again.entry is not None and again.flagged
    # A retried finish changes nothing.
    record2, entry2 = await store.finish(gid, won(26, end - T0), "bot", end + 5, "last", 25)
    assert record2.flagged and entry2.rank == 0 and await lb.total(board) == 0

    human, end_h = await play(store, "amy", [3_000 + 97 * i for i in range(26)])
    record_h, entry_h = await store.finish(human, won(26, end_h - T0), "amy", end_h, "last", 25)
    assert not record_h.flagged and record_h.held is None and entry_h.rank == 1
    assert await redis_client.zcard(keys.history_days("amy", "fourteen-out")) == 1
    assert await lb.total(board) == 1
    assert await redis_client.zscore(keys.fairplay_held(), human) is None


async def test_without_the_screen_only_a_marked_account_is_held(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = GameStore(redis_client)
    store.screen_results = False
    gid, end = await play(store, "bot", [1] * 26)
    record, entry = await store.finish(gid, won(26, end - T0), "bot", end, "last", 25)
    assert not record.flagged and entry.rank == 1
    await redis_client.hset(keys.fairplay_marked(), "alt", "{}")
    gid2, end2 = await play(store, "alt", [5_000] * 26)
    record2, _ = await store.finish(gid2, won(26, end2 - T0), "alt", end2, "last", 25)
    assert record2.flagged and record2.held is not None
    assert Verdict.loads(record2.held).reasons == (Reason.ACCOUNT_MARKED,)
