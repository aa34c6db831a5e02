"""Error codes and the exception classes of the protocol package.

Every error code that can appear on the wire is a member of :class:`ErrorCode`; the
hierarchy of exceptions is drawn in the docstring of :mod:`protocol`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class ErrorCode(StrEnum):
    """Stable error codes sent in ``error`` replies. Never rename a member's value."""

    BAD_REQUEST = "bad_request"
    """Malformed frame, wrong field type or range, missing or unknown field."""
    UNKNOWN_TYPE = "unknown_type"
    """The ``type`` of a request is not one this server knows."""
    UNSUPPORTED_VERSION = "unsupported_version"
    """No protocol version in ``hello.versions`` is spoken by the server."""
    NOT_AUTHENTICATED = "not_authenticated"
    """A request other than ``hello`` was sent before ``welcome``, or the token is unknown."""
    ILLEGAL_MOVE = "illegal_move"
    """The engine refused the move (or there is nothing to undo)."""
    NOT_FOUND = "not_found"
    """No such game, variant, player or leaderboard."""
    CONFLICT = "conflict"
    """``expected_seq`` does not match the game, or the request repeats a finished action."""
    RATE_LIMITED = "rate_limited"
    """Too many requests; slow down and retry later."""
    UNAVAILABLE = "unavailable"
    """A backend (storage) is temporarily unavailable, or the server is shutting down."""
    TOO_LARGE = "too_large"
    """The frame exceeds the maximum frame size."""
    INTERNAL = "internal"
    """A bug on the server; the request may or may not have been applied."""
    NAME_TAKEN = "name_taken"
    """The display name in ``hello`` belongs to another player."""
    INVALID_NAME = "invalid_name"
    """The display name breaks the naming rules (3..20 of ``A-Z a-z 0-9 _ -``)."""
    NOT_STARTED = "not_started"
    """A move in a race game before the race's start time."""
    GAME_OVER = "game_over"
    """The game is already finished; moves, undos and resigns are refused."""
    LIMIT_REACHED = "limit_reached"
    """A per-account quota is used up (e.g. private rooms created per hour); version 5 on,
    older versions get ``rate_limited``."""
    DAY_OVER = "day_over"
    """The daily game's UTC day is over: moves, undos, hints, resigns and finishes are refused
    (the game was closed as it stood at the day's end). Version 5 on; older versions get
    ``game_over``."""
    INVALID_CODE = "invalid_code"
    """A sign-in code (``signin.redeem``) that is wrong, used already or expired. Version 7."""
    NOT_TRUSTED_YET = "not_trusted_yet"
    """A device signed in by a code is still in its trust period: it may not revoke older
    devices (``device.revoke``) nor every session (``token.revoke_all``). Version 9 on;
    versions 5 to 8 get ``limit_reached``."""


ERROR_CODES: Final[frozenset[str]] = frozenset(code.value for code in ErrorCode)


class ProtocolError(Exception):
    """Base class of every error raised by this package.

    ``code`` is a stable :class:`ErrorCode` value, ``message`` a human-readable
    explanation and ``id`` the request id the error answers, when it is known (the
    decoder fills it in as soon as it could read a valid ``id`` from the frame).

    The server may raise ``ProtocolError(message, code=ErrorCode.NOT_FOUND, id=...)``
    itself and turn any ``ProtocolError`` into a reply with
    :meth:`protocol.events.ErrorReply.from_error`.
    """

    default_code: str = ErrorCode.INTERNAL

    def __init__(self, message: str, *, code: str | None = None, id: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code: str = str(code if code is not None else self.default_code)
        self.id = id

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, id={self.id!r})"
        )


class BadRequest(ProtocolError):
    """The frame could not be parsed or a field failed validation (``bad_request``)."""

    default_code = ErrorCode.BAD_REQUEST


class FrameTooLarge(BadRequest):
    """The frame exceeds the size limit (``too_large``)."""

    default_code = ErrorCode.TOO_LARGE


class UnknownType(BadRequest):
    """The message ``type`` is not registered (``unknown_type``)."""

    default_code = ErrorCode.UNKNOWN_TYPE


class InvalidName(BadRequest):
    """A display name breaks the naming rules (``invalid_name``)."""

    default_code = ErrorCode.INVALID_NAME


class UnsupportedVersion(ProtocolError):
    """No common protocol version (``unsupported_version``).

    ``versions``: the versions the server speaks (the error reply's ``versions`` field);
    ``None`` means every version this package supports.
    """

    default_code = ErrorCode.UNSUPPORTED_VERSION

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        id: int | None = None,
        versions: tuple[int, ...] | None = None,
    ) -> None:
        super().__init__(message, code=code, id=id)
        self.versions = versions


class EncodeError(ProtocolError):
    """A message built by the caller is not valid and was not encoded (``internal``).

    This is always a bug in the sending program, never the peer's fault.
    """

    default_code = ErrorCode.INTERNAL
