"""A race's start in one step and an end cut short taken over, across two server processes.

The start is one script on the race's slot (games, seen marks, the `countdown` event), with
the deadline index (another slot) written before and after it. A start cut short at any step
leaves a race the referee's ticks settle: it still starts (or can be started again) and ends by
its time limit. An end cut short in `finishing` is taken over by a tick of another process,
once, with the results, the rating changes and one win. The "processes" are two full sets of
race units (`tests.support.races.build`) on their own connections; a process stopping is
simulated by calling the steps it would have taken up to that point.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
import redis.asyncio

import protocol.races as pr
from server.boards.leaderboard import BoardRef
from server.races.model import RaceState, RaceStatus, RaceSummary
from server.races.referee import FINISHING_STALE_MS, standing_order
from server.races.service import UNDEALT_MS, UNMADE_MS
from server.redis import connect as redisconn
from server.redis import keys
from server.redis.embedded import connect
from server.runtime.clock import ManualClock
from server.runtime.errors import Conflict, NotFound
from tests.support.races import SETTINGS, Inbox, RaceParts, build

pytest_plugins = ["tests.support.cluster"]

VARIANT = "fourteen-out"


def pid(ib: Inbox) -> str:
    assert ib.player is not None
    return ib.player.id


def name(ib: Inbox) -> str:
    assert ib.player is not None
    return ib.player.name


async def events(parts: RaceParts, race_id: str) -> list[pr.RaceEventBody]:
    return [e.event for e in await parts.store.events_since(race_id, 0)]


async def sweep(parts: RaceParts) -> None:
    """What a process's race clock does for overdue races nobody here is connected to."""
    for race_id in await parts.referee.due(parts.clock.now_ms()):
        await parts.referee.tick(race_id)


async def due_at(parts: RaceParts, race_id: str) -> int | None:
    """When the race is next due in the deadline index (None: not in it)."""
    score = await parts.store.r.zscore(keys.races_active(), race_id)
    return None if score is None else int(score)


async def room(parts: RaceParts, racers: list[Inbox], size: int = 0) -> str:
    """An open private room of `racers` (the first creates it) for `size` (default: them)."""
    race_id = await parts.races.create_room(
        pid(racers[0]), name(racers[0]), VARIANT, size or len(racers)
    )
    code = (await parts.races.load(race_id)).code
    assert code is not None
    for r in racers[1:]:
        await parts.races.join_room(pid(r), name(r), code)
    return race_id


async def assert_started_whole(parts: RaceParts, race_id: str) -> RaceState:
    """The race runs with every racer's game (at its start, from its deal), their seen marks
    and exactly one `countdown` event announcing its clock."""
    race = await parts.races.load(race_id)
    assert race.status is RaceStatus.RUNNING
    assert race.start_at is not None and race.ends_at is not None
    countdowns = [e for e in await events(parts, race_id) if isinstance(e, pr.RaceCountdown)]
    assert countdowns == [pr.RaceCountdown(start_at=race.start_at, ends_at=race.ends_at)]
    for p in race.pids():
        record = await parts.races.games.store.get(keys.race_game_id(race_id, p))
        assert (record.kind, record.variant, record.seed) == ("race", race.variant, race.seed)
        assert record.started_at_ms == race.start_at and record.seq == 0
        assert race.seen[p] == race.start_at
    return race


async def assert_ends_by_time_limit(parts: RaceParts, race_id: str) -> RaceState:
    """Ticks alone (no racer connected anywhere) end the race at its time limit."""
    race = await parts.races.load(race_id)
    assert race.ends_at is not None
    parts.clock.set(race.ends_at)
    await sweep(parts)
    await sweep(parts)  # the next tick finds nothing left to do
    race = await parts.races.load(race_id)
    assert race.status is RaceStatus.FINISHED and race.results is not None
    (end,) = [e for e in await events(parts, race_id) if isinstance(e, pr.RaceEnded)]
    assert end.reason == "time limit" and len(end.results) == len(race.racers)
    assert await due_at(parts, race_id) is None
    return race


@pytest_asyncio.fixture
async def second_client(
    redis_url: str, redis_client: redis.asyncio.Redis
) -> AsyncIterator[redis.asyncio.Redis]:
    client = connect(redis_url)
    try:
        yield client
    finally:
        await client.aclose()


# -- the start ------------------------------------------------------------------------------


async def test_a_start_writes_everything_in_one_step(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    racers = [await parts.inbox(n) for n in ("sa-ann", "sa-bob", "sa-cid")]
    race_id = await room(parts, racers)
    await parts.races.start_room(pid(racers[0]), race_id)
    race = await assert_started_whole(parts, race_id)
    assert race.start_at is not None and await due_at(parts, race_id) == race.start_at
    clock.set(race.start_at)
    await sweep(parts)
    # From the start on: the first grace deadline, nobody being connected (issue #25: it was
    # the time limit, so a race every racer had left ran until then).
    assert await due_at(parts, race_id) == race.start_at + SETTINGS.grace_ms + 1
    await assert_ends_by_time_limit(parts, race_id)


async def test_a_start_cut_short_after_the_index_write(
    redis_client: redis.asyncio.Redis, second_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """The process wrote the deadline index and stopped: the room is still open (its creator
    can start it), the ticks look at it again only every `UNDEALT_MS`, never in a loop."""
    one, two = build(redis_client, clock), build(second_client, clock)
    racers = [await one.inbox(n) for n in ("ic-ann", "ic-bob")]
    race_id = await room(one, racers)
    intent = clock.now_ms() + SETTINGS.countdown_ms
    await one.store.set_active(race_id, intent, only_earlier=True)  # ...and stopped
    clock.set(intent)
    await sweep(two)
    race = await two.races.load(race_id)
    assert race.status is RaceStatus.OPEN
    assert not [e for e in await events(two, race_id) if isinstance(e, pr.RaceCountdown)]
    assert await due_at(two, race_id) == intent + UNDEALT_MS, "looked at again later"
    assert await two.referee.due(clock.now_ms()) == [], "not due again at once"
    await two.races.start_room(pid(racers[0]), race_id)  # the creator starts it again
    race = await assert_started_whole(two, race_id)
    assert await due_at(two, race_id) == race.start_at, "the start's deadline, not later"
    await assert_ends_by_time_limit(one, race_id)


async def test_a_start_cut_short_after_its_script(
    redis_client: redis.asyncio.Redis, second_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """The index write, a tick of another process (the race still open: looked at later), the
    start's script, and the process stopped before its second index write: the race is
    started whole, and the later look finds it running and keeps its time limit."""
    one, two = build(redis_client, clock), build(second_client, clock)
    racers = [await one.inbox(n) for n in ("sc-ann", "sc-bob")]
    race_id = await room(one, racers)
    start_at = clock.now_ms() + SETTINGS.countdown_ms
    ends_at = start_at + SETTINGS.time_limit_ms
    await one.store.set_active(race_id, start_at, only_earlier=True)
    clock.set(start_at)
    await sweep(two)  # the open race: looked at again UNDEALT_MS later
    assert await one.store.begin(race_id, start_at, ends_at)  # ...and the process stopped
    race = await assert_started_whole(two, race_id)
    for r in racers:  # any process serves the racers their start
        view = await two.races.start_view(race, pid(r), clock.now_ms())
        assert view.game_id == keys.race_game_id(race_id, pid(r))
    assert await two.referee.due(clock.now_ms()) == []
    clock.set(start_at + UNDEALT_MS)
    await two.races.mark_seen(race_id, [pid(r) for r in racers])  # connected meanwhile
    await sweep(two)
    marked = await two.races.load(race_id)
    seen = min(marked.seen[pid(r)] for r in racers)
    # looked at again when a grace may first run out: a grace after they were last seen
    assert await due_at(two, race_id) == min(ends_at, seen + SETTINGS.grace_ms + 1)
    await assert_ends_by_time_limit(two, race_id)


async def test_an_early_index_write_is_looked_at_again_at_the_start(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """A losing start of another process (its clock a little behind) left the race due before
    its start: the tick before the start moves it to the start, not due again at once."""
    parts = build(redis_client, clock)
    racers = [await parts.inbox(n) for n in ("ew-ann", "ew-bob")]
    race_id = await room(parts, racers)
    await parts.races.start_room(pid(racers[0]), race_id)
    race = await assert_started_whole(parts, race_id)
    assert race.start_at is not None
    await parts.store.set_active(race_id, race.start_at - 7, only_earlier=True)
    clock.set(race.start_at - 7)
    await sweep(parts)
    assert await due_at(parts, race_id) == race.start_at
    assert await parts.referee.due(clock.now_ms()) == []
    assert not (await parts.races.load(race_id)).forfeited


async def made_match(parts: RaceParts, a: Inbox, b: Inbox) -> tuple[str, int]:
    """A race the queue matched `a` and `b` to, made by a process that stopped before dealing
    it (after the index write, the race and the racers' pointers); and when it is due."""
    race_id = keys.new_race_id(parts.clock.now_ms())
    intent = parts.clock.now_ms() + SETTINGS.countdown_ms
    await parts.store.set_active(race_id, intent, only_earlier=True)
    await parts.store.create(
        race_id, VARIANT, 2, 7, parts.clock.now_ms(), [(pid(a), name(a)), (pid(b), name(b))]
    )
    await parts.store.set_racing([pid(a), pid(b)], race_id)
    return race_id, intent  # ...and stopped


async def test_a_match_whose_start_was_cut_short_is_dealt_by_a_tick(
    redis_client: redis.asyncio.Redis, second_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """A matched race is dealt the moment it is made; left undealt (its process stopped after
    the index write), the tick of any process deals it at its start time, once."""
    one, two = build(redis_client, clock), build(second_client, clock)
    a, b = await one.inbox("mc-ann"), await one.inbox("mc-bob")
    race_id, intent = await made_match(one, a, b)
    clock.set(intent)
    await asyncio.gather(sweep(two), sweep(one))
    race = await assert_started_whole(two, race_id)
    assert race.start_at == intent + SETTINGS.countdown_ms
    assert await due_at(two, race_id) == race.start_at
    await assert_ends_by_time_limit(one, race_id)


async def test_a_match_left_undealt_too_long_leaves_the_index(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """Looked at only after `UNDEALT_MS` (no process ticked meanwhile), a match never dealt is
    abandoned (its players may have been freed) and leaves the index."""
    parts = build(redis_client, clock)
    a, b = await parts.inbox("mu-ann"), await parts.inbox("mu-bob")
    race_id, intent = await made_match(parts, a, b)
    clock.set(intent + UNDEALT_MS)
    await sweep(parts)
    assert await due_at(parts, race_id) is None, "abandoned: out of the index"
    assert (await parts.races.load(race_id)).status is RaceStatus.OPEN
    waiting, matched = await parts.races.queue(pid(a), name(a), VARIANT, 2)
    assert (waiting, matched) == (1, None), "its players are free to race again"


async def queue_match(parts: RaceParts, a: Inbox, b: Inbox) -> str:
    """A match the queue made of `a` and `b` (its first step), by a process that stopped
    right after: the race is not made."""
    race_id = keys.new_race_id(parts.clock.now_ms())
    for ib in (a, b):
        _, matched = await parts.store.enqueue(
            pid(ib), VARIANT, 2, parts.clock.now_ms(), SETTINGS.fill_wait_ms, race_id
        )
    assert sorted(matched) == sorted([pid(a), pid(b)])
    return race_id


async def test_a_match_left_unmade_is_made_once_by_any_process(
    redis_client: redis.asyncio.Redis, second_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    one, two = build(redis_client, clock), build(second_client, clock)
    a, b = await one.inbox("um-ann"), await one.inbox("um-bob")
    race_id = await queue_match(one, a, b)
    assert [m.race_id for m in await two.store.making()] == [race_id]
    clock.advance(UNMADE_MS - 1)
    assert await two.races.repair_matches() == [], "its maker may still be at it"
    clock.advance(1)
    await asyncio.gather(one.races.repair_matches(), two.races.repair_matches())
    race = await assert_started_whole(two, race_id)
    assert sorted(race.pids()) == sorted([pid(a), pid(b)]) and race.creator is None
    assert await two.store.making() == []
    assert await two.store.racing(pid(a)) == race_id
    assert await two.races.repair_matches() == []
    await assert_ends_by_time_limit(one, race_id)


async def test_a_match_left_unmade_too_long_is_dropped(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    a, b = await parts.inbox("ud-ann"), await parts.inbox("ud-bob")
    race_id = await queue_match(parts, a, b)
    clock.advance(UNDEALT_MS + 1)
    assert await parts.races.repair_matches() == []
    assert await parts.store.making() == []
    with pytest.raises(NotFound):
        await parts.races.load(race_id)
    waiting, matched = await parts.races.queue(pid(a), name(a), VARIANT, 2)
    assert (waiting, matched) == (1, None), "its players are free to race again"


async def test_a_race_gone_from_redis_leaves_the_index(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    gone = keys.new_race_id(clock.now_ms())
    await parts.store.set_active(gone, clock.now_ms())
    await sweep(parts)
    assert await due_at(parts, gone) is None


async def test_two_processes_starting_one_room_start_it_once(
    redis_client: redis.asyncio.Redis, second_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """Both pass the room's checks and start it at once, each with its own clock (start
    times differ): one start wins whole, the other is refused and changes nothing."""
    one = build(redis_client, clock)
    two = build(second_client, ManualClock(clock.now_ms() + 7))
    racers = [await one.inbox(n) for n in ("tp-ann", "tp-bob", "tp-cid")]
    for _ in range(10):
        race_id = await room(one, racers)
        outcomes = await asyncio.gather(
            one.races.start_room(pid(racers[0]), race_id),
            two.races.start_room(pid(racers[0]), race_id),
            return_exceptions=True,
        )
        assert sorted(type(o).__name__ for o in outcomes) == ["Conflict", "NoneType"]
        assert all(o is None or isinstance(o, Conflict) for o in outcomes)
        race = await assert_started_whole(one, race_id)  # one countdown, one set of games
        assert race.start_at is not None and race.ends_at is not None
        assert await due_at(one, race_id) in (race.start_at, race.start_at - 7)
        clock.set(race.ends_at)
        two.clock.set(clock.now_ms() + 7)
        await one.referee.end(race_id, "time limit")


async def test_a_racer_joining_while_the_room_starts_gets_a_game_or_a_refusal(
    redis_client: redis.asyncio.Redis, second_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """The start reads the racers, then starts them in one script that checks they are still
    the racers (else it reads them again): a join racing the start either makes it in with a
    game or is refused, never in the race without a game."""
    one, two = build(redis_client, clock), build(second_client, clock)
    host, guest = await one.inbox("jr-ann"), await one.inbox("jr-bob")
    late = [await one.inbox(f"jr-late{i}") for i in range(12)]

    async def begin(race_id: str, yields: int) -> bool:
        for _ in range(yields):  # a yield, not a wait: the start's round trips interleave
            await asyncio.sleep(0)  # with the join's at a different point each time
        start_at = clock.now_ms() + SETTINGS.countdown_ms
        return await one.store.begin(race_id, start_at, start_at + SETTINGS.time_limit_ms)

    for n, joiner in enumerate(late):
        race_id = await room(one, [host, guest], size=3)
        code = (await one.races.load(race_id)).code
        assert code is not None
        started, joined = await asyncio.gather(
            begin(race_id, 2 * n),
            two.races.join_room(pid(joiner), name(joiner), code),
            return_exceptions=True,
        )
        assert started is True
        assert joined == race_id or isinstance(joined, Conflict), joined
        race = await assert_started_whole(one, race_id)  # a game for every racer
        assert (pid(joiner) in race.pids()) == (joined == race_id)
        game = keys.race_game_id(race_id, pid(joiner))
        assert (await one.races.games.store.get_many([game]) == [None]) == (joined != race_id)
        await one.referee.end(race_id, "time limit")


# -- an end cut short -------------------------------------------------------------------------


async def cut_short_end(one: RaceParts, racers: list[Inbox], *, rated: bool) -> str:
    """A running race whose end process one began (`finishing`) and stopped in: after closing
    the first racer's game, or (`rated`) after closing every game, rating the race and
    counting its win (the referee's own steps, up to where it stopped)."""
    race_id = await one.matched(VARIANT, *racers)  # rated: made by the queue, not a room
    race = await one.races.load(race_id)
    assert race.start_at is not None
    one.clock.set(race.start_at)
    first = racers[1]  # b resigns during the race, before its end
    live, _ = await one.races.games.resign(
        keys.race_game_id(race_id, pid(first)), pid(first), name(first)
    )
    await one.referee.on_played(race_id, live)
    now = one.clock.now_ms()
    await one.store.set_active(race_id, now + FINISHING_STALE_MS, only_earlier=True)
    assert await one.store.start_finishing(race_id, now, "time limit")
    for r in racers if rated else racers[:1]:
        await one.races.games.close(
            keys.race_game_id(race_id, pid(r)), pid(r), name(r), resigned=False
        )
    if rated:
        standings = await one.referee.leaderboard.top(
            BoardRef.race(VARIANT, race_id), 0, len(racers)
        )
        no_attempt = frozenset({pid(first)})  # b resigned without a move
        order = standing_order([e.player_id for e in standings], frozenset(), no_attempt)
        places = {p: i + 1 for i, p in enumerate(order)}
        await one.referee.boards.apply(
            RaceSummary(race_id, VARIANT, now, len(racers)), places, no_attempt
        )
        await one.referee.boards.add_win(VARIANT, keys.race_date(race_id), order[0], race_id)
    return race_id  # ...and the process stopped


@pytest.mark.parametrize("rated", [False, True])
async def test_an_end_left_finishing_is_taken_over_once(
    redis_client: redis.asyncio.Redis,
    second_client: redis.asyncio.Redis,
    clock: ManualClock,
    rated: bool,
) -> None:
    one, two = build(redis_client, clock), build(second_client, clock)
    racers = [
        await one.inbox(n) for n in (f"to-ann{rated:d}", f"to-bob{rated:d}", f"to-cid{rated:d}")
    ]
    race_id = await cut_short_end(one, racers, rated=rated)
    began = clock.now_ms()
    # Within FINISHING_STALE_MS the end may still be under way: nobody takes it over.
    clock.advance(FINISHING_STALE_MS - 1)
    await two.referee.tick(race_id)
    assert (await two.races.load(race_id)).status is RaceStatus.FINISHING
    assert await due_at(two, race_id) == began + FINISHING_STALE_MS, "looked at again then"
    clock.advance(1)
    await asyncio.gather(sweep(two), sweep(one))  # both processes' clocks: one takes over
    race = await two.races.load(race_id)
    assert race.status is RaceStatus.FINISHED and race.results is not None
    assert [r.place for r in race.results] == [1, 2, 3]
    assert all(r.rating is not None and r.rating_change is not None for r in race.results)
    assert race.results[0].rating_change is not None and race.results[0].rating_change > 0
    (end,) = [e for e in await events(two, race_id) if isinstance(e, pr.RaceEnded)]
    assert end.reason == "time limit" and list(end.results) == [r.to_wire() for r in race.results]
    for r in racers:
        assert race.progress_of(pid(r)).finished, "every game's end is told, closed or not"
        assert await two.store.racing(pid(r)) is None
        recent = await two.races.recent(VARIANT, pid(r), 10)
        assert [x.race_id for x in recent] == [race_id], "rated once"
        mine = next(x for x in race.results if x.player_id == pid(r))
        assert (recent[0].rating_after, recent[0].place) == (mine.rating, mine.place)
    wins = await two.races.board_top(VARIANT, "wins", keys.race_date(race_id), 0, 5)
    assert [(w.player_id, w.rating) for w in wins] == [(race.results[0].player_id, 1)]
    assert await due_at(two, race_id) is None
    # A second takeover does nothing: the race is finished; a stale mark no longer matches.
    assert not await one.store.take_over_finishing(race_id, began, clock.now_ms())
    clock.advance(10 * FINISHING_STALE_MS)
    await one.referee.tick(race_id)
    await one.referee.end(race_id, "late")
    assert len([e for e in await events(one, race_id) if isinstance(e, pr.RaceEnded)]) == 1
    assert (await one.races.load(race_id)).results == race.results
    wins = await one.races.board_top(VARIANT, "wins", keys.race_date(race_id), 0, 5)
    assert [w.rating for w in wins] == [1]


async def test_one_taker_of_a_stalled_end(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    racers = [await parts.inbox(n) for n in ("ot-ann", "ot-bob")]
    race_id = await room(parts, racers)
    await parts.races.start_room(pid(racers[0]), race_id)
    began = clock.now_ms()
    assert await parts.store.start_finishing(race_id, began, "time limit")
    assert (await parts.races.load(race_id)).finished_at == began
    later = began + FINISHING_STALE_MS
    took = await asyncio.gather(
        *(parts.store.take_over_finishing(race_id, began, later) for _ in range(5))
    )
    assert sorted(took) == [False] * 4 + [True]
    race = await parts.races.load(race_id)
    assert (race.finished_at, race.reason) == (later, "time limit")
    assert not await parts.store.take_over_finishing(race_id, began, later + 1)


# -- on a Redis Cluster -----------------------------------------------------------------------


async def test_a_cut_short_start_and_end_on_a_redis_cluster(
    cluster_url: str, cluster_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """The start's script, the index around it and the takeover of an end, on three masters."""
    other = redisconn.connect(cluster_url)
    try:
        one, two = build(cluster_client, clock), build(other, clock)
        racers = [await one.inbox(n) for n in ("cl-ann", "cl-bob", "cl-cid")]
        race_id = await room(one, racers)
        intent = clock.now_ms() + SETTINGS.countdown_ms
        await one.store.set_active(race_id, intent, only_earlier=True)
        clock.set(intent)
        await sweep(two)
        assert await due_at(two, race_id) == intent + UNDEALT_MS
        outcomes = await asyncio.gather(
            one.races.start_room(pid(racers[0]), race_id),
            two.races.start_room(pid(racers[0]), race_id),
            return_exceptions=True,
        )
        assert sum(o is None for o in outcomes) == 1
        await assert_started_whole(two, race_id)
        await assert_ends_by_time_limit(two, race_id)
        race_id = await cut_short_end(one, racers, rated=True)
        clock.advance(FINISHING_STALE_MS)
        await asyncio.gather(sweep(one), sweep(two))
        race = await two.races.load(race_id)
        assert race.status is RaceStatus.FINISHED and race.results is not None
        assert all(r.rating_change is not None for r in race.results)
        assert len([e for e in await events(two, race_id) if isinstance(e, pr.RaceEnded)]) == 1
        wins = await two.races.board_top(VARIANT, "wins", keys.race_date(race_id), 0, 5)
        assert sum(w.rating for w in wins) == 1, "the matched race's win (a room is casual)"
    finally:
        await other.aclose()
