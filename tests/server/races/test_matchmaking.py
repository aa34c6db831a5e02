"""Matchmaking on a real Redis: pairs at once, group queues after the fill wait, leaving."""

from __future__ import annotations

import asyncio
import contextlib

import redis.asyncio

import protocol as p
from server.races.model import RaceStatus
from server.runtime.clock import ManualClock
from tests.support.races import SETTINGS, Inbox, build


async def _update(inbox: Inbox, timeout: float = 5.0) -> p.RaceUpdate:
    for _ in range(int(timeout / 0.05)):
        if updates := inbox.of(p.RaceUpdate):
            assert isinstance(updates[-1], p.RaceUpdate)
            return updates[-1]
        await asyncio.sleep(0.05)
    raise AssertionError("no race.update")


async def test_a_full_queue_matches_at_once(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    fanout = asyncio.create_task(parts.fanout.run())
    try:
        a, b = await parts.inbox("alice"), await parts.inbox("bobby")
        assert a.player and b.player
        assert await parts.matchmaking.queue(a, a.player.id, "alice", "fourteen-out", 2) == (
            1,
            None,
        )
        assert parts.matchmaking.groups() == {("fourteen-out", 2)}
        waiting, race_id = await parts.matchmaking.queue(b, b.player.id, "bobby", "fourteen-out", 2)
        assert waiting == 0 and race_id is not None
        ua, ub = await _update(a), await _update(b)
        assert ua.race.race_id == ub.race.race_id == race_id
        assert ua.race.status == "countdown" and ua.race.game_id != ub.race.game_id
        assert parts.matchmaking.groups() == set(), "matched connections no longer wait"
        assert parts.fanout.races() == [race_id]
    finally:
        fanout.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await fanout


async def test_a_group_starts_after_the_fill_wait(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    fanout = asyncio.create_task(parts.fanout.run())
    try:
        inboxes = [await parts.inbox(n) for n in ("carol", "danny", "erica")]
        for ib in inboxes:
            assert ib.player
            await parts.matchmaking.queue(ib, ib.player.id, ib.player.name, "fourteen-out", 4)
        await parts.matchmaking.sweep()
        await asyncio.sleep(0.2)
        assert not inboxes[0].of(p.RaceUpdate), "not before the fill wait"
        clock.advance(SETTINGS.fill_wait_ms)
        await parts.matchmaking.sweep()
        update = await _update(inboxes[0])
        assert len(update.race.racers) == 3 and update.race.size == 4
        race = await parts.races.load(update.race.race_id)
        assert race.status is RaceStatus.RUNNING
    finally:
        fanout.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await fanout


async def test_leaving_and_closing_stop_waiting(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    a, b = await parts.inbox("frank"), await parts.inbox("grace")
    assert a.player and b.player
    await parts.matchmaking.queue(a, a.player.id, "frank", "fourteen-out", 3)
    await parts.matchmaking.queue(b, b.player.id, "grace", "triple-deck", 3)
    assert await parts.matchmaking.leave(a, a.player.id)
    assert not await parts.matchmaking.leave(a, a.player.id)
    await parts.fanout.detach(b)
    assert parts.matchmaking.groups() == set()
