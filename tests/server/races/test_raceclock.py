"""The race clock on a real Redis: start views on time, presence, grace forfeits, time limit."""

from __future__ import annotations

import redis.asyncio

import protocol as p
from server.races.model import RaceStatus
from server.runtime.clock import ManualClock
from tests.support.races import SETTINGS, Inbox, RaceParts, build


async def _room(parts: RaceParts, *inboxes: Inbox) -> str:
    a, *rest = inboxes
    assert a.player is not None
    race_id = await parts.races.create_room(a.player.id, a.player.name, "fourteen-out", 4)
    code = (await parts.races.load(race_id)).code
    assert code is not None
    for ib in rest:
        assert ib.player is not None
        await parts.races.join_room(ib.player.id, ib.player.name, code)
    await parts.races.start_room(a.player.id, race_id)
    for ib in inboxes:
        await parts.fanout.attach(ib, race_id)
    return race_id


async def test_start_views_once_each_at_start_at(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    a, b = await parts.inbox("alice"), await parts.inbox("bobby")
    race_id = await _room(parts, a, b)
    await parts.race_clock.tick(sweep=False)
    assert not a.of(p.RaceStarted), "nothing before start_at"
    clock.advance(SETTINGS.countdown_ms)
    await parts.race_clock.tick(sweep=False)
    await parts.race_clock.tick(sweep=True)
    (sa,), (sb,) = a.of(p.RaceStarted), b.of(p.RaceStarted)
    assert isinstance(sa, p.RaceStarted) and isinstance(sb, p.RaceStarted)
    assert sa.view == sb.view and sa.game_id != sb.game_id and sa.race_id == race_id
    race = await parts.races.load(race_id)
    assert a.player and b.player
    assert race.seen == {a.player.id: clock.now_ms(), b.player.id: clock.now_ms()}


async def test_a_racer_gone_beyond_grace_forfeits_and_ends_a_duel(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    a, b = await parts.inbox("carol"), await parts.inbox("danny")
    race_id = await _room(parts, a, b)
    clock.advance(SETTINGS.countdown_ms)
    await parts.race_clock.tick(sweep=True)
    await parts.fanout.detach(b)
    clock.advance(SETTINGS.grace_ms // 2)
    await parts.race_clock.tick(sweep=True)
    assert not (await parts.races.load(race_id)).forfeited, "within grace: still racing"
    clock.advance(SETTINGS.grace_ms)
    await parts.race_clock.tick(sweep=True)
    race = await parts.races.load(race_id)
    assert b.player is not None
    assert race.status is RaceStatus.FINISHED and race.forfeited == {b.player.id}
    assert race.results is not None
    assert [(r.name, r.place, r.forfeited) for r in race.results] == [
        ("carol", 1, False),
        ("danny", 2, True),
    ]
    assert await parts.referee.due(clock.now_ms()) == []


async def test_overdue_races_nobody_here_watches_are_swept(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    a, b = await parts.inbox("erica"), await parts.inbox("frank")
    race_id = await _room(parts, a, b)
    await parts.fanout.detach(a)
    await parts.fanout.detach(b)
    assert parts.fanout.races() == []
    clock.advance(SETTINGS.countdown_ms + SETTINGS.time_limit_ms)
    await parts.race_clock.tick(sweep=False)
    assert (await parts.races.load(race_id)).status is RaceStatus.RUNNING, "sweeps only"
    await parts.race_clock.tick(sweep=True)
    race = await parts.races.load(race_id)
    assert race.status is RaceStatus.FINISHED and race.shown_status(clock.now_ms()) == "finished"
