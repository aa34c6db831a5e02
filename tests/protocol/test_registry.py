"""The message tables, the error codes and the package's boundaries."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from typing import Annotated

import pytest

import protocol as p
from protocol import messages
from protocol.fields import GameId, Int
from protocol.schema import Struct, fields_of


@pytest.mark.parametrize(
    "cls",
    [*p.CLIENT_MESSAGES.values(), *p.SERVER_MESSAGES.values(), p.GameResult, p.LeaderboardEntry],
    ids=lambda c: c.__name__,
)
def test_every_class_is_a_frozen_kw_only_dataclass(cls: type[Struct]) -> None:
    assert "__dataclass_fields__" in cls.__dict__
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen
    assert dataclasses.is_dataclass(cls)
    assert all(f.kw_only for f in dataclasses.fields(cls))
    assert fields_of(cls)


def test_tables_are_keyed_by_wire_type() -> None:
    for table in (p.CLIENT_MESSAGES, p.SERVER_MESSAGES):
        for name, cls in table.items():
            assert cls.type == name
    assert set(p.CLIENT_MESSAGES) == {
        "hello",
        "ping",
        "daily.start",
        "game.get",
        "move",
        "undo",
        "resign",
        "finish",
        "leaderboard.top",
        "leaderboard.around",
        "leaderboard.rank",
        "race.queue",
        "race.leave",
        "race.create",
        "race.join",
        "race.start",
        "race.get",
        "race.top",
        "race.around",
        "race.rank",
        "race.recent",
        "hint",
        "daily.seeds",
        "game.export",
        "profile.get",
        "history.get",
        "race.list",
        "race.watch",
        "race.unwatch",
        "token.rotate",
        "token.revoke_all",
        "signin.code",
        "signin.redeem",
        "free.start",
        "race.rematch",
        "race.decline",
        "calendar.get",
        "devices",
        "device.revoke",
    }
    assert set(p.SERVER_MESSAGES) == {
        "calendar",
        "welcome",
        "pong",
        "game",
        "moved",
        "finished",
        "leaderboard",
        "rank",
        "error",
        "shutdown",
        "game.finished",
        "race.queued",
        "race.left",
        "race.room",
        "race.update",
        "race.event",
        "race.started",
        "race.board",
        "race.rank",
        "race.history",
        "hint",
        "daily.seeds",
        "game.export",
        "profile",
        "history",
        "race.list",
        "race.watching",
        "race.unwatched",
        "race.spectate",
        "race.spectators",
        "token",
        "signin.code",
        "race.declined",
        "race.rematch_offer",
        "race.rematch_declined",
        "devices",
        "device.signed_in",
    }
    with pytest.raises(TypeError):
        p.CLIENT_MESSAGES["x"] = p.Ping  # type: ignore[index]


def test_replies_have_ids_and_pushes_do_not() -> None:
    for cls in p.SERVER_MESSAGES.values():
        names = {f.name for f in fields_of(cls)}
        assert ("id" in names) == (not issubclass(cls, p.Push))
        assert issubclass(cls, p.Reply) or cls is p.ErrorReply or issubclass(cls, p.Push)
    assert issubclass(p.Shutdown, p.Push)


def test_adding_a_message_is_one_class() -> None:
    try:

        @dataclasses.dataclass(frozen=True, kw_only=True)
        class Rename(p.ClientMessage, type="player.rename"):
            game_id: GameId
            n: Annotated[int, Int(1, 3)] = 1

        assert p.CLIENT_MESSAGES["player.rename"] is Rename
        msg = p.decode('{"type":"player.rename","id":3,"game_id":"g"}')
        assert msg == Rename(id=3, game_id="g", n=1)
        again = p.decode(p.encode_request(Rename(id=3, game_id="g", n=3), True))
        assert isinstance(again, Rename) and again.n == 3
        with pytest.raises(p.BadRequest):
            p.decode('{"type":"player.rename","id":3,"game_id":"g","n":4}')
    finally:
        messages._client_messages.pop("player.rename", None)


def test_duplicate_or_malformed_type_is_refused() -> None:
    with pytest.raises(TypeError, match="already used"):

        class Again(p.ClientMessage, type="ping"):
            pass

    with pytest.raises(TypeError, match="bad message type"):

        class Bad(p.ClientMessage, type="Bad Type"):
            pass

    messages._client_messages.pop("Bad Type", None)


def test_declarations_are_checked() -> None:
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class NoSpec(Struct):
        x: int

    with pytest.raises(TypeError, match="Annotated"):
        fields_of(NoSpec)

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class BadDefault(Struct):
        x: GameId | None = "g"

    with pytest.raises(TypeError, match="defaults to None"):
        fields_of(BadDefault)

    class NotADataclass(p.Pong):
        pass

    with pytest.raises(TypeError, match="decorated"):
        fields_of(NotADataclass)


def test_messages_are_immutable() -> None:
    msg = p.Ping(id=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        msg.id = 2  # type: ignore[misc]


def test_error_codes() -> None:
    assert {
        "bad_request",
        "unknown_type",
        "not_started",
        "unsupported_version",
        "not_authenticated",
        "illegal_move",
        "not_found",
        "conflict",
        "rate_limited",
        "unavailable",
        "too_large",
        "internal",
        "name_taken",
        "invalid_name",
        "game_over",
        "limit_reached",
        "day_over",
        "invalid_code",
        "not_trusted_yet",
    } == p.ERROR_CODES
    assert p.BadRequest("x").code == "bad_request"
    assert p.FrameTooLarge("x").code == "too_large"
    assert p.UnknownType("x").code == "unknown_type"
    assert p.InvalidName("x").code == "invalid_name"
    assert p.UnsupportedVersion("x").code == "unsupported_version"
    assert p.EncodeError("x").code == "internal"
    assert p.ProtocolError("x").code == "internal"
    err = p.ProtocolError("late", code=p.ErrorCode.CONFLICT, id=3)
    assert (err.code, err.message, err.id, str(err)) == ("conflict", "late", 3, "late")
    assert type(err.code) is str
    for cls in (p.FrameTooLarge, p.UnknownType, p.InvalidName):
        assert issubclass(cls, p.BadRequest)


def test_validate_name() -> None:
    assert p.validate_name("Alice_1-x") == "Alice_1-x"
    for bad in ["ab", "a" * 21, "a b", "ali\u00e7e", "ali\n", "", "ａｂｃ", "abc\u0000"]:
        with pytest.raises(p.InvalidName):
            p.validate_name(bad)
    with pytest.raises(p.BadRequest):
        p.validate_name(None)


def test_package_does_no_io_and_stands_alone() -> None:
    code = (
        "import sys, protocol\n"
        "bad = {'asyncio', 'socket', 'engine', 'server', 'websockets', 'aiohttp', 'redis'}\n"
        "print(sorted(bad & set(sys.modules)))\n"
    )
    # Without `make coverage`'s measurement, which brings modules of its own (socket).
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_PROCESS_")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "[]"
