"""The chaos test (docs/reliability.md): a short seeded run through the real balancer, and the
checker shown to catch each kind of violation on a history built by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from engine import new_game
from engine.views import json_map
from tests.support.chaos.checker import (
    BoardEntry,
    Ledgers,
    Property,
    RatedResult,
    RecentItem,
    StoredGame,
    StoredRace,
    StoredRating,
    check,
)
from tests.support.chaos.history import BoardSeen, History, Kind, Op, Outcome, RaceSeen
from tests.support.chaos.nemesis import Action, schedule
from tests.support.chaos.run import ChaosConfig, run, summary
from tests.support.spectating import line_onto_unseen, replay

#: The seed `make test` runs: its 32 s schedule holds each kind of fault once.
SEED = 1
GAME = "d.fourteen-out.2030-06-15.p1"
SEEDED = 7


def stored(moves: tuple[str, ...], seed: int = SEEDED, game_id: str = GAME) -> StoredGame:
    return StoredGame(game_id, "daily", "fourteen-out", "2030-06-15", seed, moves)


def first_moves(n: int) -> tuple[str, ...]:
    game = new_game("fourteen-out", SEEDED)
    out = []
    for _ in range(n):
        move = str(next(iter(game.legal_moves())))
        game.play(move)
        out.append(move)
    return tuple(out)


def ack(seq: int, move: str, at: float, client: str = "a") -> Op:
    return Op(client, Kind.MOVE, at, GAME, move, seq - 1, Outcome.OK, done_at=at + 0.01, seq=seq)


def violations(
    history: History, games: dict[str, StoredGame], ledgers: Ledgers | None = None
) -> set[Property]:
    report = check(
        history,
        games,
        {},
        now_ms=0,
        grace_ms=0,
        race_slack_ms=0,
        run_end=100.0,
        resume_window=5.0,
        ledgers=ledgers,
    )
    return {v.prop for v in report.violations}


def test_a_clean_history_passes() -> None:
    moves = first_moves(2)
    h = History(ops=[ack(1, moves[0], 1.0), ack(2, moves[1], 2.0)])
    assert violations(h, {GAME: stored(moves)}) == set()


def test_a_lost_acknowledged_write_is_caught() -> None:
    moves = first_moves(2)
    h = History(ops=[ack(1, moves[0], 1.0), ack(2, moves[1], 2.0)])
    assert violations(h, {GAME: stored(moves[:1])}) == {Property.DURABLE}


def test_a_move_stored_where_it_was_not_sent_is_caught() -> None:
    moves = first_moves(2)
    # sent once for position 0, lost, then stored at 0 and (a replay) at 1 as well
    lost = Op("a", Kind.MOVE, 1.0, GAME, moves[0], 0, Outcome.LOST, done_at=1.5)
    assert violations(History(ops=[lost]), {GAME: stored(moves[:1])}) == set()
    twice = stored((moves[0], moves[0]))
    assert Property.RETRY_SAFE in violations(History(ops=[lost]), {GAME: twice})


def test_a_stale_read_is_caught() -> None:
    moves = first_moves(2)
    read = Op("b", Kind.GET, 3.0, GAME, outcome=Outcome.OK, done_at=3.1, seq=1)
    h = History(ops=[ack(1, moves[0], 1.0), ack(2, moves[1], 2.0), read])
    assert violations(h, {GAME: stored(moves)}) == {Property.FRESH}


def test_a_wrong_or_leaking_view_is_caught() -> None:
    moves = first_moves(1)
    other = json_map(new_game("fourteen-out", SEEDED + 1).view())
    read = Op("a", Kind.GET, 3.0, GAME, outcome=Outcome.OK, done_at=3.1, seq=0, view=other)
    h = History(ops=[read])
    assert violations(h, {GAME: stored(moves)}) == {Property.VIEWS}
    right = json_map(new_game("fourteen-out", SEEDED).view())
    h.ops[0].view = right
    assert violations(h, {GAME: stored(moves)}) == set()


def test_two_deals_of_one_day_are_caught() -> None:
    games = {GAME: stored(()), "d.x.p2": stored((), seed=SEEDED + 1, game_id="d.x.p2")}
    assert violations(History(), games) == {Property.ONE_DEAL}


def test_a_race_past_its_due_end_is_caught() -> None:
    h = History(races={"r1": RaceSeen("r1", ["a", "b"], ends_at_ms=1_000)})
    races = {"r1": StoredRace("r1", "running", 1_000)}
    report = check(
        h, {}, races, now_ms=5_000, grace_ms=1_000, race_slack_ms=2_000, run_end=9, resume_window=1
    )
    assert [v.prop for v in report.violations] == [Property.RACES_END]
    early = check(
        h, {}, races, now_ms=3_000, grace_ms=1_000, race_slack_ms=2_000, run_end=9, resume_window=1
    )
    assert early.violations == []  # not due yet


def test_a_client_that_never_came_back_is_caught() -> None:
    h = History()
    h.session("a").disconnects.append(10.0)
    h.session("a").successes.append(5.0)
    assert violations(h, {}) == {Property.RESUMED}
    h.session("a").successes.append(12.0)
    assert violations(h, {}) == set()


def rated(race_id: str, *changes: tuple[str, int, int]) -> tuple[RatedResult, ...]:
    """A race's results: (player, rating before, after) each."""
    return tuple(RatedResult(p, after, after - before) for p, before, after in changes)


def rating(pid: str, *items: tuple[str, int, int]) -> StoredRating:
    """A racer's stored rating from their rated races, newest first (race, before, after)."""
    recent = tuple(RecentItem(*i) for i in items)
    return StoredRating(pid, recent[0].rating_after if recent else 1500, 1500, recent)


def items(r: StoredRating) -> list[tuple[str, int, int]]:
    return [(i.race_id, i.rating_before, i.rating_after) for i in r.recent]


def test_ratings_applied_twice_or_never_are_caught() -> None:
    results = {
        "r1": rated("r1", ("p1", 1500, 1510), ("p2", 1500, 1490)),
        "r2": rated("r2", ("p1", 1510, 1518), ("p2", 1490, 1482)),
        "room": (RatedResult("p1", None, None), RatedResult("p2", None, None)),
    }
    ratings = {
        "p1": rating("p1", ("r2", 1510, 1518), ("r1", 1500, 1510)),
        "p2": rating("p2", ("r2", 1490, 1482), ("r1", 1500, 1490)),
    }
    assert violations(History(), {}, Ledgers(results, ratings)) == set()
    twice = {**ratings, "p1": rating("p1", ("r2", 1518, 1526), *items(ratings["p1"]))}
    assert violations(History(), {}, Ledgers(results, twice)) == {Property.RATED_ONCE}
    never = {**ratings, "p2": rating("p2", ("r1", 1500, 1490))}
    assert violations(History(), {}, Ledgers(results, never)) == {Property.RATED_ONCE}
    casual = {**ratings, "p1": rating("p1", ("room", 1518, 1530), *items(ratings["p1"]))}
    assert violations(History(), {}, Ledgers(results, casual)) == {Property.RATED_ONCE}
    shown = {**ratings, "p1": StoredRating("p1", 1530, 1500, ratings["p1"].recent)}
    assert violations(History(), {}, Ledgers(results, shown)) == {Property.RATED_ONCE}
    # A race whose end is still under way when read may have rated its racers already.
    ending = {**ratings, "p1": rating("p1", ("r3", 1518, 1525), *items(ratings["p1"]))}
    assert violations(History(), {}, Ledgers(results, ending)) == {Property.RATED_ONCE}
    unsettled = Ledgers(results, ending, unsettled=frozenset({"r3"}))
    assert violations(History(), {}, unsettled) == set()


def test_a_board_entry_without_its_finished_game_is_caught() -> None:
    moves = first_moves(3)
    done = StoredGame(GAME, "daily", "fourteen-out", "2030-06-15", SEEDED, moves, True, 4242, 1_000)
    day = ("fourteen-out", "2030-06-15")
    entry = BoardEntry(*day, "p1", 4242, 1_000)
    assert violations(History(), {GAME: done}, Ledgers(boards={day: (entry,)})) == set()
    other = BoardEntry(*day, "p1", 4243, 1_000)  # not the stored result
    assert violations(History(), {GAME: done}, Ledgers(boards={day: (other,)})) == {Property.BOARDS}
    playing = stored(moves)  # an entry of a game not finished
    assert violations(History(), {GAME: playing}, Ledgers(boards={day: (entry,)})) == {
        Property.BOARDS
    }
    assert violations(History(), {GAME: done}, Ledgers(boards={day: ()})) == {Property.BOARDS}


def test_a_spectator_shown_a_hidden_card_is_caught() -> None:
    game_id = "r.20300615-abcdef.p1"
    race_game = StoredGame(game_id, "race", "triple-triangle", "2030-06-15", SEEDED, ())
    view = json_map(new_game("triple-triangle", SEEDED).view())
    h = History(boards=[BoardSeen("s", "20300615-abcdef", "p1", 0, view)])
    assert violations(h, {game_id: race_game}) == set()
    tableau = [str(c) for c in cast(list[object], view["tableau"])]
    shown = {c for c in tableau if c != "??"} | {
        str(c) for c in cast(list[object], view["foundation"])
    }
    hidden = next(f"{r}{s}" for r in "A23456789JQK" for s in "SHDC" if f"{r}{s}" not in shown)
    tableau[tableau.index("??")] = hidden
    h.boards[0].view = {**view, "tableau": tableau}
    assert violations(h, {game_id: race_game}) == {Property.SPECTATED}


def test_a_spectator_shown_a_position_past_an_unseen_card_is_caught() -> None:
    """The cheat of the "??" boards: the rival's board showed the position after a move onto
    a card the other racer had not seen (masked, or not). A board of a position up to where
    every card the rival had turned up was seen by the other racer passes; so does any board
    once the other racer stopped playing, or once the race is over."""
    variant, race = "triple-triangle", "20300615-abcdef"
    rival, other = f"r.{race}.p1", f"r.{race}.p2"
    line = tuple(line_onto_unseen(variant, SEEDED))
    views = replay(variant, SEEDED, line).views
    games = {
        rival: StoredGame(rival, "race", variant, "2030-06-15", SEEDED, line),
        other: StoredGame(other, "race", variant, "2030-06-15", SEEDED, ()),
    }

    def board(seq: int, at: float = 5.0, **kw: Any) -> History:
        view = cast(dict[str, object], views[seq])
        return History(boards=[BoardSeen("s", race, "p1", seq, view, at=at, **kw)])

    assert violations(board(0), games) == set()
    assert violations(board(len(line)), games) == {Property.SPECTATED}
    # The old server's board: that position with the other racer's unseen cards as "??".
    masked = board(len(line))
    masked.boards[0].view = {**masked.boards[0].view, "foundation": ["??"] * len(line)}
    assert violations(masked, games) == {Property.SPECTATED}
    assert violations(board(len(line), final=True), games) == set()
    assert violations(board(len(line), stopped=("p2",)), games) == set()
    # The other racer plays the same line: seen by both once they sent it, not before.
    games[other] = StoredGame(other, "race", variant, "2030-06-15", SEEDED, line)
    sent = [
        Op("b", Kind.MOVE, 2.0 + i, other, m, i, Outcome.OK, done_at=2.5 + i, seq=i + 1)
        for i, m in enumerate(line)
    ]
    late = board(len(line), at=1.5)  # before the other sent a move
    assert violations(History(ops=sent, boards=late.boards), games) == {Property.SPECTATED}
    on_time = board(len(line), at=3.0 + len(line))
    assert violations(History(ops=sent, boards=on_time.boards), games) == set()


def test_a_seed_replays_its_faults() -> None:
    assert schedule(SEED, 32) == schedule(SEED, 32)
    assert {f.action for f in schedule(SEED, 32)} == set(Action)
    assert schedule(SEED, 32) != schedule(SEED + 1, 32)


async def test_a_short_chaos_run_keeps_every_property(tmp_path: Path) -> None:
    result = await run(ChaosConfig(SEED, duration=32.0), tmp_path, say=lambda line: None)
    table = summary(result)
    assert result.report.violations == [], table
    figures = result.report.figures
    assert figures["faults"] == 4, table
    assert figures["acknowledged moves"] > 100 and figures["disconnects"] > 0, table
    assert figures["races"] > 0 and figures["views checked"] > 100, table
    assert figures["private rooms made"] > 0 and figures["races watched"] > 0, table
    assert figures["spectator boards checked"] > 0, table
