"""Field validators ("specs") and the annotated field types built from them.

A message field is declared as ``name: SomeType`` where ``SomeType`` is an
``Annotated[python_type, spec]`` alias defined here (or ``SomeType | None = None`` for an
optional field). The spec validates the value in both directions:

* :meth:`Spec.load` turns a value parsed from the wire into the Python value
  (e.g. a list becomes a tuple), raising :class:`~protocol.errors.BadRequest`;
* :meth:`Spec.dump` checks a Python value and returns what goes on the wire.

Integers never accept ``bool`` (JSON ``true`` / msgpack ``True`` is not ``1``) nor
``float`` (``1.0`` is not ``1``).
"""

from __future__ import annotations

import datetime
import re
from typing import Annotated, Any, Final

from protocol.errors import BadRequest, InvalidName

MAX_REQUEST_ID: Final = 2**31 - 1
"""Largest request id a client may choose."""
MAX_SAFE_INT: Final = 2**53 - 1
"""Largest integer a JavaScript client can hold exactly; bound of every counter and time."""

NAME_MIN_LENGTH: Final = 3
NAME_MAX_LENGTH: Final = 20


def kind_of(value: object) -> str:
    """The wire name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__


class Spec:
    """Validator of one field value."""

    def load(self, value: object, path: str) -> Any:
        """Validate a value parsed from a frame and return its Python form."""
        raise NotImplementedError

    def dump(self, value: object, path: str) -> Any:
        """Validate a Python value and return its wire form (by default, ``load``)."""
        return self.load(value, path)


class Int(Spec):
    """An integer in ``lo..hi`` (inclusive); bools and floats are refused."""

    def __init__(self, lo: int, hi: int) -> None:
        self.lo = lo
        self.hi = hi

    def load(self, value: object, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadRequest(f"{path}: expected an integer, got {kind_of(value)}")
        if not self.lo <= value <= self.hi:
            raise BadRequest(f"{path}: {value} is out of range {self.lo}..{self.hi}")
        return int(value)


class Bool(Spec):
    """``true`` or ``false``; integers are refused."""

    def load(self, value: object, path: str) -> bool:
        if not isinstance(value, bool):
            raise BadRequest(f"{path}: expected a bool, got {kind_of(value)}")
        return value


class Str(Spec):
    """A string of ``min_len..max_len`` characters matching ``regex`` in full.

    ``regex`` is compiled with ``re.ASCII``; ``what`` names the rule in error messages.
    """

    def __init__(
        self, min_len: int, max_len: int, regex: str | None = None, what: str = ""
    ) -> None:
        self.min_len = min_len
        self.max_len = max_len
        self.regex = regex
        self.pattern = re.compile(regex, re.ASCII) if regex is not None else None
        self.what = what

    def load(self, value: object, path: str) -> str:
        if not isinstance(value, str):
            raise BadRequest(f"{path}: expected a string, got {kind_of(value)}")
        value = str(value)  # plain str, also for StrEnum members
        if not self.min_len <= len(value) <= self.max_len:
            raise BadRequest(
                f"{path}: length {len(value)} is out of range {self.min_len}..{self.max_len}"
            )
        if self.pattern is not None and self.pattern.fullmatch(value) is None:
            raise BadRequest(f"{path}: {value!r} is not {self.what or self.regex}")
        return value


class Date(Str):
    """A calendar date ``YYYY-MM-DD`` that exists (``2023-02-29`` is refused)."""

    def __init__(self) -> None:
        super().__init__(10, 10, r"[0-9]{4}-[0-9]{2}-[0-9]{2}", "a date YYYY-MM-DD")

    def load(self, value: object, path: str) -> str:
        text = super().load(value, path)
        try:
            datetime.date.fromisoformat(text)
        except ValueError:
            raise BadRequest(f"{path}: {text!r} is not a valid calendar date") from None
        return text


class Name(Str):
    """A player's display name; a string breaking the rules raises :class:`InvalidName`."""

    def __init__(self) -> None:
        super().__init__(
            NAME_MIN_LENGTH,
            NAME_MAX_LENGTH,
            rf"[A-Za-z0-9_-]{{{NAME_MIN_LENGTH},{NAME_MAX_LENGTH}}}",
            f"a name of {NAME_MIN_LENGTH}..{NAME_MAX_LENGTH} letters, digits, '_' or '-'",
        )

    def load(self, value: object, path: str) -> str:
        if not isinstance(value, str):
            raise BadRequest(f"{path}: expected a string, got {kind_of(value)}")
        try:
            return super().load(value, path)
        except BadRequest as exc:
            raise InvalidName(exc.message) from None


class ListOf(Spec):
    """An array of ``min_len..max_len`` items, each checked by ``item``; loads as a tuple."""

    def __init__(self, item: Spec, min_len: int, max_len: int) -> None:
        self.item = item
        self.min_len = min_len
        self.max_len = max_len

    def _check(self, value: object, path: str) -> list[Any] | tuple[Any, ...]:
        if not isinstance(value, (list, tuple)):
            raise BadRequest(f"{path}: expected an array, got {kind_of(value)}")
        if not self.min_len <= len(value) <= self.max_len:
            raise BadRequest(
                f"{path}: {len(value)} items is out of range {self.min_len}..{self.max_len}"
            )
        return value

    def load(self, value: object, path: str) -> tuple[Any, ...]:
        items = self._check(value, path)
        return tuple(self.item.load(v, f"{path}[{i}]") for i, v in enumerate(items))

    def dump(self, value: object, path: str) -> list[Any]:
        items = self._check(value, path)
        return [self.item.dump(v, f"{path}[{i}]") for i, v in enumerate(items)]


class JsonMap(Spec):
    """An opaque map produced by the engine.

    Only "is a map" is checked here; the codec checks every frame as a whole (string keys,
    JSON-compatible values, finite floats, nesting depth), in both directions.
    """

    def load(self, value: object, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise BadRequest(f"{path}: expected a map, got {kind_of(value)}")
        return value


# --- the specs of the protocol's fields ------------------------------------------------------

REQUEST_ID: Final = Int(0, MAX_REQUEST_ID)
VERSION: Final = Int(1, 0xFFFF)
VARIANT: Final = Str(1, 32, r"[a-z][a-z0-9-]{0,31}", "a variant name like 'fourteen-out'")
GAME_ID: Final = Str(1, 128, r"[A-Za-z0-9._:-]{1,128}", "an id of A-Z a-z 0-9 . _ : -")
PLAYER_ID: Final = GAME_ID
TOKEN: Final = Str(16, 128, r"[A-Za-z0-9_-]{16,128}", "a url-safe base64 token (no padding)")
MOVE: Final = Str(1, 32, r"[\x20-\x7e]{1,32}", "1..32 printable ASCII characters")
NAME: Final = Name()
DATE: Final = Date()
COUNT: Final = Int(0, MAX_SAFE_INT)
SCORE: Final = Int(-MAX_SAFE_INT, MAX_SAFE_INT)
RANK: Final = Int(1, MAX_SAFE_INT)
FLAG: Final = Bool()
TIER: Final = Str(4, 6, r"easy|medium|hard|expert", "a tier: easy, medium, hard or expert")
KIND: Final = Str(1, 32, r"[a-z][a-z0-9-]{0,31}", "a leaderboard kind like 'daily'")
ERROR_CODE: Final = Str(1, 32, r"[a-z][a-z0-9_]{0,31}", "an error code like 'bad_request'")
TEXT: Final = Str(0, 1024)

# --- annotated types used in message declarations --------------------------------------------

RequestId = Annotated[int, REQUEST_ID]
Version = Annotated[int, VERSION]
Versions = Annotated[tuple[int, ...], ListOf(VERSION, 1, 16)]
VariantName = Annotated[str, VARIANT]
VariantNames = Annotated[tuple[str, ...], ListOf(VARIANT, 0, 64)]
GameId = Annotated[str, GAME_ID]
PlayerId = Annotated[str, PLAYER_ID]
Token = Annotated[str, TOKEN]
MoveText = Annotated[str, MOVE]
DisplayName = Annotated[str, NAME]
DateText = Annotated[str, DATE]
Count = Annotated[int, COUNT]
Millis = Annotated[int, COUNT]
Score = Annotated[int, SCORE]
RankNo = Annotated[int, RANK]
Flag = Annotated[bool, FLAG]
Kind = Annotated[str, KIND]
TierName = Annotated[str, TIER]
Offset = Annotated[int, Int(0, 10_000_000)]
Limit = Annotated[int, Int(1, 100)]
Around = Annotated[int, Int(1, 50)]
ErrorCodeText = Annotated[str, ERROR_CODE]
Text = Annotated[str, TEXT]
Reason = Annotated[str, Str(0, 200)]
View = Annotated[dict[str, Any], JsonMap()]
EngineEvents = Annotated[tuple[dict[str, Any], ...], ListOf(JsonMap(), 0, 4096)]
#: The most moves a game may hold (the server refuses more; `undo` counts as a move).
MAX_GAME_MOVES: Final = 10_000
MoveLog = Annotated[tuple[str, ...], ListOf(MOVE, 0, MAX_GAME_MOVES)]
#: Optional behaviours a client asks for in ``hello`` (``features``); unknown ones are ignored.
FEATURE: Final = Str(1, 32, r"[a-z][a-z0-9_]*", "a feature name")
Features = Annotated[tuple[str, ...], ListOf(FEATURE, 0, 16)]
#: The feature of a client without the rules (the browser): moves in card words, the view's
#: changes with each lean ``moved``, safe moves, hint penalties, foundation suits (issue 27).
RULES_FREE: Final = "rules_free"
#: A game's moves in words, one sentence a move (``J♦ to the foundation``).
MoveWords = Annotated[tuple[str, ...], ListOf(TEXT, 0, MAX_GAME_MOVES)]


def validate_name(name: object) -> str:
    """Return ``name`` if it is a valid display name.

    Raises :class:`InvalidName` (``invalid_name``) for a string breaking the rules and
    :class:`BadRequest` for a non-string.

    Rules: 3..20 characters, each an ASCII letter, digit, ``_`` or ``-``. Names are
    case-sensitive here; whether ``Alice`` and ``alice`` collide is the server's decision.
    """
    result: str = NAME.load(name, "name")
    return result
