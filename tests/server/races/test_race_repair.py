"""A race's start and end cut short by a process that stopped, completed by another app
(issue #25): the racers, connected to the other app over real WebSockets, are told of the
race and its end, and the race is rated exactly once.

The process that stops is a second app (`tests.support.app.serve`) on the same Redis and
clock: the test takes its first steps of the start or the end through its services, as that
process would have, and stops it before the next step.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import redis.asyncio

import protocol.races as pr
from engine import from_view
from server.boards.leaderboard import BoardRef
from server.races.model import RaceStatus, RaceSummary
from server.races.referee import FINISHING_STALE_MS, standing_order
from server.races.service import UNMADE_MS
from server.redis import keys
from tests.support.app import App, serve
from tests.support.races import SETTINGS, race_config, start_race
from tests.support.wsclient import Client

VARIANT = "fourteen-out"


async def until(client: Client, type_: str, test: Any, timeout: float = 10.0) -> dict[str, Any]:
    """The first push of `type_` passing `test` (earlier ones are dropped)."""

    async def wait() -> dict[str, Any]:
        while True:
            msg = await client.push(type_, timeout=timeout)
            if test(msg):
                return msg

    return await asyncio.wait_for(wait(), timeout)


async def race_events(app: App, race_id: str) -> list[pr.RaceEventBody]:
    return [e.event for e in await app.services.races.events_since(race_id, 0)]


async def test_a_match_its_process_left_undealt_is_dealt_and_announced_by_another(
    race_app: App, redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """Before: the race stayed open outside the deadline index, and its racers were never
    told they were matched (they waited in a queue they had left)."""
    clock = race_app.clock
    a, b = await race_app.client("rp-ann"), await race_app.client("rp-bob")
    assert (await a.request("race.queue", variant=VARIANT))["type"] == "race.queued"
    async with serve(race_config(redis_url, tmp_path / "doomed"), clock) as doomed:
        # b's race.queue reached the doomed process: the queue matched b with a, the race
        # was made and pointed at, as `RaceService.queue` and `_start_matched` do, and then
        # the process stopped (before dealing it).
        races = doomed.services.races
        now = clock.now_ms()
        race_id = keys.new_race_id(now)
        waiting, matched = await races.store.enqueue(
            b.player_id, VARIANT, 2, now, SETTINGS.fill_wait_ms, race_id
        )
        assert (waiting, sorted(matched)) == (0, sorted([a.player_id, b.player_id]))
        await races.store.set_active(race_id, now + SETTINGS.countdown_ms, only_earlier=True)
        names = await races.players.names(matched)
        await races.store.create(race_id, VARIANT, 2, 7, now, [(p, names[p]) for p in matched])
        await races.store.set_racing(matched, race_id)
    clock.advance(SETTINGS.countdown_ms)  # due: the next sweep here deals and announces it
    for c in (a, b):
        update = await until(c, "race.update", lambda m: m["race"]["race_id"] == race_id)
        assert update["race"]["status"] == "countdown" and update["race"]["game_id"]
    started = await start_race(race_app, a, b)
    assert {s["race_id"] for s in started} == {race_id}
    assert started[0]["view"] == started[1]["view"]
    countdowns = [
        e for e in await race_events(race_app, race_id) if isinstance(e, pr.RaceCountdown)
    ]
    assert len(countdowns) == 1
    moved = await a.request("move", game_id=started[0]["game_id"], move=_first(started[0]))
    assert moved["type"] == "moved"


async def test_a_match_its_process_left_unmade_is_made_by_another(
    race_app: App, redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """The queue matched the players (pointing them at the race id) and the process stopped
    before making the race. Before: the players waited, told nothing, until their next race
    request freed them 30 s later."""
    clock = race_app.clock
    a, b = await race_app.client("rm-ann"), await race_app.client("rm-bob")
    assert (await a.request("race.queue", variant=VARIANT))["type"] == "race.queued"
    async with serve(race_config(redis_url, tmp_path / "doomed"), clock) as doomed:
        now = clock.now_ms()
        race_id = keys.new_race_id(now)
        _, matched = await doomed.services.races.store.enqueue(
            b.player_id, VARIANT, 2, now, SETTINGS.fill_wait_ms, race_id
        )
        assert sorted(matched) == sorted([a.player_id, b.player_id])  # ...and it stopped
    clock.advance(UNMADE_MS)  # the next matchmaking sweep here makes it
    for c in (a, b):
        update = await until(c, "race.update", lambda m: m["race"]["race_id"] == race_id)
        assert update["race"]["status"] == "countdown" and update["race"]["game_id"]
    started = await start_race(race_app, a, b)
    assert {s["race_id"] for s in started} == {race_id}
    events = await race_events(race_app, race_id)
    assert len([e for e in events if isinstance(e, pr.RaceCountdown)]) == 1
    assert not await redis_client.hlen(keys.race_making()), "made: no longer to make"
    race = await race_app.services.races.load(race_id)
    assert race.creator is None and sorted(race.pids()) == sorted(matched)


def _first(started: dict[str, Any]) -> str:
    return str(next(iter(from_view(started["view"]).legal_moves())))


async def test_an_end_its_process_left_finishing_is_completed_and_rated_once_by_another(
    race_app: App, redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    clock = race_app.clock
    a, b = await race_app.client("rf-ann"), await race_app.client("rf-bob")
    for c in (a, b):
        await c.request("race.queue", variant=VARIANT)
    started = await start_race(race_app, a, b)
    race_id = started[0]["race_id"]
    async with serve(race_config(redis_url, tmp_path / "doomed"), clock) as doomed:
        # The doomed process decided the end (time limit), rated the race, and stopped
        # before writing the results and announcing them (`RaceReferee.end`'s steps).
        referee = doomed.services.race_referee
        now = clock.now_ms()
        await referee.store.set_active(race_id, now + FINISHING_STALE_MS, only_earlier=True)
        assert await referee.store.start_finishing(race_id, now, "time limit")
        for c in (a, b):
            gid = keys.race_game_id(race_id, c.player_id)
            await referee.games.close(gid, c.player_id, "?", resigned=False)
        standings = await referee.leaderboard.top(BoardRef.race(VARIANT, race_id), 0, 2)
        order = standing_order([e.player_id for e in standings], frozenset(), frozenset())
        first = await referee.boards.apply(
            RaceSummary(race_id, VARIANT, now, 2), {p: i + 1 for i, p in enumerate(order)}
        )
        assert len(first) == 2
    clock.advance(FINISHING_STALE_MS)  # the next sweep here takes the end over
    ends = [
        await until(a, "race.event", lambda m: m["event"]["kind"] == "finished"),
        await until(b, "race.event", lambda m: m["event"]["kind"] == "finished"),
    ]
    results = ends[0]["event"]["results"]
    assert ends[1]["event"]["results"] == results and len(results) == 2
    race = await race_app.services.races.load(race_id)
    assert race.status is RaceStatus.FINISHED
    ended = [e for e in await race_events(race_app, race_id) if isinstance(e, pr.RaceEnded)]
    assert len(ended) == 1
    for r in results:  # rated once: the doomed process's changes, reported, not applied again
        before, after = first[r["player_id"]]
        assert (r["rating"], r["rating_change"]) == (after, after - before)
        recent = await race_app.services.races.recent(VARIANT, r["player_id"], 10)
        assert [(x.race_id, x.rating_after) for x in recent] == [(race_id, after)]
        rank = await race_app.services.races.board_rank(VARIANT, "rating", None, r["player_id"])
        assert rank is not None and rank.rating == after
    for c in (a, b):
        assert (await c.request("race.get", race_id=race_id))["race"]["status"] == "finished"
