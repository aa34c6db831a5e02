"""A daily game's finish in two Redis round trips instead of five (issue #30), counted on the
real app over WebSockets on a real Redis: the group commit's pipelines that carry a command of
the finishing game (its keys, its board's, its player's history, the fair-play mark), plus the
commands of the game its client sent outside the group commit. The app's start-up work (deals
of other days, the rollover sweep) runs meanwhile and is left out by its keys."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import redis.asyncio

from server.boards.leaderboard import BoardEntries, BoardRef, Leaderboard, PendingEntry
from server.games.store import FinalResult, GameStore, PlayedLog
from server.redis import keys
from server.redis.batch import Command
from server.runtime.errors import StoreUnavailable
from tests.support.app import App

D = dt.date(2030, 6, 15)
T0 = 1_907_755_200_000
WON = FinalResult(True, True, False, 52, 52, 52, 90_000, 2)


class Counted:
    """The keys of every batch of the app's group commit and of every command its client sent
    outside it, in order, with the finishes' starts and ends among them."""

    def __init__(self, app: App) -> None:
        store = app.services.store
        self.trips: list[list[str]] = []
        execute: Callable[..., Awaitable[Any]] = store._r.execute_command
        finish = store.finish

        def counted_batch(batch: list[tuple[Command, asyncio.Future[object]]]) -> None:
            self.trips.append([c.key for c, _ in batch])

        async def counted_execute(*args: Any, **kwargs: Any) -> Any:
            self.trips.append([str(args[1]) if len(args) > 1 else ""])
            return await execute(*args, **kwargs)

        async def counted_finish(*args: Any, **kwargs: Any) -> Any:
            self.trips.append(["<finish>"])
            try:
                return await finish(*args, **kwargs)
            finally:
                self.trips.append(["</finish>"])

        store.batch.observe = counted_batch
        store._r.execute_command = counted_execute  # type: ignore[method-assign]
        store.finish = counted_finish  # type: ignore[method-assign]

    def of_finish(self, k: keys.DailyGameKeys) -> int:
        """Round trips between the last finish's start and end that carry a key of ``k``."""
        start = len(self.trips) - 1 - self.trips[::-1].index(["<finish>"])
        end = self.trips.index(["</finish>"], start)
        tags = (
            keys.daily_game(k.variant, k.date, k.player_id).split("}")[0] + "}",
            keys.daily_board(k.variant, k.date).split("}")[0] + "}",
            keys.history_pending(k.player_id).split("}")[0] + "}",
            keys.fairplay_marked().split("}")[0] + "}",
        )
        return sum(
            1 for trip in self.trips[start + 1 : end] if any(t.startswith(tags) for t in trip)
        )


async def finished_game(app: App, name: str, variant: str, how: str) -> dict[str, Any]:
    c = await app.client(name, versions=(6,))
    g = await c.request("daily.start", variant=variant)
    seq = 0
    if variant.startswith("triple-deck"):
        moved = await c.request("move", game_id=g["game_id"], move="d", expected_seq=0)
        assert moved["type"] == "moved", moved
        seq = 1
    done = await c.request(how, game_id=g["game_id"])
    assert done["type"] == "finished", done
    assert done["result"]["moves"] == seq
    return done


@pytest.mark.parametrize(
    ("variant", "how"), [("triple-deck", "finish"), ("fourteen-out", "resign")]
)
async def test_a_daily_finish_takes_two_round_trips(
    race_app: App, redis_client: redis.asyncio.Redis, variant: str, how: str
) -> None:
    counted = Counted(race_app)
    await finished_game(race_app, "fin-warm", variant, how)  # loads the scripts once
    done = await finished_game(race_app, "fin-ann", variant, how)
    k = keys.parse_game_id(done["game_id"])
    assert isinstance(k, keys.DailyGameKeys)
    # The mark, both outboxes and the game's step (screened from the cached game); the board's
    # step, the marks' clearing and the history (three before the move times were cached,
    # five batches and a direct HEXISTS before issue #30).
    assert counted.of_finish(k) == 2, counted.trips
    assert done["result"]["rank"] in (1, 2)
    assert await redis_client.hlen(k.entries) == 2
    assert await redis_client.hget(k.game, "pending") is None
    assert await redis_client.zcard(k.outbox) == 0
    assert await redis_client.hexists(k.entries, k.player_id)
    assert await redis_client.smembers(keys.history_pending(k.player_id)) == set()
    assert await redis_client.hlen(keys.history_results(k.player_id, variant)) == 1


class BoardStepFails(BoardEntries):
    """The board's step of a finish fails in Redis (its master down on a cluster) while the
    game's mark is cleared in the same batch: what Redis holds afterwards."""

    async def write(self, k: keys.DailyGameKeys, entry: PendingEntry | None) -> tuple[int, str]:
        await self._r.hdel(k.game, "pending")
        raise StoreUnavailable("the board's master is down")


async def test_a_board_read_writes_an_entry_whose_mark_was_cleared_without_it(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = GameStore(redis_client)
    store.entries = BoardStepFails(redis_client, commit=store.batch)
    gid = (await store.start_daily("klondike", D, "p1", 1, T0)).game_id
    won = FinalResult(True, True, False, 52, 52, 52, 90_000, 1)
    with pytest.raises(StoreUnavailable):
        await store.finish(gid, won, "Alice", T0 + 90_000, "a", 0)
    k = keys.parse_game_id(gid)
    assert isinstance(k, keys.DailyGameKeys)
    raw = await redis_client.hgetall(k.game)
    assert raw["status"] == "finished" and "pending" not in raw  # stored, mark gone
    assert await redis_client.zscore(k.outbox, gid) is not None  # still owed to the board
    top = await Leaderboard(redis_client).top(BoardRef.daily("klondike", D))
    assert [(e.rank, e.player_id, e.won) for e in top] == [(1, "p1", True)]
    assert await redis_client.zcard(k.outbox) == 0


async def test_a_won_daily_finish_takes_two_round_trips_crowns_included(
    redis_client: redis.asyncio.Redis,
) -> None:
    """A won daily game also earns its crowns: awarded in the history's script (the same
    slot), not in a round trip of its own before the history's record."""
    store = GameStore(redis_client)
    gid = (await store.start_daily("klondike", D, "p1", 1, T0)).game_id
    await store.append_move(gid, 0, "a", T0 + 4_000)
    await store.finish(  # another game first: the scripts are loaded
        (await store.start_daily("spider", D, "p1", 1, T0)).game_id, WON, "A", T0 + 5, None, 0
    )
    trips: list[list[str]] = []
    store.batch.observe = lambda batch: trips.append([c.key for c, _ in batch])
    played = PlayedLog(["a"], [4_000], T0 + 4_000)
    record, entry = await store.finish(gid, WON, "A", T0 + 90_000, "b", 1, played=played)
    assert len(trips) == 2, trips
    assert entry.rank == 1 and not record.flagged
    month = await redis_client.hgetall(keys.crowns("p1", D.year, D.month))
    assert month == {
        f"klondike|{D.isoformat()}|{keys.DAILY_TIER}": "2",
        f"spider|{D.isoformat()}|{keys.DAILY_TIER}": "2",
    }
    assert await redis_client.zscore(keys.crown_months("p1"), D.year * 12 + D.month - 1) == 4
    assert await redis_client.zcard(keys.history_days("p1", "klondike")) == 1
    assert await redis_client.smembers(keys.history_pending("p1")) == set()
    # Recorded once: a retried finish adds no crowns.
    await store.finish(gid, WON, "A", T0 + 99_000, None, 2, played=None)
    assert await redis_client.zscore(keys.crown_months("p1"), D.year * 12 + D.month - 1) == 4
