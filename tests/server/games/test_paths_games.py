"""The per-process game cache (`server.games.service.GameService`) with two processes on one Redis:
each process here is its own `GameService` (its own cache) over the same real Redis, as two
servers behind a load balancer are. A bounded cache evicts its oldest game and reloads it
from Redis; a copy made stale by the other process is refreshed, never overwritten."""

from __future__ import annotations

import datetime as dt

import pytest
import redis.asyncio

from engine import IllegalMove, new_game
from server.games.service import GameService
from server.games.store import GameStore
from server.players.registry import PlayerRegistry
from server.runtime.clock import ManualClock
from server.runtime.errors import Conflict, GameOver

DAY = dt.date(2030, 6, 15)
SEED = 4


async def player(client: redis.asyncio.Redis, clock: ManualClock, name: str) -> str:
    pid, _ = await PlayerRegistry(client, clock).create(name)
    return pid


def moves_of(variant: str, count: int) -> list[str]:
    """The first legal move, ``count`` times, on the test deal."""
    game, line = new_game(variant, SEED), []
    for _ in range(count):
        move = next(game.legal_moves())
        game.apply(move)
        line.append(str(move))
    return line


async def test_the_oldest_cached_game_is_evicted_and_reloaded_intact(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    service = GameService(GameStore(redis_client), clock, cache_size=1)
    pid = await player(redis_client, clock, "evictee")
    first = await service.start_daily("fourteen-out", DAY, pid, SEED)
    for move in moves_of("fourteen-out", 2):
        await service.play(first.record.game_id, pid, "evictee", move, None)
    second = await service.start_daily("triple-deck", DAY, pid, SEED)  # evicts the first
    assert list(service._cache) == [second.record.game_id]
    again = await service.get(first.record.game_id, pid)
    assert again is not first  # rebuilt from Redis, and equal to what was played
    assert again.seq == 2 and again.game.to_json() == first.game.to_json()
    assert list(service._cache) == [first.record.game_id]


async def test_a_copy_made_stale_by_another_process_is_refreshed(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    one = GameService(GameStore(redis_client), clock)
    two = GameService(GameStore(redis_client), clock)
    pid = await player(redis_client, clock, "roamer")
    line = moves_of("fourteen-out", 3)
    live = await one.start_daily("fourteen-out", DAY, pid, SEED)
    gid = live.record.game_id
    await one.play(gid, pid, "roamer", line[0], None)  # process one caches move 1
    await two.play(gid, pid, "roamer", line[1], 1)  # process two plays move 2
    # One's copy is at move 1. An undo is legal there too, so it reaches Redis, which refuses
    # it (the game is at move 2); it is then played on a fresh copy: it takes back move 2.
    undone = await one.play(gid, pid, "roamer", "undo", None)
    assert undone.live.seq == 3
    # With expected_seq, two's copy (at 2) is checked against Redis before anything is
    # refused: Redis is at 3, as the client said.
    replayed = await two.play(gid, pid, "roamer", line[1], 3)
    assert replayed.live.seq == 4
    with pytest.raises(Conflict, match="at move 4, not 2"):
        await one.play(gid, pid, "roamer", line[2], 2)
    record, moves = await GameStore(redis_client).load(gid)
    assert moves == [line[0], line[1], "undo", line[1]] and not record.finished
    expected = new_game("fourteen-out", SEED)
    for move in moves:
        expected.play(move)
    assert (await one.get(gid, pid)).game.to_json() == expected.to_json()
    assert (await two.get(gid, pid)).game.to_json() == expected.to_json()


async def test_a_move_legal_only_after_another_process_moved_is_played_not_refused(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """Without `expected_seq` a move means the game as it is: a stale copy that finds it
    illegal checks Redis, and plays it on the fresh copy; a move illegal there too is refused."""
    one = GameService(GameStore(redis_client), clock)
    two = GameService(GameStore(redis_client), clock)
    pid = await player(redis_client, clock, "twowin")
    line = moves_of("fourteen-out", 2)
    gid = (await one.start_daily("fourteen-out", DAY, pid, SEED)).record.game_id
    await one.play(gid, pid, "twowin", line[0], None)
    await two.play(gid, pid, "twowin", line[1], 1)
    after = new_game("fourteen-out", SEED)
    for move in line:
        after.apply(move)
    behind = new_game("fourteen-out", SEED)
    behind.apply(line[0])
    newly = next(str(m) for m in after.legal_moves() if not behind.is_legal(m))
    played = await one.play(gid, pid, "twowin", newly, None)
    assert played.live.seq == 3 and played.move == newly
    with pytest.raises(IllegalMove):
        await one.play(gid, pid, "twowin", newly, None)  # gone now, here and in Redis
    assert (await GameStore(redis_client).load(gid))[1] == [*line, newly]


async def test_resigning_a_stale_copy_resigns_the_real_game(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    one = GameService(GameStore(redis_client), clock)
    two = GameService(GameStore(redis_client), clock)
    pid = await player(redis_client, clock, "quitter")
    line = moves_of("fourteen-out", 2)
    gid = (await one.start_daily("fourteen-out", DAY, pid, SEED)).record.game_id
    await one.play(gid, pid, "quitter", line[0], None)
    await two.play(gid, pid, "quitter", line[1], 1)
    # One's copy stands at move 1: Redis refuses that resign, and one resigns the stored
    # game instead (once a `conflict` the player could do nothing about; issue #25).
    live, entry = await one.resign(gid, pid, "quitter")
    assert live.record.finished and live.seq == 2
    assert (entry.cleared, entry.moves, entry.rank) == (4, 2, 1)
    # Two's copy still says the game goes on: its resign finds the game finished in Redis and
    # gets the stored result, written once; after that two knows the game is over.
    again, same = await two.resign(gid, pid, "quitter")
    assert again.record.finished
    assert (same.cleared, same.moves, same.finished_at_ms) == (
        entry.cleared,
        entry.moves,
        entry.finished_at_ms,
    )
    with pytest.raises(GameOver):
        await two.play(gid, pid, "quitter", "undo", None)


async def test_closing_a_stale_copy_closes_the_real_game_once(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """A race's end closes every racer's game, whichever process last cached it."""
    one = GameService(GameStore(redis_client), clock)
    two = GameService(GameStore(redis_client), clock)
    pid = await player(redis_client, clock, "closer")
    line = moves_of("triple-triangle", 3)
    gid = (await one.start_daily("triple-triangle", DAY, pid, SEED)).record.game_id
    await one.play(gid, pid, "closer", line[0], None)
    for seq, move in enumerate(line[1:], 1):
        await two.play(gid, pid, "closer", move, seq)
    live, entry = await one.close(gid, pid, "closer", resigned=False)
    assert live.record.finished and live.seq == 3
    assert (entry.moves, entry.cleared) == (3, live.game.cleared)
    clock.advance(5_000)
    _, same = await two.close(gid, pid, "closer", resigned=True)  # exactly once
    assert (same.moves, same.finished_at_ms) == (entry.moves, entry.finished_at_ms)


async def test_a_read_is_never_older_than_a_move_another_process_acknowledged(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    # Issue #25: `game.get` on one process returned seq 5 of a game whose moves up to seq 19
    # were acknowledged through another (found again by the chaos test's second tab).
    one = GameService(GameStore(redis_client), clock)
    two = GameService(GameStore(redis_client), clock)
    pid = await player(redis_client, clock, "twotabs")
    live = await one.start_daily("triple-deck", DAY, pid, SEED)
    game_id = live.record.game_id
    line = moves_of("triple-deck", 3)
    await one.play(game_id, pid, "twotabs", line[0], 0)
    assert (await two.current(game_id, pid)).seq == 1  # cached on two from now on
    for seq, move in enumerate(line[1:], 1):
        await one.play(game_id, pid, "twotabs", move, seq)
    seen = await two.current(game_id, pid)
    assert seen.seq == 3 and seen.game.to_json() == (await one.get(game_id, pid)).game.to_json()
    # a finish elsewhere shows too, though the log did not grow
    await one.resign(game_id, pid, "twotabs")
    assert (await two.current(game_id, pid)).record.finished
    # a current copy costs one small read, not a rebuild
    again = await two.current(game_id, pid)
    assert again is await two.current(game_id, pid)
