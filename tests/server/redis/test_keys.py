"""Key names and game ids (`server.redis.keys`): ids round-trip, anything malformed is NotFound, and
the keys one script touches share a Redis Cluster hash tag."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.redis import keys
from server.runtime.errors import NotFound

D = dt.date(2030, 6, 15)
RACE = "20300615-abcdef123456"

variants = st.from_regex(r"[a-z0-9_-]{1,32}", fullmatch=True)
pids = st.from_regex(r"[A-Za-z0-9_-]{1,32}", fullmatch=True)
dates = st.dates(dt.date(1000, 1, 1), dt.date(9999, 12, 31))


def tag(key: str) -> str:
    """The hash tag Redis Cluster hashes: the text inside the first ``{...}``."""
    m = re.search(r"\{([^}]*)\}", key)
    assert m is not None and m.group(1), key
    return m.group(1)


@given(variants, dates, pids)
def test_daily_game_ids_round_trip(variant: str, date: dt.date, pid: str) -> None:
    gid = keys.daily_game_id(variant, date, pid)
    parsed = keys.parse_game_id(gid)
    assert isinstance(parsed, keys.DailyGameKeys)
    assert (parsed.game_id, parsed.variant, parsed.date, parsed.player_id) == (
        gid,
        variant,
        date,
        pid,
    )
    assert parsed.game == keys.daily_game(variant, date, pid)
    assert parsed.log == keys.daily_log(variant, date, pid)
    assert parsed.board == keys.daily_board(variant, date)
    for _ in range(2):  # made once, then the memoized tags (issue #30): the same keys
        assert parsed.game == keys.daily_game(variant, date, pid)
        assert parsed.times == keys.daily_times(variant, date, pid)
        assert parsed.members == keys.daily_members(variant, date)
        assert parsed.entries == keys.daily_entries(variant, date)
        assert parsed.outbox == keys.daily_outbox(variant, date)
    assert keys.history_record_keys(pid, variant) == (
        keys.history_days(pid, variant),
        keys.history_won(pid, variant),
        keys.history_results(pid, variant),
        keys.history_ranks(pid, variant),
        keys.history_stats(pid, variant),
        keys.history_pending(pid),
    )
    assert keys.history_record_keys(pid, variant, date) == (
        *keys.history_record_keys(pid, variant),
        keys.crowns(pid, date.year, date.month),
        keys.crown_months(pid),
    )
    tiered = keys.parse_game_id(keys.tier_game_id(variant, date, pid, "hard"))
    assert isinstance(tiered, keys.DailyGameKeys)
    for _ in range(2):
        assert tiered.board == keys.daily_board(variant, date, "hard")
        assert tiered.outbox == keys.daily_outbox(variant, date, "hard")
    assert tiered == keys.parse_game_id(tiered.game_id)  # the memo is not compared


@given(st.integers(0, 253_402_300_799_999), pids)
def test_race_game_ids_round_trip(now_ms: int, pid: str) -> None:
    race_id = keys.new_race_id(now_ms)
    assert keys.valid_race_id(race_id)
    created = dt.datetime.fromtimestamp(now_ms / 1000, dt.UTC).date()
    assert keys.race_date(race_id) == created
    parsed = keys.parse_game_id(keys.race_game_id(race_id, pid))
    assert isinstance(parsed, keys.RaceGameKeys)
    assert (parsed.race_id, parsed.date, parsed.player_id) == (race_id, created, pid)


def test_race_ids_are_fresh() -> None:
    assert len({keys.new_race_id(1_907_755_200_000) for _ in range(200)}) == 200


@pytest.mark.parametrize(
    "game_id",
    [
        "",
        "d",
        "d.fourteen-out.2030-06-15",
        "d.fourteen-out.2030-06-15.",
        "d.Fourteen.2030-06-15.p1",  # variants are lowercase
        "d.fourteen-out.2030-02-30.p1",  # no such day
        "d.fourteen-out.2030-6-15.p1",  # not ISO
        "d.fourteen-out.2030-06-15.p1.x",  # trailing part
        "d.fourteen-out.2030-06-15.p:1",  # ':' delimits keys
        "d.fourteen-out.2030-06-15.p}1",  # so do braces
        " d.fourteen-out.2030-06-15.p1",
        "d.fourteen-out.2030-06-15.p1\n",
        "d.fourteen-out.2030-06-15." + "p" * 33,  # player id too long
        "x.fourteen-out.2030-06-15.p1",
        "r.20300615-abcdef123456",  # no player
        "r.20300230-abcdef123456.p1",  # the race id's date does not exist
        "r.2030061-abcdef123456.p1",
        "r.20300615-abc.p1",  # random part too short
        "r.20300615-abcdef123456.p1.p2",
    ],
)
def test_malformed_game_ids_are_not_found(game_id: str) -> None:
    with pytest.raises(NotFound):
        keys.parse_game_id(game_id)


def test_non_string_game_ids_are_not_found() -> None:
    for value in (None, 12, b"d.fourteen-out.2030-06-15.p1"):
        with pytest.raises(NotFound):
            keys.parse_game_id(value)  # type: ignore[arg-type]


def test_names_refuse_parts_that_would_break_the_layout() -> None:
    for bad in ("", "Upper", "a:b", "a{b", "a.b", "x" * 33):
        with pytest.raises(ValueError):
            keys.daily_board(bad, D)
    for bad in ("", "a:b", "a}b", "a.b", "p" * 33):
        with pytest.raises(ValueError):
            keys.player(bad)
    with pytest.raises(ValueError):
        keys.race_tag("not-a-race")
    with pytest.raises(ValueError):
        keys.race_game_id("20300615-abc", "p1")


def test_a_daily_game_has_its_own_tag_apart_from_its_board() -> None:
    """The finish contract's layout: a game's record and log share one tag (the game's step
    of a finish is one script), the board's keys, outbox and deal share the day's tag (the
    board's step), and the two tags differ, so one board's games spread over slots."""
    parsed = keys.parse_game_id(keys.daily_game_id("fourteen-out", D, "p1"))
    assert isinstance(parsed, keys.DailyGameKeys)
    game = [parsed.game, parsed.log]
    board = [
        parsed.board,
        parsed.members,
        parsed.entries,
        parsed.outbox,
        keys.daily_deal("fourteen-out", D),
        keys.daily_deal_lock("fourteen-out", D),
    ]
    assert {tag(k) for k in game} == {"d:fourteen-out:2030-06-15:p1"}
    assert "{" + tag(parsed.game) + "}" == keys.daily_game_tag("fourteen-out", D, "p1")
    assert {tag(k) for k in board} == {"d:fourteen-out:2030-06-15"}
    assert "{" + tag(parsed.board) + "}" == keys.daily_tag("fourteen-out", D)
    assert len(set(game + board)) == len(game + board)
    other_day = keys.daily_board("fourteen-out", D + dt.timedelta(days=1))
    assert tag(other_day) != tag(parsed.board)
    others = {tag(keys.daily_game("fourteen-out", D, f"p{i}")) for i in range(50)}
    assert len(others) == 50  # one tag per player: not one per board


@given(variants, dates, pids)
def test_every_daily_game_tag_is_its_own(variant: str, date: dt.date, pid: str) -> None:
    k = keys.parse_game_id(keys.daily_game_id(variant, date, pid))
    assert isinstance(k, keys.DailyGameKeys)
    assert tag(k.game) == tag(k.log) == f"d:{variant}:{date.isoformat()}:{pid}"
    assert tag(k.board) == tag(k.outbox) == f"d:{variant}:{date.isoformat()}"


def test_a_races_keys_share_its_tag() -> None:
    parsed = keys.parse_game_id(keys.race_game_id(RACE, "p1"))
    assert isinstance(parsed, keys.RaceGameKeys)
    names = [
        keys.race(RACE),
        keys.race_racers(RACE),
        keys.race_order(RACE),
        keys.race_seen(RACE),
        keys.race_progress(RACE),
        keys.race_events(RACE),
        parsed.game,
        parsed.log,
        parsed.board,
        parsed.members,
        parsed.entries,
    ]
    assert {tag(k) for k in names} == {f"r:{RACE}"}
    assert len(set(names)) == len(names)
    assert tag(keys.race("20300615-000000000000")) != tag(names[0])


def test_shared_families_share_their_tags() -> None:
    assert {tag(keys.player("p1")), tag(keys.players_by_name()), tag(keys.players_by_token())} == {
        "players"
    }
    assert {
        tag(keys.race_queue("fourteen-out", 2)),
        tag(keys.race_queue_who()),
        tag(keys.race_queue_addr()),
        tag(keys.race_inrace()),
        tag(keys.race_turn("p1")),
    } == {"q"}
    assert {
        tag(keys.rating_board("fourteen-out")),
        tag(keys.rating_stats("fourteen-out")),
        tag(keys.rating_applied("fourteen-out")),
        tag(keys.rating_recent("fourteen-out", "p1")),
        tag(keys.rating_pairs("fourteen-out", D)),
    } == {"rt:fourteen-out"}
    assert {tag(keys.room_code("ABCDE")), tag(keys.rooms_made("p1"))} == {"rooms"}


def test_every_name_is_under_the_prefix() -> None:
    names = [
        keys.player("p1"),
        keys.daily_board("fourteen-out", D),
        keys.race(RACE),
        keys.race_channel(RACE),
        keys.player_channel("p1"),
        keys.room_code("ABCDEF"),
        keys.races_active(),
        keys.race_wins_board("fourteen-out", D),
    ]
    assert all(n.startswith(keys.PREFIX) for n in names)
    assert keys.player_pattern() == keys.player("p1").replace("p1", "*")


def test_fair_play_keys() -> None:
    assert keys.accounts_by_address("192.0.2.1", 7) == "sol:{lim:7:192.0.2.1}:accounts"
    assert keys.accounts_by_address("2001:db8::/64", 7) == "sol:{lim:7:2001:db8::/64}:accounts"
    assert keys.accounts_by_address("}{evil", 7) == "sol:{lim:7:unknown}:accounts"
    assert keys.hint_lock("p_1") == "sol:{players}:hint:p_1"
    assert keys.players_by_fold() == "sol:{players}:by_fold"


def test_a_free_games_keys_share_its_own_tag() -> None:
    gid = keys.free_game_id(1_907_755_200_000, "p1")
    parsed = keys.parse_game_id(gid)
    assert isinstance(parsed, keys.FreeGameKeys)
    assert (parsed.date.isoformat(), parsed.player_id) == ("2030-06-15", "p1")
    assert gid.startswith("f.20300615-")
    assert {tag(k) for k in (parsed.game, parsed.log, parsed.times)} == {f"f:{parsed.free_id}"}
    for bad in ("f.20301315-abcd.p1", "f.20300615-ab.p1", "f.20300615-abcd.", "f..p1"):
        with pytest.raises(NotFound):
            keys.parse_game_id(bad)
