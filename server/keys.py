"""Every Redis key name the server uses, and game-id parsing.

Layout (``{...}`` is the Redis Cluster hash tag: keys used together by one script or
transaction share it, so they live in one slot)::

    sol:{players}:p:<pid>                    hash   name, token_hash, created_at_ms
    sol:{players}:by_name                    hash   casefold(name) -> pid
    sol:{players}:by_token                   hash   sha256(token) hex -> pid
    sol:{d:<variant>:<date>}:board           zset   "<finished_at_ms:013d>:<pid>" -> rank key
    sol:{d:<variant>:<date>}:members         hash   pid -> board member
    sol:{d:<variant>:<date>}:entries         hash   pid -> entry JSON
    sol:{d:<variant>:<date>}:g:<pid>         hash   game record
    sol:{d:<variant>:<date>}:log:<pid>       list   move texts in order ("undo" for undo)
    sol:{r:<race_id>}:...                    reserved for races

Game ids: ``d.<variant>.<YYYY-MM-DD>.<player_id>`` (daily games).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from server.errors import NotFound

__all__ = [
    "PREFIX",
    "DailyGameKeys",
    "daily_board",
    "daily_entries",
    "daily_game",
    "daily_game_id",
    "daily_log",
    "daily_members",
    "daily_tag",
    "parse_game_id",
    "player",
    "player_pattern",
    "players_by_name",
    "players_by_token",
    "race_tag",
    "valid_player_id",
    "valid_variant",
]

PREFIX = "sol:"

_VARIANT_RE = re.compile(r"[a-z0-9_-]{1,32}")
_PID_RE = re.compile(r"[A-Za-z0-9_-]{1,32}")
_RACE_RE = re.compile(r"[A-Za-z0-9_-]{1,40}")
_GAME_ID_RE = re.compile(r"d\.([a-z0-9_-]{1,32})\.(\d{4}-\d{2}-\d{2})\.([A-Za-z0-9_-]{1,32})")


def valid_variant(variant: str) -> bool:
    """Variants are lowercase ``[a-z0-9_-]{1,32}`` (no ``.``, ``:``, braces: they delimit)."""
    return _VARIANT_RE.fullmatch(variant) is not None


def valid_player_id(pid: str) -> bool:
    return _PID_RE.fullmatch(pid) is not None


def _variant(variant: str) -> str:
    if not valid_variant(variant):
        raise ValueError(f"bad variant name: {variant!r}")
    return variant


def _pid(pid: str) -> str:
    if not valid_player_id(pid):
        raise ValueError(f"bad player id: {pid!r}")
    return pid


# -- players ------------------------------------------------------------------------------

_PLAYERS = PREFIX + "{players}:"


def player(pid: str) -> str:
    return f"{_PLAYERS}p:{_pid(pid)}"


def player_pattern() -> str:
    """SCAN pattern matching every player hash."""
    return f"{_PLAYERS}p:*"


def players_by_name() -> str:
    return f"{_PLAYERS}by_name"


def players_by_token() -> str:
    return f"{_PLAYERS}by_token"


# -- daily boards and games ---------------------------------------------------------------


def daily_tag(variant: str, date: dt.date) -> str:
    """Hash tag shared by one day's board and all its games (single-slot finish script)."""
    return f"{{d:{_variant(variant)}:{date.isoformat()}}}"


def daily_board(variant: str, date: dt.date) -> str:
    return f"{PREFIX}{daily_tag(variant, date)}:board"


def daily_members(variant: str, date: dt.date) -> str:
    return f"{PREFIX}{daily_tag(variant, date)}:members"


def daily_entries(variant: str, date: dt.date) -> str:
    return f"{PREFIX}{daily_tag(variant, date)}:entries"


def daily_game(variant: str, date: dt.date, pid: str) -> str:
    return f"{PREFIX}{daily_tag(variant, date)}:g:{_pid(pid)}"


def daily_log(variant: str, date: dt.date, pid: str) -> str:
    return f"{PREFIX}{daily_tag(variant, date)}:log:{_pid(pid)}"


def race_tag(race_id: str) -> str:
    """Hash tag for all keys of one race (reserved)."""
    if _RACE_RE.fullmatch(race_id) is None:
        raise ValueError(f"bad race id: {race_id!r}")
    return f"{{r:{race_id}}}"


# -- game ids -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DailyGameKeys:
    """A parsed daily game id with every key its scripts touch."""

    game_id: str
    variant: str
    date: dt.date
    player_id: str

    @property
    def game(self) -> str:
        return daily_game(self.variant, self.date, self.player_id)

    @property
    def log(self) -> str:
        return daily_log(self.variant, self.date, self.player_id)

    @property
    def board(self) -> str:
        return daily_board(self.variant, self.date)

    @property
    def members(self) -> str:
        return daily_members(self.variant, self.date)

    @property
    def entries(self) -> str:
        return daily_entries(self.variant, self.date)


def daily_game_id(variant: str, date: dt.date, pid: str) -> str:
    return f"d.{_variant(variant)}.{date.isoformat()}.{_pid(pid)}"


def parse_game_id(game_id: str) -> DailyGameKeys:
    """Strictly parse a client-supplied game id; anything malformed is ``NotFound``."""
    m = _GAME_ID_RE.fullmatch(game_id) if isinstance(game_id, str) else None
    if m is None:
        raise NotFound("no such game")
    variant, date_s, pid = m.groups()
    try:
        date = dt.date.fromisoformat(date_s)
    except ValueError:
        raise NotFound("no such game") from None
    return DailyGameKeys(game_id, variant, date, pid)
