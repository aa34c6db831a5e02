"""Exceptions raised by the server's services and stores; `connection.error_reply` maps them
(with the engine's and the protocol's) to error replies in one place.

Hierarchy; each class's ``code`` is its ``protocol.ErrorCode``::

    ServerError                 "internal"      base; never raised bare
    ├── StoreUnavailable        "unavailable"   Redis unreachable / embedded redis won't start
    ├── SolverBusy              "unavailable"   the hint queue of this process is full
    ├── RateLimited             "rate_limited"  a second hint while one is being computed
    ├── InvalidInput            "bad_request"   malformed name, move text too long, ...
    ├── NotFound                "not_found"     unknown / malformed game id, unknown player
    ├── NotStarted              "not_started"   a race move before the race's start time
    ├── LimitReached            "limit_reached" a per-account quota is used up (rooms per hour)
    ├── ReservedName            "invalid_name"  a reserved name (admin, system...)
    ├── TokenRevoked            "not_authenticated" the session's token was revoked meanwhile
    ├── InvalidCode             "invalid_code"  a sign-in code wrong, used or expired (v7)
    ├── NotTrusted              "not_trusted_yet" a code device on trial revokes (v9)
    └── Conflict                "conflict"      optimistic-concurrency failure (stale seq)
        ├── GameOver            "game_over"     the game is already finished
        │   └── DayOver         "day_over"      its UTC day is over (v5; else game_over)
        └── NameTaken           "name_taken"    name in use (compared casefolded)
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar, ParamSpec, TypeVar

import redis.exceptions

from protocol import ErrorCode

__all__ = [
    "Conflict",
    "DayOver",
    "GameOver",
    "InvalidCode",
    "InvalidInput",
    "LimitReached",
    "NameTaken",
    "NotFound",
    "NotStarted",
    "RateLimited",
    "ReservedName",
    "ServerError",
    "SolverBusy",
    "StoreUnavailable",
    "TokenRevoked",
    "is_outage",
    "raise_if_cancelled",
    "translate_redis_errors",
]


class ServerError(Exception):
    """Base class of all expected server-side failures."""

    code: ClassVar[ErrorCode] = ErrorCode.INTERNAL


class StoreUnavailable(ServerError):
    """The backing Redis cannot be reached (or failed to start)."""

    code: ClassVar[ErrorCode] = ErrorCode.UNAVAILABLE


class SolverBusy(ServerError):
    """Too many hints wait for the solver in this process (``--hint-queue-max``)."""

    code: ClassVar[ErrorCode] = ErrorCode.UNAVAILABLE


class RateLimited(ServerError):
    """The player asked again while the same work is still being done for them."""

    code: ClassVar[ErrorCode] = ErrorCode.RATE_LIMITED


class InvalidInput(ServerError):
    """Input rejected by the storage layer's own sanity checks."""

    code: ClassVar[ErrorCode] = ErrorCode.BAD_REQUEST


class NotFound(ServerError):
    """The referenced game or player does not exist (or the id is malformed)."""

    code: ClassVar[ErrorCode] = ErrorCode.NOT_FOUND


class NotStarted(ServerError):
    """A move in a race game before the race has started."""

    code: ClassVar[ErrorCode] = ErrorCode.NOT_STARTED


class TokenRevoked(ServerError):
    """The session's token was replaced or revoked meanwhile (``not_authenticated``)."""

    code: ClassVar[ErrorCode] = ErrorCode.NOT_AUTHENTICATED


class InvalidCode(ServerError):
    """A sign-in code that is wrong, used already or expired (`server.players.signin`)."""

    code: ClassVar[ErrorCode] = ErrorCode.INVALID_CODE


class LimitReached(ServerError):
    """A per-account quota is used up (private rooms created per hour). Version 5 clients
    get ``limit_reached``; older ones ``rate_limited`` (`server.handlers.races`)."""

    code: ClassVar[ErrorCode] = ErrorCode.LIMIT_REACHED


class NotTrusted(ServerError):
    """A device signed in by a code is on trial (`server.players.devices`): it may not revoke
    older devices nor every session. Version 9 clients get ``not_trusted_yet``; versions 5
    to 8 ``limit_reached`` (`server.handlers.account`)."""

    code: ClassVar[ErrorCode] = ErrorCode.NOT_TRUSTED_YET


class ReservedName(ServerError):
    """The name is reserved (`server.players.names.RESERVED`)."""

    code: ClassVar[ErrorCode] = ErrorCode.INVALID_NAME


class Conflict(ServerError):
    """A write lost a race: the caller's view (``expected_seq``) is stale."""

    code: ClassVar[ErrorCode] = ErrorCode.CONFLICT

    def __init__(self, message: str, *, current_seq: int | None = None) -> None:
        super().__init__(message)
        self.current_seq = current_seq


class GameOver(Conflict):
    """The game is finished; no further moves are accepted."""

    code: ClassVar[ErrorCode] = ErrorCode.GAME_OVER


class DayOver(GameOver):
    """The daily game's UTC day is over: it takes no more writes (docs/fairplay.md). Sent as
    ``day_over`` to version 5 connections, as ``game_over`` to older ones
    (`server.transport.connection.error_reply`)."""

    code: ClassVar[ErrorCode] = ErrorCode.DAY_OVER


class NameTaken(Conflict):
    """Another player already uses this name (case-insensitively)."""

    code: ClassVar[ErrorCode] = ErrorCode.NAME_TAKEN


P = ParamSpec("P")
R = TypeVar("R")

# Connection-level failures only: script/logic errors (ResponseError) are bugs, not outages.
# On a cluster also: the slot's master is down (CLUSTERDOWN, no slot owner known), a slot
# mid-migration (TRYAGAIN), redirections that never settle (ClusterError).
_OUTAGES: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.BusyLoadingError,
    redis.exceptions.ClusterError,
    redis.exceptions.TryAgainError,
    redis.exceptions.SlotNotCoveredError,
)


def raise_if_cancelled() -> None:
    """Re-raise a cancellation that a library turned into an ordinary exception (redis-py can,
    when a read is cancelled): a background loop that caught it must stop, not go on forever
    and hold up the shutdown that cancelled it."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def is_outage(exc: BaseException) -> bool:
    """True for a connection-level Redis failure (not a script or logic error)."""
    return isinstance(exc, _OUTAGES)


def translate_redis_errors(
    fn: Callable[P, Coroutine[Any, Any, R]],
) -> Callable[P, Coroutine[Any, Any, R]]:
    """Decorate an async store method so Redis outages surface as ``StoreUnavailable``."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except _OUTAGES as exc:
            raise StoreUnavailable(f"redis unavailable: {exc}") from exc

    return wrapper
