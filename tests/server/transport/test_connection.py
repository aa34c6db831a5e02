"""Every exception a handler can raise maps to one error code, in one place: a Redis
outage is `unavailable` even where no store translated it."""

from __future__ import annotations

import pytest
import redis.exceptions

import protocol as p
from engine import IllegalMove, OutOfSync, UnknownVariant
from server.runtime.errors import (
    Conflict,
    GameOver,
    InvalidInput,
    NameTaken,
    NotFound,
    NotStarted,
    StoreUnavailable,
)
from server.transport.connection import error_reply


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (IllegalMove("3 7", "no such pile"), p.ErrorCode.ILLEGAL_MOVE),
        (UnknownVariant("klondike"), p.ErrorCode.NOT_FOUND),
        (StoreUnavailable("down"), p.ErrorCode.UNAVAILABLE),
        (InvalidInput("long"), p.ErrorCode.BAD_REQUEST),
        (NotFound("gone"), p.ErrorCode.NOT_FOUND),
        (NotStarted("wait"), p.ErrorCode.NOT_STARTED),
        (Conflict("stale"), p.ErrorCode.CONFLICT),
        (GameOver("over"), p.ErrorCode.GAME_OVER),
        (NameTaken("alice"), p.ErrorCode.NAME_TAKEN),
        (p.BadRequest("bad"), p.ErrorCode.BAD_REQUEST),
    ],
)
def test_expected_failures_keep_their_code_and_message(exc: Exception, code: str) -> None:
    reply = error_reply(exc, 7)
    assert (reply.code, reply.id) == (code, 7)
    assert str(exc)[:50] in reply.message or reply.message == "bad"


@pytest.mark.parametrize("exc", [OutOfSync("copy differs"), KeyError("x"), RuntimeError()])
def test_anything_else_is_internal_and_says_nothing_more(exc: Exception) -> None:
    reply = error_reply(exc, None)
    assert reply.code == p.ErrorCode.INTERNAL
    assert reply.message == "internal server error"


@pytest.mark.parametrize(
    "exc",
    [
        redis.exceptions.ConnectionError("Error 111 connecting to redis.sock"),
        redis.exceptions.TimeoutError("Timeout reading from socket"),
        redis.exceptions.BusyLoadingError("Redis is loading the dataset in memory"),
        redis.exceptions.ClusterError("TTL exhausted"),
        redis.exceptions.TryAgainError("TRYAGAIN"),
        redis.exceptions.SlotNotCoveredError("slot 1 not covered"),
    ],
)
def test_an_untranslated_redis_outage_is_unavailable(exc: Exception) -> None:
    reply = error_reply(exc, 9)
    assert (reply.code, reply.id) == (p.ErrorCode.UNAVAILABLE, 9)


def test_a_redis_script_error_is_still_a_bug() -> None:
    reply = error_reply(redis.exceptions.ResponseError("ERR user_script:1: oops"), 9)
    assert reply.code == p.ErrorCode.INTERNAL
