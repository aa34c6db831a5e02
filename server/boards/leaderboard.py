"""Leaderboards: one Redis ZSET per board, scored by an exact composite rank key.

Rank key (lower is better; ZRANGE ascending), most to least significant field::

    bit 52      not_won                     1 bit
    bits 41-51  MAX_POINTS - points         11 bits (points clamped to 0..2047)
    bits 14-40  time in milliseconds        27 bits (saturating at ~37 h 17 min)
    bits 0-13   moves                       14 bits (saturating)

A result not won that took a hint ranks after every result not won that took none (a hint
makes the line, and on these results cards or points decide before time, so its time penalty
alone would cost next to nothing): its key is ``2**53 + 2 * (its key's 52 low bits)``, above
every other key, in the same order among themselves. Even integers below ``2**54`` are exact
in a double, and every key stored before stays what it was (no board is rewritten). A won
result keeps its key: its cards or points are the variant's all, so its time, hint penalties
included, decides.

Equal keys fall back to the ZSET member ``f"{finished_at_ms:013d}:{player_id}"``, which sorts
lexicographically, i.e. earlier finish first. Every other value is < 2**53, so the
double-precision ZSET score holds it exactly. Times rank to the millisecond; times of
2**27 - 1 ms (37 h 16 min) or more rank as equal on time (then by moves): no timed game lasts
that long in practice, and every field must fit in the 53 bits a score holds exactly.

Entries are written exactly once per player and board (``HSETNX`` on ``members``): a race
game's finish script in :mod:`server.games.store` embeds :data:`LUA_WRITE_ENTRY`; a daily game
lives in its own slot (`server.redis.keys`), so its finish is two steps, the second of which is
:class:`BoardEntries`: the game's script marks it finished with its `PendingEntry` and a
``pending`` mark, then the board's script writes the entry and takes the game out of the
board's ``outbox`` (one script, so the two never disagree), then the mark is cleared.

A daily finish may also run its game's step beside the read of the account's fair-play mark
(on another slot): the game is then "finished, screen due" (field ``screen``: the screen's
verdict without the mark) until the mark is known. Whoever could publish such a result (the
finish itself, the board's `BoardEntries.settle`, the game's next load, so the player's
history and the review desk too) reads the mark first (`BoardEntries.resolve_due`): a marked
account's result is listed on the review desk and held, never written to the board.

Recovery when a process dies between the steps, so an entry is never missing where it can be
seen: the game's next load (`GameStore.load`/`get`: resume, ``game.get``, ``hello``) writes it
from the game's mark, and every leaderboard read of the board (top, around, rank; the script
also returns the outbox's size) first settles the board's outbox. A per-board outbox, not a
per-process one: no process has to survive or be restarted, and the readers who would see the
gap are the ones who close it, at the cost of one ``ZCARD`` inside scripts they run anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii as _json_str  # json.dumps' own (C)
from typing import Any, Literal, NamedTuple, cast

import redis.asyncio

from server.fairplay.screen import Reason, Verdict
from server.games.daily import day_start_ms
from server.redis import keys
from server.redis.batch import Batcher, LuaScript
from server.redis.keys import DailyGameKeys
from server.runtime.errors import translate_redis_errors

__all__ = [
    "HINTED_BASE",
    "LUA_WRITE_ENTRY",
    "MARKED_NOTE",
    "MAX_LIMIT",
    "MAX_MOVES",
    "MAX_POINTS",
    "MAX_TIME_MS",
    "BoardEntries",
    "BoardRef",
    "Entry",
    "Leaderboard",
    "PendingEntry",
    "PreparedEntry",
    "RankKey",
    "board_expire_at",
    "decode_rank_key",
    "encode_rank_key",
    "entry_from_json",
    "marked_verdict",
    "prepare_entry",
]

MAX_POINTS = (1 << 11) - 1  # 2047
MAX_TIME_MS = (1 << 27) - 1  # ~37.3 hours
MAX_MOVES = (1 << 14) - 1  # 16383
MAX_LIMIT = 100  # rows per query
_MOVES_SHIFT, _TIME_SHIFT, _POINTS_SHIFT, _WON_SHIFT = 0, 14, 41, 52
#: Where the keys of hinted results not won start (after every other key).
HINTED_BASE = 1 << 53


class RankKey(NamedTuple):
    """Decoded rank key fields (already clamped/saturated). ``hinted``: a result not won
    that took a hint (a won one ranks by its time, penalties included: never set)."""

    won: bool
    points: int
    time_ms: int
    moves: int
    hinted: bool = False


def _clamp(v: int, hi: int) -> int:
    return max(0, min(int(v), hi))


def encode_rank_key(won: bool, points: int, time_ms: int, moves: int, hinted: bool = False) -> int:
    """Pack a result into the ZSET score (lower is better). Out-of-range fields saturate;
    ``hinted`` (a hint was taken) counts only for a result not won."""
    low = (
        (MAX_POINTS - _clamp(points, MAX_POINTS)) << _POINTS_SHIFT
        | _clamp(time_ms, MAX_TIME_MS) << _TIME_SHIFT
        | _clamp(moves, MAX_MOVES) << _MOVES_SHIFT
    )
    if won:
        return low
    if hinted:
        return HINTED_BASE + 2 * low
    return 1 << _WON_SHIFT | low


def decode_rank_key(key: int) -> RankKey:
    """Inverse of :func:`encode_rank_key`: ``encode_rank_key(*decode_rank_key(k)) == k``."""
    hinted = HINTED_BASE <= key < 2 * HINTED_BASE and not key & 1
    if hinted:
        key = (1 << _WON_SHIFT) | (key - HINTED_BASE) // 2
    elif not 0 <= key < HINTED_BASE:
        raise ValueError(f"rank key out of range: {key}")
    return RankKey(
        won=not (key >> _WON_SHIFT) & 1,
        points=MAX_POINTS - ((key >> _POINTS_SHIFT) & MAX_POINTS),
        time_ms=(key >> _TIME_SHIFT) & MAX_TIME_MS,
        moves=key & MAX_MOVES,
        hinted=hinted,
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
    outbox_key: str

    @classmethod
    def daily(cls, variant: str, date: dt.date, tier: str | None = None) -> BoardRef:
        """The day's board of ``variant``: the daily game's, or one tier's (``tier``; the
        medium tier's is the daily board)."""
        return cls(
            "daily",
            variant,
            date,
            keys.daily_board(variant, date, tier),
            keys.daily_members(variant, date, tier),
            keys.daily_entries(variant, date, tier),
            keys.daily_outbox(variant, date, tier),
        )

    @classmethod
    def race(cls, variant: str, race_id: str) -> BoardRef:
        k = keys.parse_game_id(keys.race_game_id(race_id, "_"))
        assert isinstance(k, keys.RaceGameKeys)
        return cls("race", variant, k.date, k.board, k.members, k.entries, k.outbox)


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
    """Compute the ZSET score, member and stored JSON for a finished game. The JSON is
    written out here, byte for byte what ``json.dumps(..., separators=(",", ":"))`` of the
    fields in this order gives (`tests/server/boards/test_leaderboard.py`): one JSON encode
    less on every finish (issue #30)."""
    data = (
        f'{{"name":{_json_str(name)},"won":{"true" if won else "false"},'
        f'"cleared":{int(cleared)},"score":{int(score)},"points":{int(points)},'
        f'"time_ms":{int(time_ms)},"moves":{int(moves)},"finished_at":{int(finished_at_ms)},'
        f'"hints":{int(hints)}}}'
    )
    return PreparedEntry(
        score=encode_rank_key(won, points, time_ms, moves, hints > 0),
        member=f"{finished_at_ms:013d}:{player_id}",
        data=data,
    )


@dataclass(frozen=True, slots=True)
class PendingEntry:
    """The board entry a finished daily game implies, stored in its record (field ``entry``)
    until the board's step has written it; ``expire_at`` is the board's (unix seconds)."""

    score: int
    member: str
    data: str
    expire_at: int

    def dumps(self) -> str:
        """``json.dumps`` of {score, member, data, exp} (compact), written out: the same
        bytes, one encode less per finish."""
        return (
            f'{{"score":{int(self.score)},"member":{_json_str(self.member)},'
            f'"data":{_json_str(self.data)},"exp":{int(self.expire_at)}}}'
        )

    @classmethod
    def loads(cls, raw: str) -> PendingEntry:
        d = json.loads(raw)
        return cls(int(d["score"]), str(d["member"]), str(d["data"]), int(d["exp"]))


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

# KEYS: board, members, entries, outbox. ARGV: pid, score, member, data, expire_at, game id,
# write ("1": write the entry unless the player has one; "0": only read it).
# The second step of a daily finish (and its recovery): idempotent, and the game leaves the
# outbox in the same script. Returns {rank or 0, entry json or ''}.
_WRITE_LUA = (
    LUA_WRITE_ENTRY
    + """
if ARGV[7] == '1' then
  write_entry(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
end
redis.call('ZREM', KEYS[4], ARGV[6])
return {entry_rank(KEYS[1], KEYS[2], ARGV[1]) or 0, redis.call('HGET', KEYS[3], ARGV[1]) or ''}
"""
)

# KEYS: board outbox. ARGV: game id, now (wall clock ms), expire_at. Before step 1 of a finish
# (the latest finish's time: a reader only drops a member whose last finish began long ago).
_ENQUEUE_LUA = """
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('EXPIREAT', KEYS[1], ARGV[3])
"""

# KEYS: game. ARGV: the verdict that holds the result. A "screen due" game of a marked
# account (`BoardEntries.resolve_due`) is held: its mark of the board's step goes with the due
# state (a held result owes its board nothing until reviewed). Nothing changes once the screen
# is no longer due (resolved meanwhile). Returns the record (field/value list).
_HOLD_DUE_LUA = """
if redis.call('HEXISTS', KEYS[1], 'screen') == 1 then
  redis.call('HSET', KEYS[1], 'held', ARGV[1])
  redis.call('HDEL', KEYS[1], 'pending', 'screen')
end
return redis.call('HGETALL', KEYS[1])
"""

#: The note of a result held because its account is marked (`server.games.store` too).
MARKED_NOTE = "the account is marked"


def marked_verdict(screen: str) -> str:
    """A "screen due" verdict (JSON) once the account is known to be marked: held."""
    return Verdict.loads(screen).with_reason(Reason.ACCOUNT_MARKED, MARKED_NOTE).dumps()


# Rows are flattened as [outbox size, first_rank, total, pid1, json1, pid2, json2, ...].
_LUA_ROWS = """
local function rows(board, entries, outbox, start, stop)
  local out = {redis.call('ZCARD', outbox), start + 1, redis.call('ZCARD', board)}
  for _, m in ipairs(redis.call('ZRANGE', board, start, stop)) do
    local pid = string.sub(m, string.find(m, ':', 1, true) + 1)
    out[#out + 1] = pid
    out[#out + 1] = redis.call('HGET', entries, pid) or ''
  end
  return out
end
"""

# KEYS: board, entries, outbox. ARGV: start, stop (0-based, inclusive).
_TOP_LUA = (
    _LUA_ROWS
    + """
return rows(KEYS[1], KEYS[2], KEYS[3], tonumber(ARGV[1]), tonumber(ARGV[2]))"""
)

# KEYS: board, members, entries, outbox. ARGV: pid, k. The player's row with up to k rows
# above and up to k below it (fewer at either end of the board).
_AROUND_LUA = (
    _LUA_ROWS
    + """
local m = redis.call('HGET', KEYS[2], ARGV[1])
local r = m and redis.call('ZRANK', KEYS[1], m)
if not r then return {redis.call('ZCARD', KEYS[4])} end
local k = tonumber(ARGV[2])
return rows(KEYS[1], KEYS[3], KEYS[4], math.max(0, r - k), r + k)
"""
)


def _parse_rows(raw: list[Any]) -> list[Entry]:
    if len(raw) < 3:
        return []
    first = int(raw[1])
    out = []
    for i in range(3, len(raw) - 1, 2):
        if raw[i + 1]:  # '' = member without data (should not happen); skip, keep ranks
            out.append(entry_from_json(first + (i - 3) // 2, raw[i], raw[i + 1]))
    return out


class BoardEntries:
    """Write side of the daily boards: the board's step of a finish, and its recovery from
    the board's outbox (see the module docstring). Every method is idempotent.

    ``abandon_after_ms``: an outbox member whose game is still in play this long (wall
    clock) after its finish began is dropped: the process died before the game's step, so
    there is nothing to write (a finish that does go on writes its entry itself)."""

    def __init__(
        self,
        redis: redis.asyncio.Redis,
        *,
        abandon_after_ms: int = 60_000,
        commit: Batcher | None = None,
    ) -> None:
        self._r = redis
        self.abandon_after_ms = abandon_after_ms
        #: The finish path's commands go through the game store's group commit.
        self._commit = commit or Batcher(redis)
        self._write = LuaScript.of(_WRITE_LUA)
        self._enqueue = LuaScript.of(_ENQUEUE_LUA)
        self._hold_due = LuaScript.of(_HOLD_DUE_LUA)

    async def enqueue(self, k: DailyGameKeys, expire_at: int) -> None:
        """Put a game in its board's outbox (before the game's step of its finish)."""
        await self.enqueue_soon(k, expire_at)

    def enqueue_soon(self, k: DailyGameKeys, expire_at: int) -> asyncio.Future[object]:
        """`enqueue` queued in this iteration's batch; the future holds its reply."""
        return self._commit.eval_soon(
            self._enqueue, (k.outbox,), (k.game_id, _wall_ms(), expire_at)
        )

    async def dequeue(self, k: DailyGameKeys) -> None:
        """Take a game out of the outbox: it does not exist, or its finish was abandoned."""
        await self._r.zrem(k.outbox, k.game_id)

    async def write(self, k: DailyGameKeys, entry: PendingEntry | None) -> tuple[int, str]:
        """The board's step: write ``entry`` unless the player has one (None: only read),
        take the game out of the outbox, then clear the game's ``pending`` mark. Returns the
        player's rank (0: no entry) and the stored entry's JSON ('' if none)."""
        return await self.written(*self.write_soon(k, entry))

    def write_soon(
        self, k: DailyGameKeys, entry: PendingEntry | None
    ) -> tuple[asyncio.Future[object], asyncio.Future[object] | None]:
        """`write` queued in this iteration's batch: the board's script, and the HDEL of the
        game's mark right behind it (None without an entry); `written` reads their replies.
        The mark's clearing shares the round trip: should the board's script fail while the
        HDEL runs (its master down on a cluster), the game stays in the board's outbox and
        `settle` writes its stored entry without the mark (a finished game not held)."""
        args: list[str | int] = [
            k.player_id,
            entry.score if entry else 0,
            entry.member if entry else "",
            entry.data if entry else "",
            entry.expire_at if entry else 0,
            k.game_id,
            "1" if entry else "0",
        ]
        write = self._commit.eval_soon(
            self._write, (k.board, k.members, k.entries, k.outbox), tuple(args)
        )
        if entry is None:
            return write, None
        return write, self._commit.run_soon(k.game, "HDEL", k.game, "pending", "screen")

    async def resolve_due(self, k: DailyGameKeys, screen: str) -> list[str] | None:
        """A "screen due" game (module docstring): None when its account is not marked (the
        caller writes its entry, which ends the due state); otherwise it is held and its record
        returned (field/value list). One round trip to read the mark, two more to hold."""
        fp = keys.fairplay_marked()
        if not await self._commit.run(fp, "HEXISTS", fp, k.player_id):
            return None
        return await self.hold(k, marked_verdict(screen))

    async def hold(self, k: DailyGameKeys, verdict: str) -> list[str]:
        """Hold a "screen due" game with ``verdict``: listed on the review desk first (a
        listed game that is not held is skipped by the desk; a held one is never off it),
        then marked held in its record. Returns the record (field/value list)."""
        desk = keys.fairplay_held()
        await self._commit.run(desk, "ZADD", desk, "NX", _wall_ms(), k.game_id)
        return cast(list[str], await self._commit.eval(self._hold_due, (k.game,), (verdict,)))

    @staticmethod
    async def written(
        write: asyncio.Future[object], cleared: asyncio.Future[object] | None
    ) -> tuple[int, str]:
        """The rank and stored entry of a `write_soon`; its first error, if any. Both futures
        are awaited in turn (they are answered in the same batch): no gather, no task."""
        try:
            rank, data = cast(tuple[int, str], await write)
        except BaseException:
            if cleared is not None:
                with contextlib.suppress(Exception):
                    await cleared  # retrieved: its error is not the one to report
            raise
        if cleared is not None:
            await cleared
        return int(rank), str(data)

    async def settle(self, board: BoardRef) -> int:
        """Write every entry the board's outbox still owes; returns how many games it
        looked at. Games still in play stay (a finish under way), unless abandoned."""
        if board.kind != "daily":
            return 0
        due = cast(
            Sequence[tuple[str, float]],
            await self._r.zrange(board.outbox_key, 0, -1, withscores=True),
        )
        now = _wall_ms()
        for game_id, since in due:
            k = keys.parse_game_id(game_id)
            if not isinstance(k, DailyGameKeys):  # never put there: drop it
                await self._r.zrem(board.outbox_key, game_id)
                continue
            status, pending, raw, held, screen = cast(
                list[str | None],
                await self._r.hmget(k.game, ["status", "pending", "entry", "held", "screen"]),
            )
            if status == "finished":
                if screen is not None and await self.resolve_due(k, screen) is not None:
                    await self.write(k, None)  # held: nothing owed, it leaves the outbox
                    continue
                # Owed: the mark says so, or a finished result the screen did not hold whose
                # mark went in the batch of a board step that failed (`write`). Writing an
                # entry the board has is a no-op (exactly once).
                owed = raw is not None and (pending is not None or held is None)
                await self.write(k, PendingEntry.loads(raw) if owed and raw else None)
            elif status is None or now - since >= self.abandon_after_ms:
                await self.dequeue(k)
        return len(due)


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


class Leaderboard:
    """Read side of the leaderboards (one round trip per query while no finish is owed)."""

    def __init__(
        self,
        redis: redis.asyncio.Redis,
        entries: BoardEntries | None = None,
        batch: Batcher | None = None,
    ) -> None:
        self._r = redis
        #: Reads run through the shared group commit too (`Services` hands it the store's).
        self.batch = batch if batch is not None else Batcher(redis)
        self._top = LuaScript.of(_TOP_LUA)
        self._around = LuaScript.of(_AROUND_LUA)
        self.entries = entries or BoardEntries(redis, commit=self.batch)

    @translate_redis_errors
    async def top(self, board: BoardRef, offset: int = 0, limit: int = 10) -> list[Entry]:
        """Rows ``offset+1 .. offset+limit`` (limit capped at ``MAX_LIMIT``)."""
        offset, limit = max(0, offset), min(max(0, limit), MAX_LIMIT)
        if limit == 0:
            return []
        args = (offset, offset + limit - 1)
        names = (board.board_key, board.entries_key, board.outbox_key)
        raw = cast(list[Any], await self.batch.eval(self._top, names, args))
        if raw and int(raw[0]) and await self.entries.settle(board):
            raw = cast(list[Any], await self.batch.eval(self._top, names, args))
        return _parse_rows(raw)

    @translate_redis_errors
    async def around(self, board: BoardRef, player_id: str, k: int = 2) -> list[Entry]:
        """The player's row with up to ``k`` rows above and ``k`` below it; empty if the
        player has no entry."""
        k = min(max(0, k), MAX_LIMIT // 2)
        names = (board.board_key, board.members_key, board.entries_key, board.outbox_key)
        raw = cast(list[Any], await self.batch.eval(self._around, names, (player_id, k)))
        if raw and int(raw[0]) and await self.entries.settle(board):
            raw = cast(list[Any], await self.batch.eval(self._around, names, (player_id, k)))
        return _parse_rows(raw)

    async def rank(self, board: BoardRef, player_id: str) -> Entry | None:
        """The player's own row (with its current rank), or None."""
        rows = await self.around(board, player_id, 0)
        return rows[0] if rows else None

    @translate_redis_errors
    async def total(self, board: BoardRef) -> int:
        n: int = await self._r.zcard(board.board_key)
        return n
