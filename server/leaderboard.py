"""Leaderboards: one Redis ZSET per board, scored by an exact 53-bit composite rank key.

Rank key (lower is better; ZRANGE ascending), most to least significant field::

    bit 52      not_won                     1 bit
    bits 41-51  MAX_POINTS - points         11 bits (points clamped to 0..2047)
    bits 14-40  time in milliseconds        27 bits (saturating at ~37 h 17 min)
    bits 0-13   moves                       14 bits (saturating)

Equal keys fall back to the ZSET member ``f"{finished_at_ms:013d}:{player_id}"``, which sorts
lexicographically, i.e. earlier finish first. Every value is < 2**53, so the double-precision
ZSET score holds it exactly. Times rank to the millisecond; times of 2**27 - 1 ms (37 h 16 min)
or more rank as equal on time (then by moves): no timed game lasts that long in practice, and
every field must fit in the 53 bits a score holds exactly.

Entries are written only by the game-finish Lua script in :mod:`server.gamestore`, which embeds
:data:`LUA_WRITE_ENTRY` so the game record and its entry change atomically, exactly once.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import redis.asyncio

from server import keys
from server.daily import day_start_ms
from server.errors import translate_redis_errors

__all__ = [
    "LUA_WRITE_ENTRY",
    "MAX_LIMIT",
    "MAX_MOVES",
    "MAX_POINTS",
    "MAX_TIME_MS",
    "BoardRef",
    "Entry",
    "Leaderboard",
    "PreparedEntry",
    "RankKey",
    "board_expire_at",
    "decode_rank_key",
    "encode_rank_key",
    "entry_from_json",
    "prepare_entry",
]

MAX_POINTS = (1 << 11) - 1  # 2047
MAX_TIME_MS = (1 << 27) - 1  # ~37.3 hours
MAX_MOVES = (1 << 14) - 1  # 16383
MAX_LIMIT = 100  # rows per query
_MOVES_SHIFT, _TIME_SHIFT, _POINTS_SHIFT, _WON_SHIFT = 0, 14, 41, 52


class RankKey(NamedTuple):
    """Decoded rank key fields (already clamped/saturated)."""

    won: bool
    points: int
    time_ms: int
    moves: int


def _clamp(v: int, hi: int) -> int:
    return max(0, min(int(v), hi))


def encode_rank_key(won: bool, points: int, time_ms: int, moves: int) -> int:
    """Pack a result into the ZSET score (lower is better). Out-of-range fields saturate."""
    return (
        (0 if won else 1) << _WON_SHIFT
        | (MAX_POINTS - _clamp(points, MAX_POINTS)) << _POINTS_SHIFT
        | _clamp(time_ms, MAX_TIME_MS) << _TIME_SHIFT
        | _clamp(moves, MAX_MOVES) << _MOVES_SHIFT
    )


def decode_rank_key(key: int) -> RankKey:
    """Inverse of :func:`encode_rank_key`: ``encode_rank_key(*decode_rank_key(k)) == k``."""
    if not 0 <= key < 1 << 53:
        raise ValueError(f"rank key out of range: {key}")
    return RankKey(
        won=not (key >> _WON_SHIFT) & 1,
        points=MAX_POINTS - ((key >> _POINTS_SHIFT) & MAX_POINTS),
        time_ms=(key >> _TIME_SHIFT) & MAX_TIME_MS,
        moves=key & MAX_MOVES,
    )


@dataclass(frozen=True, slots=True)
class BoardRef:
    """Identifies one ranked board: a day's board of a variant, or one race's standings."""

    kind: Literal["daily", "race"]
    variant: str
    date: dt.date
    board_key: str
    members_key: str
    entries_key: str

    @classmethod
    def daily(cls, variant: str, date: dt.date) -> BoardRef:
        return cls("daily", variant, date, keys.daily_board(variant, date),
                   keys.daily_members(variant, date), keys.daily_entries(variant, date))

    @classmethod
    def race(cls, variant: str, race_id: str) -> BoardRef:
        k = keys.parse_game_id(keys.race_game_id(race_id, "_"))
        return cls("race", variant, k.date, k.board, k.members, k.entries)


@dataclass(frozen=True, slots=True)
class Entry:
    """One leaderboard row; ``rank`` is 1-based."""

    rank: int
    player_id: str
    name: str
    won: bool
    cleared: int
    score: int
    points: int
    time_ms: int
    moves: int
    finished_at_ms: int
    hints: int = 0


@dataclass(frozen=True, slots=True)
class PreparedEntry:
    """Arguments for :data:`LUA_WRITE_ENTRY`'s ``write_entry``."""

    score: int
    member: str
    data: str


def prepare_entry(
    *,
    player_id: str,
    name: str,
    won: bool,
    cleared: int,
    score: int,
    points: int,
    time_ms: int,
    moves: int,
    finished_at_ms: int,
    hints: int = 0,
) -> PreparedEntry:
    """Compute the ZSET score, member and stored JSON for a finished game."""
    data = {
        "name": name,
        "won": bool(won),
        "cleared": int(cleared),
        "score": int(score),
        "points": int(points),
        "time_ms": int(time_ms),
        "moves": int(moves),
        "finished_at": int(finished_at_ms),
        "hints": int(hints),
    }
    return PreparedEntry(
        score=encode_rank_key(won, points, time_ms, moves),
        member=f"{finished_at_ms:013d}:{player_id}",
        data=json.dumps(data, separators=(",", ":")),
    )


def entry_from_json(rank: int, player_id: str, raw: str) -> Entry:
    d = json.loads(raw)
    return Entry(
        rank=rank,
        player_id=player_id,
        name=d["name"],
        won=bool(d["won"]),
        cleared=int(d["cleared"]),
        score=int(d["score"]),
        points=int(d.get("points", 0)),
        time_ms=int(d["time_ms"]),
        moves=int(d["moves"]),
        finished_at_ms=int(d["finished_at"]),
        hints=int(d.get("hints", 0)),
    )


def board_expire_at(date: dt.date, retention_days: int) -> int:
    """Unix seconds at which a board dated ``date`` (and its games) expire."""
    return day_start_ms(date + dt.timedelta(days=retention_days)) // 1000


# Lua helpers for scripts that finish games (prepend to the script body).
# write_entry: adds the entry unless the player already has one on this board (exactly once:
#   a repeated finish never changes the stored entry); returns 1 if written, 0 if it existed.
#   Refreshes EXPIREAT on the three board keys.
# entry_rank: 1-based rank of the player's entry, or false.
LUA_WRITE_ENTRY = """
local function write_entry(board, members, entries, pid, score, member, data, expire_at)
  if redis.call('HSETNX', members, pid, member) == 0 then return 0 end
  redis.call('ZADD', board, score, member)
  redis.call('HSET', entries, pid, data)
  redis.call('EXPIREAT', board, expire_at)
  redis.call('EXPIREAT', members, expire_at)
  redis.call('EXPIREAT', entries, expire_at)
  return 1
end
local function entry_rank(board, members, pid)
  local m = redis.call('HGET', members, pid)
  if not m then return false end
  local r = redis.call('ZRANK', board, m)
  if not r then return false end
  return r + 1
end
"""

# Rows are flattened as [first_rank, total, pid1, json1, pid2, json2, ...].
_LUA_ROWS = """
local function rows(board, entries, start, stop)
  local out = {start + 1, redis.call('ZCARD', board)}
  for _, m in ipairs(redis.call('ZRANGE', board, start, stop)) do
    local pid = string.sub(m, string.find(m, ':', 1, true) + 1)
    out[#out + 1] = pid
    out[#out + 1] = redis.call('HGET', entries, pid) or ''
  end
  return out
end
"""

# KEYS: board, entries. ARGV: start, stop (0-based, inclusive).
_TOP_LUA = _LUA_ROWS + "return rows(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]))"

# KEYS: board, members, entries. ARGV: pid, k. The player's row with up to k rows above and
# up to k below it (fewer at either end of the board).
_AROUND_LUA = (
    _LUA_ROWS
    + """
local m = redis.call('HGET', KEYS[2], ARGV[1])
if not m then return {} end
local r = redis.call('ZRANK', KEYS[1], m)
if not r then return {} end
local k = tonumber(ARGV[2])
return rows(KEYS[1], KEYS[3], math.max(0, r - k), r + k)
"""
)


def _parse_rows(raw: list[Any]) -> list[Entry]:
    if not raw:
        return []
    first = int(raw[0])
    out = []
    for i in range(2, len(raw) - 1, 2):
        if raw[i + 1]:  # '' = member without data (should not happen); skip, keep ranks
            out.append(entry_from_json(first + (i - 2) // 2, raw[i], raw[i + 1]))
    return out


class Leaderboard:
    """Read side of the leaderboards (one round trip per query)."""

    def __init__(self, redis: redis.asyncio.Redis) -> None:
        self._r = redis
        self._top = redis.register_script(_TOP_LUA)
        self._around = redis.register_script(_AROUND_LUA)

    @translate_redis_errors
    async def top(self, board: BoardRef, offset: int = 0, limit: int = 10) -> list[Entry]:
        """Rows ``offset+1 .. offset+limit`` (limit capped at ``MAX_LIMIT``)."""
        offset, limit = max(0, offset), min(max(0, limit), MAX_LIMIT)
        if limit == 0:
            return []
        raw = await self._top(
            keys=[board.board_key, board.entries_key], args=[offset, offset + limit - 1]
        )
        return _parse_rows(raw)

    @translate_redis_errors
    async def around(self, board: BoardRef, player_id: str, k: int = 2) -> list[Entry]:
        """The player's row with up to ``k`` rows above and ``k`` below it; empty if the
        player has no entry."""
        k = min(max(0, k), MAX_LIMIT // 2)
        raw = await self._around(
            keys=[board.board_key, board.members_key, board.entries_key], args=[player_id, k]
        )
        return _parse_rows(raw)

    async def rank(self, board: BoardRef, player_id: str) -> Entry | None:
        """The player's own row (with its current rank), or None."""
        rows = await self.around(board, player_id, 0)
        return rows[0] if rows else None

    @translate_redis_errors
    async def total(self, board: BoardRef) -> int:
        n: int = await self._r.zcard(board.board_key)
        return n
