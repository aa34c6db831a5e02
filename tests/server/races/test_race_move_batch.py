"""A racer's move and its progress in one Redis batch (one round trip), and the progress
script's guard: progress only for the move the append stored, once per seq.

The round trips are counted on the real app over WebSockets on a real Redis: the batcher's
pipelines and commands, and Redis's own `INFO commandstats` (the script calls the move cost).
"""

from __future__ import annotations

import asyncio
import json
from typing import cast

import pytest
import redis.asyncio

import protocol.races as pr
from server.games.store import GameStore
from server.races.model import Progress
from server.races.store import RaceStore
from server.redis import keys
from server.redis.batch import Batcher, Command, LuaScript
from server.runtime.errors import Conflict
from tests.support.app import App
from tests.support.commandstats import commands_run, delta
from tests.support.races import start_race

RACE = "20300615-abcdef123456"
PID = "p_ann"


class BatchLog:
    """The commands of each pipeline the batcher writes, in order (the batcher still writes
    them to Redis: this only looks). The race clock's tick (every 0.2 s, `mark_present`)
    shares the batcher, so a count of all its pipelines during a move is not the move's:
    under load a tick fell inside one move now and then and the count was 2."""

    def __init__(self, batch: Batcher, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[list[Command]] = []
        monkeypatch.setattr(batch, "observe", lambda b: self.sent.append([c for c, _ in b]))

    def carrying(self, *scripts: LuaScript) -> list[list[Command]]:
        """The pipelines that carried a call of one of these scripts."""
        shas = {s.sha for s in scripts}
        return [b for b in self.sent if any(c.script and c.script.sha in shas for c in b)]

    @staticmethod
    async def drained(batch: Batcher) -> None:
        """Until every pipeline the batcher has on its way is answered."""
        conn = batch.connection
        if conn is not None:
            await conn.wait_idle()

    def evalshas(self) -> int:
        return sum(c.args[0] == "EVALSHA" for b in self.sent for c in b)


async def test_a_racers_move_and_its_progress_take_one_round_trip(
    race_app: App, redis_client: redis.asyncio.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = await race_app.client("rt-ann"), await race_app.client("rt-ben")
    await a.request("race.queue", variant="triple-deck", size=2)
    await b.request("race.queue", variant="triple-deck", size=2)
    sa, _ = await start_race(race_app, a, b)
    batch = race_app.services.store.batch
    assert race_app.services.races.store.batch is batch  # one group commit for both stores
    append = race_app.services.store._append
    progress = race_app.services.races.store._move_progress
    for n in range(1, 4):
        with monkeypatch.context() as mp:
            log = BatchLog(batch, mp)
            await log.drained(batch)  # pipelines sent before the log are run by Redis now
            before = await commands_run(redis_client)
            moved = await a.request("move", game_id=sa["game_id"], move="d", expected_seq=n - 1)
            assert moved["type"] == "moved" and moved["seq"] == n, moved
            ran = delta(await commands_run(redis_client), before)
        # The append and the progress: two scripts in one pipeline (which a race clock tick
        # may share); no other pipeline carried either.
        (carried,) = log.carrying(append, progress)
        mine = [c.script.sha for c in carried if c.script in (append, progress) and c.script]
        assert mine == [append.sha, progress.sha], carried
        if n > 1:  # the first move may load the scripts (SCRIPT LOAD, EVALSHA again)
            # Every EVALSHA Redis ran went through the batcher: the move's two, and any race
            # clock tick's (one the log holds may still be on its way: at most, not equal).
            # Commands inside the scripts count in commandstats too; no other call went out.
            assert 2 <= ran["evalsha"] <= log.evalshas(), (ran, log.sent)
            assert "eval" not in ran and "script" not in ran, ran
        # The opponent hears of it as before: one `progress` event per move.
        event = await b.push("race.event")
        while event["event"]["kind"] != "progress":
            event = await b.push("race.event")
        assert event["event"]["player_id"] == a.player_id
        assert event["event"]["moves"] == n


async def stored_game(redis_client: redis.asyncio.Redis) -> tuple[GameStore, RaceStore]:
    games = GameStore(redis_client)
    races = RaceStore(redis_client, 60_000, games.batch)
    await races.create(RACE, "triple-deck", 2, 7, 0, [(PID, "ann"), ("p_ben", "ben")])
    await games.start_game(keys.race_game_id(RACE, PID), "race", "triple-deck", 7, 0)
    return games, races


async def progress_events(redis_client: redis.asyncio.Redis) -> list[pr.RaceEventBody]:
    raw = cast(
        list[tuple[str, dict[str, str]]],
        await redis_client.xrange(keys.race_events(RACE), "-", "+"),
    )
    return [pr.load_race_event(json.loads(f["e"])) for _id, f in raw]


async def test_progress_is_recorded_only_for_the_move_the_append_stored(
    redis_client: redis.asyncio.Redis,
) -> None:
    games, races = await stored_game(redis_client)
    k = keys.parse_game_id(keys.race_game_id(RACE, PID))
    one = Progress(moves=1)
    assert await games.append(k.game, k.log, k.times, 0, "d", 10) == 1
    assert await races.record_move_progress(RACE, PID, one, (k.game, k.log), 1, "d") > 0
    # Sent again (a resent batch): nothing recorded or announced twice.
    assert await races.record_move_progress(RACE, PID, one, (k.game, k.log), 1, "d") == 0
    # A move the append did not store (another move at that seq, or none yet): nothing.
    assert await races.record_move_progress(RACE, PID, one, (k.game, k.log), 1, "u") == 0
    assert await races.record_move_progress(RACE, PID, one, (k.game, k.log), 2, "d") == 0
    events = await progress_events(redis_client)
    assert [e for e in events if isinstance(e, pr.RacerProgress)] == [one.event(PID)]
    assert (await races.load(RACE)).progress == {PID: one}


async def test_a_refused_append_in_the_same_batch_records_no_progress(
    redis_client: redis.asyncio.Redis,
) -> None:
    """The stale append and its progress sent together: Redis refuses the first, the second
    sees it and records nothing (the old progress script recorded it regardless)."""
    games, races = await stored_game(redis_client)
    k = keys.parse_game_id(keys.race_game_id(RACE, PID))
    assert await games.append(k.game, k.log, k.times, 0, "d", 10) == 1
    stale = Progress(moves=5)
    batch: Batcher = games.batch
    sent = batch.batches
    append = games.append(k.game, k.log, k.times, 0, "x", 20)  # stale: seq is 1
    ride = races.record_move_progress(RACE, PID, stale, (k.game, k.log), 1, "x")
    refused: int | BaseException
    version: int | BaseException
    refused, version = await asyncio.gather(append, ride, return_exceptions=True)
    assert batch.batches - sent == 1  # one pipeline
    assert isinstance(refused, Conflict) and version == 0
    assert (await races.load(RACE)).progress == {}
    assert not [e for e in await progress_events(redis_client) if isinstance(e, pr.RacerProgress)]


async def test_a_finished_game_keeps_its_final_progress(redis_client: redis.asyncio.Redis) -> None:
    games, races = await stored_game(redis_client)
    k = keys.parse_game_id(keys.race_game_id(RACE, PID))
    assert await games.append(k.game, k.log, k.times, 0, "d", 10) == 1
    await redis_client.hset(k.game, "status", "finished")  # closed by the race's end
    assert await races.record_move_progress(RACE, PID, Progress(), (k.game, k.log), 1, "d") == 0


async def test_progress_the_batch_could_not_record_is_recorded_after_the_move(
    race_app: App, redis_client: redis.asyncio.Redis
) -> None:
    """Redis lacks the append script but has the progress script (flushed, then only the
    progress loaded): the batcher's first try runs the progress before the reloaded append,
    which records nothing; the move's `on_played` then records it the old way."""
    a, b = await race_app.client("fb-ann"), await race_app.client("fb-ben")
    await a.request("race.queue", variant="triple-deck", size=2)
    await b.request("race.queue", variant="triple-deck", size=2)
    sa, _ = await start_race(race_app, a, b)
    await redis_client.script_flush()
    await redis_client.script_load(race_app.services.races.store._move_progress.source)
    moved = await a.request("move", game_id=sa["game_id"], move="d", expected_seq=0)
    assert moved["type"] == "moved", moved
    event = await b.push("race.event")
    while event["event"]["kind"] != "progress":
        event = await b.push("race.event")
    assert event["event"]["player_id"] == a.player_id and event["event"]["moves"] == 1
    race = await race_app.services.races.load(sa["race_id"])
    assert race.progress[a.player_id].moves == 1
