"""Race state in Redis: rooms, the matchmaking queue, racers, progress and the event log.

Every value is typed (`racemodel`); status changes are guarded by the expected status.
Every change is a Lua script over keys of one hash tag (`{r:<id>}` for a race, `{q}` for the
queue), so concurrent server processes cannot interleave half-done changes. Events are
appended to the race's stream (the versioned log a client resyncs from) and published on the
race's channel in the same script, so the log and the fan-out never disagree. The scripts
run through the group commit (`server.redis.batch.Batcher`) the game store uses too: a
racer's move and its progress (`record_move_progress`) go to Redis in one batch.

A player's race requests that move them between the queue and races (queue, create, join,
leave) take turns (`RaceStore.turn`): a room's membership and the player's race pointer live
in different slots, so two of one player's requests at once (a double tap, two sockets, two
processes) could otherwise interleave and leave the pointer saying "in the room" when they
are not (or the reverse), and the player could neither leave nor race elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import cast

import redis.asyncio
from redis.typing import EncodableT, FieldT

import protocol.races as pr
from server.boards.leaderboard import board_expire_at
from server.games.store import new_game_fields
from server.races.model import (
    LoggedEvent,
    Progress,
    RaceResult,
    RaceState,
    RaceStatus,
    dump_results,
    load_results,
)
from server.redis import keys, pubsub
from server.redis.batch import Batcher, LuaScript
from server.runtime.errors import Conflict, NotFound, StoreUnavailable, translate_redis_errors

ROOM_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I to misread
EVENT_LOG_MAX = 2000
#: What an event's `race.room` entry adds to its logged JSON (its ``"v": N, ``), at most.
EVENT_OVERHEAD = 16
#: How long a race's games stay when the caller does not say (`GameStore`'s default).
GAME_RETENTION_DAYS = 90
#: A start reads the racers, then starts them in one script; when a racer joined or left in
#: between, it reads them again (this many times at most).
BEGIN_TRIES = 5
#: A player's turn (`RaceStore.turn`) lapses after this long, should its process stop.
TURN_TTL_MS = 10_000
#: How long a request waits for the player's turn before it answers `conflict`, and how often
#: it looks again meanwhile: soon at first (turns are short), then less and less often.
TURN_WAIT_S = 5.0
TURN_POLL_S = 0.002
TURN_POLL_MAX_S = 0.05
#: A closed room's keys go this long after it closes: the racers' last pushes read it.
CLOSED_ROOM_TTL_MS = 60_000
#: The window of the rooms-per-account quota (`RaceStore.count_room`).
ROOM_QUOTA_WINDOW_MS = 3_600_000
FINISHED_INDEX_MAX = 1000
"""Finished races kept per variant in the public list (each race's own keys live on)."""


# Appends an event to the race's log and publishes it (`race`, `events`: its keys; `e`: the
# event json, the two halves of the channel payload around the version
# (`pubsub.race_event_frame`), the channel). Scripts that change a race and announce the change
# include it, so the change, the log and the fan-out never disagree.
def _lua_emit(
    race: str, events: str, body: str, head: str, tail: str, channel: str, call: str
) -> str:
    """How an event is announced, as Lua statements (for `_EMIT_FN`, and written flat where
    a script runs at every move): the race's next version in ``v``, the event in the race's
    log, then on its channel (``head .. v .. tail``). ``call``: the name the script calls
    Redis by."""
    return f"""
local v = {call}('HINCRBY', {race}, 'version', 1)
{call}('XADD', {events}, 'MAXLEN', '~', {EVENT_LOG_MAX}, '*', 'v', v, 'e', {body})
{call}('PUBLISH', {channel}, {head} .. v .. {tail})
"""


_EMIT_FN = (
    """
local function emit(race, events, body, head, tail, channel)"""
    + _lua_emit("race", "events", "body", "head", "tail", "channel", "redis.call")
    + """return v
end
"""
)

# KEYS: race, events. ARGV: the event (4 values, see `_EMIT_FN`). Returns its version.
_EMIT_LUA = (
    _EMIT_FN
    + """
return emit(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
"""
)

# KEYS: race, progress, events. ARGV: pid, progress json, ttl_ms, then the progress event.
# A racer's progress and its event in one step. Returns the event's version.
_PROGRESS_LUA = (
    _EMIT_FN
    + """
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return emit(KEYS[1], KEYS[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
"""
)

# KEYS: race, progress, events, the racer's game record, its log. ARGV: pid, progress json,
# ttl_ms, seq, move, then the progress event. A move's progress, sent in the same batch right
# behind the move's append (`GameStore.append`, same slot): recorded and announced only when
# the game is in play at exactly `seq` with `move` as the log's entry `seq` (the append just
# stored it: an append Redis refused records nothing; the same move stored by another process
# at that seq leaves the same game, so the same progress), and once per seq (`progress_seq`
# in the game's record: a resent batch announces nothing twice, an older seq never overwrites
# a newer one). Returns the event's version, or 0 when nothing was recorded.
# Written flat for redis-server's CPU (issue #30, benchmarks/redis_script_bench.py --race):
# `emit` written in (`_lua_emit`: no closure made per call), `redis.call` local.
_MOVE_PROGRESS_LUA = (
    """
local call = redis.call
local st = call('HMGET', KEYS[4], 'status', 'seq', 'progress_seq')
local seq = tonumber(ARGV[4])
if st[1] ~= 'playing' or tonumber(st[2]) ~= seq then return 0 end
if st[3] and tonumber(st[3]) >= seq then return 0 end
if call('LINDEX', KEYS[5], seq - 1) ~= ARGV[5] then return 0 end
call('HSET', KEYS[4], 'progress_seq', seq)
call('HSET', KEYS[2], ARGV[1], ARGV[2])
call('PEXPIRE', KEYS[2], ARGV[3])
"""
    + _lua_emit("KEYS[1]", "KEYS[3]", "ARGV[6]", "ARGV[7]", "ARGV[8]", "ARGV[9]", "call")
    + """return v
"""
)

# KEYS: race, seen, present, progress, events. ARGV: pid, now, grace_ms, then the forfeit
# event. The forfeit decision, taken and announced in one step: only in a running race after
# its start, never for a racer some process holds a live connection of (`present`), nor
# within the grace since the racer was last seen, nor for a finished game; once. Two
# processes forfeiting two racers at once both count. Returns 1 forfeited, else 0.
_FORFEIT_IF_GONE_LUA = (
    _EMIT_FN
    + """
local st = redis.call('HMGET', KEYS[1], 'status', 'start_at', 'forfeited')
if st[1] ~= 'running' or not st[2] then return 0 end
local pid, now = ARGV[1], tonumber(ARGV[2])
if now < tonumber(st[2]) then return 0 end
local prefix = pid .. '|'
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. now, '+inf')) do
  if string.sub(m, 1, #prefix) == prefix then return 0 end
end
local seen = tonumber(redis.call('HGET', KEYS[2], pid) or st[2])
if now - seen <= tonumber(ARGV[3]) then return 0 end
local prog = redis.call('HGET', KEYS[4], pid)
if prog and cjson.decode(prog).finished then return 0 end
local list = st[3] and cjson.decode(st[3]) or {}
for _, p in ipairs(list) do if p == pid then return 0 end end
table.insert(list, pid)
table.sort(list)
redis.call('HSET', KEYS[1], 'forfeited', cjson.encode(list))
emit(KEYS[1], KEYS[5], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
return 1
"""
)

# KEYS: race, order, seen, events, then each racer's game record (joining order).
# ARGV: start_at, ends_at, ttl_ms, the games' expire-at (unix s), the pids (json list, joining
# order), their games' fields (json list of flat field/value lists of strings), then the
# `countdown` event, then (a race the queue matched) channel, message pairs telling each racer
# wherever they are connected (`pubsub.PlayerMatched`). The whole start on the race's slot:
# open -> running with its clock, each racer's game unless it exists, their seen marks (the
# grace counts from the start) and the announcements (a process stopping right after a start
# leaves nobody untold). Returns 1 started, 0 not open (or gone), -1 the racers changed
# meanwhile.
_BEGIN_LUA = (
    _EMIT_FN
    + """
if redis.call('HGET', KEYS[1], 'status') ~= 'open' then return 0 end
local pids = cjson.decode(ARGV[5])
local order = redis.call('LRANGE', KEYS[2], 0, -1)
if #order ~= #pids then return -1 end
for i, p in ipairs(order) do if pids[i] ~= p then return -1 end end
redis.call('HSET', KEYS[1], 'status', 'running', 'start_at', ARGV[1], 'ends_at', ARGV[2])
local fields = cjson.decode(ARGV[6])
local start = tonumber(ARGV[1])
for i, p in ipairs(pids) do
  local game = KEYS[4 + i]
  if redis.call('EXISTS', game) == 0 then
    redis.call('HSET', game, unpack(fields[i]))
    redis.call('EXPIREAT', game, ARGV[4])
  end
  if tonumber(redis.call('HGET', KEYS[3], p) or '0') < start then
    redis.call('HSET', KEYS[3], p, ARGV[1])
  end
end
redis.call('PEXPIRE', KEYS[3], ARGV[3])
emit(KEYS[1], KEYS[4], ARGV[7], ARGV[8], ARGV[9], ARGV[10])
for i = 11, #ARGV - 1, 2 do redis.call('PUBLISH', ARGV[i], ARGV[i + 1]) end
return 1
"""
)

# KEYS: race. ARGV: the finished_at the caller saw, now. Takes over the end of a race left
# in `finishing` (its process stopped): a compare-and-set on finished_at, so of the processes
# that saw the same stalled end exactly one takes it over. Returns 1 taken over, else 0.
_TAKE_OVER_LUA = """
local st = redis.call('HMGET', KEYS[1], 'status', 'finished_at')
if st[1] ~= 'finishing' or st[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'finished_at', ARGV[2])
return 1
"""

# KEYS: race, events. ARGV: results json, then the end event. finishing -> finished with
# the results, announced in the same step. Returns 1, or 0 when the race was not finishing.
_FINISH_LUA = (
    _EMIT_FN
    + """
if redis.call('HGET', KEYS[1], 'status') ~= 'finishing' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'finished', 'results', ARGV[1])
emit(KEYS[1], KEYS[2], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
return 1
"""
)

# KEYS: inrace, matched. ARGV: race id, pids. Frees the racers of this race only: a racer who
# has already moved on to another race keeps it.
_RELEASE_LUA = """
local n = 0
for i = 2, #ARGV do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    redis.call('HDEL', KEYS[2], ARGV[i])
    n = n + 1
  end
end
return n
"""

# KEYS: seen, present. ARGV: now, ttl_ms, live_until (0: a mark, not a live connection),
# process, pids. Marks racers seen now; with live_until, records that this process holds a
# live connection of each until then (refreshed by its race clock, dropped on disconnect).
# Marks only ever move forward: a late mark taken earlier does not shorten a newer one.
_PRESENT_LUA = """
local now, live = tonumber(ARGV[1]), tonumber(ARGV[3])
for i = 5, #ARGV do
  if tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0') < now then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[1])
  end
  if live > 0 then
    local m = ARGV[i] .. '|' .. ARGV[4]
    if tonumber(redis.call('ZSCORE', KEYS[2], m) or '0') < live then
      redis.call('ZADD', KEYS[2], live, m)
    end
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
"""

# KEYS: seen, present. ARGV: now, process, pid, ttl_ms. The last connection of pid on this
# process closed: its grace period counts from now (unless another process holds one).
_ABSENT_LUA = """
redis.call('ZREM', KEYS[2], ARGV[3] .. '|' .. ARGV[2])
if tonumber(redis.call('HGET', KEYS[1], ARGV[3]) or '0') < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], ARGV[3], ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
"""

# KEYS: race. ARGV: pid. Adds a forfeit to a running race in one step (no lost update when
# two processes forfeit two racers at once). Returns 1 added, 0 already in or not running.
_FORFEIT_LUA = """
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
local raw = redis.call('HGET', KEYS[1], 'forfeited')
local list = raw and cjson.decode(raw) or {}
for _, p in ipairs(list) do if p == ARGV[1] then return 0 end end
table.insert(list, ARGV[1])
table.sort(list)
redis.call('HSET', KEYS[1], 'forfeited', cjson.encode(list))
return 1
"""

# KEYS: race, racers, order, events. ARGV: pid, name, ttl_ms, then the `joined` event. Joins
# an open room and announces it in one step.
# Returns the number of racers, or -1 no race, -2 not open, -3 full, -4 already in.
_JOIN_LUA = (
    _EMIT_FN
    + """
local st = redis.call('HMGET', KEYS[1], 'status', 'size')
if not st[1] then return -1 end
if st[1] ~= 'open' then return -2 end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return -4 end
local n = redis.call('HLEN', KEYS[2])
if n >= tonumber(st[2]) then return -3 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[1])
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
emit(KEYS[1], KEYS[4], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
return n + 1
"""
)

# KEYS: race, racers, order, events. ARGV: pid, then the `left` event, then the `left` event
# of the room closing (4 values each), then how long a closed room's keys stay (ms). Leaves an
# open room and announces it in one step; the creator leaving closes it, and its keys then go
# within `CLOSED_ROOM_TTL_MS` (just long enough for the racers' last pushes; its code is freed
# at once by the caller: another slot). Returns 1 left, 2 room closed, 0 not in it / not open.
_LEAVE_LUA = (
    _EMIT_FN
    + """
local st = redis.call('HMGET', KEYS[1], 'status', 'creator')
if st[1] ~= 'open' or redis.call('HDEL', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('LREM', KEYS[3], 0, ARGV[1])
if st[2] == ARGV[1] then
  redis.call('HSET', KEYS[1], 'status', 'finished', 'closed', '1')
  emit(KEYS[1], KEYS[4], ARGV[6], ARGV[7], ARGV[8], ARGV[9])
  for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ARGV[10]) end
  return 2
end
emit(KEYS[1], KEYS[4], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
return 1
"""
)

# KEYS: a turn. ARGV: its holder's token. Ends the turn if it is still that holder's.
_END_TURN_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# KEYS: race. ARGV: from status, then field, value pairs. Guarded status change.
_TRANSITION_LUA = """
if redis.call('HGET', KEYS[1], 'status') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
"""

# KEYS: queue zset, who hash, inrace hash, matched hash, addr hash, making hash. ARGV: pid,
# now, size, fill_wait_ms, queue name, the race id a match gets, the player's client address,
# the same-address wait (ms). Returns {0, waiting} still waiting, {1, pid...} matched (removed
# from the queue and pointed at the new race, in one step: in between, a player would be
# neither queued nor racing, free to make a room of their own; the match is kept in `making`
# until its race is made, so any process makes it should this one stop), {-1, race_id}
# already racing, {-2, other queue} waiting in another queue.
# A group is picked in queue order, one account per client address (an empty address is
# anyone's own): accounts of one address are never grouped while someone else waits; when
# only one address's accounts wait, they are grouped once the oldest has waited the
# same-address wait (then as before: a full group, or two or more after the fill wait).
# The "address" is the player's network (`server.races.networks`); the match in `making`
# keeps each player's (`nets`), for the race to know who shares one.
_QUEUE_LUA = """
local pid = ARGV[1]
if pid ~= '' then
  local racing = redis.call('HGET', KEYS[3], pid)
  if racing then return {-1, racing} end
  local other = redis.call('HGET', KEYS[2], pid)
  if other and other ~= ARGV[5] then return {-2, other} end
  redis.call('ZADD', KEYS[1], 'NX', ARGV[2], pid)
  redis.call('HSET', KEYS[2], pid, ARGV[5])
  redis.call('HSET', KEYS[5], pid, ARGV[7])
end
local size, now = tonumber(ARGV[3]), tonumber(ARGV[2])
local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local n = #all / 2
if n < 2 then return {0, n} end
local oldest = tonumber(all[2])
local picked, used = {}, {}
for i = 1, #all, 2 do
  local a = redis.call('HGET', KEYS[5], all[i]) or ''
  if a == '' or not used[a] then
    if a ~= '' then used[a] = true end
    table.insert(picked, all[i])
    if #picked == size then break end
  end
end
local got = {}
if #picked >= size then
  got = picked
elseif #picked >= 2 then
  if oldest + tonumber(ARGV[4]) <= now then got = picked end
elseif oldest + tonumber(ARGV[8]) <= now then
  if n >= size or oldest + tonumber(ARGV[4]) <= now then
    for i = 1, math.min(n, size) * 2, 2 do table.insert(got, all[i]) end
  end
end
if #got == 0 then return {0, n} end
local nets = {}
for i, p in ipairs(got) do nets[i] = redis.call('HGET', KEYS[5], p) or '' end
redis.call('ZREM', KEYS[1], unpack(got))
redis.call('HDEL', KEYS[2], unpack(got))
redis.call('HDEL', KEYS[5], unpack(got))
redis.call('HSET', KEYS[6], ARGV[6],
  cjson.encode({queue = ARGV[5], pids = got, at = ARGV[2], nets = nets}))
local out = {1}
for _, p in ipairs(got) do
  redis.call('HSET', KEYS[3], p, ARGV[6])
  redis.call('HSET', KEYS[4], p, ARGV[2])
  table.insert(out, p)
end
return out
"""

# KEYS: who hash, addr hash, then every queue zset. ARGV: pid.
_UNQUEUE_LUA = """
local q = redis.call('HGET', KEYS[1], ARGV[1])
if not q then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
for i = 3, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 1
"""

# KEYS: the player's rooms-made zset. ARGV: race id, now, window ms, limit. Counts a room
# the player creates unless `limit` were created in the window before now (a sliding hour).
# Returns 1 counted, 0 the limit is reached.
_ROOM_QUOTA_LUA = """
local now, window = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], window)
return 1
"""

# KEYS: race, racers, order. ARGV: ttl_ms, the race's fields (json flat list), the racers
# (json list of [pid, name]). Creates the race unless it exists. Returns 1 created, else 0.
# KEYS: race, order, racers, progress, seen, present. A race's whole state at one instant (a
# script through the batcher, not a MULTI pipeline: redis-py's cluster transaction pipeline
# raised AttributeError instead of a connection error while a master died). Hashes and the
# zset come back flat: field, value, field, value...
_LOAD_LUA = """
return {redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1),
        redis.call('HGETALL', KEYS[3]), redis.call('HGETALL', KEYS[4]),
        redis.call('HGETALL', KEYS[5]), redis.call('ZRANGE', KEYS[6], 0, -1, 'WITHSCORES')}
"""

_CREATE_LUA = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(cjson.decode(ARGV[2])))
for _, r in ipairs(cjson.decode(ARGV[3])) do
  redis.call('HSET', KEYS[2], r[1], r[2])
  redis.call('RPUSH', KEYS[3], r[1])
end
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
return 1
"""

# KEYS: a room code. ARGV: the race id it must point at. Frees the code of a closed room.
_FREE_CODE_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


@dataclass(frozen=True, slots=True)
class Making:
    """A match whose race is not made yet: its queue, players and when it was matched."""

    race_id: str
    variant: str
    size: int
    pids: list[str]
    at: int
    #: pid -> the network it queued from (`server.races.networks`; "" unknown)
    networks: dict[str, str] = field(default_factory=dict)


def _matched_args(race_id: str, pids: Sequence[str]) -> list[str]:
    """Channel, message pairs telling each of `pids` they are in the race (`_BEGIN_LUA`)."""
    out: list[str] = []
    for pid in pids:
        msg = pubsub.encode(pubsub.PlayerMatched(player_id=pid, race_id=race_id))
        out += [keys.player_channel(pid), msg.decode()]
    return out


def _pairs(flat: Sequence[str]) -> dict[str, str]:
    """A script's flat HGETALL (or ZRANGE WITHSCORES) reply as a dict."""
    return {str(flat[i]): str(flat[i + 1]) for i in range(0, len(flat) - 1, 2)}


class RaceStore:
    """Redis operations on races and the queue. `redis` must use ``decode_responses=True``."""

    def __init__(
        self, client: redis.asyncio.Redis, ttl_ms: int, batch: Batcher | None = None
    ) -> None:
        self.r = client
        self.ttl_ms = ttl_ms
        #: Every script runs through the group commit the other stores share (`Services` hands
        #: it the game store's, so a racer's move and its progress go in one batch).
        self.batch = batch if batch is not None else Batcher(client)
        self._emit = LuaScript.of(_EMIT_LUA)
        self._progress = LuaScript.of(_PROGRESS_LUA)
        self._move_progress = LuaScript.of(_MOVE_PROGRESS_LUA)
        self._forfeit_if_gone = LuaScript.of(_FORFEIT_IF_GONE_LUA)
        self._finish = LuaScript.of(_FINISH_LUA)
        self._begin = LuaScript.of(_BEGIN_LUA)
        self._create = LuaScript.of(_CREATE_LUA)
        self._take_over = LuaScript.of(_TAKE_OVER_LUA)
        self._load = LuaScript.of(_LOAD_LUA)
        self._release = LuaScript.of(_RELEASE_LUA)
        self._present = LuaScript.of(_PRESENT_LUA)
        self._absent = LuaScript.of(_ABSENT_LUA)
        self._forfeit = LuaScript.of(_FORFEIT_LUA)
        self._join = LuaScript.of(_JOIN_LUA)
        self._leave = LuaScript.of(_LEAVE_LUA)
        self._transition = LuaScript.of(_TRANSITION_LUA)
        self._queue = LuaScript.of(_QUEUE_LUA)
        self._unqueue = LuaScript.of(_UNQUEUE_LUA)
        self._room_quota = LuaScript.of(_ROOM_QUOTA_LUA)
        self._free_code = LuaScript.of(_FREE_CODE_LUA)
        self._end_turn = LuaScript.of(_END_TURN_LUA)

    async def _reply(
        self, script: LuaScript, *, keys: Sequence[str], args: Sequence[str | int]
    ) -> object:
        """One script call in this event-loop iteration's batch (`Batcher`: EVALSHA, loaded
        when Redis lacks it, routed by its first key on a cluster)."""
        return await self.batch.eval(script, tuple(keys), tuple(args))

    async def _run(
        self, script: LuaScript, *, keys: Sequence[str], args: Sequence[str | int]
    ) -> int:
        """`_reply` of a script whose reply is an integer."""
        return int(cast(int, await self._reply(script, keys=keys, args=args)))

    # -- a player's turn ------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def turn(self, pid: str) -> AsyncIterator[None]:
        """Run the block as the player's only race request in progress, on any process: a
        second one waits for the first to end (`Conflict` after `TURN_WAIT_S`)."""
        token = secrets.token_hex(8)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TURN_WAIT_S
        pause = TURN_POLL_S
        while not await self._take_turn(pid, token):
            if loop.time() >= deadline:
                raise Conflict("another race request of this player is still in progress")
            await asyncio.sleep(pause)
            pause = min(2 * pause, TURN_POLL_MAX_S)
        # A turn not ended (an outage, or the request cancelled while ending it) lapses after
        # TURN_TTL_MS; until then the player's race requests wait, then answer `conflict`.
        try:
            yield
        finally:
            with contextlib.suppress(StoreUnavailable):
                await self._end_turn_of(pid, token)

    @translate_redis_errors
    async def _take_turn(self, pid: str, token: str) -> bool:
        return bool(await self.r.set(keys.race_turn(pid), token, nx=True, px=TURN_TTL_MS))

    @translate_redis_errors
    async def _end_turn_of(self, pid: str, token: str) -> None:
        await self._run(self._end_turn, keys=[keys.race_turn(pid)], args=[token])

    # -- creation and membership --------------------------------------------------------------

    @translate_redis_errors
    async def create(
        self,
        race_id: str,
        variant: str,
        size: int,
        seed: int,
        now_ms: int,
        racers: Sequence[tuple[str, str]],
        *,
        creator: str | None = None,
        code: str | None = None,
        same_network: Sequence[Sequence[str]] = (),
    ) -> bool:
        """Create the race (open) unless it exists: False when it did (another process
        making the same match made it first). `same_network`: groups of racers playing from
        one network (`RaceState.same_network`)."""
        fields: dict[FieldT, EncodableT] = {
            "race_id": race_id,
            "variant": variant,
            "size": size,
            "seed": seed,
            "status": RaceStatus.OPEN.value,
            "created_at": now_ms,
            "version": 0,
        }
        if creator:
            fields["creator"] = creator
        if code:
            fields["code"] = code
        if same_network:
            fields["same_net"] = json.dumps([list(g) for g in same_network])
        return bool(
            await self._run(
                self._create,
                keys=[keys.race(race_id), keys.race_racers(race_id), keys.race_order(race_id)],
                args=[
                    self.ttl_ms,
                    json.dumps([str(x) for kv in fields.items() for x in kv]),
                    json.dumps([list(r) for r in racers]),
                ],
            )
        )

    @translate_redis_errors
    async def making(self) -> list[Making]:
        """The matches whose race is not made yet (`_QUEUE_LUA`), oldest first."""
        raw = cast(dict[str, str], await self.r.hgetall(keys.race_making()))
        out = []
        for race_id, value in raw.items():
            d = json.loads(value)
            variant, _, size = str(d["queue"]).rpartition(":")
            pids = [str(p) for p in d["pids"]] if isinstance(d["pids"], list) else []
            nets = d.get("nets")
            networks = (
                {p: str(n) for p, n in zip(pids, nets, strict=False)}
                if isinstance(nets, list)
                else {}
            )
            out.append(Making(race_id, variant, int(size), pids, int(d["at"]), networks))
        return sorted(out, key=lambda m: (m.at, m.race_id))

    @translate_redis_errors
    async def match_networks(self, race_id: str) -> dict[str, str]:
        """pid -> the network each player of a match not made yet queued from (`making`;
        empty once made, or for a match of an older server that kept none)."""
        raw = cast(str | None, await self.r.hget(keys.race_making(), race_id))
        if raw is None:
            return {}
        d = json.loads(raw)
        pids, nets = d.get("pids"), d.get("nets")
        if not isinstance(pids, list) or not isinstance(nets, list):
            return {}
        return {str(p): str(n) for p, n in zip(pids, nets, strict=False)}

    @translate_redis_errors
    async def drop_making(self, race_id: str) -> None:
        await self.r.hdel(keys.race_making(), race_id)

    @translate_redis_errors
    async def claim_code(self, race_id: str) -> str:
        """A fresh room code pointing at the race."""
        for _ in range(20):
            code = "".join(secrets.choice(ROOM_ALPHABET) for _ in range(5))
            if await self.r.set(keys.room_code(code), race_id, nx=True, px=self.ttl_ms):
                return code
        raise Conflict("could not allocate a room code")

    @translate_redis_errors
    async def race_for_code(self, code: str) -> str:
        race_id = await self.r.get(keys.room_code(code))
        if not race_id:
            raise NotFound(f"no room with code {code}")
        return cast(str, race_id)

    @translate_redis_errors
    async def join(self, race_id: str, pid: str, name: str) -> int:
        """Join an open room and announce it (`joined`); returns the number of racers."""
        joined = self._event_args(race_id, pr.RacerJoined(player_id=pid, name=name))
        n = int(
            await self._run(
                self._join,
                keys=[
                    keys.race(race_id),
                    keys.race_racers(race_id),
                    keys.race_order(race_id),
                    keys.race_events(race_id),
                ],
                args=[pid, name, self.ttl_ms, *joined],
            )
        )
        if n == -1:
            raise NotFound("no such race")
        if n == -2:
            raise Conflict("the race has already started")
        if n == -3:
            raise Conflict("the room is full")
        return n

    @translate_redis_errors
    async def leave_room(self, race_id: str, pid: str) -> int:
        """1 left, 2 the creator left and the room is closed, 0 not in it or not open; the
        `left` event is announced in the same step."""
        left = self._event_args(race_id, pr.RacerLeft(player_id=pid, closed=False))
        closed = self._event_args(race_id, pr.RacerLeft(player_id=pid, closed=True))
        return int(
            await self._run(
                self._leave,
                keys=[
                    keys.race(race_id),
                    keys.race_racers(race_id),
                    keys.race_order(race_id),
                    keys.race_events(race_id),
                ],
                args=[pid, *left, *closed, CLOSED_ROOM_TTL_MS],
            )
        )

    @translate_redis_errors
    async def free_code(self, code: str, race_id: str) -> bool:
        """Free a closed room's code at once (unless it points at another room by now)."""
        return bool(await self._run(self._free_code, keys=[keys.room_code(code)], args=[race_id]))

    @translate_redis_errors
    async def count_room(self, pid: str, race_id: str, now_ms: int, per_hour: int) -> bool:
        """Count a room the player creates; False when `per_hour` rooms were created in the
        hour before now (nothing is counted then)."""
        return bool(
            await self._run(
                self._room_quota,
                keys=[keys.rooms_made(pid)],
                args=[race_id, now_ms, ROOM_QUOTA_WINDOW_MS, per_hour],
            )
        )

    # -- guarded status changes ---------------------------------------------------------------

    async def _move(
        self, race_id: str, from_status: RaceStatus, to_status: RaceStatus, *fields: str | int
    ) -> bool:
        args = [from_status.value, "status", to_status.value, *fields]
        return bool(await self._run(self._transition, keys=[keys.race(race_id)], args=args))

    @translate_redis_errors
    async def begin(
        self,
        race_id: str,
        start_at: int,
        ends_at: int,
        retention_days: int = GAME_RETENTION_DAYS,
        *,
        announce: bool = False,
    ) -> bool:
        """open -> running with its clock, in one step with all the start's writes on the
        race's slot (`_BEGIN_LUA`): each racer's game (as `GameStore.start_game` makes it,
        expiring with a board of the race's day kept `retention_days`), their seen marks and
        the `countdown` event; with `announce` (a race the queue matched, whose racers do not
        follow it yet), each racer's `PlayerMatched` too. False when the race was not open
        (or is gone).

        The deadline index is in another slot: the caller writes it around this
        (`RaceService._begin`)."""
        countdown = self._event_args(race_id, pr.RaceCountdown(start_at=start_at, ends_at=ends_at))
        expire_at = board_expire_at(keys.race_date(race_id), retention_days)
        for _ in range(BEGIN_TRIES):
            async with self.r.pipeline(transaction=False) as pipe:
                pipe.hmget(keys.race(race_id), ["variant", "seed"])
                pipe.lrange(keys.race_order(race_id), 0, -1)
                (variant, seed), pids = await pipe.execute()
            if variant is None:
                return False
            game_ids = [keys.race_game_id(race_id, pid) for pid in pids]
            fields = [
                [
                    str(x)
                    for kv in new_game_fields(
                        g, "race", variant, int(seed), start_at, ends_at
                    ).items()
                    for x in kv
                ]
                for g in game_ids
            ]
            started = int(
                await self._run(
                    self._begin,
                    keys=[
                        keys.race(race_id),
                        keys.race_order(race_id),
                        keys.race_seen(race_id),
                        keys.race_events(race_id),
                        *(keys.parse_game_id(g).game for g in game_ids),
                    ],
                    args=[
                        start_at,
                        ends_at,
                        self.ttl_ms,
                        expire_at,
                        json.dumps(pids),
                        json.dumps(fields),
                        *countdown,
                        *(_matched_args(race_id, pids) if announce else ()),
                    ],
                )
            )
            if started >= 0:
                return started == 1
        raise Conflict("the room kept changing while the race was starting")

    @translate_redis_errors
    async def start_finishing(self, race_id: str, now_ms: int, reason: str) -> bool:
        """running -> finishing: exactly one caller wins the right to end the race."""
        return await self._move(
            race_id,
            RaceStatus.RUNNING,
            RaceStatus.FINISHING,
            "finished_at",
            now_ms,
            "reason",
            reason,
        )

    @translate_redis_errors
    async def take_over_finishing(self, race_id: str, seen_finished_at: int, now_ms: int) -> bool:
        """Take over the end of a race still `finishing` since `seen_finished_at` (its
        process stopped): exactly one caller that saw that mark wins, and the race's end is
        then its to complete (`finished_at` becomes `now_ms`)."""
        return bool(
            await self._run(
                self._take_over, keys=[keys.race(race_id)], args=[seen_finished_at, now_ms]
            )
        )

    @translate_redis_errors
    async def finish(
        self, race_id: str, results: tuple[RaceResult, ...], ended: pr.RaceEnded | None = None
    ) -> bool:
        """finishing -> finished with the results, and `ended` announced in the same step."""
        if ended is None:
            return await self._move(
                race_id, RaceStatus.FINISHING, RaceStatus.FINISHED, "results", dump_results(results)
            )
        return bool(
            await self._run(
                self._finish,
                keys=[keys.race(race_id), keys.race_events(race_id)],
                args=[dump_results(results), *self._event_args(race_id, ended)],
            )
        )

    # -- reading ------------------------------------------------------------------------------

    @translate_redis_errors
    async def load(self, race_id: str) -> RaceState:
        if not keys.valid_race_id(race_id):
            raise NotFound("no such race")
        replies = cast(
            list[list[str]],
            await self.batch.eval(
                self._load,
                (
                    keys.race(race_id),
                    keys.race_order(race_id),
                    keys.race_racers(race_id),
                    keys.race_progress(race_id),
                    keys.race_seen(race_id),
                    keys.race_present(race_id),
                ),
            ),
        )
        present: dict[str, int] = {}
        for member, until in _pairs(replies[5]).items():
            who = member.rpartition("|")[0]
            present[who] = max(present.get(who, 0), int(float(until)))
        h = _pairs(replies[0])
        order = [str(x) for x in replies[1]]
        names = _pairs(replies[2])
        progress = _pairs(replies[3])
        seen = _pairs(replies[4])
        if not h:
            raise NotFound("no such race")
        forfeited = json.loads(h.get("forfeited", "[]"))
        return RaceState(
            race_id=race_id,
            variant=h["variant"],
            status=RaceStatus(h["status"]),
            size=int(h["size"]),
            seed=int(h["seed"]),
            creator=h.get("creator"),
            code=h.get("code"),
            created_at=int(h["created_at"]),
            start_at=int(h["start_at"]) if "start_at" in h else None,
            ends_at=int(h["ends_at"]) if "ends_at" in h else None,
            version=int(h.get("version", 0)),
            racers=tuple((pid, names[pid]) for pid in order if pid in names),
            progress={pid: Progress.loads(v) for pid, v in progress.items()},
            seen={pid: int(v) for pid, v in seen.items()},
            present_until=present,
            forfeited=frozenset(str(pid) for pid in forfeited),
            results=load_results(h["results"]) if "results" in h else None,
            closed=h.get("closed") == "1",
            finished_at=int(h["finished_at"]) if "finished_at" in h else None,
            reason=h.get("reason"),
            same_network=tuple(
                tuple(str(pid) for pid in group) for group in json.loads(h.get("same_net", "[]"))
            ),
        )

    @translate_redis_errors
    async def events_since(self, race_id: str, since: int) -> list[LoggedEvent]:
        """Every event after version ``since``, oldest first."""
        return await self.events_page(race_id, since, sys.maxsize, sys.maxsize)

    @translate_redis_errors
    async def events_page(
        self, race_id: str, since: int, max_events: int, max_bytes: int
    ) -> list[LoggedEvent]:
        """The oldest events after version ``since``, as many as fit in ``max_events`` and
        ``max_bytes`` of their logged JSON (at least one): a page of `race.room`, whose frame
        must stay under the frame limit (a Triple Deck race logs ~700 events, ~100 KiB)."""
        raw = cast(
            list[tuple[str, dict[str, str]]],
            await self.r.xrange(keys.race_events(race_id), "-", "+"),
        )
        page: list[LoggedEvent] = []
        size = 0
        for _id, f in raw:
            version = int(f["v"])
            if version <= since:
                continue
            size += len(f["e"]) + EVENT_OVERHEAD
            if page and (size > max_bytes or len(page) >= max_events):
                break
            page.append(LoggedEvent(version, pr.load_race_event(json.loads(f["e"]))))
        return page

    # -- writing ------------------------------------------------------------------------------

    @staticmethod
    def _event_args(race_id: str, event: pr.RaceEventBody) -> list[str]:
        """The four `_EMIT_FN` arguments announcing `event`."""
        head, tail = pubsub.race_event_frame(race_id, event)
        return [json.dumps(pr.dump_race_event(event)), head, tail, keys.race_channel(race_id)]

    @translate_redis_errors
    async def emit(self, race_id: str, event: pr.RaceEventBody) -> int:
        """Append a public event to the race's log and publish it; returns its version."""
        return int(
            await self._run(
                self._emit,
                keys=[keys.race(race_id), keys.race_events(race_id)],
                args=self._event_args(race_id, event),
            )
        )

    @translate_redis_errors
    async def record_progress(self, race_id: str, pid: str, progress: Progress) -> int:
        """Store a racer's progress and announce it (`progress` event) in one step."""
        return int(
            await self._run(
                self._progress,
                keys=[keys.race(race_id), keys.race_progress(race_id), keys.race_events(race_id)],
                args=[
                    pid,
                    progress.dumps(),
                    self.ttl_ms,
                    *self._event_args(race_id, progress.event(pid)),
                ],
            )
        )

    @translate_redis_errors
    async def record_move_progress(
        self,
        race_id: str,
        pid: str,
        progress: Progress,
        game_keys: tuple[str, str],
        seq: int,
        move: str,
    ) -> int:
        """A racer's progress after the move the game's append stores at `seq`, announced in
        the same step; queued right behind that append, it joins its batch (one round trip).
        Recorded only if Redis holds `move` at `seq` in the game (`game_keys`: its record and
        log) still in play, once per seq (`_MOVE_PROGRESS_LUA`). The event's version, or 0."""
        game, log_ = game_keys
        return await self._run(
            self._move_progress,
            keys=[
                keys.race(race_id),
                keys.race_progress(race_id),
                keys.race_events(race_id),
                game,
                log_,
            ],
            args=[
                pid,
                progress.dumps(),
                self.ttl_ms,
                seq,
                move,
                *self._event_args(race_id, progress.event(pid)),
            ],
        )

    @translate_redis_errors
    async def forfeit_if_gone(self, race_id: str, pid: str, now_ms: int, grace_ms: int) -> bool:
        """Forfeit a racer gone for longer than the grace, and announce it, in one step.

        False when the racer is connected to some process, was seen within the grace, has
        finished, already forfeited, or the race is not running (`_FORFEIT_IF_GONE_LUA`).
        """
        return bool(
            await self._run(
                self._forfeit_if_gone,
                keys=[
                    keys.race(race_id),
                    keys.race_seen(race_id),
                    keys.race_present(race_id),
                    keys.race_progress(race_id),
                    keys.race_events(race_id),
                ],
                args=[
                    pid,
                    now_ms,
                    grace_ms,
                    *self._event_args(race_id, pr.RacerForfeited(player_id=pid)),
                ],
            )
        )

    @translate_redis_errors
    async def mark_present(
        self,
        race_id: str,
        pids: Sequence[str],
        now_ms: int,
        instance: str | None = None,
        live_ms: int = 0,
    ) -> None:
        """Mark racers seen now; with `instance`, that process holds a live connection of each
        for the next `live_ms` (it refreshes this while they stay connected)."""
        if not pids:
            return
        live_until = now_ms + live_ms if instance is not None else 0
        await self._run(
            self._present,
            keys=[keys.race_seen(race_id), keys.race_present(race_id)],
            args=[now_ms, self.ttl_ms, live_until, instance or "", *pids],
        )

    @translate_redis_errors
    async def mark_absent(self, race_id: str, pid: str, now_ms: int, instance: str) -> None:
        """The last connection of `pid` to the race on process `instance` closed now."""
        await self._run(
            self._absent,
            keys=[keys.race_seen(race_id), keys.race_present(race_id)],
            args=[now_ms, instance, pid, self.ttl_ms],
        )

    @translate_redis_errors
    async def index_finished(self, variant: str, race_id: str, finished_at: int) -> None:
        """List a finished race among its variant's latest (idempotent: an end completed
        twice lists it once); the oldest beyond `FINISHED_INDEX_MAX` leave the list."""
        key = keys.races_finished(variant)
        pipe = self.r.pipeline(transaction=False)
        pipe.zadd(key, {race_id: finished_at})
        pipe.zremrangebyrank(key, 0, -FINISHED_INDEX_MAX - 1)
        await pipe.execute()

    @translate_redis_errors
    async def finished_ids(self, variant: str, before: int | None, limit: int) -> list[str]:
        """The variant's finished races whose end began before `before` (ms), newest first."""
        top: str = f"({before}" if before is not None else "+inf"
        return cast(
            list[str],
            await self.r.zrevrangebyscore(
                keys.races_finished(variant), top, "-inf", start=0, num=limit
            ),
        )

    @translate_redis_errors
    async def release(self, pids: Sequence[str], race_id: str) -> int:
        """Free racers of this race (not of a newer one); returns how many were freed."""
        if not pids:
            return 0
        return int(
            await self._run(
                self._release, keys=[keys.race_inrace(), keys.race_matched()], args=[race_id, *pids]
            )
        )

    @translate_redis_errors
    async def announce_match(self, pids: Sequence[str], race_id: str) -> None:
        """Tell each matched player's connections, wherever they are, about the race."""
        # Separate PUBLISHes, sent together: a Redis Cluster pipeline refuses PUBLISH.
        await asyncio.gather(
            *(
                self.r.publish(
                    keys.player_channel(pid),
                    pubsub.encode(pubsub.PlayerMatched(player_id=pid, race_id=race_id)),
                )
                for pid in pids
            )
        )

    @translate_redis_errors
    async def set_progress(self, race_id: str, pid: str, progress: Progress) -> None:
        async with self.r.pipeline(transaction=False) as pipe:
            pipe.hset(keys.race_progress(race_id), pid, progress.dumps())
            pipe.pexpire(keys.race_progress(race_id), self.ttl_ms)
            await pipe.execute()

    @translate_redis_errors
    async def add_forfeit(self, race_id: str, pid: str) -> bool:
        """Record a forfeit atomically; False when already forfeited or not running."""
        return bool(await self._run(self._forfeit, keys=[keys.race(race_id)], args=[pid]))

    @translate_redis_errors
    async def set_active(
        self, race_id: str, due_ms: int | None, *, only_earlier: bool = False
    ) -> None:
        """Schedule the race's next deadline check at `due_ms` (None: drop it from the
        index); `only_earlier` never delays one already scheduled (ZADD LT)."""
        if due_ms is None:
            await self.r.zrem(keys.races_active(), race_id)
        else:
            await self.r.zadd(keys.races_active(), {race_id: due_ms}, lt=only_earlier)

    @translate_redis_errors
    async def due(self, now_ms: int) -> list[str]:
        return cast(
            list[str],
            await self.r.zrangebyscore(keys.races_active(), "-inf", now_ms, start=0, num=100),
        )

    @translate_redis_errors
    async def set_racing(self, pids: Sequence[str], race_id: str | None) -> None:
        if not pids:
            return
        pipe = self.r.pipeline(transaction=False)  # one slot ({q}): one round trip
        if race_id is None:
            pipe.hdel(keys.race_inrace(), *pids)
        else:
            pipe.hset(keys.race_inrace(), mapping=dict.fromkeys(pids, race_id))
            pipe.hdel(keys.race_making(), race_id)  # made
        pipe.hdel(keys.race_matched(), *pids)  # the race is made (or they are free)
        await pipe.execute()

    @translate_redis_errors
    async def matched_at(self, pid: str) -> int | None:
        """When the queue matched the player to a race not yet made (`enqueue`), or None."""
        raw = await self.r.hget(keys.race_matched(), pid)
        return int(raw) if raw is not None else None

    @translate_redis_errors
    async def racing(self, pid: str) -> str | None:
        key = keys.race_inrace()
        return cast(str | None, await self.batch.run(key, "HGET", key, pid))

    def standing_soon(self, pid: str) -> asyncio.Future[tuple[object, object]]:
        """(`racing`, `queued_as`) as two replies, their reads queued in the group commit now:
        they go out with whatever the caller awaits next (a returning player's `welcome`
        reads them with the day's index, in one round trip)."""
        inrace, who = keys.race_inrace(), keys.race_queue_who()
        return asyncio.gather(
            self.batch.run_soon(inrace, "HGET", inrace, pid),
            self.batch.run_soon(who, "HGET", who, pid),
        )

    # -- the queue ----------------------------------------------------------------------------

    @translate_redis_errors
    async def enqueue(
        self,
        pid: str,
        variant: str,
        size: int,
        now_ms: int,
        fill_wait_ms: int,
        race_id: str,
        address: str = "",
        same_address_wait_ms: int = 0,
    ) -> tuple[int, list[str]]:
        """Queue the player (pid "" only tries to match); returns (waiting, matched pids).
        Matched players leave the queue already pointed at `race_id` (`matched_at` says
        since when, until `set_racing` once the race is made). Accounts of one client
        `address` are grouped with each other only when nobody else waits, after
        `same_address_wait_ms` (`_QUEUE_LUA`)."""
        name = f"{variant}:{size}"
        res = cast(
            list[str | int],
            await self._reply(
                self._queue,
                keys=[
                    keys.race_queue(variant, size),
                    keys.race_queue_who(),
                    keys.race_inrace(),
                    keys.race_matched(),
                    keys.race_queue_addr(),
                    keys.race_making(),
                ],
                args=[
                    pid,
                    now_ms,
                    size,
                    fill_wait_ms,
                    name,
                    race_id,
                    address,
                    same_address_wait_ms,
                ],
            ),
        )
        code = int(res[0])
        if code == -1:
            raise Conflict(f"already in race {res[1]}")
        if code == -2:
            raise Conflict(f"already waiting in the {res[1]} queue: leave the race queue first")
        if code == 0:
            return int(res[1]), []
        return 0, [str(x) for x in res[1:]]

    @translate_redis_errors
    async def unqueue(self, pid: str, variants: Sequence[str]) -> bool:
        queues = [keys.race_queue(v, n) for v in variants for n in range(2, 9)]
        return bool(
            await self._run(
                self._unqueue,
                keys=[keys.race_queue_who(), keys.race_queue_addr(), *queues],
                args=[pid],
            )
        )

    @translate_redis_errors
    async def queued_as(self, pid: str) -> str | None:
        key = keys.race_queue_who()
        return cast(str | None, await self.batch.run(key, "HGET", key, pid))
