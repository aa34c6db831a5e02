"""GameStore against a real Redis: atomic appends, exactly-once finish in two steps (the
game's slot, then its board's), and the board's step recovered after a crash between them."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import pytest
import redis.asyncio

from server.boards.leaderboard import BoardEntries, BoardRef, Leaderboard, PendingEntry
from server.games.service import GameService
from server.games.store import UNDO, FinalResult, GameStore
from server.redis import keys
from server.redis.embedded import connect
from server.runtime.clock import ManualClock
from server.runtime.errors import Conflict, GameOver, InvalidInput, NotFound, StoreUnavailable

D = dt.date(2030, 6, 15)
T0 = 1_907_755_200_000
WIN = FinalResult(
    won=True, over=True, resigned=False, cleared=52, score=520, points=52, time_ms=90_000, moves=3
)


async def test_start_daily_is_idempotent(redis_client: redis.asyncio.Redis) -> None:
    store = GameStore(redis_client)
    rec = await store.start_daily("klondike", D, "p1", 12345, T0)
    assert rec.game_id == "d.klondike.2030-06-15.p1" == keys.daily_game_id("klondike", D, "p1")
    assert (rec.kind, rec.variant, rec.date, rec.player_id) == ("daily", "klondike", D, "p1")
    assert (rec.seed, rec.started_at_ms, rec.status, rec.seq) == (12345, T0, "playing", 0)
    assert rec.result is None and rec.finished_at_ms is None and not rec.finished

    await store.append_move(rec.game_id, 0, "w>t1", T0 + 10)
    again = await store.start_daily("klondike", D, "p1", 999, T0 + 5_000)
    assert again.seed == 12345 and again.started_at_ms == T0 and again.seq == 1

    other = await store.start_daily("spider", D, "p1", 1, T0)
    assert other.game_id != rec.game_id and other.seq == 0


async def test_load_and_append(redis_client: redis.asyncio.Redis) -> None:
    store = GameStore(redis_client)
    gid = (await store.start_daily("klondike", D, "p1", 1, T0)).game_id
    moves = ["s", "w>t3", UNDO, "t3>f1"]
    for i, m in enumerate(moves):
        assert await store.append_move(gid, i, m, T0 + i + 1) == i + 1
    rec, log = await store.load(gid)
    assert log == moves
    assert rec.seq == 4 and rec.last_move_at_ms == T0 + 4
    assert (await store.get(gid)) == rec
    # The log inherits the record's retention TTL.
    assert (
        abs(
            await redis_client.ttl(keys.daily_log("klondike", D, "p1"))
            - await redis_client.ttl(keys.daily_game("klondike", D, "p1"))
        )
        <= 1
    )


async def test_append_conflicts(redis_client: redis.asyncio.Redis) -> None:
    store = GameStore(redis_client, max_moves=3, max_move_len=8)
    gid = (await store.start_daily("klondike", D, "p1", 1, T0)).game_id
    await store.append_move(gid, 0, "a", T0)
    with pytest.raises(Conflict) as exc:
        await store.append_move(gid, 0, "b", T0)
    assert exc.value.current_seq == 1 and type(exc.value) is Conflict
    with pytest.raises(Conflict):
        await store.append_move(gid, 5, "b", T0)
    with pytest.raises(InvalidInput):
        await store.append_move(gid, 1, "x" * 9, T0)
    with pytest.raises(InvalidInput):
        await store.append_move(gid, 1, "", T0)
    await store.append_move(gid, 1, "b", T0)
    await store.append_move(gid, 2, "c", T0)
    with pytest.raises(InvalidInput):  # max_moves reached
        await store.append_move(gid, 3, "d", T0)
    assert (await store.load(gid))[1] == ["a", "b", "c"]


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "d.klondike.2030-06-15",
        "d.klondike.2030-06-15.p1.x",
        "d.klondike.2030-13-01.p1",
        "d.Klondike.2030-06-15.p1",
        "r.klondike.2030-06-15.p1",
        "d.klon{dike}.2030-06-15.p1",
        "d.klondike.2030-06-15.p 1",
        "d.klondike.2030-06-15.unknownplayer",  # well-formed but absent
        "d.klondike.2030-06-15.p1\n",
    ],
)
async def test_bad_or_unknown_game_ids(redis_client: redis.asyncio.Redis, bad: str) -> None:
    store = GameStore(redis_client)
    await store.start_daily("klondike", D, "p1", 1, T0)
    with pytest.raises(NotFound):
        await store.load(bad)
    with pytest.raises(NotFound):
        await store.append_move(bad, 0, "x", T0)
    with pytest.raises(NotFound):
        await store.finish(bad, WIN, "n", T0, None, 0)


async def test_concurrent_appends_same_seq_exactly_one_wins(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = GameStore(redis_client)
    gid = (await store.start_daily("klondike", D, "p1", 1, T0)).game_id
    results = await asyncio.gather(
        *(store.append_move(gid, 0, f"m{i}", T0 + i) for i in range(50)), return_exceptions=True
    )
    wins = [r for r in results if r == 1]
    assert len(wins) == 1
    assert all(isinstance(r, Conflict) for r in results if r != 1)
    rec, log = await store.load(gid)
    assert rec.seq == 1 and len(log) == 1


async def test_finish_with_final_move(redis_client: redis.asyncio.Redis) -> None:
    store = GameStore(redis_client)
    gid = (await store.start_daily("klondike", D, "p1", 1, T0)).game_id
    await store.append_move(gid, 0, "a", T0 + 1)
    await store.append_move(gid, 1, "b", T0 + 2)
    rec, entry = await store.finish(gid, WIN, "Alice", T0 + 90_000, "c", 2)
    assert rec.finished and rec.seq == 3 and rec.result == WIN
    assert rec.finished_at_ms == rec.last_move_at_ms == T0 + 90_000
    assert (entry.rank, entry.player_id, entry.name, entry.won) == (1, "p1", "Alice", True)
    assert (await store.load(gid))[1] == ["a", "b", "c"]
    with pytest.raises(GameOver):
        await store.append_move(gid, 3, "d", T0 + 100_000)


async def test_finish_exactly_once(redis_client: redis.asyncio.Redis) -> None:
    store, lb = GameStore(redis_client), Leaderboard(redis_client)
    board = BoardRef.daily("klondike", D)
    gid = (await store.start_daily("klondike", D, "p1", 1, T0)).game_id
    rec1, e1 = await store.finish(gid, WIN, "Alice", T0 + 1_000, None, 0)

    worse = FinalResult(False, True, True, 3, 30, 3, 1, 1)
    rec2, e2 = await store.finish(gid, worse, "Mallory", T0 + 2_000, "zzz", 0)
    assert (rec2, e2) == (rec1, e1)  # stored result returned, nothing changed
    rec3, log = await store.load(gid)
    assert rec3 == rec1 and log == []
    assert await lb.total(board) == 1
    assert await lb.top(board) == [e1]
    assert await redis_client.hlen(board.members_key) == 1


async def test_concurrent_finishes_write_once(redis_client: redis.asyncio.Redis) -> None:
    store, lb = GameStore(redis_client), Leaderboard(redis_client)
    gid = (await store.start_daily("klondike", D, "p1", 1, T0)).game_id
    outs = await asyncio.gather(
        *(store.finish(gid, WIN, f"n{i}", T0 + i, f"m{i}", 0) for i in range(20))
    )
    assert len({o for o in outs}) == 1
    _, log = await store.load(gid)
    assert len(log) == 1
    assert await lb.total(BoardRef.daily("klondike", D)) == 1


async def test_finish_stale_seq_writes_nothing(redis_client: redis.asyncio.Redis) -> None:
    store, lb = GameStore(redis_client), Leaderboard(redis_client)
    gid = (await store.start_daily("klondike", D, "p1", 1, T0)).game_id
    await store.append_move(gid, 0, "a", T0)
    with pytest.raises(Conflict) as exc:
        await store.finish(gid, WIN, "Alice", T0, "b", 0)
    assert exc.value.current_seq == 1
    rec, log = await store.load(gid)
    assert rec.status == "playing" and log == ["a"]
    assert await lb.total(BoardRef.daily("klondike", D)) == 0


async def test_resigned_game_ranks_below_wins(redis_client: redis.asyncio.Redis) -> None:
    store = GameStore(redis_client)
    a = (await store.start_daily("klondike", D, "quitter", 1, T0)).game_id
    b = (await store.start_daily("klondike", D, "winner", 1, T0)).game_id
    resign = FinalResult(False, False, True, 10, 50, 10, 5_000, 20)
    _, ea = await store.finish(a, resign, "Q", T0 + 1, None, 0)
    _, eb = await store.finish(b, WIN, "W", T0 + 2, None, 0)
    assert (ea.rank, eb.rank) == (1, 1)  # ranks at the time of each finish
    rec, _ = await store.load(a)
    assert rec.result is not None and rec.result.resigned and not rec.result.won
    top = await Leaderboard(redis_client).top(BoardRef.daily("klondike", D))
    assert [e.player_id for e in top] == ["winner", "quitter"]


async def test_unreachable_redis_is_store_unavailable(tmp_path: Path) -> None:
    client = connect(f"unix://{tmp_path}/nothing.sock")
    try:
        with pytest.raises(StoreUnavailable):
            await GameStore(client).load("d.klondike.2030-06-15.p1")
    finally:
        await client.aclose()


class DiesBeforeTheBoard(BoardEntries):
    """A process that dies (or whose Redis fails) after the game's step of a finish: its
    board's step never runs."""

    async def write(self, k: keys.DailyGameKeys, entry: PendingEntry | None) -> tuple[int, str]:
        raise StoreUnavailable("died between the two steps")


async def _crash_after_game_step(redis_client: redis.asyncio.Redis, pid: str) -> str:
    """Finish ``pid``'s game but only its game's step; returns the game id."""
    store = GameStore(redis_client)
    store.entries = DiesBeforeTheBoard(redis_client)
    gid = (await store.start_daily("klondike", D, pid, 1, T0)).game_id
    await store.append_move(gid, 0, "a", T0 + 1)
    with pytest.raises(StoreUnavailable):  # the player is told `unavailable`, no result
        await store.finish(gid, WIN, "Alice", T0 + 90_000, "b", 1)
    k = keys.parse_game_id(gid)
    assert isinstance(k, keys.DailyGameKeys)
    raw = await redis_client.hgetall(k.game)
    assert raw["status"] == "finished" and raw["pending"] == "1"  # the result is stored
    assert await redis_client.hget(k.entries, pid) is None  # but not on the board yet
    assert await redis_client.zscore(k.outbox, gid) is not None
    return gid


async def test_finish_writes_the_entry_before_it_returns(redis_client: redis.asyncio.Redis) -> None:
    store = GameStore(redis_client)
    gid = (await store.start_daily("klondike", D, "p1", 1, T0)).game_id
    _, entry = await store.finish(gid, WIN, "Alice", T0 + 90_000, None, 0)
    k = keys.parse_game_id(gid)
    assert isinstance(k, keys.DailyGameKeys)
    assert await redis_client.hget(k.entries, "p1") is not None  # on the board on return
    assert await redis_client.hget(k.game, "pending") is None  # the mark is cleared
    assert await redis_client.zcard(k.outbox) == 0  # and the outbox is empty
    rec = await store.get(gid)
    assert rec.pending_entry is None and rec.finished and entry.rank == 1


async def test_a_game_load_writes_the_entry_a_crash_left_owed(
    redis_client: redis.asyncio.Redis,
) -> None:
    gid = await _crash_after_game_step(redis_client, "p1")
    other = GameStore(redis_client)  # another process, or the same one later
    rec, log = await other.load(gid)
    assert rec.finished and rec.pending_entry is None and log == ["a", "b"]
    k = keys.parse_game_id(gid)
    assert isinstance(k, keys.DailyGameKeys)
    assert await redis_client.hget(k.game, "pending") is None
    assert await redis_client.zcard(k.outbox) == 0
    top = await Leaderboard(redis_client).top(BoardRef.daily("klondike", D))
    assert [(e.player_id, e.name, e.won, e.time_ms) for e in top] == [
        ("p1", "Alice", True, WIN.time_ms)
    ]


async def test_a_game_get_writes_the_entry_a_crash_left_owed(
    redis_client: redis.asyncio.Redis,
) -> None:
    gid = await _crash_after_game_step(redis_client, "p1")
    rec = await GameStore(redis_client).get(gid)
    assert rec.finished and rec.pending_entry is None
    assert await redis_client.hget(keys.daily_entries("klondike", D), "p1") is not None


@pytest.mark.parametrize("read", ["top", "around", "rank"])
async def test_a_board_read_settles_the_boards_outbox(
    redis_client: redis.asyncio.Redis, read: str
) -> None:
    """Any reader of the board writes what its outbox still owes, before it answers."""
    await _crash_after_game_step(redis_client, "p1")
    board, lb = BoardRef.daily("klondike", D), Leaderboard(redis_client)
    if read == "top":
        rows = await lb.top(board)
    elif read == "around":
        rows = await lb.around(board, "p1")
    else:
        row = await lb.rank(board, "p1")
        rows = [row] if row else []
    assert [(e.rank, e.player_id) for e in rows] == [(1, "p1")]
    assert await redis_client.zcard(board.outbox_key) == 0
    assert await redis_client.hget(keys.daily_game("klondike", D, "p1"), "pending") is None


async def test_a_retried_finish_completes_the_owed_entry(redis_client: redis.asyncio.Redis) -> None:
    gid = await _crash_after_game_step(redis_client, "p1")
    worse = FinalResult(False, True, True, 3, 30, 3, 1, 1)
    rec, entry = await GameStore(redis_client).finish(gid, worse, "Mallory", T0 + 99_000, None, 2)
    assert rec.result == WIN  # the stored result, written once, not the retry's
    assert (entry.rank, entry.name, entry.won) == (1, "Alice", True)
    assert await redis_client.hlen(keys.daily_members("klondike", D)) == 1


async def test_concurrent_finishes_from_two_processes_count_once(
    redis_client: redis.asyncio.Redis, redis_url: str
) -> None:
    other = connect(redis_url)  # a second server process: its own connections
    try:
        stores = [GameStore(redis_client), GameStore(other)]
        gids = [
            (await stores[0].start_daily("klondike", D, f"p{i}", 1, T0)).game_id for i in range(5)
        ]
        results = [WIN, FinalResult(False, True, True, 3, 30, 3, 1, 1)]
        outs = await asyncio.gather(
            *(
                stores[j].finish(gid, results[j], f"n{j}", T0 + j, None, 0)
                for gid in gids
                for j in (0, 1)
                for _ in range(3)
            )
        )
        board = BoardRef.daily("klondike", D)
        assert await redis_client.zcard(board.board_key) == 5
        assert await redis_client.hlen(board.members_key) == 5
        assert await redis_client.zcard(board.outbox_key) == 0
        for i in range(len(gids)):  # every caller got the one stored result and entry
            mine = {(rec.result, entry.name) for rec, entry in outs[i * 6 : (i + 1) * 6]}
            assert len(mine) == 1, mine
        assert len(await Leaderboard(other).top(board)) == 5
    finally:
        await other.aclose()


async def test_an_outbox_member_whose_finish_never_ran_is_dropped(
    redis_client: redis.asyncio.Redis,
) -> None:
    """A process that died after putting a game in the outbox but before its game's step:
    the game is still in play, so the reader leaves it until it is abandoned, then drops it."""
    store = GameStore(redis_client)
    gid = (await store.start_daily("klondike", D, "p1", 1, T0)).game_id
    k = keys.parse_game_id(gid)
    assert isinstance(k, keys.DailyGameKeys)
    await store.entries.enqueue(k, 4_000_000_000)
    board = BoardRef.daily("klondike", D)
    assert await Leaderboard(redis_client).top(board) == []
    assert await redis_client.zcard(board.outbox_key) == 1  # maybe a finish under way
    patient = Leaderboard(redis_client, BoardEntries(redis_client, abandon_after_ms=0))
    assert await patient.top(board) == []
    assert await redis_client.zcard(board.outbox_key) == 0
    _, entry = await store.finish(gid, WIN, "Alice", T0 + 1, None, 0)  # it can still finish
    assert entry.rank == 1 and await redis_client.zcard(board.outbox_key) == 0


async def test_a_resign_cut_between_the_steps_is_complete_on_the_next_read(
    redis_client: redis.asyncio.Redis,
) -> None:
    """Through the game service: the resign answers `unavailable`, and the same process's
    next read of the game shows it finished, with its entry on the board."""
    store = GameStore(redis_client)
    games = GameService(store, ManualClock(T0))
    live = await games.start_daily("fourteen-out", D, "p1", 7)
    store.entries = DiesBeforeTheBoard(redis_client)
    with pytest.raises(StoreUnavailable):
        await games.resign(live.record.game_id, "p1", "Alice")
    store.entries = BoardEntries(redis_client)  # Redis answers again
    again = await games.get(live.record.game_id, "p1")
    assert again.record.finished and again.record.result is not None
    assert again.record.result.resigned
    assert await redis_client.hget(keys.daily_entries("fourteen-out", D), "p1") is not None
    row = await Leaderboard(redis_client).rank(BoardRef.daily("fourteen-out", D), "p1")
    assert row is not None and (row.rank, row.name) == (1, "Alice")


async def test_get_many_reads_several_records_at_once(redis_client: redis.asyncio.Redis) -> None:
    store = GameStore(redis_client)
    a = await store.start_daily("fourteen-out", D, "p_many", 7, T0)
    b = await store.start_daily("triple-deck", D, "p_many", 8, T0)
    await store.append_move(b.game_id, 0, "d", T0 + 5)
    missing = keys.daily_game_id("triple-easthaven", D, "p_many")
    got = await store.get_many([a.game_id, missing, b.game_id])
    assert got[0] == await store.get(a.game_id) and got[1] is None
    assert got[2] is not None and got[2].seq == 1 and got[2] == await store.get(b.game_id)
    assert await store.get_many([]) == []


async def test_get_many_reads_through_the_batcher_in_one_pipeline(
    redis_client: redis.asyncio.Redis,
) -> None:
    """A returning player's `welcome` reads 48 records: one `HGETALL` each, all in one of the
    Batcher's pipelines (not redis-py's Python `Pipeline`)."""
    store = GameStore(redis_client)
    a = await store.start_daily("fourteen-out", D, "p_batch", 7, T0)
    b = await store.start_daily("triple-deck", D, "p_batch", 8, T0)
    ids = [a.game_id, keys.daily_game_id("pyramid", D, "p_batch"), b.game_id] * 16
    batches, commands = store.batch.batches, store.batch.commands
    got = await store.get_many(ids)
    assert (store.batch.batches - batches, store.batch.commands - commands) == (1, 48)
    assert got[:3] == [await store.get(a.game_id), None, await store.get(b.game_id)]
    assert got == got[:3] * 16


async def test_a_fresh_daily_game_is_served_without_reading_it_back(
    redis_client: redis.asyncio.Redis,
) -> None:
    """`start_daily` builds a game nothing was played in from its record; a resumed one is
    loaded with its moves (both equal to a fresh load)."""
    store = GameStore(redis_client)
    games = GameService(store, ManualClock(T0))
    live = await games.start_daily("triple-deck", D, "p_fresh", 11)
    assert live.seq == 0 and live.log == [] and live.game.moves == 0
    await games.play(live.record.game_id, "p_fresh", "fresh", "d", None)
    games.forget(live.record.game_id)
    resumed = await games.start_daily("triple-deck", D, "p_fresh", 11)
    assert resumed.seq == 1 and resumed.log == ["d"] and resumed.game.moves == 1


async def hgetalls(r: redis.asyncio.Redis) -> int:
    """HGETALL commands this Redis has run so far (scripts' included)."""
    entry = (await r.info("commandstats")).get("cmdstat_hgetall")
    return int(entry["calls"]) if isinstance(entry, dict) else 0


async def test_a_new_games_start_reads_nothing_back(redis_client: redis.asyncio.Redis) -> None:
    """A game created by its start is made from the fields written (the script answers 1, no
    HGETALL: issue #30, per-game costs); it equals the record as stored, for every kind of
    game, and a start of an existing game still answers that game unchanged."""
    store = GameStore(redis_client)
    before = await hgetalls(redis_client)
    made = [
        await store.start_daily("fourteen-out", D, "p_new", 5, T0),
        await store.start_tier("triple-deck", D, "p_new", "hard", 6, T0 + 1),
        await store.start_tier("triple-deck", D, "p_new", "easy", 7, T0 + 2, catchup=True),
        await store.start_game(keys.free_game_id(T0, "p_new"), "free", "triple-deck", 8, T0 + 3),
    ]
    assert await hgetalls(redis_client) == before, "a new game's record was read back"
    assert [(r.kind, r.tier, r.catchup) for r in made] == [
        ("daily", "medium", False),
        ("daily", "hard", False),
        ("daily", "easy", True),
        ("free", None, False),
    ]
    for record in made:
        assert record == await store.get(record.game_id)
    await store.append_move(made[0].game_id, 0, "m", T0 + 10)
    again = await store.start_daily("fourteen-out", D, "p_new", 99, T0 + 20)
    assert again == await store.get(made[0].game_id)
    assert (again.seed, again.seq, again.started_at_ms) == (5, 1, T0)
