"""The profile, history and spectating messages: validation both ways and their wire form."""

from __future__ import annotations

import dataclasses
import json

import pytest

import protocol as p


def request(**fields: object) -> str:
    return json.dumps({"id": 1, **fields})


def test_profile_get_asks_for_at_most_one_player() -> None:
    assert p.decode(request(type="profile.get")) == p.ProfileGet(id=1)
    by_name = p.decode(request(type="profile.get", name="alice"))
    assert isinstance(by_name, p.ProfileGet) and by_name.name == "alice"
    with pytest.raises(p.BadRequest, match="at most one"):
        p.decode(request(type="profile.get", name="alice", player_id="p_1"))
    with pytest.raises(p.InvalidName):
        p.decode(request(type="profile.get", name="a b"))


@pytest.mark.parametrize(
    "fields",
    [
        {"variant": "fourteen-out", "limit": 0},
        {"variant": "fourteen-out", "limit": 101},
        {"variant": "fourteen-out", "before": "2023-02-29"},
        {"variant": "Fourteen Out"},
        {"variant": "fourteen-out", "page": 2},
        {},
    ],
)
def test_history_get_refuses_bad_fields(fields: dict[str, object]) -> None:
    with pytest.raises(p.BadRequest):
        p.decode(request(type="history.get", **fields))


def test_history_get_defaults() -> None:
    msg = p.decode(request(type="history.get", variant="triple-deck"))
    assert msg == p.HistoryGet(id=1, variant="triple-deck", limit=30)


@pytest.mark.parametrize("type_", ["race.watch", "race.unwatch"])
def test_watch_needs_a_race_id(type_: str) -> None:
    with pytest.raises(p.BadRequest):
        p.decode(request(type=type_))
    with pytest.raises(p.BadRequest):
        p.decode(request(type=type_, race_id="has spaces"))
    assert p.decode(request(type=type_, race_id="20240610-a1b2c3")).type == type_


def test_race_list_limit() -> None:
    assert p.decode(request(type="race.list")) == p.RaceList(id=1, limit=20)
    with pytest.raises(p.BadRequest):
        p.decode(request(type="race.list", limit=1000))


def test_a_board_without_a_view_leaves_it_out() -> None:
    board = p.SpectatorBoard(player_id="p_1", name="alice", seq=0, as_of=5)
    push = p.RaceSpectate(race_id="20240610-a1b2c3", board=board)
    wire = json.loads(p.encode(push, False))
    assert wire == {
        "type": "race.spectate",
        "race_id": "20240610-a1b2c3",
        "board": {"player_id": "p_1", "name": "alice", "seq": 0, "as_of": 5},
    }
    assert p.decode_server(json.dumps(wire)) == push


def test_percentiles_are_whole_percents() -> None:
    base = p.DayResult(
        variant="fourteen-out",
        date="2024-06-09",
        game_id="g",
        won=True,
        resigned=False,
        cleared=52,
        score=52,
        time_ms=1,
        moves=1,
        hints=0,
        finished_at=1,
        replayable=True,
    )
    reply = p.HistoryPage(
        id=1,
        player_id="p_1",
        variant="fourteen-out",
        entries=(dataclasses.replace(base, percentile=101),),
    )
    with pytest.raises(p.EncodeError):
        p.encode(reply, False)
    ok = p.HistoryPage(
        id=1,
        player_id="p_1",
        variant="fourteen-out",
        entries=(dataclasses.replace(base, percentile=100),),
    )
    assert p.decode_server(p.encode(ok, True)) == ok
