"""Exceptions raised by the server's storage layer, mapped to protocol errors by the app.

Hierarchy; each class's ``code`` is the matching ``protocol.errors.ErrorCode`` value::

    ServerError                 "internal"      base; never raised bare
    ├── StoreUnavailable        "unavailable"   Redis unreachable / embedded redis won't start
    ├── InvalidInput            "bad_request"   malformed name, move text too long, ...
    ├── NotFound                "not_found"     unknown / malformed game id, unknown player
    ├── NotStarted              "not_started"   a race move before the race's start time
    └── Conflict                "conflict"      optimistic-concurrency failure (stale seq)
        ├── GameOver            "game_over"     the game is already finished
        └── NameTaken           "name_taken"    name in use (compared casefolded)
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

import redis.exceptions

__all__ = [
    "Conflict",
    "GameOver",
    "InvalidInput",
    "NameTaken",
    "NotFound",
    "NotStarted",
    "ServerError",
    "StoreUnavailable",
    "translate_redis_errors",
]


class ServerError(Exception):
    """Base class of all expected server-side failures."""

    code = "internal"


class StoreUnavailable(ServerError):
    """The backing Redis cannot be reached (or failed to start)."""

    code = "unavailable"


class InvalidInput(ServerError):
    """Input rejected by the storage layer's own sanity checks."""

    code = "bad_request"


class NotFound(ServerError):
    """The referenced game or player does not exist (or the id is malformed)."""

    code = "not_found"


class NotStarted(ServerError):
    """A move in a race game before the race has started."""

    code = "not_started"


class Conflict(ServerError):
    """A write lost a race: the caller's view (``expected_seq``) is stale."""

    code = "conflict"

    def __init__(self, message: str, *, current_seq: int | None = None) -> None:
        super().__init__(message)
        self.current_seq = current_seq


class GameOver(Conflict):
    """The game is finished; no further moves are accepted."""

    code = "game_over"


class NameTaken(Conflict):
    """Another player already uses this name (case-insensitively)."""

    code = "name_taken"


P = ParamSpec("P")
R = TypeVar("R")

# Connection-level failures only: script/logic errors (ResponseError) are bugs, not outages.
_OUTAGES: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.BusyLoadingError,
)


def translate_redis_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Decorate an async store method so Redis outages surface as ``StoreUnavailable``."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except _OUTAGES as exc:
            raise StoreUnavailable(f"redis unavailable: {exc}") from exc

    return wrapper
