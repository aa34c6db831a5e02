"""Race state in Redis: rooms, the matchmaking queue, racers, progress and the event log.

Every change is a Lua script over keys of one hash tag (`{r:<id>}` for a race, `{q}` for the
queue), so concurrent server processes cannot interleave half-done changes. Events are
appended to the race's stream (the versioned log a client resyncs from) and published on the
race's channel in the same script, so the log and the fan-out never disagree.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any, cast

import redis.asyncio

from . import keys
from .errors import Conflict, NotFound, translate_redis_errors

ROOM_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I to misread
EVENT_LOG_MAX = 2000

# KEYS: race, events. ARGV: channel, event json. Returns the event's version; the channel
# gets "<version> <event json>".
_EMIT_LUA = """
local v = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('XADD', KEYS[2], 'MAXLEN', '~', EVENT_LOG_MAX, '*', 'v', v, 'e', ARGV[2])
redis.call('PUBLISH', ARGV[1], v .. ' ' .. ARGV[2])
return v
""".replace("EVENT_LOG_MAX", str(EVENT_LOG_MAX))

# KEYS: race, racers, order. ARGV: pid, name, ttl_ms. Joins an open room.
# Returns the number of racers, or -1 no race, -2 not open, -3 full, -4 already in.
_JOIN_LUA = """
local st = redis.call('HMGET', KEYS[1], 'status', 'size')
if not st[1] then return -1 end
if st[1] ~= 'open' then return -2 end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return -4 end
local n = redis.call('HLEN', KEYS[2])
if n >= tonumber(st[2]) then return -3 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[1])
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
return n + 1
"""

# KEYS: race, racers, order. ARGV: pid. Leaves an open room; the creator leaving closes it.
# Returns 1 left, 2 room closed, 0 not in it / not open.
_LEAVE_LUA = """
local st = redis.call('HMGET', KEYS[1], 'status', 'creator')
if st[1] ~= 'open' or redis.call('HDEL', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('LREM', KEYS[3], 0, ARGV[1])
if st[2] == ARGV[1] then
  redis.call('HSET', KEYS[1], 'status', 'finished', 'closed', '1')
  return 2
end
return 1
"""

# KEYS: race. ARGV: from status, then field, value pairs. Guarded status change.
_TRANSITION_LUA = """
if redis.call('HGET', KEYS[1], 'status') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
"""

# KEYS: queue zset, who hash, inrace hash. ARGV: pid, now, size, fill_wait_ms, queue name.
# Returns {0, waiting} still waiting, {1, pid...} matched (removed from the queue),
# {-1, race_id} already racing, {-2, other queue} waiting in another queue.
_QUEUE_LUA = """
local pid = ARGV[1]
if pid ~= '' then
  local racing = redis.call('HGET', KEYS[3], pid)
  if racing then return {-1, racing} end
  local other = redis.call('HGET', KEYS[2], pid)
  if other and other ~= ARGV[5] then return {-2, other} end
  redis.call('ZADD', KEYS[1], 'NX', ARGV[2], pid)
  redis.call('HSET', KEYS[2], pid, ARGV[5])
end
local size = tonumber(ARGV[3])
local n = redis.call('ZCARD', KEYS[1])
local take = 0
if n >= size then
  take = size
elseif n >= 2 then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if tonumber(oldest[2]) + tonumber(ARGV[4]) <= tonumber(ARGV[2]) then take = n end
end
if take == 0 then return {0, n} end
local got = redis.call('ZRANGE', KEYS[1], 0, take - 1)
redis.call('ZREM', KEYS[1], unpack(got))
redis.call('HDEL', KEYS[2], unpack(got))
local out = {1}
for _, p in ipairs(got) do table.insert(out, p) end
return out
"""

# KEYS: who hash, then every queue zset. ARGV: pid.
_UNQUEUE_LUA = """
local q = redis.call('HGET', KEYS[1], ARGV[1])
if not q then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
for i = 2, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 1
"""


@dataclass(slots=True)
class RaceState:
    """A race as stored; `racers` in joining order."""

    race_id: str
    variant: str
    status: str  # open | running | finished  ("countdown" is running before start_at)
    size: int
    seed: int
    creator: str | None
    code: str | None
    created_at: int
    start_at: int | None
    ends_at: int | None
    version: int
    racers: list[tuple[str, str]]  # (pid, name)
    progress: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: dict[str, int] = field(default_factory=dict)
    forfeited: set[str] = field(default_factory=set)
    results: list[dict[str, Any]] | None = None
    closed: bool = False

    def names(self) -> dict[str, str]:
        return dict(self.racers)


def new_race_id(now_ms: int) -> str:
    import datetime as dt

    day = dt.datetime.fromtimestamp(now_ms / 1000, dt.UTC).strftime("%Y%m%d")
    return f"{day}-{secrets.token_hex(6)}"


class RaceStore:
    """Redis operations on races and the queue. `redis` must use ``decode_responses=True``."""

    def __init__(self, client: redis.asyncio.Redis, ttl_ms: int) -> None:
        self.r = client
        self.ttl_ms = ttl_ms
        self._emit = client.register_script(_EMIT_LUA)
        self._join = client.register_script(_JOIN_LUA)
        self._leave = client.register_script(_LEAVE_LUA)
        self._transition = client.register_script(_TRANSITION_LUA)
        self._queue = client.register_script(_QUEUE_LUA)
        self._unqueue = client.register_script(_UNQUEUE_LUA)

    # -- creation and membership --------------------------------------------------------------

    @translate_redis_errors
    async def create(self, race_id: str, variant: str, size: int, seed: int, now_ms: int,
                     racers: list[tuple[str, str]], *, creator: str | None = None,
                     code: str | None = None) -> None:
        fields: dict[str, Any] = {"race_id": race_id, "variant": variant, "size": size,
                                  "seed": seed, "status": "open", "created_at": now_ms,
                                  "version": 0}
        if creator:
            fields["creator"] = creator
        if code:
            fields["code"] = code
        async with self.r.pipeline(transaction=True) as pipe:
            pipe.hset(keys.race(race_id), mapping=fields)
            pipe.hset(keys.race_racers(race_id), mapping=dict(racers))
            pipe.rpush(keys.race_order(race_id), *(pid for pid, _ in racers))
            for key in (keys.race(race_id), keys.race_racers(race_id), keys.race_order(race_id)):
                pipe.pexpire(key, self.ttl_ms)
            await pipe.execute()

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
        n = int(await self._join(keys=[keys.race(race_id), keys.race_racers(race_id),
                                       keys.race_order(race_id)], args=[pid, name, self.ttl_ms]))
        if n == -1:
            raise NotFound("no such race")
        if n == -2:
            raise Conflict("the race has already started")
        if n == -3:
            raise Conflict("the room is full")
        return n

    @translate_redis_errors
    async def leave_room(self, race_id: str, pid: str) -> int:
        return int(await self._leave(keys=[keys.race(race_id), keys.race_racers(race_id),
                                           keys.race_order(race_id)], args=[pid]))

    @translate_redis_errors
    async def transition(self, race_id: str, from_status: str, **fields: Any) -> bool:
        args: list[Any] = [from_status]
        for k, v in fields.items():
            args += [k, v]
        return bool(await self._transition(keys=[keys.race(race_id)], args=args))

    # -- reading ------------------------------------------------------------------------------

    @translate_redis_errors
    async def load(self, race_id: str) -> RaceState:
        try:
            k = keys.race(race_id)
        except ValueError:
            raise NotFound("no such race") from None
        async with self.r.pipeline(transaction=True) as pipe:
            pipe.hgetall(k)
            pipe.lrange(keys.race_order(race_id), 0, -1)
            pipe.hgetall(keys.race_racers(race_id))
            pipe.hgetall(keys.race_progress(race_id))
            pipe.hgetall(keys.race_seen(race_id))
            h, order, names, progress, seen = await pipe.execute()
        if not h:
            raise NotFound("no such race")
        return RaceState(
            race_id=race_id, variant=h["variant"], status=h["status"], size=int(h["size"]),
            seed=int(h["seed"]), creator=h.get("creator"), code=h.get("code"),
            created_at=int(h["created_at"]),
            start_at=int(h["start_at"]) if "start_at" in h else None,
            ends_at=int(h["ends_at"]) if "ends_at" in h else None,
            version=int(h.get("version", 0)),
            racers=[(pid, names.get(pid, "?")) for pid in order if pid in names],
            progress={pid: json.loads(v) for pid, v in progress.items()},
            seen={pid: int(v) for pid, v in seen.items()},
            forfeited=set(json.loads(h.get("forfeited", "[]"))),
            results=json.loads(h["results"]) if "results" in h else None,
            closed=h.get("closed") == "1",
        )

    @translate_redis_errors
    async def events_since(self, race_id: str, since: int) -> list[dict[str, Any]]:
        raw = await self.r.xrange(keys.race_events(race_id), "-", "+")
        out = []
        for _id, f in raw:
            if int(f["v"]) > since:
                out.append({"v": int(f["v"]), **json.loads(f["e"])})
        return out

    # -- writing ------------------------------------------------------------------------------

    @translate_redis_errors
    async def emit(self, race_id: str, event: dict[str, Any]) -> int:
        return int(await self._emit(keys=[keys.race(race_id), keys.race_events(race_id)],
                                    args=[keys.race_channel(race_id), json.dumps(event)]))

    @translate_redis_errors
    async def set_progress(self, race_id: str, pid: str, progress: dict[str, Any]) -> None:
        async with self.r.pipeline(transaction=False) as pipe:
            pipe.hset(keys.race_progress(race_id), pid, json.dumps(progress))
            pipe.pexpire(keys.race_progress(race_id), self.ttl_ms)
            await pipe.execute()

    @translate_redis_errors
    async def touch(self, race_id: str, pids: list[str], now_ms: int) -> None:
        """Mark racers as seen connected now (the grace period counts from the last mark)."""
        if pids:
            async with self.r.pipeline(transaction=False) as pipe:
                pipe.hset(keys.race_seen(race_id), mapping=dict.fromkeys(pids, now_ms))
                pipe.pexpire(keys.race_seen(race_id), self.ttl_ms)
                await pipe.execute()

    @translate_redis_errors
    async def add_forfeit(self, race_id: str, pid: str, forfeited: set[str]) -> None:
        await self.r.hset(keys.race(race_id), "forfeited", json.dumps(sorted(forfeited | {pid})))

    @translate_redis_errors
    async def set_active(self, race_id: str, due_ms: int | None) -> None:
        if due_ms is None:
            await self.r.zrem(keys.races_active(), race_id)
        else:
            await self.r.zadd(keys.races_active(), {race_id: due_ms})

    @translate_redis_errors
    async def due(self, now_ms: int) -> list[str]:
        return cast(list[str], await self.r.zrangebyscore(keys.races_active(), "-inf", now_ms,
                                                          start=0, num=100))

    @translate_redis_errors
    async def set_racing(self, pids: list[str], race_id: str | None) -> None:
        if not pids:
            return
        if race_id is None:
            await self.r.hdel(keys.race_inrace(), *pids)
        else:
            await self.r.hset(keys.race_inrace(), mapping=dict.fromkeys(pids, race_id))

    @translate_redis_errors
    async def racing(self, pid: str) -> str | None:
        return cast(str | None, await self.r.hget(keys.race_inrace(), pid))

    # -- the queue ----------------------------------------------------------------------------

    @translate_redis_errors
    async def enqueue(self, pid: str, variant: str, size: int, now_ms: int,
                      fill_wait_ms: int) -> tuple[int, list[str]]:
        """Queue the player (pid "" only tries to match); returns (waiting, matched pids)."""
        name = f"{variant}:{size}"
        res = await self._queue(
            keys=[keys.race_queue(variant, size), keys.race_queue_who(), keys.race_inrace()],
            args=[pid, now_ms, size, fill_wait_ms, name])
        code = int(res[0])
        if code == -1:
            raise Conflict(f"already in race {res[1]}")
        if code == -2:
            raise Conflict(f"already waiting in the {res[1]} queue")
        if code == 0:
            return int(res[1]), []
        return 0, [str(x) for x in res[1:]]

    @translate_redis_errors
    async def unqueue(self, pid: str, variants: tuple[str, ...]) -> bool:
        queues = [keys.race_queue(v, n) for v in variants for n in range(2, 9)]
        return bool(await self._unqueue(keys=[keys.race_queue_who(), *queues], args=[pid]))

    @translate_redis_errors
    async def queued_as(self, pid: str) -> str | None:
        return cast(str | None, await self.r.hget(keys.race_queue_who(), pid))
