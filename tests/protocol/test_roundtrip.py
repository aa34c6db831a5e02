"""Every message survives encode -> decode unchanged, in msgpack and in JSON."""

from __future__ import annotations

import json

import msgpack  # type: ignore[import-untyped]
import pytest
from hypothesis import given
from hypothesis import strategies as st

import protocol as p
from protocol.schema import Struct
from tests.support.strategies import structs

RESULT = p.GameResult(
    won=True, over=True, cleared=52, score=-120, time_ms=93_000, moves=88, resigned=False, rank=3
)
ENTRY = p.LeaderboardEntry(
    rank=1,
    player_id="p_9f2c",
    name="alice",
    won=True,
    cleared=52,
    score=1200,
    time_ms=61_250,
    moves=74,
    finished_at=1_718_000_000_000,
    me=False,
)
VIEW = {"piles": [["3h", "Kd"], []], "stock": 24, "nested": {"a": [1.5, None, True]}}

CLIENT_EXAMPLES: list[p.ClientMessage] = [
    p.Hello(id=0, versions=(1,), name="alice"),
    p.Hello(id=1, versions=(2, 1), token="A" * 16),
    p.Ping(id=2),
    p.TokenRotate(id=40),
    p.SigninCode(id=41),
    p.SigninRedeem(id=42, versions=(7,), code="k7qm 4xht"),
    p.SigninRedeem(id=43, versions=(9,), code="K7QM-4XHT", name="alice", device="phone"),
    p.DevicesGet(id=70),
    p.DeviceRevoke(id=71, device="Xq3-k9Zp"),
    p.FreeStart(id=43, variant="triple-triangle"),
    p.RaceRematch(id=44, race_id="20240610-a1b2c3d4e5f6"),
    p.RaceDecline(id=45, race_id="20240610-0f1e2d3c4b5a"),
    p.TokenRevokeAll(id=41),
    p.DailyStart(id=3, variant="fourteen-out"),
    p.DailyStart(id=3, variant="fourteen-out", tier="expert", date="2024-06-03"),
    p.CalendarGet(id=60, month="2024-06", variant="triple-deck"),
    p.CalendarGet(id=61),
    p.GameGet(id=4, game_id="daily:2024-06-10:fourteen-out:p_1"),
    p.Move(id=5, game_id="g1", move="3 7"),
    p.Move(id=6, game_id="g1", move="w f", expected_seq=12),
    p.Undo(id=7, game_id="g1"),
    p.Undo(id=8, game_id="g1", expected_seq=0),
    p.Resign(id=9, game_id="g1"),
    p.Finish(id=9, game_id="d.triple-deck.2024-06-10.p_1"),
    p.LeaderboardTop(id=10, variant="klondike"),
    p.LeaderboardTop(id=11, variant="klondike", date="2024-02-29", offset=40, limit=100),
    p.LeaderboardAround(id=12, variant="klondike", k=50),
    p.LeaderboardRank(id=2**31 - 1, variant="klondike", date="2024-06-10"),
    p.RaceQueue(id=13, variant="fourteen-out", size=4),
    p.RaceLeave(id=14),
    p.RaceCreate(id=15, variant="triple-triangle"),
    p.RaceJoin(id=16, code="K7QX2"),
    p.RaceStart(id=17, race_id="20240610-a1b2c3"),
    p.RaceGet(id=18, race_id="20240610-a1b2c3", since=4),
    p.RaceTop(id=19, variant="fourteen-out", board="wins", date="2024-06-10"),
    p.RaceAround(id=20, variant="fourteen-out", k=3),
    p.RaceRank(id=21, variant="fourteen-out"),
    p.RaceRecent(id=22, variant="fourteen-out", limit=5),
    p.Hint(id=23, game_id="g1"),
    p.DailySeeds(id=24, date="2024-06-09"),
    p.GameExport(id=25, game_id="g1"),
    p.ProfileGet(id=40),
    p.ProfileGet(id=41, name="alice"),
    p.HistoryGet(id=42, variant="fourteen-out", before="2024-06-09", limit=7),
    p.RaceList(id=43, variant="fourteen-out"),
    p.RaceWatch(id=44, race_id="20240610-a1b2c3"),
    p.RaceUnwatch(id=45, race_id="20240610-a1b2c3"),
]

RACER = p.Racer(player_id="p_1", name="alice", cleared=12, score=12, moves=9)
RACE = p.RaceInfo(
    race_id="20240610-a1b2c3",
    variant="fourteen-out",
    status="countdown",
    size=2,
    racers=(RACER,),
    server_time=5,
    start_at=3005,
    ends_at=603005,
    game_id="r.20240610-a1b2c3.p_1",
    version=2,
)
RATING = p.RatingEntry(
    rank=1, player_id="p_1", name="alice", rating=1130, wins=1, losses=0, played=1, me=True
)

DAY = p.DayResult(
    variant="fourteen-out",
    date="2024-06-09",
    game_id="d.fourteen-out.2024-06-09.p_1",
    won=True,
    resigned=False,
    cleared=52,
    score=52,
    time_ms=61_000,
    moves=26,
    hints=0,
    finished_at=9,
    replayable=True,
    rank=3,
    total=41,
    percentile=95,
)
BOARD = p.SpectatorBoard(player_id="p_1", name="alice", seq=4, as_of=5005, view=VIEW)

SERVER_EXAMPLES: list[p.ServerMessage] = [
    p.Calendar(
        id=60,
        month="2024-06",
        today="2024-06-02",
        days=(
            p.CalendarDay(
                date="2024-06-01",
                catchup_open=True,
                variants=(
                    p.VariantDay(
                        variant="fourteen-out",
                        tiers=(
                            p.TierCell(tier="easy", state="won", catchup=True),
                            p.TierCell(tier="medium", state="lost"),
                        ),
                    ),
                ),
            ),
        ),
        crowns=1,
    ),
    p.Welcome(
        id=0,
        version=8,
        player_id="p_1",
        name="alice",
        server_time=1,
        variants=("fourteen-out",),
        daily=(
            p.DailyGame(
                variant="fourteen-out",
                game_id="t.hard.fourteen-out.2024-06-01.p_1",
                finished=False,
                tier="hard",
            ),
        ),
        tiers=(
            p.DayTier(variant="fourteen-out", tier="hard", state="playing", par=30),
            p.DayTier(variant="fourteen-out", tier="expert", state="absent"),
        ),
    ),
    p.Welcome(
        id=0,
        version=3,
        player_id="p_1",
        name="alice",
        server_time=1,
        variants=("fourteen-out",),
        race=p.ActiveRace(
            race_id="20240610-a1b2c3",
            variant="fourteen-out",
            status="running",
            game_id="r.20240610-a1b2c3.p_1",
        ),
        daily=(
            p.DailyGame(
                variant="fourteen-out", game_id="d.fourteen-out.2024-06-10.p_1", finished=True
            ),
        ),
    ),
    p.Welcome(
        id=0,
        version=1,
        player_id="p_1",
        name="alice",
        token="tok_" + "x" * 20,
        server_time=1_718_000_000_000,
        variants=("fourteen-out", "klondike"),
    ),
    p.Welcome(id=0, version=1, player_id="p_1", name="alice", server_time=1, variants=()),
    p.Pong(id=2, server_time=5),
    p.TokenReply(id=40, player_id="abcDEF123_-x", token="tok_" + "x" * 28),
    p.SigninCodeReply(id=41, code="K7QM-4XHT", expires_at=1_718_000_300_000),
    p.RaceDeclined(id=45, race_id="20240610-0f1e2d3c4b5a"),
    p.RematchOffer(
        race_id="20240610-0f1e2d3c4b5a",
        rematch_of="20240610-a1b2c3d4e5f6",
        variant="fourteen-out",
        code="Q7KX2M",
        player_id="abcDEF123_-x",
        name="alice",
        expires_at=1_718_000_360_000,
    ),
    p.RematchDeclined(race_id="20240610-0f1e2d3c4b5a", player_id="abcDEF123_-y", name="bob"),
    p.GameState(
        id=3,
        game_id="g1",
        variant="klondike",
        date="2024-06-10",
        view=VIEW,
        seq=0,
        started_at=1,
        server_time=2,
        elapsed_ms=1,
        finished=False,
    ),
    p.GameState(
        id=3,
        game_id="g1",
        variant="klondike",
        date="2024-06-10",
        view={},
        seq=88,
        started_at=1,
        server_time=2,
        elapsed_ms=1,
        finished=True,
        result=RESULT,
    ),
    p.Moved(
        id=5,
        game_id="g1",
        move="3 7",
        seq=1,
        events=({"kind": "move", "from": 3, "to": 7}, {}),
        view=VIEW,
        elapsed_ms=3000,
        finished=False,
    ),
    p.Finished(id=9, game_id="g1", result=RESULT),
    p.Leaderboard(
        id=10,
        variant="klondike",
        date="2024-06-10",
        kind="daily",
        total=1,
        offset=0,
        entries=(ENTRY, ENTRY),
    ),
    p.PlayerRank(id=12, variant="klondike", date="2024-06-10", total=0),
    p.PlayerRank(id=12, variant="klondike", date="2024-06-10", total=7, entry=ENTRY),
    p.ErrorReply(code="not_found", message="no such game", id=4),
    p.ErrorReply(code=p.ErrorCode.BAD_REQUEST, message=""),
    p.Shutdown(reason="deploy", retry_after_ms=5000),
    p.GameFinished(
        game_id="d.triple-easthaven.2024-06-10.p_7Qx2",
        seq=212,
        result=p.GameResult(
            won=False,
            over=True,
            cleared=131,
            score=131,
            time_ms=1_250_000,
            moves=212,
            resigned=False,
        ),
    ),
    p.RaceQueued(id=13, variant="fourteen-out", size=4, waiting=1),
    p.RaceLeft(id=14),
    p.RaceRoom(id=15, race=RACE, events=({"v": 1, "kind": "joined"},)),
    p.RaceUpdate(race=RACE),
    p.RaceEvent(race_id="20240610-a1b2c3", version=3, event={"kind": "progress", "moves": 4}),
    p.RaceStarted(
        race_id="20240610-a1b2c3",
        game_id="r.20240610-a1b2c3.p_1",
        view=VIEW,
        start_at=3005,
        ends_at=603005,
        server_time=3006,
    ),
    p.RaceBoard(
        id=19, variant="fourteen-out", board="rating", total=1, offset=0, entries=(RATING,)
    ),
    p.RaceRankReply(id=21, variant="fourteen-out", board="rating", total=1, entry=RATING),
    p.RaceHistory(
        id=22,
        variant="fourteen-out",
        races=(
            p.RaceSummary(
                race_id="20240610-a1b2c3",
                variant="fourteen-out",
                finished_at=9,
                place=1,
                racers=2,
                won=True,
                rating_before=1000,
                rating_after=1130,
            ),
        ),
    ),
    p.HintReply(id=23, game_id="g1", move="3 7", hints=1, penalty_ms=30000),
    p.SeedsReply(id=24, date="2024-06-09", seeds={"fourteen-out": 42}),
    p.ExportReply(
        id=25,
        game_id="g1",
        variant="fourteen-out",
        seed=42,
        moves=("3 7", "undo"),
        date="2024-06-09",
    ),
    p.Profile(
        id=40,
        player_id="p_1",
        name="alice",
        joined=1,
        me=True,
        daily=(
            p.DailyStats(
                variant="fourteen-out",
                played=3,
                won=2,
                streak=2,
                longest_streak=3,
                won_streak=1,
                longest_won_streak=2,
                best_time_ms=61_000,
                best_score=52,
                percentile=80,
                last_played="2024-06-10",
            ),
        ),
        races=(
            p.RaceStats(
                variant="fourteen-out", rating=1130, wins=1, losses=0, played=1, forfeits=0
            ),
        ),
        recent=(DAY,),
    ),
    p.HistoryPage(
        id=42, player_id="p_1", variant="fourteen-out", entries=(DAY,), next_before="2024-06-09"
    ),
    p.RaceListReply(
        id=43,
        races=(
            p.RaceListing(
                race_id="20240610-a1b2c3",
                variant="fourteen-out",
                status="running",
                racers=(RACER,),
                spectators=2,
                start_at=3005,
                ends_at=603005,
            ),
        ),
    ),
    p.RaceWatching(
        id=44,
        race=RACE,
        boards=(BOARD, p.SpectatorBoard(player_id="p_2", name="bob", seq=0, as_of=3005)),
        spectators=1,
        delay_ms=3000,
    ),
    p.RaceUnwatched(id=45, race_id="20240610-a1b2c3"),
    p.RaceSpectate(race_id="20240610-a1b2c3", board=BOARD),
    p.RaceSpectators(race_id="20240610-a1b2c3", count=0),
    p.DevicesReply(
        id=70,
        devices=(
            p.DeviceInfo(
                device="original",
                name="",
                how="original",
                signed_in_at=1,
                current=False,
                can_revoke=False,
            ),
            p.DeviceInfo(
                device="Xq3-k9Zp",
                name="Firefox on Linux",
                how="code",
                signed_in_at=2,
                current=True,
                can_revoke=False,
            ),
        ),
        trusted_at=604_800_002,
    ),
    p.DeviceSignedIn(device="Xq3-k9Zp", name="phone", signed_in_at=2),
]


def test_examples_cover_every_message_type() -> None:
    assert {type(m) for m in CLIENT_EXAMPLES} == set(p.CLIENT_MESSAGES.values())
    assert {type(m) for m in SERVER_EXAMPLES} == set(p.SERVER_MESSAGES.values())


@pytest.mark.parametrize("binary", [True, False], ids=["msgpack", "json"])
@pytest.mark.parametrize("msg", CLIENT_EXAMPLES, ids=lambda m: m.type)
def test_request_round_trip(msg: p.ClientMessage, binary: bool) -> None:
    frame = p.encode_request(msg, binary)
    assert isinstance(frame, bytes if binary else str)
    assert p.decode(frame) == msg


@pytest.mark.parametrize("binary", [True, False], ids=["msgpack", "json"])
@pytest.mark.parametrize("msg", SERVER_EXAMPLES, ids=lambda m: m.type)
def test_server_round_trip(msg: p.ServerMessage, binary: bool) -> None:
    frame = p.encode(msg, binary)
    assert isinstance(frame, bytes if binary else str)
    assert p.decode_server(frame) == msg


@pytest.mark.parametrize("msg", [*CLIENT_EXAMPLES, *SERVER_EXAMPLES], ids=lambda m: m.type)
def test_msgpack_and_json_carry_the_same_map(msg: Struct) -> None:
    if isinstance(msg, p.ClientMessage):
        packed, text = p.encode_request(msg, True), p.encode_request(msg, False)
    else:
        assert isinstance(msg, p.ServerMessage)
        packed, text = p.encode(msg, True), p.encode(msg, False)
    assert msgpack.unpackb(packed) == json.loads(text)


def test_envelope_layout() -> None:
    wire = json.loads(p.encode_request(p.Move(id=7, game_id="g1", move="d"), False))
    assert list(wire) == ["type", "id", "game_id", "move"]  # None fields are omitted
    wire = json.loads(p.encode(p.ErrorReply(code="internal", message="x", id=3), False))
    assert list(wire)[:2] == ["type", "id"]
    assert "id" not in json.loads(p.encode(p.ErrorReply(code="internal", message="x"), False))
    assert "id" not in json.loads(p.encode(p.Shutdown(reason="", retry_after_ms=0), False))


def test_hello_bytes_are_stable() -> None:
    # The same bytes are printed in docs/protocol.md.
    frame = p.encode_request(p.Hello(id=1, versions=(1,), name="alice"), True)
    assert (
        frame.hex()
        == "84a474797065a568656c6c6fa2696401a876657273696f6e739101a46e616d65a5616c696365"
    )


def test_null_means_absent_for_optional_fields() -> None:
    frame = '{"type":"move","id":1,"game_id":"g","move":"d","expected_seq":null}'
    assert p.decode(frame) == p.Move(id=1, game_id="g", move="d")
    frame = '{"type":"rank","id":1,"variant":"k","date":"2024-01-01","total":0,"entry":null}'
    assert p.decode_server(frame) == p.PlayerRank(id=1, variant="k", date="2024-01-01", total=0)


def test_defaults_apply_when_absent() -> None:
    msg = p.decode('{"type":"leaderboard.around","id":1,"variant":"k"}')
    assert msg == p.LeaderboardAround(id=1, variant="k", date=None, k=5)
    msg = p.decode('{"type":"leaderboard.top","id":1,"variant":"k"}')
    assert isinstance(msg, p.LeaderboardTop)
    assert (msg.offset, msg.limit) == (0, 20)


def test_bytearray_and_memoryview_frames() -> None:
    frame = p.encode_request(p.Ping(id=3), True)
    assert p.decode(bytearray(frame)) == p.Ping(id=3)
    assert p.decode(memoryview(frame)) == p.Ping(id=3)


def test_non_ascii_text_survives() -> None:
    msg = p.Shutdown(reason="maintenance – back soon ☕", retry_after_ms=1)
    assert p.decode_server(p.encode(msg, False)) == msg
    assert p.decode_server(p.encode(msg, True)) == msg


@given(
    msg=st.sampled_from(sorted(p.CLIENT_MESSAGES.values(), key=lambda c: c.type)).flatmap(structs),
    binary=st.booleans(),
)
def test_any_valid_request_round_trips(msg: p.ClientMessage, binary: bool) -> None:
    assert p.decode(p.encode_request(msg, binary)) == msg


@given(
    msg=st.sampled_from(sorted(p.SERVER_MESSAGES.values(), key=lambda c: c.type)).flatmap(structs),
    binary=st.booleans(),
)
def test_any_valid_server_message_round_trips(msg: p.ServerMessage, binary: bool) -> None:
    assert p.decode_server(p.encode(msg, binary)) == msg


@pytest.mark.parametrize("binary", [True, False])
def test_unvalidated_encoding_writes_the_same_frames(binary: bool) -> None:
    for msg in SERVER_EXAMPLES:
        assert p.encode(msg, binary, validate=False) == p.encode(msg, binary)


@given(
    msg=st.sampled_from(sorted(p.SERVER_MESSAGES.values(), key=lambda c: c.type)).flatmap(structs),
    binary=st.booleans(),
)
def test_any_server_message_encodes_the_same_unvalidated(
    msg: p.ServerMessage, binary: bool
) -> None:
    assert p.encode(msg, binary, validate=False) == p.encode(msg, binary)
