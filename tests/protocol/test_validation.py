"""Every validation rule refuses with the right code, in msgpack and in JSON."""

from __future__ import annotations

import json

import msgpack  # type: ignore[import-untyped]
import pytest

import protocol as p

MOVE = {"type": "move", "id": 7, "game_id": "g-1", "move": "3 7"}
HELLO = {"type": "hello", "id": 7, "versions": [1], "name": "alice"}


def with_(base: dict[str, object], **changes: object) -> dict[str, object]:
    out = dict(base)
    for key, value in changes.items():
        if value is DROP:
            out.pop(key, None)
        else:
            out[key] = value
    return out


DROP = object()


def both(obj: object) -> list[bytes | str]:
    return [msgpack.packb(obj, use_bin_type=True), json.dumps(obj)]


def refused(frame: bytes | str, code: str, id: int | None = None) -> p.ProtocolError:
    with pytest.raises(p.ProtocolError) as info:
        p.decode(frame)
    assert info.value.code == code, info.value
    assert info.value.id == id
    return info.value


CASES: list[tuple[str, dict[str, object], str, int | None]] = [
    # envelope
    ("missing id", with_(MOVE, id=DROP), "bad_request", None),
    ("id as string", with_(MOVE, id="7"), "bad_request", None),
    ("id as bool", with_(MOVE, id=True), "bad_request", None),
    ("id as float", with_(MOVE, id=7.0), "bad_request", None),
    ("id negative", with_(MOVE, id=-1), "bad_request", None),
    ("id too big", with_(MOVE, id=2**31), "bad_request", None),
    ("id null", with_(MOVE, id=None), "bad_request", None),
    ("missing type", with_(MOVE, type=DROP), "bad_request", 7),
    ("type not a string", with_(MOVE, type=5), "bad_request", 7),
    ("unknown type", with_(MOVE, type="move.fast"), "unknown_type", 7),
    ("server type sent by client", {"type": "welcome", "id": 7}, "unknown_type", 7),
    ("unknown field", with_(MOVE, colour="red"), "bad_request", 7),
    (
        "unknown field type",
        with_(MOVE, type="ping", game_id=DROP, move=DROP, x=1),
        "bad_request",
        7,
    ),
    # move
    ("missing game_id", with_(MOVE, game_id=DROP), "bad_request", 7),
    ("game_id null", with_(MOVE, game_id=None), "bad_request", 7),
    ("game_id empty", with_(MOVE, game_id=""), "bad_request", 7),
    ("game_id too long", with_(MOVE, game_id="g" * 129), "bad_request", 7),
    ("game_id bad char", with_(MOVE, game_id="g/1"), "bad_request", 7),
    ("game_id int", with_(MOVE, game_id=12), "bad_request", 7),
    ("move empty", with_(MOVE, move=""), "bad_request", 7),
    ("move too long", with_(MOVE, move="x" * 33), "bad_request", 7),
    ("move control char", with_(MOVE, move="3\n7"), "bad_request", 7),
    ("move non-ascii", with_(MOVE, move="3→7"), "bad_request", 7),
    ("move list", with_(MOVE, move=["3", "7"]), "bad_request", 7),
    ("expected_seq negative", with_(MOVE, expected_seq=-1), "bad_request", 7),
    ("expected_seq bool", with_(MOVE, expected_seq=False), "bad_request", 7),
    ("expected_seq float", with_(MOVE, expected_seq=1.5), "bad_request", 7),
    ("expected_seq string", with_(MOVE, expected_seq="3"), "bad_request", 7),
    ("expected_seq huge", with_(MOVE, expected_seq=2**53), "bad_request", 7),
    # hello
    ("versions empty", with_(HELLO, versions=[]), "bad_request", 7),
    ("versions too many", with_(HELLO, versions=[1] * 17), "bad_request", 7),
    ("versions zero", with_(HELLO, versions=[0]), "bad_request", 7),
    ("versions bool", with_(HELLO, versions=[True]), "bad_request", 7),
    ("versions not a list", with_(HELLO, versions=1), "bad_request", 7),
    ("versions map", with_(HELLO, versions={"1": 1}), "bad_request", 7),
    ("neither name nor token", with_(HELLO, name=DROP), "bad_request", 7),
    ("both name and token", with_(HELLO, token="a" * 16), "bad_request", 7),
    ("name too short", with_(HELLO, name="al"), "invalid_name", 7),
    ("name too long", with_(HELLO, name="a" * 21), "invalid_name", 7),
    ("name with space", with_(HELLO, name="al ice"), "invalid_name", 7),
    ("name non-ascii letter", with_(HELLO, name="alicé"), "invalid_name", 7),
    ("name not a string", with_(HELLO, name=123), "bad_request", 7),
    ("token too short", with_(HELLO, name=DROP, token="a" * 15), "bad_request", 7),
    ("token too long", with_(HELLO, name=DROP, token="a" * 129), "bad_request", 7),
    ("token padded", with_(HELLO, name=DROP, token="a" * 16 + "="), "bad_request", 7),
    ("token plus sign", with_(HELLO, name=DROP, token="a" * 15 + "+"), "bad_request", 7),
    # daily.start / leaderboards
    (
        "variant uppercase",
        {"type": "daily.start", "id": 7, "variant": "Klondike"},
        "bad_request",
        7,
    ),
    ("variant digit first", {"type": "daily.start", "id": 7, "variant": "1k"}, "bad_request", 7),
    ("variant too long", {"type": "daily.start", "id": 7, "variant": "k" * 33}, "bad_request", 7),
    ("variant missing", {"type": "daily.start", "id": 7}, "bad_request", 7),
    *(
        (
            f"top {field}={value!r}",
            {"type": "leaderboard.top", "id": 7, "variant": "k", field: value},
            "bad_request",
            7,
        )
        for field, value in [
            ("limit", 0),
            ("limit", 101),
            ("limit", True),
            ("limit", None),
            ("offset", -1),
            ("offset", 10_000_001),
            ("date", "2024-13-01"),
            ("date", "2023-02-29"),
            ("date", "2024-1-01"),
            ("date", "20240101"),
            ("date", "２０２４-01-01"),
            ("date", "2024-01-01T00:00"),
            ("date", 20240101),
        ]
    ),
    (
        "around k=0",
        {"type": "leaderboard.around", "id": 7, "variant": "k", "k": 0},
        "bad_request",
        7,
    ),
    (
        "around k=51",
        {"type": "leaderboard.around", "id": 7, "variant": "k", "k": 51},
        "bad_request",
        7,
    ),
    ("rank extra", {"type": "leaderboard.rank", "id": 7, "variant": "k", "k": 1}, "bad_request", 7),
    ("ping extra", {"type": "ping", "id": 7, "x": None}, "bad_request", 7),
]


@pytest.mark.parametrize("binary", [True, False], ids=["msgpack", "json"])
@pytest.mark.parametrize(("name", "obj", "code", "id"), CASES, ids=[c[0] for c in CASES])
def test_field_rule(
    name: str, obj: dict[str, object], code: str, id: int | None, binary: bool
) -> None:
    frame = both(obj)[0 if binary else 1]
    error = refused(frame, code, id)
    assert error.message


@pytest.mark.parametrize(
    "obj",
    [
        with_(MOVE, id=0),
        with_(MOVE, id=2**31 - 1),
        with_(MOVE, game_id="g" * 128),
        with_(MOVE, move="x" * 32),
        with_(MOVE, move=" ~"),
        with_(MOVE, expected_seq=0),
        with_(HELLO, versions=[1] * 8),
        with_(HELLO, name="a_-"),
        with_(HELLO, name="Z" * 20),
        with_(HELLO, name=DROP, token="a" * 128),
        {"type": "leaderboard.top", "id": 1, "variant": "k", "limit": 100, "offset": 10_000_000},
        {"type": "leaderboard.around", "id": 1, "variant": "k" * 32, "k": 50, "date": None},
    ],
)
def test_boundaries_accepted(obj: dict[str, object]) -> None:
    for frame in both(obj):
        assert p.decode(frame).type == obj["type"]


def test_error_message_names_the_field() -> None:
    error = refused(json.dumps(with_(MOVE, expected_seq=True)), "bad_request", 7)
    assert error.message == "move: expected_seq: expected an integer, got bool"
    error = refused(json.dumps(with_(HELLO, versions=[1, "2"])), "bad_request", 7)
    assert "versions[1]" in error.message
    error = refused(json.dumps(with_(MOVE, a=1, b=2)), "bad_request", 7)
    assert "'a'" in error.message and "'b'" in error.message


# --- frame-level rules -----------------------------------------------------------------------


@pytest.mark.parametrize("top", [[], [1, 2], 1, "ping", None, True, 1.5])
def test_top_level_must_be_a_map(top: object) -> None:
    for frame in both(top):
        assert "map" in refused(frame, "bad_request").message


@pytest.mark.parametrize(
    "frame",
    [b"", b"\xc1", b"\x81", b"\x81\xa4type", b"\xdd\xff\xff\xff\xff", b"\x80\x80", b"garbage"],
)
def test_garbage_bytes(frame: bytes) -> None:
    refused(frame, "bad_request")


@pytest.mark.parametrize("frame", ["", "{", "{'type': 'ping'}", "ping", '{"id":1}x', "\ufeff{}"])
def test_garbage_text(frame: str) -> None:
    refused(frame, "bad_request")


def test_invalid_utf8_in_text_frame() -> None:
    refused('{"type":"ping","id":1,"x":"\ud800"}', "bad_request")  # lone surrogate in the frame
    refused('{"type":"ping","id":1,"x":"\\ud800"}', "bad_request", 1)  # escaped lone surrogate
    refused('{"type":"ping","id":1,"\\udfff":1}', "bad_request", 1)  # ... as a key


def test_invalid_utf8_in_msgpack_string() -> None:
    refused(b"\x82\xa4type\xa4ping\xa2id\xa2\xff\xfe", "bad_request")
    refused(b"\x81\xa4typ\xe9\xa4ping", "bad_request")


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
def test_json_non_finite_numbers(number: str) -> None:
    refused('{"type":"ping","id":1,"x":' + number + "}", "bad_request")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_msgpack_non_finite_numbers(value: float) -> None:
    refused(msgpack.packb({"type": "ping", "id": 1, "x": value}), "bad_request", 1)


def test_huge_json_integer() -> None:
    huge = refused('{"type":"ping","id":1,"x":' + "9" * 5000 + "}", "bad_request")
    # In the protocol's words, not Python's ("Exceeds the limit (4300 digits) ... use
    # sys.set_int_max_str_digits()").
    assert huge.message == "invalid JSON: integer is out of range -2**63..2**64-1", huge
    refused('{"type":"ping","id":' + "9" * 5000 + "}", "bad_request")
    refused('{"type":"ping","id":1,"x":' + str(2**64) + "}", "bad_request", 1)
    refused('{"type":"ping","id":1,"x":' + str(-(2**63) - 1) + "}", "bad_request", 1)
    for edge in (str(2**64 - 1), str(-(2**63))):  # the longest texts in range pass the parser
        assert (
            "unknown field"
            in refused('{"type":"ping","id":1,"x":' + edge + "}", "bad_request", 1).message
        )


@pytest.mark.parametrize(
    ("frame", "says"),
    [
        (b"\x81\xa1a\xdd\xff\xff\xff\xff", "a length larger than the frame"),
        (msgpack.packb({"type": "ping", "id": 1})[:-1], "the frame ends inside a value"),
        (msgpack.packb({"type": "ping", "id": 1}) + b"\x00", "bytes after the end of the map"),
        (b"\xc1", "a byte that starts no msgpack value"),
    ],
)
def test_msgpack_faults_are_said_in_the_protocols_words(frame: bytes, says: str) -> None:
    """Not the library's ("4294967295 exceeds max_array_len(8)", "unpack(b) received extra
    data.", an empty message)."""
    assert refused(frame, "bad_request").message == f"invalid msgpack: {says}"


def nested(depth: int) -> dict[str, object]:
    """A map whose ``x`` holds lists so that the frame is ``depth`` containers deep."""
    value: object = 0
    for _ in range(depth - 1):
        value = [value]
    return {"type": "ping", "id": 1, "x": value}


def test_nesting_limit() -> None:
    for frame in both(nested(p.MAX_DEPTH)):  # within the limit: fails later, on the field
        assert "unknown field" in refused(frame, "bad_request", 1).message
    for frame in both(nested(p.MAX_DEPTH + 1)):
        assert "nested" in refused(frame, "bad_request", 1).message


def test_very_deep_nesting_does_not_blow_the_stack() -> None:
    refused("[" * 20_000 + "]" * 20_000, "bad_request")
    refused('{"a":' * 10_000 + "1" + "}" * 10_000, "bad_request")
    refused(b"\x91" * 20_000 + b"\xc0", "bad_request")
    refused(b"\x81\xa1a" * 20_000 + b"\xc0", "bad_request")


def test_msgpack_extension_types() -> None:
    refused(msgpack.packb({"type": "ping", "id": 1, "x": msgpack.ExtType(5, b"x")}), "bad_request")
    stamp = msgpack.Timestamp(1, 0)  # packed as an ext type, read back as a Timestamp value
    refused(msgpack.packb({"type": "ping", "id": 1, "x": stamp}), "bad_request", 1)


def test_msgpack_binary_values() -> None:
    frame = msgpack.packb({"type": "ping", "id": 1, "x": b"bin"}, use_bin_type=True)
    refused(frame, "bad_request", 1)
    frame = msgpack.packb({b"type": "ping", "id": 1}, use_bin_type=True)
    refused(frame, "bad_request", 1)  # a bytes key: the id is still read


def test_non_string_keys() -> None:
    """Refused once the frame is parsed, with its id (§6: carried whenever readable)."""
    key = refused(msgpack.packb({"type": "ping", "id": 1, 5: 1}), "bad_request", 1)
    assert key.message == "map keys must be strings, got integer", key
    refused(msgpack.packb({"type": "ping", "id": 1, "x": {None: 1}}), "bad_request", 1)
    refused(msgpack.packb({"type": "ping", "id": 1, 1.5: 1, True: 2}), "bad_request", 1)
    # An array as a key cannot be held in a map at all: refused while parsing, no id.
    refused(b"\x83\xa4type\xa4ping\xa2id\x01\x91\x01\x01", "bad_request")


def test_duplicate_keys() -> None:
    refused('{"type":"ping","id":1,"id":2}', "bad_request")
    refused(b"\x83\xa4type\xa4ping\xa2id\x01\xa2id\x02", "bad_request")


def test_trailing_data() -> None:
    refused(msgpack.packb({"type": "ping", "id": 1}) + b"\x00", "bad_request")
    refused('{"type":"ping","id":1} {}', "bad_request")


# --- size limit ------------------------------------------------------------------------------


def test_oversized_frames() -> None:
    big = {"type": "ping", "id": 1, "x": "a" * p.MAX_FRAME_SIZE}
    for frame in both(big):
        refused(frame, "too_large")
    refused("é" * (p.MAX_FRAME_SIZE // 2 + 1), "too_large")  # counted in UTF-8 bytes
    refused(b"\x00" * (p.MAX_FRAME_SIZE + 1), "too_large")


def test_frame_exactly_at_the_limit_is_accepted() -> None:
    frame = '{"type":"ping","id":1}'
    frame += " " * (p.MAX_FRAME_SIZE - len(frame))
    assert p.decode(frame) == p.Ping(id=1)


def test_configurable_limit() -> None:
    frame = p.encode_request(p.Ping(id=1), True)
    assert p.decode(frame, max_size=len(frame)) == p.Ping(id=1)
    with pytest.raises(p.FrameTooLarge):
        p.decode(frame, max_size=len(frame) - 1)
    with pytest.raises(p.FrameTooLarge):
        p.decode_server(p.encode(p.Pong(id=1, server_time=0), False), max_size=5)


def test_non_frame_argument_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        p.decode(123)  # type: ignore[arg-type]


# --- decode_server validates too ------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "code", "id"),
    [
        ({"type": "pong", "id": 1}, "bad_request", 1),
        ({"type": "pong", "server_time": 1}, "bad_request", None),
        ({"type": "pong", "id": 1, "server_time": -1}, "bad_request", 1),
        ({"type": "ping", "id": 1}, "unknown_type", 1),
        ({"type": "error", "code": "Bad Code", "message": "x"}, "bad_request", None),
        ({"type": "error", "code": "bad_request"}, "bad_request", None),
        ({"type": "shutdown", "id": 1, "reason": "", "retry_after_ms": 0}, "bad_request", 1),
        (
            {"type": "finished", "id": 1, "game_id": "g", "result": {"won": True}},
            "bad_request",
            1,
        ),
        (
            {
                "type": "game",
                "id": 1,
                "game_id": "g",
                "variant": "k",
                "date": "2024-01-01",
                "view": [],
                "seq": 0,
                "started_at": 0,
                "server_time": 0,
                "elapsed_ms": 0,
                "finished": False,
            },
            "bad_request",
            1,
        ),
        (
            {
                "type": "leaderboard",
                "id": 1,
                "variant": "k",
                "date": "2024-01-01",
                "kind": "daily",
                "total": 0,
                "offset": 0,
                "entries": [{}] * 101,
            },
            "bad_request",
            1,
        ),
    ],
)
def test_server_message_rules(obj: dict[str, object], code: str, id: int | None) -> None:
    for frame in both(obj):
        with pytest.raises(p.ProtocolError) as info:
            p.decode_server(frame)
        assert (info.value.code, info.value.id) == (code, id)


def test_nested_error_path() -> None:
    result = {
        "won": True,
        "over": True,
        "cleared": 1,
        "score": 1,
        "time_ms": 1,
        "moves": 1,
        "resigned": 1,
    }
    frame = json.dumps({"type": "finished", "id": 1, "game_id": "g", "result": result})
    with pytest.raises(p.BadRequest, match=r"result\.resigned: expected a bool, got integer"):
        p.decode_server(frame)
