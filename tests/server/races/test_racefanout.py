"""Race fan-out over real Redis pub/sub: who gets which race message, and how often."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest_asyncio
import redis.asyncio

import protocol as p
import protocol.races as pr
from server.races.fanout import RaceFanout
from server.redis import keys, pubsub
from server.runtime.clock import ManualClock
from tests.support.races import SETTINGS, Inbox, RaceParts, build


@pytest_asyncio.fixture
async def parts(redis_client: redis.asyncio.Redis, clock: ManualClock) -> AsyncIterator[RaceParts]:
    parts = build(redis_client, clock)
    async with running(parts.fanout):
        yield parts


@contextlib.asynccontextmanager
async def running(fanout: RaceFanout) -> AsyncIterator[None]:
    task = asyncio.create_task(fanout.run())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def subscribed(client: redis.asyncio.Redis, channel: str, n: int = 1) -> None:
    """Wait until `n` connections subscribe to `channel` (SUBSCRIBE is not acknowledged)."""
    for _ in range(200):
        ((_, count),) = await client.pubsub_numsub(channel)
        if count >= n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{channel}: not subscribed")


async def patterns(client: redis.asyncio.Redis, n: int = 1) -> None:
    """Wait until `n` pattern subscriptions exist (PSUBSCRIBE is not acknowledged)."""
    for _ in range(200):
        if await client.pubsub_numpat() >= n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the players' pattern is not subscribed")


async def until(pred: object, timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.01)):
        if pred():  # type: ignore[operator]
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


def race_events(ib: Inbox) -> list[p.RaceEvent]:
    return [m for m in ib.sent if isinstance(m, p.RaceEvent)]


def updates(ib: Inbox) -> list[p.RaceUpdate]:
    return [m for m in ib.sent if isinstance(m, p.RaceUpdate)]


async def room(parts: RaceParts, *inboxes: Inbox, start: bool = False) -> str:
    a, *rest = inboxes
    assert a.player is not None
    race_id = await parts.races.create_room(a.player.id, a.player.name, "fourteen-out", 4)
    code = (await parts.races.load(race_id)).code
    assert code is not None
    for ib in rest:
        assert ib.player is not None
        await parts.races.join_room(ib.player.id, ib.player.name, code)
    if start:
        await parts.races.start_room(a.player.id, race_id)
    return race_id


def progress(pid: str, moves: int) -> pr.RacerProgress:
    return pr.RacerProgress(
        player_id=pid, cleared=0, score=0, moves=moves, finished=False, won=False, stuck=False
    )


async def test_an_event_reaches_an_attached_recipient_once_and_a_detached_one_never(
    parts: RaceParts, redis_client: redis.asyncio.Redis
) -> None:
    a, b = await parts.inbox("alice"), await parts.inbox("bobby")
    race_id = await room(parts, a, b, start=True)
    for ib in (a, b, a):  # attaching twice is attaching once
        await parts.fanout.attach(ib, race_id)
    await parts.fanout.detach(b)
    assert a.player is not None and b.player is not None
    assert parts.fanout.connected_players(race_id) == [a.player.id]
    await subscribed(redis_client, keys.race_channel(race_id))
    v1 = await parts.store.emit(race_id, progress(b.player.id, 1))
    v2 = await parts.store.emit(race_id, progress(b.player.id, 2))
    v3 = await parts.store.emit(race_id, progress(b.player.id, 3))  # the last one: a marker
    await until(lambda: any(e.version == v3 for e in race_events(a)))
    assert [(e.version, e.event["moves"]) for e in race_events(a)] == [(v1, 1), (v2, 2), (v3, 3)], (
        "each event once, in order"
    )
    assert v2 == v1 + 1
    assert b.sent == [], "a detached connection gets nothing"
    assert not updates(a), "progress alone does not resend the whole race"


async def test_a_late_copy_of_a_racers_progress_is_not_delivered(
    parts: RaceParts, redis_client: redis.asyncio.Redis
) -> None:
    """Pub/sub may deliver a message twice (after a master's failover); a progress event
    is its racer's whole state, so an older one delivered late would show old progress."""
    a, b = await parts.inbox("ivy01"), await parts.inbox("jack1")
    race_id = await room(parts, a, b, start=True)
    await parts.fanout.attach(a, race_id)
    await subscribed(redis_client, keys.race_channel(race_id))
    assert a.player is not None and b.player is not None
    channel = keys.race_channel(race_id)
    v1 = await parts.store.emit(race_id, progress(b.player.id, 1))
    v2 = await parts.store.emit(race_id, progress(b.player.id, 2))
    va = await parts.store.emit(race_id, progress(a.player.id, 1))
    for version, moves in ((v1, 1), (v2, 2), (v2, 2)):  # late copies, and a copy of the latest
        event = pubsub.RaceEventPublished(race_id, version, progress(b.player.id, moves))
        await redis_client.publish(channel, pubsub.encode(event))
    v3 = await parts.store.emit(race_id, progress(b.player.id, 3))  # the last one: a marker
    await until(lambda: any(e.version == v3 for e in race_events(a)))
    seen = [(e.version, e.event["player_id"], e.event["moves"]) for e in race_events(a)]
    assert seen == [
        (v1, b.player.id, 1),
        (v2, b.player.id, 2),
        (va, a.player.id, 1),
        (v3, b.player.id, 3),
    ], "each racer's progress once, none older than one delivered"
    # A Redis that lost its latest writes numbers new events from a lower version again:
    # those carry the racer's moves since, and are delivered.
    renumbered = pubsub.RaceEventPublished(race_id, v2, progress(b.player.id, 4))
    await redis_client.publish(channel, pubsub.encode(renumbered))
    await until(lambda: len(race_events(a)) == 5)
    assert [(e.version, e.event["moves"]) for e in race_events(a)][-1] == (v2, 4)


async def test_update_events_resend_the_race_as_each_recipient_may_see_it(
    parts: RaceParts, redis_client: redis.asyncio.Redis
) -> None:
    a, b = await parts.inbox("carol"), await parts.inbox("danny")
    watcher = await parts.inbox("erica")
    race_id = await room(parts, a, b, start=True)
    for ib in (a, b, watcher):
        await parts.fanout.attach(ib, race_id)
    await subscribed(redis_client, keys.race_channel(race_id))
    assert b.player is not None
    assert await parts.store.add_forfeit(race_id, b.player.id)
    await parts.store.emit(race_id, pr.RacerForfeited(player_id=b.player.id))
    await until(lambda: all(updates(ib) for ib in (a, b, watcher)))
    for ib in (a, b, watcher):
        (ev,) = race_events(ib)
        assert ev.event["kind"] == "forfeit"
        assert ib.sent.index(ev) < ib.sent.index(updates(ib)[0]), "the event comes first"
    assert a.player is not None and watcher.player is not None
    own = {ib.player.id: updates(ib)[0].race.game_id for ib in (a, b, watcher) if ib.player}
    assert own[a.player.id] == keys.race_game_id(race_id, a.player.id)
    assert own[b.player.id] == keys.race_game_id(race_id, b.player.id)
    assert own[watcher.player.id] is None, "an onlooker has no game"
    latest = parts.fanout.latest(race_id)
    assert latest is not None and latest.forfeited == {b.player.id}


async def test_race_end_is_delivered_then_the_race_is_forgotten(
    parts: RaceParts, redis_client: redis.asyncio.Redis
) -> None:
    a, b = await parts.inbox("frank"), await parts.inbox("grace")
    race_id = await room(parts, a, b, start=True)
    await parts.fanout.attach(a, race_id)
    await subscribed(redis_client, keys.race_channel(race_id))
    await parts.store.emit(race_id, pr.RaceEnded(reason="time limit", results=()))
    await until(lambda: bool(race_events(a)))
    await until(lambda: parts.fanout.races() == [])
    assert parts.fanout.latest(race_id) is None
    ((_, subs),) = await redis_client.pubsub_numsub(keys.race_channel(race_id))
    assert subs == 0, "unsubscribed"
    assert a.player is not None
    # A marker on another race this process follows: the pub/sub connection delivers in
    # order, so once it arrives an event of the forgotten race would have too.
    c, d = await parts.inbox("gwen1"), await parts.inbox("hank1")
    other = await room(parts, c, d, start=True)
    await parts.fanout.attach(c, other)
    await subscribed(redis_client, keys.race_channel(other))
    await parts.store.emit(race_id, progress(a.player.id, 3))
    assert c.player is not None
    await parts.store.emit(other, progress(c.player.id, 1))
    await until(lambda: bool(race_events(c)))
    assert len(race_events(a)) == 1, "nothing after the end"


async def test_a_match_attaches_the_watching_connection(
    parts: RaceParts, redis_client: redis.asyncio.Redis
) -> None:
    a, b = await parts.inbox("heidi"), await parts.inbox("ivan1")
    matched: list[Inbox] = []
    parts.fanout.on_matched(matched.append)  # type: ignore[arg-type]
    assert a.player is not None and b.player is not None
    # The fan-out follows every player's channel from its start (a game another process
    # ends reaches the player here too): one pattern, however many players watch.
    await until(lambda: parts.fanout.following_players)
    await patterns(redis_client, 1)
    numpat = await redis_client.pubsub_numpat()
    await parts.fanout.watch_player(a, a.player.id)
    c = await parts.inbox("judy1")
    assert c.player is not None
    await parts.fanout.watch_player(c, c.player.id)
    await parts.fanout.detach(c)
    assert await redis_client.pubsub_numpat() == numpat, "one pattern for every player"
    race_id = await room(parts, a, b, start=True)
    await parts.store.announce_match([a.player.id, b.player.id], race_id)
    await until(lambda: bool(updates(a)))
    assert matched == [a]
    assert updates(a)[0].race.race_id == race_id
    assert parts.fanout.races() == [race_id] and b.sent == []
    gone: list[Inbox] = []
    parts.fanout.on_gone(gone.append)  # type: ignore[arg-type]
    await parts.fanout.detach(a)
    assert gone == [a] and parts.fanout.races() == []


async def test_two_processes_each_deliver_to_their_own_connections(
    parts: RaceParts, redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    other = build(redis_client, clock)  # a second server process on the same Redis
    async with running(other.fanout):
        a, b = await parts.inbox("judy1"), await parts.inbox("karl1")
        race_id = await room(parts, a, b, start=True)
        await parts.fanout.attach(a, race_id)
        await other.fanout.attach(b, race_id)
        await subscribed(redis_client, keys.race_channel(race_id), 2)
        assert a.player is not None
        v1 = await parts.store.emit(race_id, progress(a.player.id, 1))
        v2 = await parts.store.emit(race_id, progress(a.player.id, 2))  # a marker
        await until(lambda: all(any(e.version == v2 for e in race_events(ib)) for ib in (a, b)))
        for ib in (a, b):
            assert [e.version for e in race_events(ib)] == [v1, v2], "once each, on each"


async def test_start_views_go_once_per_connection_to_racers_only(parts: RaceParts) -> None:
    a, b = await parts.inbox("lena1"), await parts.inbox("mike1")
    watcher = await parts.inbox("nina1")
    race_id = await room(parts, a, b, start=True)
    for ib in (a, b, watcher):
        await parts.fanout.attach(ib, race_id)
    parts.clock.advance(SETTINGS.countdown_ms)
    race = await parts.races.load(race_id)
    for _ in range(2):
        await parts.fanout.send_started(race, parts.clock.now_ms(), parts.races.start_view)
    (sa,), (sb,) = a.of(p.RaceStarted), b.of(p.RaceStarted)
    assert isinstance(sa, p.RaceStarted) and isinstance(sb, p.RaceStarted)
    assert sa.game_id != sb.game_id and sa.view == sb.view
    assert watcher.of(p.RaceStarted) == []
    # a reconnect is a new connection: it gets its own start view
    assert a.player is not None
    again = Inbox(a.player)
    await parts.fanout.attach(again, race_id)
    await parts.fanout.send_started(race, parts.clock.now_ms(), parts.races.start_view)
    assert len(again.of(p.RaceStarted)) == 1 and len(a.of(p.RaceStarted)) == 1


@dataclass(eq=False)
class CountedInbox(Inbox):
    """A connection that counts how often it is hashed: every set or dict it is looked up
    in hashes it once, so a scan of every race and player for it shows in the count."""

    hashed: int = 0

    def __hash__(self) -> int:
        self.hashed += 1
        return id(self)


async def test_a_close_costs_what_the_connection_is_in_not_every_connection(
    parts: RaceParts,
) -> None:
    a, b = await parts.inbox("olga1"), await parts.inbox("pete1")
    assert a.player is not None and b.player is not None
    race_id = await room(parts, a, b, start=True)
    closing = CountedInbox(a.player)
    await parts.fanout.attach(closing, race_id)
    await parts.fanout.watch_player(closing, a.player.id)
    await parts.fanout.attach(b, race_id)

    async def close_with(others: int) -> int:
        """The hashes of `closing` while it closes with `others` more connections here,
        each watching a player of its own, the first 20 in races of their own."""
        crowd = [Inbox(b.player) for _ in range(others)]
        for i, conn in enumerate(crowd):
            await parts.fanout.watch_player(conn, f"crowd{i}")
            if i < 20:
                await parts.fanout.attach(conn, f"20300101-crowd{i}")
        closing.hashed = 0
        await parts.fanout.detach(closing)
        hashed = closing.hashed
        for conn in crowd:
            await parts.fanout.detach(conn)
        await parts.fanout.attach(closing, race_id)
        await parts.fanout.watch_player(closing, a.player.id)  # type: ignore[union-attr]
        return hashed

    few, many = await close_with(20), await close_with(2_000)
    assert many == few, f"a close scans the connections: {few} lookups at 20, {many} at 2,000"
    assert few < 20, f"{few} lookups of one closing connection"
    # and the close still does its work: out of its race and its player's messages
    await parts.fanout.detach(closing)
    assert parts.fanout.connected_players(race_id) == [b.player.id]
    await parts.fanout.detach(b)
    assert parts.fanout.races() == []
