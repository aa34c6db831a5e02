"""Race transitions from two server processes against one Redis (and a Redis Cluster):
forfeits, finishes and the end race each other, many times, and nothing is lost or taken
twice; joins and leaves of one room race each other, and the room stays whole; what a
stopped process leaves undone after a transition, another completes.

The two "processes" are two full sets of race units (`tests.support.races.build`), each on
its own Redis connection pool, sharing one manual clock; their steps interleave at every
Redis round trip.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest
import pytest_asyncio
import redis.asyncio

import protocol.races as pr
from server.races.model import RaceStatus
from server.races.service import UNDEALT_MS
from server.redis import connect as redisconn
from server.redis import keys
from server.redis.embedded import connect
from server.runtime.clock import ManualClock
from server.runtime.errors import Conflict, GameOver, NotFound
from tests.support.races import SETTINGS, Inbox, RaceParts, build

pytest_plugins = ["tests.support.cluster"]

RACES = 50
VARIANT = "fourteen-out"
DAY_MS = 86_400_000


def pid(ib: Inbox) -> str:
    assert ib.player is not None
    return ib.player.id


async def events(parts: RaceParts, race_id: str) -> list[pr.RaceEventBody]:
    return [e.event for e in await parts.store.events_since(race_id, 0)]


@pytest_asyncio.fixture
async def second_client(
    redis_url: str, redis_client: redis.asyncio.Redis
) -> AsyncIterator[redis.asyncio.Redis]:
    client = connect(redis_url)
    try:
        yield client
    finally:
        await client.aclose()


async def _started(parts: RaceParts, racers: list[Inbox]) -> str:
    """A rated race of `racers` (made by the queue: a private room is casual), dealt."""
    return await parts.matched(VARIANT, *racers)


async def _resign(parts: RaceParts, race_id: str, racer: Inbox) -> None:
    """A racer ends their game (as the `resign` handler does) and the referee hears of it."""
    assert racer.player is not None
    try:
        live, _ = await parts.races.games.resign(
            keys.race_game_id(race_id, pid(racer)), pid(racer), racer.player.name
        )
    except GameOver:  # the race ended first and closed the game
        return
    await parts.referee.on_played(race_id, live)


async def test_concurrent_forfeits_and_finishes_from_two_processes(
    redis_client: redis.asyncio.Redis, second_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    await forfeits_and_finishes(redis_client, second_client, clock, RACES)


async def test_concurrent_forfeits_and_finishes_on_a_redis_cluster(
    cluster_url: str, cluster_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """The same on three masters: every script's keys are in one slot (the race's tag)."""
    other = redisconn.connect(cluster_url)
    try:
        await forfeits_and_finishes(cluster_client, other, clock, RACES // 5)
    finally:
        await other.aclose()


async def forfeits_and_finishes(
    first: redis.asyncio.Redis, second: redis.asyncio.Redis, clock: ManualClock, races: int
) -> None:
    """`races` races of four, each ended by two forfeits (one per process), a resign on each
    process and both processes' referee ticks, all at once; then every invariant holds."""
    one, two = build(first, clock), build(second, clock)
    racers = [await one.inbox(n) for n in ("anna", "bert", "cleo", "dirk")]
    a, b, c, d = racers
    for _ in range(races):
        clock.advance(DAY_MS)  # the same racers are rated against each other once a day
        race_id = await _started(one, racers)
        clock.advance(SETTINGS.countdown_ms)
        # a stays connected (to process one); b, c and d have been gone beyond the grace.
        clock.advance(SETTINGS.grace_ms + 1)
        now = clock.now_ms()
        await one.races.mark_seen(race_id, [pid(a)], now, one.fanout.instance)
        race = await one.races.load(race_id)
        await asyncio.gather(
            one.referee.forfeit(race, pid(b), now),
            two.referee.forfeit(race, pid(c), now),
            _resign(two, race_id, d),
            one.referee.tick(race_id),
            two.referee.tick(race_id),
            _resign(one, race_id, a),
        )
        for parts in (one, two):  # the clocks' next ticks complete whatever is left
            await parts.referee.tick(race_id)
        race = await one.races.load(race_id)
        assert race.status is RaceStatus.FINISHED and race.results is not None
        evs = await events(one, race_id)
        ends = [e for e in evs if isinstance(e, pr.RaceEnded)]
        assert len(ends) == 1 and evs[-1] is ends[0], "one end, announced last"
        forfeit_events = [e.player_id for e in evs if isinstance(e, pr.RacerForfeited)]
        assert sorted(forfeit_events) == sorted(set(forfeit_events)), "each forfeit once"
        assert set(forfeit_events) == race.forfeited, "every forfeit recorded and announced"
        assert {r.player_id for r in race.results if r.forfeited} == race.forfeited
        assert {pid(b), pid(c)} <= race.forfeited, "two forfeits at once: neither lost"
        assert pid(a) not in race.forfeited, "a connected racer is never forfeited"
        assert [r.player_id for r in ends[0].results] == [r.player_id for r in race.results]
        assert sorted(r.place for r in race.results) == [1, 2, 3, 4]
        for racer in racers:
            live = await one.races.games.get(keys.race_game_id(race_id, pid(racer)), pid(racer))
            assert live.record.finished
            assert race.progress_of(pid(racer)).finished, "opponents see every game end"
            assert await one.store.racing(pid(racer)) is None, "every racer is free again"
        assert race_id not in await one.referee.due(clock.now_ms() + 10 * SETTINGS.time_limit_ms)
    recent = await one.races.recent(VARIANT, pid(a), 50)
    assert len(recent) == races, "each race rated exactly once"


async def test_a_racer_connected_to_another_process_is_never_forfeited(
    redis_client: redis.asyncio.Redis, second_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    one, two = build(redis_client, clock), build(second_client, clock)
    racers = [await one.inbox(n) for n in ("erin", "finn", "gwen")]
    a, b, c = racers
    race_id = await _started(one, racers)
    clock.advance(SETTINGS.countdown_ms)
    # b's connection is on process two, which marks it live for a long while
    await two.races.mark_seen(race_id, [pid(b)], clock.now_ms(), two.fanout.instance)
    await two.store.mark_present(
        race_id, [pid(b)], clock.now_ms(), two.fanout.instance, live_ms=10 * SETTINGS.grace_ms
    )
    clock.advance(SETTINGS.grace_ms + 1)
    await one.races.mark_seen(race_id, [pid(a)], clock.now_ms(), one.fanout.instance)
    await one.referee.tick(race_id)
    race = await one.races.load(race_id)
    assert race.forfeited == {pid(c)}, "c is gone; b is connected elsewhere"
    assert next(
        r for r in race.info(clock.now_ms(), None).racers if r.player_id == pid(b)
    ).connected
    # b's connection closes: the grace starts then, and b forfeits once it has run out
    await two.races.mark_absent(race_id, pid(b), two.fanout.instance)
    clock.advance(SETTINGS.grace_ms)
    await one.races.mark_seen(race_id, [pid(a)], clock.now_ms(), one.fanout.instance)
    await one.referee.tick(race_id)
    assert (await one.races.load(race_id)).forfeited == {pid(c)}, "exactly the grace: not yet"
    clock.advance(1)
    await one.races.mark_seen(race_id, [pid(a)], clock.now_ms(), one.fanout.instance)
    await one.referee.tick(race_id)
    race = await one.races.load(race_id)
    assert race.status is RaceStatus.FINISHED and race.forfeited == {pid(b), pid(c)}
    assert race.results is not None and race.results[0].player_id == pid(a)


async def test_steps_left_undone_by_a_stopped_process_are_completed_by_another(
    redis_client: redis.asyncio.Redis, second_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """Each race transition is one atomic step; what follows it in other slots (the racers'
    games, their race pointers, the deadline index) is completed by whichever process comes
    next, as if the process that took the step had stopped right after it."""
    one, two = build(redis_client, clock), build(second_client, clock)
    a, b = await one.inbox("hugo1"), await one.inbox("iris1")
    # Dealt (open -> running) and then nothing: no games yet. Another process's start view
    # creates each racer's game from the race's own deal and start.
    race_id = await one.races.create_room(pid(a), "hugo1", VARIANT, 2)
    code = (await one.races.load(race_id)).code
    assert code is not None
    await one.races.join_room(pid(b), "iris1", code)
    start_at = clock.now_ms() + SETTINGS.countdown_ms
    assert await one.store.begin(race_id, start_at, start_at + SETTINGS.time_limit_ms)
    race = await two.races.load(race_id)
    views = [await two.races.start_view(race, pid(r), clock.now_ms()) for r in (a, b)]
    assert views[0].view == views[1].view and views[0].start_at == start_at
    game = await two.races.games.get(keys.race_game_id(race_id, pid(a)), pid(a))
    assert game.record.started_at_ms == start_at and game.record.seed == race.seed
    # Ended (with its results and `finished` event) and then nothing: the racers still point
    # at it and it is still due. The next tick anywhere frees them and drops it.
    clock.advance(SETTINGS.countdown_ms + SETTINGS.time_limit_ms)
    await one.store.set_active(race_id, clock.now_ms())
    assert await one.store.start_finishing(race_id, clock.now_ms(), "time limit")
    ended = pr.RaceEnded(reason="time limit", results=())
    assert await one.store.finish(race_id, (), ended)
    assert await one.store.racing(pid(a)) == race_id
    await two.referee.tick(race_id)
    assert await one.store.racing(pid(a)) is None and await one.store.racing(pid(b)) is None
    assert race_id not in await one.referee.due(clock.now_ms())
    assert [e for e in await events(one, race_id) if isinstance(e, pr.RaceEnded)] == [ended]


async def test_a_matched_race_never_dealt_does_not_hold_its_players(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    one = build(redis_client, clock)
    a, b = await one.inbox("jack1"), await one.inbox("kate1")
    race_id = keys.new_race_id(clock.now_ms())
    await one.store.create(
        race_id, VARIANT, 2, 7, clock.now_ms(), [(pid(a), "jack1"), (pid(b), "kate1")]
    )
    await one.store.set_racing([pid(a), pid(b)], race_id)  # ...and the process stopped here
    with pytest.raises(Conflict):
        await one.races.queue(pid(a), "jack1", VARIANT, 2)  # a fresh match is still dealt
    clock.advance(UNDEALT_MS + 1)
    waiting, matched = await one.races.queue(pid(a), "jack1", VARIANT, 2)
    assert (waiting, matched) == (1, None), "free again: waiting for a new opponent"


async def test_a_match_being_made_holds_its_players_until_made(
    redis_client: redis.asyncio.Redis, second_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """The queue pops matched players and points them at their race in one step: a player
    whose race the matching process has not made yet cannot make a room, join one or leave
    meanwhile (once, they were neither queued nor racing then, and ended in two races)."""
    one, two = build(redis_client, clock), build(second_client, clock)
    a, b, c = await one.inbox("lena1"), await one.inbox("milo1"), await one.inbox("nora1")
    room = await two.races.create_room(pid(c), "nora1", VARIANT, 2)
    code = (await two.races.load(room)).code
    assert code is not None
    for r in (a, b):
        assert r.player is not None
        assert await one.races.queue(pid(r), r.player.name, VARIANT, 3) == (
            1 if r is a else 2,
            None,
        )
    # Process one's matcher pops both (the fill wait is over) and is about to make the race
    clock.advance(SETTINGS.fill_wait_ms)
    race_id = keys.new_race_id(clock.now_ms())
    _, matched = await one.store.enqueue(
        "", VARIANT, 3, clock.now_ms(), SETTINGS.fill_wait_ms, race_id
    )
    assert sorted(matched) == sorted([pid(a), pid(b)])
    # meanwhile, on process two
    with pytest.raises(Conflict):
        await two.races.create_room(pid(a), "lena1", VARIANT, 2)
    with pytest.raises(Conflict):
        await two.races.join_room(pid(b), "milo1", code)
    await two.races.leave(pid(a))
    assert await two.store.racing(pid(a)) == race_id, "leaving does not drop a match"
    # the match is made: both race in it, and only in it
    await one.races._start_matched(race_id, VARIANT, 3, matched)
    race = await two.races.load(race_id)
    assert sorted(race.names()) == sorted([pid(a), pid(b)])
    assert await two.store.racing(pid(a)) == race_id == await two.store.racing(pid(b))
    assert list((await two.races.load(room)).names()) == [pid(c)]
    assert await two.store.matched_at(pid(a)) is None, "made: no longer pending"


async def test_a_match_never_made_frees_its_players_after_a_while(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    one = build(redis_client, clock)
    a, b = await one.inbox("owen1"), await one.inbox("pia1")
    for r in (a, b):
        assert r.player is not None
        await one.races.queue(pid(r), r.player.name, VARIANT, 3)
    clock.advance(SETTINGS.fill_wait_ms)
    race_id = keys.new_race_id(clock.now_ms())
    await one.store.enqueue("", VARIANT, 3, clock.now_ms(), SETTINGS.fill_wait_ms, race_id)
    # ...and the matching process stopped before making the race
    with pytest.raises(Conflict):
        await one.races.create_room(pid(a), "owen1", VARIANT, 2)
    clock.advance(UNDEALT_MS + 1)
    room = await one.races.create_room(pid(a), "owen1", VARIANT, 2)
    assert await one.store.racing(pid(a)) == room
    assert await one.store.matched_at(pid(a)) is None


ROOM_ROUNDS = 100
ROOM_SIZE = 8
ROOM_GUESTS = 12
#: Requests of one round start up to this many loop turns apart.
STAGGER = 10


class JitteryRedis(redis.asyncio.Redis):
    """A real Redis client that holds a command back now and then (`late` of them, by
    `delay_s`) before sending it, as a busy process or a slow network does: two processes'
    steps then interleave in orders that requests in lockstep never show."""

    late = 0.0
    delay_s = 0.0
    rng = random.Random(0)

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        if self.rng.random() < self.late:
            await asyncio.sleep(self.delay_s)
        return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


@pytest_asyncio.fixture
async def jittery(
    redis_url: str, redis_client: redis.asyncio.Redis
) -> AsyncIterator[list[redis.asyncio.Redis]]:
    """Two clients of the session's Redis, each with its own pool, holding back 15 % of
    their commands by 5 ms."""
    clients: list[redis.asyncio.Redis] = []
    for seed in (1, 2):
        held = cast(JitteryRedis, JitteryRedis.from_url(redis_url, decode_responses=True))
        held.late, held.delay_s, held.rng = 0.15, 0.005, random.Random(seed)
        clients.append(held)
    try:
        yield clients
    finally:
        for client in clients:
            await client.aclose()


async def _after(turns: int) -> None:
    """Let the loop run `turns` times first: requests sent at once reach Redis out of step."""
    for _ in range(turns):
        await asyncio.sleep(0)


async def _join(parts: RaceParts, racer: Inbox, code: str, turns: int = 0) -> None:
    assert racer.player is not None
    await _after(turns)
    # full, or already in (another request of theirs won), or closed (its code freed at once)
    with contextlib.suppress(Conflict, NotFound):
        await parts.races.join_room(pid(racer), racer.player.name, code)


async def _leave(parts: RaceParts, racer: Inbox, turns: int = 0) -> None:
    await _after(turns)
    await parts.races.leave(pid(racer))


def _replay_membership(evs: list[pr.RaceEventBody], before: list[str]) -> list[str]:
    """The room's racers in joining order as the event log tells them, from `before`: each
    `joined` of one not in, each `left` of one in (one event per change, only for a change)."""
    members = list(before)
    for e in evs:
        if isinstance(e, pr.RacerJoined):
            assert e.player_id not in members, f"joined twice in a row: {e}"
            members.append(e.player_id)
        elif isinstance(e, pr.RacerLeft):
            assert e.player_id in members, f"left without being in: {e}"
            members.remove(e.player_id)
    return members


async def test_concurrent_joins_and_leaves_of_one_room_from_two_processes(
    redis_client: redis.asyncio.Redis, jittery: list[redis.asyncio.Redis], clock: ManualClock
) -> None:
    """Guests join and leave one private room all at once: each round every guest sends two
    joins and two leaves at once (double taps, two sockets), each on either process. After
    every round the room holds at most its size, its joining order is its racers, the event
    log has exactly one `joined`/`left` per change, and each guest's race pointer says "in
    the room" exactly when they are (else they could neither leave nor race elsewhere)."""
    one, two = build(jittery[0], clock), build(jittery[1], clock)
    host = await one.inbox("roomhost")
    guests = [await one.inbox(f"guest{i}") for i in range(ROOM_GUESTS)]
    race_id = await one.races.create_room(pid(host), "roomhost", VARIANT, ROOM_SIZE)
    code = (await one.races.load(race_id)).code
    assert code is not None
    rng = random.Random(12)
    members, seen_version, fullest = [pid(host)], 0, 0
    for _ in range(ROOM_ROUNDS):
        steps = []
        for guest in guests:
            for action in ("join", "join", "leave", "leave"):
                parts, turns = rng.choice((one, two)), rng.randrange(STAGGER)
                steps.append(
                    _join(parts, guest, code, turns)
                    if action == "join"
                    else _leave(parts, guest, turns)
                )
        await asyncio.gather(*steps)
        order = cast(list[str], await redis_client.lrange(keys.race_order(race_id), 0, -1))
        racers = cast(dict[str, str], await redis_client.hgetall(keys.race_racers(race_id)))
        assert len(order) <= ROOM_SIZE, "never more racers than the room's size"
        fullest = max(fullest, len(order))
        assert len(set(order)) == len(order) and set(order) == set(racers), (
            "the joining order lists exactly the racers"
        )
        assert order[0] == pid(host)
        logged = await one.store.events_since(race_id, seen_version)  # the log is capped
        members = _replay_membership([e.event for e in logged], members)
        assert members == order, "one event per change, none without one"
        seen_version = logged[-1].version if logged else seen_version
        race = await two.races.load(race_id)
        assert [r for r, _ in race.racers] == order and race.status is RaceStatus.OPEN
        for guest in guests:
            pointer = await one.store.racing(pid(guest))
            assert (pointer == race_id) == (pid(guest) in racers), (
                f"{guest.player and guest.player.name}: in the room iff its race pointer says"
            )
    assert fullest == ROOM_SIZE, "the room was full at times: joins were refused"
    # The host leaves while guests still join: the room closes, and everyone is free again.
    await asyncio.gather(
        _leave(two, host), *(_join(rng.choice((one, two)), g, code) for g in guests)
    )
    assert (await one.races.load(race_id)).status is RaceStatus.FINISHED
    for racer in (host, *guests):
        assert racer.player is not None
        await one.races.create_room(pid(racer), racer.player.name, VARIANT, 2)
