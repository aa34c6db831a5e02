"""Encoding refuses invalid messages (the sender's bug) with EncodeError."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

import protocol as p
from protocol.events import Reply
from protocol.fields import MAX_SAFE_INT


def game(**changes: Any) -> p.GameState:
    """A game state with `changes`: Any, as they break its field types on purpose (values
    the codec must refuse, e.g. ``game_id=None``)."""
    fields: dict[str, Any] = dict(
        id=1,
        game_id="g1",
        variant="klondike",
        date="2024-06-10",
        view={},
        seq=0,
        started_at=0,
        server_time=0,
        elapsed_ms=0,
        finished=False,
    )
    fields.update(changes)
    return p.GameState(**fields)


@pytest.mark.parametrize(
    "msg",
    [
        game(seq=-1),
        game(seq=True),
        game(elapsed_ms=MAX_SAFE_INT + 1),
        game(date="2024-02-30"),
        game(variant="Klondike"),
        game(view={"x": float("nan")}),
        game(view={"x": {1, 2}}),
        game(view={1: "x"}),
        game(view={"x": b"bytes"}),
        game(view={"x": "\ud800"}),
        game(view=[1]),
        game(game_id=None),
        game(result={"won": True}),
        p.Leaderboard(
            id=1,
            variant="k",
            date="2024-01-01",
            kind="daily",
            total=0,
            offset=0,
            entries=(None,),  # type: ignore[arg-type]  # the sender's bug under test
        ),
        p.ErrorReply(code="x" * 33, message=""),
        p.ErrorReply(code="internal", message="m" * 1025),
        p.Welcome(id=1, version=1, player_id="p", name="no", server_time=0, variants=()),
        p.Shutdown(reason="r", retry_after_ms=-5),
    ],
)
def test_invalid_server_messages(msg: p.ServerMessage) -> None:
    for binary in (True, False):
        with pytest.raises(p.EncodeError) as info:
            p.encode(msg, binary)
        assert info.value.code == "internal"


def test_encode_error_keeps_the_request_id() -> None:
    with pytest.raises(p.EncodeError) as info:
        p.encode(game(id=42, seq=-1), False)
    assert info.value.id == 42
    assert "seq" in info.value.message


def test_invalid_requests() -> None:
    with pytest.raises(p.EncodeError):
        p.encode_request(p.Hello(id=1, versions=(1,)), True)  # neither name nor token
    with pytest.raises(p.EncodeError):
        p.encode_request(p.Move(id=-1, game_id="g", move="d"), True)


def test_nesting_limit_on_encode() -> None:
    view: object = 0
    for _ in range(p.MAX_DEPTH - 1):  # type + view map + lists
        view = [view]
    with pytest.raises(p.EncodeError):
        p.encode(game(view={"x": view}), True)
    ok: object = 0
    for _ in range(p.MAX_DEPTH - 2):
        ok = [ok]
    assert p.decode_server(p.encode(game(view={"x": ok}), True)) == game(view={"x": ok})


def test_size_limit_on_encode() -> None:
    msg = game(view={"blob": "x" * p.MAX_FRAME_SIZE})
    with pytest.raises(p.EncodeError, match="larger"):
        p.encode(msg, True)
    assert isinstance(p.encode(msg, False, max_size=2 * p.MAX_FRAME_SIZE), str)


def test_abstract_bases_are_not_encodable() -> None:
    with pytest.raises(p.EncodeError):
        p.encode(Reply(id=1), True)

    @dataclass(frozen=True, kw_only=True)
    class Unregistered(p.Pong):
        pass

    with pytest.raises(p.EncodeError):
        p.encode(Unregistered(id=1, server_time=0), True)


def test_error_reply_from_error() -> None:
    reply = p.ErrorReply.from_error(p.BadRequest("bad", id=5))
    assert reply == p.ErrorReply(code="bad_request", message="bad", id=5)
    reply = p.ErrorReply.from_error(p.ProtocolError("gone", code=p.ErrorCode.NOT_FOUND), id=9)
    assert reply == p.ErrorReply(code="not_found", message="gone", id=9)
    long = p.ErrorReply.from_error(p.ProtocolError("m" * 5000))
    assert long.code == "internal" and len(long.message) == 1024
    assert p.decode_server(p.encode(long, True)) == long


def test_decode_error_becomes_an_encodable_reply() -> None:
    with pytest.raises(p.ProtocolError) as info:
        p.decode('{"type":"nope","id":11}')
    reply = p.ErrorReply.from_error(info.value)
    assert p.encode(reply, False) == (
        '{"type":"error","id":11,"code":"unknown_type","message":"unknown message type \'nope\'"}'
    )


def test_str_enum_values_go_out_as_plain_strings() -> None:
    frame = p.encode(p.ErrorReply(code=p.ErrorCode.GAME_OVER, message="done", id=1), False)
    assert '"code":"game_over"' in frame


def test_unvalidated_encoding_still_refuses_what_cannot_be_encoded() -> None:
    bad = p.Pong(id=1, server_time=object())  # type: ignore[arg-type]
    with pytest.raises(p.EncodeError):
        p.encode(bad, True, validate=False)
    with pytest.raises(p.EncodeError):
        p.encode(bad, False, validate=False)
    # The codec's one msgpack packer is left clean by a failure: the next frame is whole.
    half = p.Moved(
        id=3, game_id="g", move="m", seq=1, events=({"x": object()},), elapsed_ms=0, finished=False
    )
    with pytest.raises(p.EncodeError):
        p.encode(half, True, validate=False)
    good = p.Pong(id=2, server_time=5)
    assert p.encode(good, True, validate=False) == p.encode(good, True)
    assert p.decode_server(p.encode(good, True, validate=False)) == good
