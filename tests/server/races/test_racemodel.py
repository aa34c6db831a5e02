"""The race values: what each recipient sees of a race, shown statuses, stored forms."""

from __future__ import annotations

from dataclasses import replace

import pytest

from server.races.model import (
    CONNECTED_MS,
    Progress,
    RaceResult,
    RaceState,
    RaceStatus,
    RaceSummary,
    RecentRace,
    StoredDataError,
    dump_results,
    load_results,
)
from server.redis import keys

RACE_ID = "20300615-abcdef012345"
T0 = 1_907_755_200_000
START, ENDS = T0 + 3_000, T0 + 63_000


def race(status: RaceStatus = RaceStatus.RUNNING, **kw: object) -> RaceState:
    base = RaceState(
        race_id=RACE_ID,
        variant="fourteen-out",
        status=status,
        size=3,
        seed=42,
        creator="alice1",
        code="ABCDE",
        created_at=T0,
        start_at=None if status is RaceStatus.OPEN else START,
        ends_at=None if status is RaceStatus.OPEN else ENDS,
        version=4,
        racers=(("alice1", "alice"), ("bobby1", "bobby"), ("carol1", "carol")),
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def result(pid: str, place: int, **kw: object) -> RaceResult:
    base = RaceResult(
        player_id=pid,
        name=pid[:-1],
        place=place,
        won=place == 1,
        cleared=10,
        score=0,
        time_ms=5_000,
        moves=12,
        forfeited=False,
        rating=1010,
        rating_change=10,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_a_racer_gets_their_own_game_id_and_nobody_elses() -> None:
    r = race()
    for me in r.pids():
        assert r.info(START, me).game_id == keys.race_game_id(RACE_ID, me)
    assert r.info(START, "stranger").game_id is None, "an onlooker has no game"
    assert r.info(START, None).game_id is None


def test_an_open_room_gives_no_game_id_even_to_its_racers() -> None:
    r = race(RaceStatus.OPEN)
    info = r.info(T0, "alice1")
    assert info.game_id is None and info.status == "open"
    assert all(x.connected for x in info.racers), "everyone in an open room counts as there"


def test_info_shows_everyones_progress_and_forfeits_in_joining_order() -> None:
    r = race(
        progress={"bobby1": Progress(cleared=7, score=3, moves=9, stuck=True)},
        forfeited=frozenset({"carol1"}),
    )
    a, b, c = r.info(START, "alice1").racers
    assert [x.player_id for x in (a, b, c)] == ["alice1", "bobby1", "carol1"]
    assert (a.cleared, a.moves, a.stuck, a.forfeited) == (0, 0, False, False)
    assert (b.cleared, b.score, b.moves, b.stuck) == (7, 3, 9, True)
    assert c.forfeited and not b.forfeited
    assert all(x.place is None and x.rating is None for x in (a, b, c)), "no results yet"


def test_connected_is_presence_once_running_and_last_seen_before() -> None:
    # Running: exactly while some process holds a live connection (issue #25: a racer who
    # closed was shown connected for 5 s more, as recently seen).
    now = START + 20_000
    r = race(seen={"alice1": now - 1, "bobby1": now - 1}, present_until={"bobby1": now + 1})
    a, b, c = r.info(now, None).racers
    assert not a.connected, "seen a moment ago, but no process holds a connection: closed"
    assert b.connected
    assert not c.connected, "never seen since the start: not connected"
    # Before the start, when the clocks have not marked everyone yet: seen lately counts.
    early = START - 500
    r = race(seen={"alice1": early - CONNECTED_MS, "bobby1": early - CONNECTED_MS - 1})
    a, b, c = r.info(early, None).racers
    assert a.connected and not b.connected and not c.connected


def test_results_land_on_each_racer() -> None:
    results = (result("bobby1", 1), result("alice1", 2, won=False, rating=990, rating_change=-10))
    r = race(RaceStatus.FINISHED, results=results, closed=True)
    info = r.info(ENDS, "alice1")
    a, b, c = info.racers
    assert info.status == "finished"
    assert (a.place, a.rating, a.rating_change) == (2, 990, -10)
    assert (b.place, b.rating, b.rating_change) == (1, 1010, 10)
    assert c.place is None


@pytest.mark.parametrize(
    ("status", "closed", "results", "now", "shown"),
    [
        (RaceStatus.OPEN, False, None, T0, RaceStatus.OPEN),
        (RaceStatus.RUNNING, False, None, START - 1, RaceStatus.COUNTDOWN),
        (RaceStatus.RUNNING, False, None, START, RaceStatus.RUNNING),
        (RaceStatus.FINISHING, False, None, START + 10, RaceStatus.RUNNING),
        (RaceStatus.FINISHING, True, None, START + 10, RaceStatus.FINISHED),
        (RaceStatus.FINISHED, False, None, START + 10, RaceStatus.RUNNING),
        (RaceStatus.FINISHED, False, (), START + 10, RaceStatus.FINISHED),
    ],
)
def test_shown_status(
    status: RaceStatus,
    closed: bool,
    results: tuple[RaceResult, ...] | None,
    now: int,
    shown: RaceStatus,
) -> None:
    r = race(status, closed=closed, results=results)
    assert r.shown_status(now) is shown
    assert r.info(now, None).status == shown.value
    assert r.shown_status(now) is not RaceStatus.FINISHING


def test_all_done_counts_finished_stuck_and_forfeited() -> None:
    r = race(progress={"alice1": Progress(finished=True, won=True), "bobby1": Progress(stuck=True)})
    assert not r.all_done(), "carol is still playing"
    assert replace(r, forfeited=frozenset({"carol1"})).all_done()
    assert not race(progress={"alice1": Progress(moves=50, cleared=40)}).all_done()


def test_progress_round_trips_and_rejects_bad_shapes() -> None:
    prog = Progress(cleared=5, score=2, moves=8, finished=True, won=False, stuck=True)
    assert Progress.loads(prog.dumps()) == prog
    assert Progress.loads("{}") == Progress()
    for bad in ("not json", "[1]", '{"cleared": "5"}', '{"cleared": true}', '{"won": 1}'):
        with pytest.raises(StoredDataError):
            Progress.loads(bad)
    ev = prog.event("alice1")
    assert (ev.player_id, ev.cleared, ev.moves, ev.stuck) == ("alice1", 5, 8, True)


def test_results_round_trip_and_reject_bad_shapes() -> None:
    results = (
        result("bobby1", 1),
        result("alice1", 2, rating=None, rating_change=None, forfeited=True),
    )
    assert load_results(dump_results(results)) == results
    assert load_results(dump_results(())) == ()
    for bad in ("{", "{}", "[1]", '[{"player_id": "x"}]'):
        with pytest.raises(StoredDataError):
            load_results(bad)
    wire = results[1].to_wire()
    assert wire.rating is None and wire.forfeited


def test_recent_race_won_only_on_first_place_and_round_trips() -> None:
    summary = RaceSummary(race_id=RACE_ID, variant="fourteen-out", finished_at=ENDS, racers=3)
    first, second = RecentRace.of(summary, 1, 1000, 1012), RecentRace.of(summary, 2, 1000, 995)
    assert first.won and not second.won
    assert RecentRace.loads(second.dumps()) == second
    assert second.to_wire().rating_after == 995
    with pytest.raises(StoredDataError):
        RecentRace.loads('{"race_id": 1}')
