"""Engine-agnostic persistence of daily AND race games: a record hash plus an append-only move
log each; one store, one set of scripts for both kinds (a race game's id names its race).

Every write is a Lua script over the keys of one hash slot. A daily game's record and log
have their own tag (`server.redis.keys`), so one board's moves spread over a cluster's masters;
its board is elsewhere, and finishing it is two single-slot steps:

1. the game's script marks it finished with its result, the `PendingEntry` it implies
   (field ``entry``) and a ``pending`` mark (the game is first put in the board's outbox);
2. the board's script writes the entry unless the player has one and takes the game out of
   the outbox (`BoardEntries.write`); then the ``pending`` mark is cleared.

`finish` returns (and the player is told) only after both steps: an acknowledged result is on
its board. Two round trips when the caller has the game cached (`PlayedLog`: the screen runs
in the process): both outboxes, the account's fair-play mark and the game's step, which leaves
the game "screen due" (field ``screen``: the mark is on another slot); then the board's step
with the history's record and the marks' clearing (a marked account's result is held
instead). Three otherwise (docs/performance.md): the screen's read with the mark and both
outboxes; the game's step; the board's step. If the process dies or Redis fails between them,
the next load of the game or read of its board writes the entry, after reading the account's
mark if the screen is due (`server.boards.leaderboard`). A race game shares its race's slot and
finishes in one script. The caller must acknowledge a move only after :meth:`append_move`
returns: the move is then in Redis (and its AOF).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

import redis.asyncio

from server.boards.leaderboard import (
    LUA_WRITE_ENTRY,
    MARKED_NOTE,
    BoardEntries,
    Entry,
    PendingEntry,
    board_expire_at,
    entry_from_json,
    marked_verdict,
    prepare_entry,
)
from server.fairplay.screen import Play, Reason, Verdict, screen
from server.games.monthindex import MonthIndex
from server.players.crowns import CROWNS, Crowns
from server.players.history import DailyResult, History
from server.redis import keys
from server.redis.batch import Batcher, LuaScript
from server.runtime.errors import (
    Conflict,
    DayOver,
    GameOver,
    InvalidInput,
    NotFound,
    StoreUnavailable,
    is_outage,
    translate_redis_errors,
)

__all__ = ["UNDO", "FinalResult", "GameRecord", "GameStore", "PlayedLog", "new_game_fields"]

log = logging.getLogger(__name__)

UNDO = "undo"  # log text for an undo

#: How long the record of a race day's listed held results is kept (the day, and slack).
_HELD_RACES_TTL_S = 2 * 86_400

#: The refusal of a write to a daily game whose UTC day is over.
DAY_OVER_MESSAGE = (
    "this daily game's UTC day is over: it was closed as it stood at midnight "
    "and takes no more moves, undos, hints, resigns or finishes"
)

# KEYS: the game's record.  ARGV: its expiry (unix s), then the new record's field/value pairs.
# Returns 1 when the record was created now (it holds the fields given: the caller makes the
# record from them, nothing is sent back), else the existing record (HGETALL), unchanged.
_START_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 2))
  redis.call('EXPIREAT', KEYS[1], ARGV[1])
  return 1
end
return redis.call('HGETALL', KEYS[1])
"""


def _lua_push_move(
    game: str,
    log: str,
    times: str,
    text: str,
    now: str,
    now_text: str,
    seq: str,
    last: str,
    call: str = "redis.call",
) -> str:
    """How a move is stored, as Lua statements for the scripts that store one (the append,
    written flat, and a finish's final move): the server's milliseconds since the previous
    move (since the deal was served, for the first) to the times list (`server.fairplay`),
    the move to the log, both inheriting the record's TTL when the first move creates them,
    and one HSET of the time and the new seq. ``now`` the time as a number, ``now_text`` as
    stored; ``seq`` the game's seq (checked by the caller), ``last`` its last_move_at_ms as
    the caller's HMGET read it; ``call``: the name the script calls Redis by."""
    return f"""
{call}('RPUSH', {times}, math.max(0, {now} - (tonumber({last}) or {now})))
if {call}('RPUSH', {log}, {text}) == 1 then
  local ttl = {call}('PTTL', {game})
  if ttl > 0 then
    {call}('PEXPIRE', {log}, ttl)
    {call}('PEXPIRE', {times}, ttl)
  end
end
{call}('HSET', {game}, 'last_move_at_ms', {now_text}, 'seq', {seq} + 1)
"""


_LUA_PUSH = (
    """
local function push_move(game, log, times, text, now, seq, last)
"""
    + _lua_push_move("game", "log", "times", "text", "tonumber(now)", "now", "seq", "last")
    + """
end

-- A finish's write: the final move `a.move` when `a.final`, then the game's record marked
-- finished at `a.now` with `extra` (field, value pairs) and the result fields `a.fields`.
-- `st`: the caller's HMGET of status, seq, last_move_at_ms (seq already checked).
local function seal(game, log, times, a, st, extra)
  if a.final == true then push_move(game, log, times, a.move, a.now, a.seq, st[3]) end
  local fields = {'status', 'finished', 'finished_at_ms', a.now}
  for _, v in ipairs(extra) do fields[#fields + 1] = v end
  for f, v in pairs(a.fields) do
    fields[#fields + 1] = f
    fields[#fields + 1] = v
  end
  redis.call('HSET', game, unpack(fields))
end
"""
)


# A daily game's day is over for a write whose `now` is at or past its day's end, or once any
# process's write found it so (the game's `day_over` mark, set here and by the rollover close):
# the first process whose clock passes midnight closes the game for every process.
# `day_end` 0: not a daily game (a race), never over by the day.
def _lua_day_over(
    status: str, mark: str, now: str, day_end: str, refuse: str, game: str = "KEYS[1]"
) -> str:
    """The day-over rule above as Lua, written into each script that writes to a game (not a
    shared Lua function: a script's functions are made anew at every call, issue #30):
    ``status`` and ``mark`` (the game's `day_over` field) as its HMGET read them, ``now`` and
    ``day_end`` numbers (``day_end`` 0: never over), ``refuse`` the statement ending the script
    when the day is over, ``game`` the record's key. The first write past the day's end marks
    a game in play."""
    return f"""
if {day_end} > 0 and ({mark} or {now} >= {day_end}) then
  if not {mark} and {status} == 'playing' then redis.call('HSET', {game}, 'day_over', {now}) end
  {refuse}
end
"""


def _lua_append(
    game: str,
    log: str,
    times: str,
    expected: str,
    move: str,
    now_text: str,
    max_moves: str,
    day_end: str,
) -> str:
    """The append's statements (`_APPEND_LUA`, and each call of `_APPEND_MANY_LUA`): Lua
    expressions for the game's three keys and the five arguments, ``return`` ending the call."""
    return (
        f"""
local st = call('HMGET', {game}, 'status', 'seq', 'last_move_at_ms', 'day_over')
if not st[1] then return {{-1, 0}} end
local seq = tonumber(st[2])
local now = tonumber({now_text})
local day_end = tonumber({day_end} or '0')
"""
        + _lua_day_over("st[1]", "st[4]", "now", "day_end", "return {-5, seq}", game)
        + f"""
if st[1] ~= 'playing' then return {{-2, seq}} end
if seq ~= tonumber({expected}) then return {{-3, seq}} end
if seq >= tonumber({max_moves}) then return {{-4, seq}} end
"""
        + _lua_push_move(game, log, times, move, "now", now_text, "seq", "st[3]", "call")
        + """
return seq + 1
"""
    )


# KEYS: game, log, times. ARGV: expected_seq, move, now_ms, max_moves, day_end_ms (0: none).
# Returns the new seq (an integer: the move is appended) | {-1, 0} no game | {-2, seq} finished
# | {-3, seq} stale | {-4, seq} full | {-5, seq} the game's day is over (`_lua_day_over`,
# its mark read by the same HMGET). The move is stored as `_lua_push_move` says. Written
# flat for redis-server's CPU (issue #30,
# benchmarks/redis_script_bench.py): no closures made per call, no HEXISTS, `redis.call`
# local, an integer reply; every check of the shared functions is kept.
_APPEND_LUA = "local call = redis.call" + _lua_append(
    "KEYS[1]", "KEYS[2]", "KEYS[3]", "ARGV[1]", "ARGV[2]", "ARGV[3]", "ARGV[4]", "ARGV[5]"
)

# The append of several games at once (`LuaScript.many`: the batcher runs a run of appends
# queued one after the other as one call on a single Redis, issue #30): each call's three
# KEYS and five ARGV one after the other; the reply one element per call, `_APPEND_LUA`'s
# reply, or an error for that call alone (`pcall`: a call that fails fails only its own
# caller, the others' moves being written). One script call instead of several saves
# EVALSHA's fixed cost and a MULTI/EXEC in the AOF per move (docs/performance.md).
_APPEND_MANY_LUA = (
    """
local call = redis.call
local function one(game, log, times, expected, move, now_text, max_moves, day_end_text)
"""
    + _lua_append(
        "game", "log", "times", "expected", "move", "now_text", "max_moves", "day_end_text"
    )
    + """
end
local out = {}
for i = 0, #KEYS / 3 - 1 do
  local k, a = 3 * i, 5 * i
  local ok, r = pcall(one, KEYS[k + 1], KEYS[k + 2], KEYS[k + 3],
    ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5])
  if ok then
    out[i + 1] = r
  elseif type(r) == 'table' and r.err then  -- Redis 7 raises a redis.call error as a table
    out[i + 1] = r
  else
    out[i + 1] = {err = tostring(r)}
  end
end
return out
"""
)

# A game's record and its whole log, read at one instant (a script, run through the batcher
# like every other: redis-py's cluster MULTI pipeline failed with an AttributeError instead of
# a connection error while a master died, tests/server/redis/test_cluster_faults.py).
_LOAD_LUA = "return {redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1)}"
# The same with the move times (the cached game's, `GameService`): KEYS game, log, times.
_LOAD_PLAYED_LUA = """
return {redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1),
        redis.call('LRANGE', KEYS[3], 0, -1)}
"""

# What the fair-play screen reads of a game about to finish, at one instant.
_SCREEN_READ_LUA = """
return {redis.call('HMGET', KEYS[1], 'last_move_at_ms', 'variant'),
        redis.call('LRANGE', KEYS[2], 0, -1), redis.call('LRANGE', KEYS[3], 0, -1)}
"""

# KEYS: game. ARGV: now_ms, day_end_ms (0: none), seq (the position the hint was searched
# at; -1: any). Counts a hint on a game in play at that position.
# Returns the hint count, -1 no game, -2 finished, -3 the game moved on (not counted: the
# hint was of a position left), -5 the game's day is over.
# The day-over mark is read with the status (`_lua_day_over`).
_HINT_LUA = (
    """
local st = redis.call('HMGET', KEYS[1], 'status', 'day_over', 'seq')
if not st[1] then return -1 end
local now, day_end = tonumber(ARGV[1]), tonumber(ARGV[2])
"""
    + _lua_day_over("st[1]", "st[2]", "now", "day_end", "return -5")
    + """
if st[1] ~= 'playing' then return -2 end
local want = tonumber(ARGV[3])
if want >= 0 and tonumber(st[3]) ~= want then return -3 end
return redis.call('HINCRBY', KEYS[1], 'hints', 1)
"""
)

# KEYS: the day's started index, its closed marker. ARGV: game id, now_ms, expire_at.
# Enlists a daily game before its record is made, so the rollover sweep finds every game of
# the day. Returns 1, or 0 when the day is closed already (no new game of it).
_ENLIST_LUA = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1]) == 1 then
  redis.call('EXPIREAT', KEYS[1], ARGV[3])
end
return 1
"""

# KEYS: the review desk, the race day's listed held race results. ARGV: player id, game id,
# now_ms, ttl s. Lists a held race result unless one of the player's that day is on the desk
# still (one reviewed since, or never held after all, gives its place up). Returns 1 listed,
# 0 not.
_HOLD_RACE_LUA = """
local listed = redis.call('HGET', KEYS[2], ARGV[1])
if listed and listed ~= ARGV[2] and redis.call('ZSCORE', KEYS[1], listed) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[4])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
return 1
"""

# KEYS: game, log, times. The game's step of a daily finish.
# ARGV (flat, no JSON: packing and decoding a JSON object was most of the client's and the
#       script's parsing cost, issue #30): seq, final ('1': log `move`), move, now, entry (the
#       `PendingEntry` JSON), held (the screen's verdict JSON when it holds the result, ''
#       otherwise), day_end (ms), rollover ('1': the close at the day's end), board ('1': the
#       game is on a board), due, brief ('1'), hints, then the result's values in
#       `FinalResult.fields` order (won .. rollover, integers).
#       ``due``: the screen's verdict JSON without the account's mark when the mark is read in
#       the same round trip: the record is then "finished, screen due" (field ``screen``)
#       until the mark is known (`BoardEntries.resolve_due`). ``brief``: the caller has the
#       record cached, so a first finish returns the integer 0 alone (not a Lua table: a
#       table is a deferred-length reply, which moves it and every later reply of the
#       pipeline to the client's reply list, issue #30). ``hints``: the count the result was
#       made with; any other stored count makes the step stale ({-3}) for every caller, the
#       close at the day's end included: a copy cached on another process than the one that
#       counted a hint does not know of it, and must not finish the game without it (a
#       helper playing the cheater had hinted results ranked and timed as unhinted so).
# Returns {0, record} on first finish (now finished, 'pending', or 'held' instead: a held
# result owes its board nothing until reviewed), {1, record} if the game was already finished
# (nothing written), {-1} no game, {-3, seq} stale expected_seq, {-5, seq} the game's day is
# over (a player's finish; the rollover close is the one write it takes).
_FINISH_GAME_LUA = (
    _LUA_PUSH
    + """
local RESULT = {'won', 'over', 'resigned', 'cleared', 'score', 'points', 'time_ms', 'moves',
                'hints', 'rollover'}
local fields = {}
for i, f in ipairs(RESULT) do fields[f] = ARGV[12 + i] end
local a = {seq = tonumber(ARGV[1]), final = ARGV[2] == '1', move = ARGV[3], now = ARGV[4],
           fields = fields}
local rollover, brief = ARGV[8] == '1', ARGV[11] == '1'
local st = redis.call('HMGET', KEYS[1], 'status', 'seq', 'last_move_at_ms', 'rollover', 'hints',
                     'day_over')
if not st[1] then return {-1} end
if not rollover then
  if st[4] == '1' then return {-5, tonumber(st[2])} end
  if st[1] ~= 'finished' then
    local now, day_end = tonumber(a.now), tonumber(ARGV[7])
"""
    + _lua_day_over("st[1]", "st[6]", "now", "day_end", "return {-5, tonumber(st[2])}")
    + """
  end
end
if st[1] == 'finished' then return {1, redis.call('HGETALL', KEYS[1])} end
if tonumber(st[2]) ~= a.seq then return {-3, tonumber(st[2])} end
if tonumber(st[5] or '0') ~= tonumber(ARGV[12]) then return {-3, tonumber(st[2])} end
local extra = {'entry', ARGV[5]}
if ARGV[6] ~= '' then
  extra[#extra + 1] = 'held'
  extra[#extra + 1] = ARGV[6]
elseif ARGV[9] == '1' then
  extra[#extra + 1] = 'pending'
  extra[#extra + 1] = '1'
  if ARGV[10] ~= '' then
    extra[#extra + 1] = 'screen'
    extra[#extra + 1] = ARGV[10]
  end
end
if rollover then
  extra[#extra + 1] = 'day_over'
  extra[#extra + 1] = a.now
end
seal(KEYS[1], KEYS[2], KEYS[3], a, st, extra)
if brief then return 0 end
return {0, redis.call('HGETALL', KEYS[1])}
"""
)

# KEYS: game, log, times. A free game's finish (protocol 7): its record only, no board.
# ARGV: one JSON object {seq, final (bool), move, now, fields}.
# Returns {0, record} | {1, record} already finished | {-1} no game | {-3, seq} stale.
_FINISH_FREE_LUA = (
    _LUA_PUSH
    + """
local a = cjson.decode(ARGV[1])
local st = redis.call('HMGET', KEYS[1], 'status', 'seq', 'last_move_at_ms')
if not st[1] then return {-1} end
if st[1] == 'finished' then return {1, redis.call('HGETALL', KEYS[1])} end
if tonumber(st[2]) ~= a.seq then return {-3, tonumber(st[2])} end
seal(KEYS[1], KEYS[2], KEYS[3], a, st, {})
return {0, redis.call('HGETALL', KEYS[1])}
"""
)

# A race game's finish, in one script (its board shares the race's slot).
# KEYS: game, log, times, board, members, entries.
# ARGV: one JSON object {seq, final (bool), move, now, exp, pid, score, member, data, fields}:
#       expected seq, the final move to log (if final), now_ms, the board's expire-at, the
#       player id, the entry's score, member and json, and the result fields (strings).
#       One argument rather than 27: packing arguments is most of the client's cost.
# Returns {0, record, rank, entry_json} on first finish, {1, record, rank, entry_json} if the
# game was already finished (nothing written), {-1} no game, {-3, seq} stale expected_seq.
_FINISH_LUA = (
    LUA_WRITE_ENTRY
    + _LUA_PUSH
    + """
local a = cjson.decode(ARGV[1])
local st = redis.call('HMGET', KEYS[1], 'status', 'seq', 'last_move_at_ms')
if not st[1] then return {-1} end
local pid = a.pid
if st[1] == 'finished' then
  return {1, redis.call('HGETALL', KEYS[1]), entry_rank(KEYS[4], KEYS[5], pid) or 0,
          redis.call('HGET', KEYS[6], pid) or ''}
end
if tonumber(st[2]) ~= a.seq then return {-3, tonumber(st[2])} end
seal(KEYS[1], KEYS[2], KEYS[3], a, st, {})
write_entry(KEYS[4], KEYS[5], KEYS[6], pid, a.score, a.member, a.data, a.exp)
return {0, redis.call('HGETALL', KEYS[1]), entry_rank(KEYS[4], KEYS[5], pid) or 0,
        redis.call('HGET', KEYS[6], pid) or ''}
"""
)


@dataclass(frozen=True, slots=True)
class FinalResult:
    """Outcome of a game as judged by the engine; ``points`` is the ranking quantity
    (cards cleared, or the foundation score for triple-deck variants)."""

    won: bool
    over: bool
    resigned: bool
    cleared: int
    score: int
    points: int
    time_ms: int
    moves: int
    hints: int = 0
    #: Closed as it stood when its UTC day ended (a daily game nobody finished in time).
    rollover: bool = False

    def fields(self) -> dict[str, int]:
        return {
            "won": int(self.won),
            "over": int(self.over),
            "resigned": int(self.resigned),
            "cleared": int(self.cleared),
            "score": int(self.score),
            "points": int(self.points),
            "time_ms": int(self.time_ms),
            "moves": int(self.moves),
            "hints": int(self.hints),
            "rollover": int(self.rollover),
        }


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A stored game. ``seed`` is secret until the day is over: never send it to clients."""

    game_id: str
    kind: Literal["daily", "race", "free"]
    variant: str
    date: dt.date
    player_id: str
    seed: int
    started_at_ms: int
    status: Literal["playing", "finished"]
    seq: int
    last_move_at_ms: int
    finished_at_ms: int | None = None
    result: FinalResult | None = None
    hints: int = 0
    #: A finished daily game's board entry while its board's step may still be owed.
    pending_entry: PendingEntry | None = None
    #: The board entry the result implies (kept after it is written, and while held).
    entry: PendingEntry | None = None
    #: The screen's verdict (JSON, `server.fairplay.screen.Verdict`) when it held the result.
    held: str | None = None
    #: The review of a held result: "cleared" or "confirmed" (None: not reviewed yet).
    review: str | None = None
    #: The day's tier the game plays ("medium" for the daily game; None for a race game).
    tier: str | None = None
    #: A catch-up game of a past day of the month: on no board, in no history.
    catchup: bool = False
    #: "Screen due": the screen's verdict (JSON) without the account's mark, while the mark
    #: is not known yet (a finish cut short between its two round trips); resolved by reading
    #: the mark before the result is published (`BoardEntries.resolve_due`).
    screen: str | None = None
    #: A race game's end (its race's ``ends_at``, written with the game by the race's start):
    #: no move is taken from then on. None for other games, and for a race game started by a
    #: release before it was written (the process's own time limit then: cheater review F-J).
    ends_at_ms: int | None = None

    @property
    def finished(self) -> bool:
        return self.status == "finished"

    @property
    def flagged(self) -> bool:
        """Held by the screen and not cleared: off the boards, `flagged` to its player."""
        return self.held is not None and self.review != "cleared"

    @property
    def day_end_ms(self) -> int:
        """When a daily game's UTC day ends (its writes stop; a catch-up game's month); 0 for
        a race game."""
        if self.kind != "daily":
            return 0
        return day_end_of(self.kind, keys.parse_game_id(self.game_id))


def day_end_of(kind: str, k: keys.GameKeys) -> int:
    """`GameRecord.day_end_ms` of a game of ``kind`` whose id parsed as ``k`` (for a caller
    that has the keys already)."""
    return k.end_ms if kind == "daily" and isinstance(k, keys.DailyGameKeys) else 0


_KINDS: dict[str, Literal["daily", "race", "free"]] = {
    "daily": "daily",
    "race": "race",
    "free": "free",
}


def _record(
    raw: dict[str, str] | list[str], k: keys.GameKeys | None = None, *, settled: bool = False
) -> GameRecord:
    """A stored record (a hash, or HGETALL's field/value list); ``k``: its game's keys, when
    the caller has them; ``settled``: as it is once its board's step is done (no ``pending``
    entry, no "screen due")."""
    d = raw if isinstance(raw, dict) else dict(zip(raw[::2], raw[1::2], strict=True))
    result = None
    if d.get("status") == "finished":
        result = FinalResult(
            won=d["won"] == "1",
            over=d["over"] == "1",
            resigned=d["resigned"] == "1",
            cleared=int(d["cleared"]),
            score=int(d["score"]),
            points=int(d["points"]),
            time_ms=int(d["time_ms"]),
            moves=int(d["moves"]),
            hints=int(d.get("hints", 0)),
            rollover=d.get("rollover") == "1",
        )
    if k is None:
        k = keys.parse_game_id(d["game_id"])
    raw_entry = d.get("entry")
    entry = PendingEntry.loads(raw_entry) if raw_entry is not None else None
    daily = k if isinstance(k, keys.DailyGameKeys) else None
    return GameRecord(
        game_id=d["game_id"],
        kind=_KINDS.get(d.get("kind", ""), "daily"),
        variant=d["variant"],
        date=dt.date.fromisoformat(d["date"]),
        player_id=d["player_id"],
        seed=int(d["seed"]),
        started_at_ms=int(d["started_at_ms"]),
        status="finished" if d["status"] == "finished" else "playing",
        seq=int(d["seq"]),
        last_move_at_ms=int(d["last_move_at_ms"]),
        finished_at_ms=int(d["finished_at_ms"]) if "finished_at_ms" in d else None,
        result=result,
        hints=int(d.get("hints", 0)),
        pending_entry=entry if d.get("pending") and not settled else None,
        entry=entry,
        held=d.get("held") or None,
        review=d.get("review") or None,
        tier=daily.tier if daily is not None else None,
        catchup=daily is not None and daily.catchup,
        screen=None if settled else d.get("screen") or None,
        ends_at_ms=int(d["ends_at_ms"]) if "ends_at_ms" in d else None,
    )


def _new_record(k: keys.GameKeys, fields: Mapping[str, str | int]) -> GameRecord:
    """The record `_game_fields` stores (``fields``), as `_record` would read it back."""
    daily = k if isinstance(k, keys.DailyGameKeys) else None
    started_at_ms = int(fields["started_at_ms"])
    ends_at = fields.get("ends_at_ms")
    return GameRecord(
        game_id=k.game_id,
        kind=_KINDS.get(str(fields["kind"]), "daily"),
        variant=str(fields["variant"]),
        date=k.date,
        player_id=k.player_id,
        seed=int(fields["seed"]),
        started_at_ms=started_at_ms,
        status="playing",
        seq=0,
        last_move_at_ms=started_at_ms,
        tier=daily.tier if daily is not None else None,
        catchup=daily is not None and daily.catchup,
        ends_at_ms=int(ends_at) if ends_at is not None else None,
    )


@dataclass(frozen=True, slots=True)
class PlayedLog:
    """What the fair-play screen reads of a game about to finish, as the process that holds
    it cached has it (`server.games.service.LiveGame`): its log, the server's interval before
    each move, and its last move's time. It speaks for the game at the seq the finish's step
    checks in Redis: a stale one fails that check (`Conflict`) and nothing is written."""

    moves: Sequence[str]
    intervals_ms: Sequence[int]
    last_move_at_ms: int
    #: The game's record as cached (playing, at that seq): the finish's step then does not
    #: send the record back (its hint count is checked instead, the rest does not change
    #: during play), and the finished record is made from it here.
    record: GameRecord | None = None


def new_game_fields(
    game_id: str,
    kind: str,
    variant: str,
    seed: int,
    started_at_ms: int,
    ends_at_ms: int | None = None,
) -> dict[str, str | int]:
    """A new game record's fields (`GameStore.start_game`; a race's start writes its racers'
    games with them in its own script, ``ends_at_ms`` its race's end)."""
    return _game_fields(keys.parse_game_id(game_id), kind, variant, seed, started_at_ms, ends_at_ms)


def _game_fields(
    k: keys.GameKeys,
    kind: str,
    variant: str,
    seed: int,
    started_at_ms: int,
    ends_at_ms: int | None = None,
) -> dict[str, str | int]:
    # The fields every move reads and writes first: a small hash is a list Redis searches
    # from its head (ziplist), and a move finds them sooner (issue #30).
    fields: dict[str, str | int] = {
        "status": "playing",
        "seq": 0,
        "last_move_at_ms": started_at_ms,
        "game_id": k.game_id,
        "kind": kind,
        "variant": variant,
        "date": k.date.isoformat(),
        "player_id": k.player_id,
        "seed": str(int(seed)),
        "started_at_ms": started_at_ms,
    }
    if ends_at_ms is not None:
        fields["ends_at_ms"] = ends_at_ms
    return fields


class GameStore:
    """Persistence of daily and race games (start, moves, finish; a daily game's board entry
    and history too). ``redis`` must use ``decode_responses=True``."""

    def __init__(
        self,
        redis: redis.asyncio.Redis,
        *,
        retention_days: int = 90,
        max_moves: int = 10_000,
        max_move_len: int = 128,
    ) -> None:
        self._r = redis
        self.retention_days = retention_days
        self.max_moves = max_moves
        self.max_move_len = max_move_len
        self._expire_memo: tuple[dt.date, int, int] | None = None
        self._start = LuaScript.of(_START_LUA)
        #: Group commit of every write per request (one pipeline per event-loop iteration).
        self.batch = Batcher(redis)
        self._append = LuaScript.of(_APPEND_LUA, many=_APPEND_MANY_LUA, arity=(3, 5))
        #: Moves appended (for tests and the benchmark).
        self.appends = 0
        self._finish = LuaScript.of(_FINISH_LUA)
        self._finish_game = LuaScript.of(_FINISH_GAME_LUA)
        self._finish_free_game = LuaScript.of(_FINISH_FREE_LUA)
        #: The board's step of daily finishes, and its recovery.
        self.entries = BoardEntries(redis, commit=self.batch)
        self._hint = LuaScript.of(_HINT_LUA)
        self._load = LuaScript.of(_LOAD_LUA)
        self._load_played = LuaScript.of(_LOAD_PLAYED_LUA)
        self._screen_read = LuaScript.of(_SCREEN_READ_LUA)
        self._enlist = LuaScript.of(_ENLIST_LUA)
        self._hold_race_lua = LuaScript.of(_HOLD_RACE_LUA)
        #: Players' daily histories, derived exactly once from each finished daily game.
        self.history = History(redis, commit=self.batch)
        #: Players' crowns per month, from each finished tier game (`server.players.crowns`).
        self.crowns = Crowns(redis, commit=self.batch)
        #: Each player's tier games per month, noted at their start (the calendar's reads).
        self.months = MonthIndex(redis, self.batch, retention_days)
        #: Whether finished daily games are screened (`server.fairplay.screen`); a marked
        #: account's results are held either way.
        self.screen_results = True
        #: The day's par of a variant for the screen (the app sets it from its deal store).
        self.par_of: Callable[[str, dt.date, str, bool], Awaitable[int | None]] | None = None

    async def start_daily(
        self, variant: str, date: dt.date, player_id: str, seed: int, now_ms: int
    ) -> GameRecord:
        """Create the player's one ranked game for (variant, date), or return the existing
        one unchanged (resume: ``seq > 0`` or ``finished`` tells the caller)."""
        game_id = keys.daily_game_id(variant, date, player_id)
        noted = self.months.note_soon(player_id, variant, date, keys.DAILY_TIER, catchup=False)
        await self.enlist(variant, date, game_id, now_ms)  # in the note's batch
        await noted
        k = keys.parse_game_id(game_id)
        return await self._start_game(k, _game_fields(k, "daily", variant, seed, now_ms))

    async def start_tier(
        self,
        variant: str,
        date: dt.date,
        player_id: str,
        tier: str,
        seed: int,
        now_ms: int,
        *,
        catchup: bool = False,
    ) -> GameRecord:
        """The player's one game of a tier of (variant, date): ranked (enlisted in its day's
        index like the daily game, so the day's close settles it), or a catch-up game of a
        past day (on no board; its writes stop at its month's end). Returns the existing game
        unchanged when there is one: one attempt per tier and day, ranked or catch-up."""
        game_id = keys.tier_game_id(variant, date, player_id, tier, catchup=catchup)
        noted = self.months.note_soon(player_id, variant, date, tier, catchup=catchup)
        if not catchup:
            await self.enlist(variant, date, game_id, now_ms)  # in the note's batch
        record = await self.start_game(game_id, "daily", variant, seed, now_ms)
        await noted  # acknowledged before the start is
        return record

    @translate_redis_errors
    async def enlist(self, variant: str, date: dt.date, game_id: str, now_ms: int) -> None:
        """Put a daily game in its day's index of started games (before its record exists),
        where the rollover sweep finds it. Raises ``DayOver`` once the day is closed."""
        enlisted = await self.batch.eval(
            self._enlist,
            (keys.daily_started(variant, date), keys.daily_closed(variant, date)),
            (game_id, now_ms, board_expire_at(date, self.retention_days)),
        )
        if not int(cast(int, enlisted)):
            raise DayOver(f"the {date.isoformat()} daily games are closed: that day is over")

    async def start_game(
        self,
        game_id: str,
        kind: str,
        variant: str,
        seed: int,
        started_at_ms: int,
        ends_at_ms: int | None = None,
    ) -> GameRecord:
        """Create a game record unless it exists (then return it unchanged). The game's time
        counts from ``started_at_ms``: when the deal is served, or when a race starts (a race
        game's ``ends_at_ms``: its race's end)."""
        k = keys.parse_game_id(game_id)
        return await self._start_game(
            k, _game_fields(k, kind, variant, seed, started_at_ms, ends_at_ms)
        )

    @translate_redis_errors
    async def _start_game(self, k: keys.GameKeys, fields: dict[str, str | int]) -> GameRecord:
        """`start_game` of a parsed id and its record's ``fields``. A record created now is
        made here from the fields written (`_new_record`), not read back: a new game's start
        costs one script whose reply is a number (issue #30: the per-game costs)."""
        args: list[str | int] = [board_expire_at(k.date, self.retention_days)]
        for name, v in fields.items():
            args += [name, v]
        raw = await self.batch.eval(self._start, (k.game,), tuple(args))
        if raw == 1:
            return _new_record(k, fields)
        return _record(cast(list[str], raw), k)

    @translate_redis_errors
    async def get(self, game_id: str) -> GameRecord:
        """The record without its log. Raises ``NotFound``."""
        k = keys.parse_game_id(game_id)
        raw = cast(dict[str, str], await self._r.hgetall(k.game))
        if not raw:
            raise NotFound("no such game")
        return await self._settled(k, _record(raw))

    @translate_redis_errors
    async def get_many(self, game_ids: Sequence[str]) -> list[GameRecord | None]:
        """The records of several games in one round trip (None: no such game): one `HGETALL`
        each, queued together in the Batcher's pipeline (on Redis Cluster it goes to each
        game's master). A returning player's `welcome` reads 48 of them: redis-py's Python
        `Pipeline` cost about 1 ms of CPU for that, the Batcher a fraction (docs/performance.md)."""
        if not game_ids:
            return []
        ks = [keys.parse_game_id(g) for g in game_ids]
        raws = cast(  # a map, or a field/value list (RESP2)
            list[dict[str, str] | list[str]],
            await asyncio.gather(*(self.batch.run_soon(k.game, "HGETALL", k.game) for k in ks)),
        )
        return [
            await self._settled(k, _record(raw)) if raw else None
            for k, raw in zip(ks, raws, strict=True)
        ]

    @translate_redis_errors
    async def load(self, game_id: str) -> tuple[GameRecord, list[str]]:
        """Record plus full move log, read consistently (MULTI). Raises ``NotFound``."""
        k = keys.parse_game_id(game_id)
        raw, moves = cast(
            tuple[list[str], list[str]], await self.batch.eval(self._load, (k.game, k.log))
        )
        if not raw:
            raise NotFound("no such game")
        return await self._settled(k, _record(raw)), list(moves)

    @translate_redis_errors
    async def load_played(self, game_id: str) -> tuple[GameRecord, list[str], list[int]]:
        """`load` with the server's interval before each move (the `times` list): what a
        process caches of a game for the screen of its finish (`PlayedLog`)."""
        k = keys.parse_game_id(game_id)
        raw, moves, times = cast(
            tuple[list[str], list[str], list[str]],
            await self.batch.eval(self._load_played, (k.game, k.log, k.times)),
        )
        if not raw:
            raise NotFound("no such game")
        return await self._settled(k, _record(raw)), list(moves), [int(t) for t in times]

    @translate_redis_errors
    async def version(self, game_key: str) -> tuple[str, int, int]:
        """A stored game's status, seq and hints, to tell whether a cached copy is current."""
        status, seq, hints = await self._r.hmget(game_key, ["status", "seq", "hints"])
        if status is None or seq is None:
            raise NotFound("no such game")
        return str(status), int(seq), int(hints or 0)

    @translate_redis_errors
    async def length(self, log_key: str) -> int:
        """How many moves the game's log holds (its `seq` in Redis)."""
        return int(await self._r.llen(log_key))

    async def _settled(self, k: keys.GameKeys, record: GameRecord) -> GameRecord:
        """The record, its board entry written first if that step is still owed (after the
        account's mark is read, if the screen is due: a marked account's result is held)."""
        if record.pending_entry is None or not isinstance(k, keys.DailyGameKeys):
            return record
        if record.screen is not None:
            raw = await self.entries.resolve_due(k, record.screen)
            if raw is not None:
                held = _record(raw)
                await self.record_history(held)  # held: out of the player's outbox
                return held
            # A finish cut short after its first trip, whose outbox write may have failed
            # beside its step (a cluster): its history is recorded here too (idempotent).
            await self.entries.write(k, record.pending_entry)
            settled = replace(record, pending_entry=None, screen=None)
            await self.record_history(settled)
            return settled
        await self.entries.write(k, record.pending_entry)
        return replace(record, pending_entry=None, screen=None)

    async def append_move(
        self, game_id: str, expected_seq: int, move_text: str, now_ms: int
    ) -> int:
        """Append one move if the log has exactly ``expected_seq`` entries; returns the new
        seq. Raises ``NotFound``, ``GameOver``, ``Conflict`` (stale seq), ``InvalidInput`` or
        ``StoreUnavailable``."""
        k = keys.parse_game_id(game_id)
        day_end = k.end_ms if isinstance(k, keys.DailyGameKeys) else 0
        return await self.append(k.game, k.log, k.times, expected_seq, move_text, now_ms, day_end)

    async def append(
        self,
        game_key: str,
        log_key: str,
        times_key: str,
        expected_seq: int,
        move_text: str,
        now_ms: int,
        day_end_ms: int = 0,
    ) -> int:
        """`append_move` with the game's keys already built (the hot path: once per game).
        The move's server time goes into the same script (its ``times`` list).
        ``day_end_ms``: a daily game's day end, after which the script refuses (``DayOver``)."""
        self._check_move(move_text)
        self.appends += 1
        # The batch's future itself is awaited: no coroutine between (the hot path).
        reply = await self.batch.eval_soon(
            self._append,
            (game_key, log_key, times_key),
            (expected_seq, move_text, now_ms, self.max_moves, day_end_ms),
        )
        if type(reply) is int:  # appended: the new seq
            return reply
        code, seq = cast(list[int], reply)
        raise _error(code, seq)

    async def finish(
        self,
        game_id: str,
        result: FinalResult,
        name: str,
        now_ms: int,
        final_move: str | None,
        expected_seq: int,
        *,
        rollover: bool = False,
        played: PlayedLog | None = None,
    ) -> tuple[GameRecord, Entry]:
        """(Optionally) log ``final_move``, mark the game finished with ``result`` and write
        its leaderboard entry; returns the record and the entry with its rank now. A daily
        game in two steps (module docstring): the entry is on the board when this returns.
        ``played``: the game as the caller has it cached at ``expected_seq`` (its log and move
        times): a daily finish is then screened here and takes two round trips, not three.

        Exactly once: if the game is already finished nothing new is written (an entry still
        owed is written) and the stored record and entry are returned (so a retried finish is
        harmless). Raises ``NotFound``, ``Conflict`` (stale ``expected_seq``), ``DayOver`` (a
        daily game whose day is over, unless this is its ``rollover`` close, with ``now_ms``
        its day's end) or ``StoreUnavailable`` (then the result may be stored: a retry or a
        read completes it).
        """
        # Outages become StoreUnavailable here rather than by `translate_redis_errors`: one
        # coroutine frame less on every resumption of a finish (issue #30).
        try:
            k = keys.parse_game_id(game_id)
            if final_move is not None:
                self._check_move(final_move)
            if isinstance(k, keys.FreeGameKeys):  # unranked: no board, no history, no screen
                return await self._finish_free(k, result, name, now_ms, final_move, expected_seq)
            entry = prepare_entry(
                player_id=k.player_id,
                name=name,
                won=result.won,
                cleared=result.cleared,
                score=result.score,
                points=result.points,
                time_ms=result.time_ms,
                moves=result.moves,
                finished_at_ms=now_ms,
                hints=result.hints,
            )
            expire_at = self._expire_at(k.date)
            if isinstance(k, keys.DailyGameKeys):
                pending = PendingEntry(entry.score, entry.member, entry.data, expire_at)
                if played is not None and not k.catchup and not rollover:
                    cached = await self._screen_played(k, result, now_ms, final_move, played)
                    if not cached.held:  # held by its pace: the path below (the desk first)
                        return await self._finish_daily_due(
                            k,
                            result,
                            pending,
                            now_ms,
                            final_move,
                            expected_seq,
                            cached,
                            played,
                            name,
                        )
                # Round trip 1: the screen's read, the account's mark and both outboxes (the
                # history's, the board's), independent, so one batch of the group commit. The
                # outboxes are written before the game's step either way: a result the screen
                # holds leaves the board's outbox at its next read (nothing is owed there).
                # Queued as futures, not coroutines: no task each (`Batcher.run_soon`).
                outboxes: tuple[asyncio.Future[object], ...] = (
                    self.history.mark_pending_soon(k.player_id, k.game_id),
                )
                if not k.catchup:  # a catch-up game is on no board: the player's outbox only
                    outboxes += (self.entries.enqueue_soon(k, expire_at),)
                verdict = await self._screen(k, result, now_ms, final_move, outboxes)
                return await self._finish_daily(
                    k,
                    result,
                    pending,
                    now_ms,
                    final_move,
                    expected_seq,
                    verdict.dumps() if verdict.held else "",
                    rollover,
                    name,
                )
            # A race result the screen holds stays in its race's standings (the racers saw the
            # race) but is not rated (`server.races.referee`): the verdict goes in its record.
            verdict = await self._screen(k, result, now_ms, final_move)
            fields = {f: str(v) for f, v in result.fields().items()}
            if verdict.held:  # listed on the review desk first, as a daily result is
                fields["held"] = verdict.dumps()
                await self._hold_race(k, verdict, now_ms)
            arg = json.dumps(
                {
                    "seq": expected_seq,
                    "final": final_move is not None,
                    "move": final_move or "",
                    "now": str(now_ms),
                    "exp": str(expire_at),
                    "pid": k.player_id,
                    "score": str(entry.score),
                    "member": entry.member,
                    "data": entry.data,
                    "fields": fields,
                },
                separators=(",", ":"),
            )
            res = cast(
                list[Any],
                await self.batch.eval(
                    self._finish, (k.game, k.log, k.times, k.board, k.members, k.entries), (arg,)
                ),
            )
            code = int(res[0])
            if code < 0:
                raise _error(code, res[1] if len(res) > 1 else None)
            record, rank, raw_entry = _record(res[1]), int(res[2]), res[3]
            if not raw_entry:  # finished long ago and the board expired meanwhile
                raise GameOver("game already finished")
            return record, entry_from_json(rank, k.player_id, raw_entry)
        except Exception as exc:
            if is_outage(exc):
                raise StoreUnavailable(f"redis unavailable: {exc}") from exc
            raise

    def _expire_at(self, date: dt.date) -> int:
        """`board_expire_at` of a day's board, remembered for the last day asked (a finish
        asks it each time; nearly every finish is of today's games)."""
        memo = self._expire_memo
        if memo is not None and memo[0] == date and memo[1] == self.retention_days:
            return memo[2]
        expire_at = board_expire_at(date, self.retention_days)
        self._expire_memo = (date, self.retention_days, expire_at)
        return expire_at

    async def _finish_free(
        self,
        k: keys.FreeGameKeys,
        result: FinalResult,
        name: str,
        now_ms: int,
        final_move: str | None,
        expected_seq: int,
    ) -> tuple[GameRecord, Entry]:
        """A free game's finish: its record only (one script on its own slot). The entry
        returned has no rank: the game is on no board."""
        arg = json.dumps(
            {
                "seq": expected_seq,
                "final": final_move is not None,
                "move": final_move or "",
                "now": str(now_ms),
                "fields": {f: str(v) for f, v in result.fields().items()},
            },
            separators=(",", ":"),
        )
        res = cast(
            list[Any],
            await self.batch.eval(self._finish_free_game, (k.game, k.log, k.times), (arg,)),
        )
        code = int(res[0])
        if code < 0:
            raise _error(code, res[1] if len(res) > 1 else None)
        record = _record(res[1])
        r = record.result or result
        return record, Entry(
            rank=0,
            player_id=k.player_id,
            name=name,
            won=r.won,
            cleared=r.cleared,
            score=r.score,
            points=r.points,
            time_ms=r.time_ms,
            moves=r.moves,
            finished_at_ms=record.finished_at_ms or now_ms,
            hints=r.hints,
        )

    async def _screen(
        self,
        k: keys.DailyGameKeys | keys.RaceGameKeys,
        result: FinalResult,
        now_ms: int,
        final_move: str | None,
        riders: tuple[asyncio.Future[object], ...] = (),
    ) -> Verdict:
        """The screen's verdict on the game about to finish (`server.fairplay.screen`), from
        its server-timed log (one consistent read, plus whether the account is marked).
        ``riders``: commands queued in the same batch, awaited with the read (their errors
        raised after its own)."""
        fp = keys.fairplay_marked()
        marked_f = self.batch.run_soon(fp, "HEXISTS", fp, k.player_id)
        if not self.screen_results:
            await _all(marked_f, *riders)
            verdict = screen(Play(variant="", intervals_ms=(), won=result.won, moves=0))
            if marked_f.result():
                return verdict.with_reason(Reason.ACCOUNT_MARKED, MARKED_NOTE)
            return verdict
        read_f = self.batch.eval_soon(self._screen_read, (k.game, k.times, k.log))
        par = await self._par(k) if isinstance(k, keys.DailyGameKeys) else None
        await _all(read_f, marked_f, *riders)
        read, marked = read_f.result(), bool(marked_f.result())
        (last, variant), times, log_ = cast(
            tuple[tuple[str | None, str | None], list[str], list[str]], read
        )
        verdict = _verdict(
            str(variant or ""),
            [int(t) for t in times],
            [str(m) for m in log_],
            int(last or now_ms),
            result,
            now_ms,
            final_move,
            par,
        )
        if marked:
            verdict = verdict.with_reason(Reason.ACCOUNT_MARKED, MARKED_NOTE)
        return verdict

    async def _screen_played(
        self,
        k: keys.DailyGameKeys,
        result: FinalResult,
        now_ms: int,
        final_move: str | None,
        played: PlayedLog,
    ) -> Verdict:
        """The screen's verdict from the caller's cached game, without the account's mark
        (read beside the game's step, `_finish_daily_due`)."""
        if not self.screen_results:
            return screen(Play(variant="", intervals_ms=(), won=result.won, moves=0))
        return _verdict(
            k.variant,
            played.intervals_ms,
            played.moves,
            played.last_move_at_ms,
            result,
            now_ms,
            final_move,
            await self._par(k),
        )

    async def _par(self, k: keys.DailyGameKeys) -> int | None:
        if self.par_of is None:
            return None
        try:
            return await self.par_of(k.variant, k.date, k.tier or keys.DAILY_TIER, k.catchup)
        except StoreUnavailable:
            return None

    async def _finish_daily(
        self,
        k: keys.DailyGameKeys,
        result: FinalResult,
        entry: PendingEntry,
        now_ms: int,
        final_move: str | None,
        expected_seq: int,
        held: str,
        rollover: bool,
        name: str,
    ) -> tuple[GameRecord, Entry]:
        # The outboxes are written (`finish`): the history's (recorded below, or by the next
        # profile read) and the board's (written below, or by the next read of the board). A
        # held result is listed on the review desk (`server.fairplay.review`) before its
        # game's step marks it held: a round trip more, only for a held result. A held
        # catch-up result too (on no board, but its crowns wait for the reviewer's clear).
        if held:
            await self._hold(k, now_ms)
        args = _finish_args(k, result, entry, now_ms, final_move, expected_seq, held, rollover)
        res = cast(
            list[Any],
            await self.batch.eval(self._finish_game, (k.game, k.log, k.times), args),
        )
        d = await self._stepped(k, res)
        if k.catchup:  # on no board: its entry ranks nowhere
            record = _record(d, k)
            await self.record_history(record)
            return record, entry_from_json(0, k.player_id, entry.data)
        if (due := d.get("screen")) is not None:  # another finish left it "screen due"
            raw = await self.entries.resolve_due(k, due)
            d = _fields(raw) if raw is not None else d
        mine = (entry.data, name, result, now_ms)
        return await self._published(k, _record(d, k, settled=True), "pending" in d, mine)

    async def _stepped(self, k: keys.DailyGameKeys, res: list[Any]) -> dict[str, str]:
        """The record (its fields) the game's step of a daily finish returned, or its
        error."""
        code = int(res[0])
        if code == -1:  # no such game: nothing will be owed to the board
            await self.entries.dequeue(k)
        if code < 0:  # a stale seq stays: another process may be finishing the game now
            raise _error(code, res[1] if len(res) > 1 else None)
        return _fields(res[1])

    async def _finish_daily_due(
        self,
        k: keys.DailyGameKeys,
        result: FinalResult,
        entry: PendingEntry,
        now_ms: int,
        final_move: str | None,
        expected_seq: int,
        verdict: Verdict,
        played: PlayedLog,
        name: str,
    ) -> tuple[GameRecord, Entry]:
        """A daily finish screened from the caller's cached game, in two round trips:

        1. both outboxes (the history's, the board's), the account's mark and the game's
           step, which marks it finished, ``pending`` and "screen due" (the mark is on
           another slot: not known to the step);
        2. the board's step with the history's record and the marks' clearing, or, for a
           marked account, its hold (the desk's ``ZADD``, then the game marked held: two
           more, as any held result).

        Should the process die between them, the game stays in both outboxes and "screen
        due": whoever publishes it next reads the mark first (`BoardEntries.resolve_due`).
        """
        fp = keys.fairplay_marked()
        history_f = self.history.mark_pending_soon(k.player_id, k.game_id)
        board_f = self.entries.enqueue_soon(k, entry.expire_at)
        marked_f = self.batch.run_soon(fp, "HEXISTS", fp, k.player_id)
        due = verdict.dumps()
        base = played.record
        brief = base is not None and base.game_id == k.game_id and not base.finished
        args = _finish_args(
            k, result, entry, now_ms, final_move, expected_seq, "", False, due, brief
        )
        step_f = self.batch.eval_soon(self._finish_game, (k.game, k.log, k.times), args)
        await _answered(history_f, board_f, marked_f, step_f)
        # The step decides (its error first: a stale seq wrote nothing). An outbox that
        # failed beside a step that did not is only for recovery: step 2 does its work now.
        for f in (history_f, board_f):
            if f.exception() is not None:
                log.warning("outbox of %s not written: %s", k.game_id, f.exception())
        res = step_f.result()
        screen: str | None
        if base is not None and brief and res == 0:
            # Finished now as sent: the record is the cached one finished (no read-back).
            last = now_ms if final_move is not None else played.last_move_at_ms
            record = _finished(base, result, entry, now_ms, expected_seq, final_move, last)
            owed, screen = True, due
        else:  # an error, or finished already (maybe by another process: its record)
            d = await self._stepped(k, cast(list[Any], res))
            record, owed, screen = _record(d, k, settled=True), "pending" in d, d.get("screen")
        if (error := marked_f.exception()) is not None:
            raise error  # the mark unknown: the game stays "screen due" for its readers
        if screen is not None and marked_f.result():  # its own, or a crashed finish's
            d = _fields(await self.entries.hold(k, marked_verdict(screen)))
            record, owed = _record(d, k, settled=True), "pending" in d
        return await self._published(k, record, owed, (entry.data, name, result, now_ms))

    async def _published(
        self, k: keys.DailyGameKeys, record: GameRecord, owed: bool, mine: _Made | None = None
    ) -> tuple[GameRecord, Entry]:
        """The board's step of a finished daily game (not catch-up; its screen resolved),
        with its history's record: ``record`` as it is once settled, ``owed`` whether its
        entry is still owed to the board. Returns it with its stored entry and rank (none
        if held). ``mine``: the entry this finish made (its JSON, name, result and time):
        when the board holds exactly that JSON, the returned entry is made from them
        rather than by parsing it back."""
        if record.flagged and record.entry is not None:
            # Held: kept in its record, off the board until a reviewer clears it.
            await self.record_history(record)
            return record, entry_from_json(0, k.player_id, record.entry.data)
        # Step 2 with the stored entry (another process's, if it finished first; None: only
        # read, nothing owed), the marks' clearing and the history's record beside it
        # (independent of the board): one batch, queued as futures (the board's coroutine
        # queues its own before it first waits).
        history = self._record_history_soon(record)
        try:
            rank, raw_entry = await self.entries.write(k, record.entry if owed else None)
        finally:
            if history is not None and not history.done():  # answered in the same batch
                await asyncio.gather(history, return_exceptions=True)
        if history is not None:
            self._history_recorded(record, history)
        if not raw_entry:  # finished long ago and the board expired meanwhile
            raise GameOver("game already finished")
        if mine is not None and raw_entry == mine[0]:  # the board holds this finish's entry
            return record, _entry(rank, k.player_id, mine)
        return record, entry_from_json(rank, k.player_id, raw_entry)

    async def _hold_race(self, k: keys.RaceGameKeys, verdict: Verdict, now_ms: int) -> None:
        """`_hold` for a race result: the first of the player's race day only, and none held
        only because the account is marked. Its race rates it as no real attempt whatever a
        review says, so the desk needs one result an account and day as the evidence for a
        mark: listing each let two scripted accounts add ~2,200 an hour (a trip of the screen
        and a resignation every 3 s), burying the daily results behind them (review C2)."""
        if set(verdict.reasons) <= {Reason.ACCOUNT_MARKED}:
            return
        await self.batch.eval(
            self._hold_race_lua,
            (keys.fairplay_held(), keys.fairplay_held_races(k.date)),
            (k.player_id, k.game_id, now_ms, _HELD_RACES_TTL_S),
        )

    async def _hold(self, k: keys.DailyGameKeys, now_ms: int) -> None:
        """List a game on the review desk before its finish marks it held (listed first: a
        listed game that is not held is skipped by the desk)."""
        await self.batch.run(keys.fairplay_held(), "ZADD", keys.fairplay_held(), now_ms, k.game_id)

    async def record_history(self, record: GameRecord) -> None:
        """Add a finished daily game to its player's history (idempotent), unless the screen
        holds it (`server.fairplay.review` records it when cleared). A failure is only
        logged: the game stays in the player's outbox and is recorded on the next read."""
        if record.flagged and record.kind == "daily" and record.result is not None:
            try:  # held: not in the history (profiles) unless it is cleared
                await self.history.drop_pending(record.player_id, record.game_id)
            except StoreUnavailable:
                log.warning("history of %s not recorded yet (kept pending)", record.game_id)
            return
        history = self._record_history_soon(record)
        if history is not None:
            await asyncio.gather(history, return_exceptions=True)
            self._history_recorded(record, history)

    def _history_recorded(self, record: GameRecord, history: asyncio.Future[object]) -> None:
        """A queued history record's outcome: an error is only logged (kept pending)."""
        error = history.exception()
        if isinstance(error, StoreUnavailable):
            log.warning("history of %s not recorded yet (kept pending)", record.game_id)
        elif error is not None:
            raise error

    def _record_history_soon(self, record: GameRecord) -> asyncio.Future[object] | None:
        """The history's record of a finished daily game not held, queued in this
        iteration's batch (None: nothing to record). A tier game other than the daily
        (medium) one, or a catch-up game, earns crowns only (streaks stay daily); a won daily
        game earns its crowns before its history's record takes it out of the outbox."""
        r = record.result
        if record.kind != "daily" or r is None or record.finished_at_ms is None or record.flagged:
            return None
        tier = record.tier or keys.DAILY_TIER
        # Crowns are for a tier won without hints: a hint is the solver's move, and a bot
        # taking every move as a hint would win any deal (docs/fairplay.md).
        crowned = r.won and not r.hints
        if record.catchup or tier != keys.DAILY_TIER:
            return asyncio.ensure_future(
                self.crowns.award(
                    record.player_id, record.variant, record.date, tier, record.game_id, won=crowned
                )
            )
        result = DailyResult(  # positional, in its field order (cheaper: every finish)
            record.variant,
            record.date,
            record.player_id,
            r.won,
            r.resigned,
            r.cleared,
            r.score,
            r.points,
            r.time_ms,
            r.moves,
            r.hints,
            record.finished_at_ms,
        )
        if crowned:  # crowns first, in the record's script (its keys share the tag)
            return self.history.record_soon(
                result, crowns=(tier, CROWNS[tier]), game_id=record.game_id
            )
        return self.history.record_soon(result, game_id=record.game_id)

    @translate_redis_errors
    async def add_hint(self, game_id: str, now_ms: int, seq: int | None = None) -> int:
        """Count one hint on a game in play (durably, before the hint is sent); with
        ``seq``, only while the game is still at that many moves (the position the hint was
        searched at), else `Conflict` and nothing counted."""
        k = keys.parse_game_id(game_id)
        day_end = k.end_ms if isinstance(k, keys.DailyGameKeys) else 0
        args = (now_ms, day_end, -1 if seq is None else seq)
        n = int(cast(int, await self.batch.eval(self._hint, (k.game,), args)))
        if n == -1:
            raise NotFound("no such game")
        if n == -2:
            raise GameOver("the game is over")
        if n == -3:
            raise Conflict("the game moved on while the hint was searched: ask again")
        if n == -5:
            raise DayOver(DAY_OVER_MESSAGE)
        return n

    def _check_move(self, text: str) -> None:
        if not isinstance(text, str) or not 0 < len(text) <= self.max_move_len:
            raise InvalidInput(f"move text must be 1..{self.max_move_len} characters")


def _finished(
    base: GameRecord,
    result: FinalResult,
    entry: PendingEntry,
    now_ms: int,
    expected_seq: int,
    final_move: str | None,
    last_move_at_ms: int,
) -> GameRecord:
    """The record a brief daily step (`_FINISH_GAME_LUA`) stored, from the cached one it
    checked (seq and hints: nothing else of a record changes during play), once settled.
    Positional, in `GameRecord`'s field order: a frozen dataclass's keywords cost about a
    quarter more to construct (every finish makes one; checked field by field against the
    stored record by `test_a_brief_step_returns_the_record_redis_holds`)."""
    return GameRecord(
        base.game_id,
        base.kind,
        base.variant,
        base.date,
        base.player_id,
        base.seed,
        base.started_at_ms,
        "finished",
        expected_seq + (final_move is not None),
        last_move_at_ms,
        now_ms,  # finished_at_ms
        result,
        result.hints,
        None,  # pending_entry: settled
        entry,
        None,  # held
        None,  # review
        base.tier,
        base.catchup,
        None,  # screen
        base.ends_at_ms,
    )


#: The entry a finish made: its stored JSON, and the name, result and time it was made from.
_Made = tuple[str, str, FinalResult, int]


def _entry(rank: int, player_id: str, made: _Made) -> Entry:
    """The board's row of an entry this process made (`prepare_entry` of the same values),
    without parsing its JSON back."""
    _, name, r, finished_at_ms = made
    # rank, player_id, name, won, cleared, score, points, time_ms, moves, finished_at_ms,
    # hints: positional (cheaper for a frozen dataclass; every finish makes one)
    return Entry(
        rank,
        player_id,
        name,
        r.won,
        r.cleared,
        r.score,
        r.points,
        r.time_ms,
        r.moves,
        finished_at_ms,
        r.hints,
    )


def _fields(raw: list[str]) -> dict[str, str]:
    """A record's fields from HGETALL's field/value list."""
    return dict(zip(raw[::2], raw[1::2], strict=True))


def _finish_args(
    k: keys.DailyGameKeys,
    result: FinalResult,
    entry: PendingEntry,
    now_ms: int,
    final_move: str | None,
    expected_seq: int,
    held: str,
    rollover: bool,
    due: str = "",
    brief: bool = False,
) -> tuple[str | int, ...]:
    """The flat arguments of a daily game's step (`_FINISH_GAME_LUA`)."""
    r = result
    return (
        expected_seq,
        0 if final_move is None else 1,
        final_move or "",
        now_ms,
        entry.dumps(),
        held,
        k.end_ms,
        1 if rollover else 0,
        0 if k.catchup else 1,
        due,
        1 if brief else 0,
        r.hints,
        # the result, in `FinalResult.fields` order (the script names them so)
        1 if r.won else 0,
        1 if r.over else 0,
        1 if r.resigned else 0,
        int(r.cleared),
        int(r.score),
        int(r.points),
        int(r.time_ms),
        int(r.moves),
        int(r.hints),
        1 if r.rollover else 0,
    )


def _verdict(
    variant: str,
    intervals: Sequence[int],
    moves: Sequence[str],
    last_move_at_ms: int,
    result: FinalResult,
    now_ms: int,
    final_move: str | None,
    par: int | None,
) -> Verdict:
    """The screen's verdict on a game's log and move times (the final move's interval from
    its last move's time), without the account's mark. The sequences are not changed (the
    cached game's are passed as they are: no copy unless a final move is added)."""
    if final_move is not None:
        intervals = [*intervals, max(0, now_ms - last_move_at_ms)]
        moves = [*moves, final_move]
    n = min(len(intervals), len(moves))  # equal unless moves predate the times list
    if len(intervals) != n:
        intervals = intervals[len(intervals) - n :]
    if len(moves) != n:
        moves = moves[len(moves) - n :]
    # variant, intervals_ms, won, moves, hints, par, log: positional (every finish makes one)
    return screen(Play(variant, intervals, result.won, result.moves, result.hints, par, moves))


async def _answered(*futures: asyncio.Future[object]) -> None:
    """Wait for every future (commands of one batch), their errors left on them for the
    caller: `asyncio.gather(..., return_exceptions=True)` without its gathering future and
    callbacks (one finish's four replies arrive together)."""
    for f in futures:
        if not f.done():
            with contextlib.suppress(Exception):  # read by the caller from the future
                await f


async def _all(*futures: asyncio.Future[object]) -> None:
    """Wait for every future; raise the first one's error, in their order (each retrieved)."""
    await asyncio.gather(*futures, return_exceptions=True)
    for f in futures:
        if (error := f.exception()) is not None:
            raise error


def _error(code: int, seq: int | str | None) -> Exception:
    cur = int(seq) if seq is not None else None
    if code == -1:
        return NotFound("no such game")
    if code == -2:
        return GameOver("game already finished", current_seq=cur)
    if code == -3:
        return Conflict(f"stale seq (current {cur})", current_seq=cur)
    if code == -4:
        return InvalidInput("move limit reached")
    if code == -5:
        return DayOver(DAY_OVER_MESSAGE, current_seq=cur)
    return RuntimeError(f"unexpected script result {code}")
