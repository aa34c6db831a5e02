"""The race referee on a real Redis with a manual clock: progress, deadlines, forfeits, the end."""

from __future__ import annotations

import asyncio
import copy

import pytest
import redis.asyncio

import protocol.races as pr
from engine import Game, Move
from server.games.service import GameService
from server.games.store import GameStore
from server.races.model import RaceState, RaceStatus
from server.races.referee import progress_of
from server.redis import keys
from server.runtime.clock import ManualClock
from server.runtime.errors import GameOver
from tests.support.races import SETTINGS, Inbox, RaceParts, build

VARIANT = "fourteen-out"
#: A winnable Fourteen Out deal: the races here are dealt it, so that `play` always finds its
#: moves (a random race deal may leave a racer stuck after a few: a flaky test).
SEED = 1


@pytest.fixture(autouse=True)
def fixed_deal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("server.races.service._seed", lambda variant: SEED)


async def running_race(
    parts: RaceParts, *names: str, countdown: bool = True
) -> tuple[str, list[Inbox]]:
    """A race of `names` the queue made (rated: a private room is not), dealt and (unless
    `countdown`=False) past its countdown."""
    inboxes = [await parts.inbox(n) for n in names]
    race_id = await parts.matched(VARIANT, *inboxes)
    if countdown:
        parts.clock.advance(SETTINGS.countdown_ms)
    return race_id, inboxes


def pid(ib: Inbox) -> str:
    assert ib.player is not None
    return ib.player.id


async def play(parts: RaceParts, race_id: str, ib: Inbox, n: int) -> None:
    """`n` moves of the racer, each refereed: the first legal move after which the game goes
    on (the race's deal is random: the first move alone may leave a racer stuck, done)."""
    assert ib.player is not None
    gid = keys.race_game_id(race_id, ib.player.id)
    for _ in range(n):
        live = await parts.races.games.get(gid, ib.player.id)
        moves = list(live.game.legal_moves())
        move = next((m for m in moves if not _ends(live.game, m)), moves[0])
        played = await parts.races.games.play(gid, ib.player.id, ib.player.name, str(move), None)
        await parts.referee.on_played(race_id, played.live)


def _ends(game: Game, move: Move) -> bool:
    after = copy.deepcopy(game)
    after.apply(move)
    return after.over


async def events(parts: RaceParts, race_id: str) -> list[pr.RaceEventBody]:
    return [e.event for e in await parts.store.events_since(race_id, 0)]


def ended(evs: list[pr.RaceEventBody]) -> list[pr.RaceEnded]:
    return [e for e in evs if isinstance(e, pr.RaceEnded)]


async def finished(parts: RaceParts, race_id: str) -> RaceState:
    race = await parts.races.load(race_id)
    assert race.status is RaceStatus.FINISHED and race.results is not None
    return race


async def test_time_limit_ends_the_race_ranked_by_progress(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    race_id, (a, b) = await running_race(parts, "alice", "bobby")
    await play(parts, race_id, b, 4)
    cleared = (await parts.races.load(race_id)).progress_of(pid(b)).cleared
    assert cleared > 0
    clock.advance(SETTINGS.time_limit_ms - 1)
    await parts.races.mark_seen(race_id, [pid(a), pid(b)])
    await parts.referee.tick(race_id)
    assert (await parts.races.load(race_id)).status is RaceStatus.RUNNING, "1 ms to go"
    clock.advance(1)
    await parts.referee.tick(race_id)
    race = await finished(parts, race_id)
    assert race.results is not None
    first, second = race.results
    assert (first.player_id, first.place, first.cleared) == (pid(b), 1, cleared)
    assert (second.player_id, second.place, second.cleared) == (pid(a), 2, 0)
    assert not first.forfeited and not second.forfeited
    assert first.rating_change is not None and first.rating_change > 0
    assert second.rating_change is not None and second.rating_change < 0
    (end,) = ended(await events(parts, race_id))
    assert end.reason == "time limit"
    assert [r.player_id for r in end.results] == [pid(b), pid(a)]
    for ib in (a, b):  # every racer's game is closed and the racers are free again
        live = await parts.races.games.get(keys.race_game_id(race_id, pid(ib)), pid(ib))
        assert live.record.finished
        assert await parts.store.racing(pid(ib)) is None
    assert await parts.referee.due(clock.now_ms() + SETTINGS.time_limit_ms) == []
    wins = await parts.races.board_top(VARIANT, "wins", keys.race_date(race_id), 0, 5)
    assert [w.player_id for w in wins] == [pid(b)]


async def test_grace_forfeit_in_a_three_racer_race_lets_the_others_race_on(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    race_id, (a, b, c) = await running_race(parts, "carol", "danny", "erica")
    clock.advance(SETTINGS.grace_ms)
    await parts.races.mark_seen(race_id, [pid(a), pid(b)])
    await parts.referee.tick(race_id)
    assert not (await parts.races.load(race_id)).forfeited, "exactly the grace: not yet"
    clock.advance(1)
    await parts.referee.tick(race_id)
    race = await parts.races.load(race_id)
    assert race.status is RaceStatus.RUNNING and race.forfeited == {pid(c)}
    assert [e for e in await events(parts, race_id) if isinstance(e, pr.RacerForfeited)] == [
        pr.RacerForfeited(player_id=pid(c))
    ]
    live = await parts.races.games.get(keys.race_game_id(race_id, pid(c)), pid(c))
    assert live.record.finished, "the forfeited game is closed as resigned"
    await parts.referee.tick(race_id)
    assert (
        len([e for e in await events(parts, race_id) if isinstance(e, pr.RacerForfeited)]) == 1
    ), "a forfeit is taken once"
    # b goes too: one racer left, the race ends; forfeits rank below a, latest forfeit first
    clock.advance(SETTINGS.grace_ms)
    await parts.races.mark_seen(race_id, [pid(a)])
    clock.advance(1)
    await parts.referee.tick(race_id)
    race = await finished(parts, race_id)
    assert race.results is not None
    assert race.results[0].player_id == pid(a) and not race.results[0].forfeited
    assert {r.player_id for r in race.results[1:]} == {pid(b), pid(c)}
    assert all(r.forfeited and not r.won for r in race.results[1:])
    assert [r.place for r in race.results] == [1, 2, 3]
    (end,) = ended(await events(parts, race_id))
    assert end.reason == "forfeit"
    row = await parts.races.board_rank(VARIANT, "rating", None, pid(c))
    assert row is not None and (row.losses, row.wins) == (1, 0), "a forfeit is a loss"


async def test_nothing_happens_before_the_start(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    race_id, _ = await running_race(parts, "frank", "grace", countdown=False)
    clock.advance(SETTINGS.countdown_ms - 1)
    await parts.referee.tick(race_id)
    race = await parts.races.load(race_id)
    assert race.status is RaceStatus.RUNNING and not race.forfeited
    assert race.shown_status(clock.now_ms()) is RaceStatus.COUNTDOWN


async def test_all_racers_done_ends_the_race(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    race_id, (a, b) = await running_race(parts, "heidi", "ivan1")
    await play(parts, race_id, a, 2)
    for ib in (b, a):  # both resign: the first leaves the race running, the second ends it
        live, _ = await parts.races.games.resign(
            keys.race_game_id(race_id, pid(ib)), pid(ib), ib.player.name if ib.player else "?"
        )
        assert progress_of(live).finished and not progress_of(live).won
        await parts.referee.on_played(race_id, live)
        if ib is b:
            race = await parts.races.load(race_id)
            assert race.status is RaceStatus.RUNNING
            assert race.progress_of(pid(b)).finished
    race = await finished(parts, race_id)
    assert race.results is not None
    assert [r.player_id for r in race.results] == [pid(a), pid(b)], "a cleared more"
    (end,) = ended(await events(parts, race_id))
    assert end.reason == "all finished"
    progress = [e for e in await events(parts, race_id) if isinstance(e, pr.RacerProgress)]
    assert len(progress) == 4 and progress[-1].player_id == pid(a) and progress[-1].finished


async def test_the_end_happens_once(redis_client: redis.asyncio.Redis, clock: ManualClock) -> None:
    parts = build(redis_client, clock)
    race_id, (a, b) = await running_race(parts, "judy1", "karl1")
    await asyncio.gather(*(parts.referee.end(race_id, reason=f"r{i}") for i in range(4)))
    await parts.referee.end(race_id, reason="late")
    await parts.referee.tick(race_id)
    race = await finished(parts, race_id)
    assert race.results is not None and len(race.results) == 2
    assert len(ended(await events(parts, race_id))) == 1
    for ib in (a, b):
        row = await parts.races.board_rank(VARIANT, "rating", None, pid(ib))
        assert row is not None and row.played == 1, "rated once"


async def test_a_race_every_racer_forfeited_is_unrated(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """Cheater review F5: both racers cleared cards and left; the one ahead was rated the
    winner (+138) of a race nobody played out. Now a race all racers forfeited is unrated
    (places kept), and no win counts."""
    parts = build(redis_client, clock)
    race_id, (a, b) = await running_race(parts, "leaver1", "leaver2")
    await play(parts, race_id, a, 3)
    await play(parts, race_id, b, 1)
    clock.advance(SETTINGS.grace_ms + 1)  # nobody seen since the start: both forfeit
    await parts.referee.tick(race_id)
    race = await finished(parts, race_id)
    assert race.results is not None and all(r.forfeited for r in race.results)
    assert [r.place for r in race.results] == [1, 2]
    assert all(r.rating is None and r.rating_change is None for r in race.results)
    for ib in (a, b):
        assert await parts.races.board_rank(VARIANT, "rating", None, pid(ib)) is None
    assert await parts.races.board_rank(VARIANT, "wins", keys.race_date(race_id), pid(a)) is None


async def test_no_move_is_taken_at_the_time_limit_before_the_tick(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """Cheater review F4: moves were taken up to a race-clock tick (0.2 s) past `ends_at`,
    and at the time limit places go by cards cleared. Now a race game refuses a move (and
    an undo) from `ends_at` on, whether or not the referee has ended the race yet."""
    parts = build(redis_client, clock)
    race_id, (a, _) = await running_race(parts, "lately1", "lately2")
    await play(parts, race_id, a, 1)
    gid = keys.race_game_id(race_id, pid(a))
    clock.advance(SETTINGS.time_limit_ms - 1)
    live = await parts.races.games.get(gid, pid(a))
    move = str(next(iter(live.game.legal_moves())))
    clock.advance(1)  # exactly `ends_at`: no tick has run
    assert (await parts.races.load(race_id)).status is RaceStatus.RUNNING
    with pytest.raises(GameOver):
        await parts.races.games.play(gid, pid(a), "lately1", move, None)
    with pytest.raises(GameOver):
        await parts.races.games.play(gid, pid(a), "lately1", "undo", None)


async def test_a_race_game_stops_at_its_races_end_on_every_process(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """Cheater review F-J: each process cut a race game off at its start plus its own
    `--race-time-limit-ms`, so while a rolling restart changed the flag a process with a
    longer limit took moves past the race's end (and one with a shorter limit refused them
    early). The race's start writes its `ends_at` into every racer's game: the game's own
    end, on every process."""
    parts = build(redis_client, clock)
    race_id, (a, _) = await running_race(parts, "flagged1", "flagged2")
    race = await parts.races.load(race_id)
    assert race.ends_at is not None
    gid = keys.race_game_id(race_id, pid(a))
    assert (await parts.races.games.get(gid, pid(a))).record.ends_at_ms == race.ends_at
    limit = SETTINGS.time_limit_ms

    async def move_on(games: GameService) -> None:
        games.forget(gid)  # read afresh: another process moved the game meanwhile
        live = await games.get(gid, pid(a))
        await games.play(gid, pid(a), "flagged1", str(next(iter(live.game.legal_moves()))), None)

    shorter = GameService(GameStore(redis_client), clock, race_time_limit_ms=limit // 2)
    longer = GameService(GameStore(redis_client), clock, race_time_limit_ms=3 * limit)
    clock.advance(limit // 2 + 1)  # past the shorter flag's limit, before the race's end
    await move_on(shorter)
    clock.advance(race.ends_at - clock.now_ms())  # the race's end; the longer flag's is later
    with pytest.raises(GameOver):
        await move_on(longer)
    with pytest.raises(GameOver):
        await longer.play(gid, pid(a), "flagged1", "undo", None)
