"""Hourly quotas in Redis: a counter per key and hour that refuses once its limit is reached.

One script serves every quota of the server (new players per client address, sign-in codes
tried per address, free games started per player): a refused attempt is not counted, so a
client that waits for the next hour is not punished for the refusals.

A budget per key and hour (the solver time of a player's hints) is checked before the work
(`hourly_spent`) and charged after it with what the work took (`spend_hourly`): a search
that finds nothing costs as much as one that does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

from server.redis.batch import Batcher, LuaScript

HOUR_MS: Final = 3_600_000
#: A per-address quota's limit for the address's whole network (an IPv4 /24, an IPv6 /48:
#: `server.transport.address.address_network`), in times the address's own.
NETWORK_FACTOR: Final = 5

# KEYS: the counter of the hour.  ARGV: limit, ttl (ms).
# Counts one; 0 (nothing counted) once the limit is reached.
_TAKE_LUA = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if n > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return 0
end
return 1
"""

_TAKE = LuaScript.of(_TAKE_LUA)

# KEYS: the budget's counter of the hour.  ARGV: amount, ttl (ms).  Adds the amount (its
# first amount of the hour starts the key's expiry); returns the hour's total.
_SPEND_LUA = """
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if n == tonumber(ARGV[1]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return n
"""

_SPEND = LuaScript.of(_SPEND_LUA)


async def take_hourly(commit: Batcher, key: str, limit: int) -> bool:
    """Count one under ``key`` (a key naming its hour: server/redis/keys.py); False, with
    nothing counted, once ``limit`` were counted this hour. ``limit`` 0 lets everything through."""
    if not limit:
        return True
    return bool(await commit.eval(_TAKE, (key,), (limit, HOUR_MS)))


# KEYS: the counter of the hour. Gives one back unless the counter expired meanwhile (a DECR
# would make it anew, at -1 and without a TTL: a key that never goes).
_GIVE_BACK_LUA = """
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end
return 0
"""
_GIVE_BACK = LuaScript.of(_GIVE_BACK_LUA)


async def give_back_hourly(commit: Batcher, key: str) -> None:
    """Undo one `take_hourly` of ``key`` (what it counted was not done after all)."""
    await commit.eval(_GIVE_BACK, (key,))


async def take_each_hourly(commit: Batcher, quotas: Sequence[tuple[str, int]]) -> int | None:
    """`take_hourly` of each (key, limit) in turn: None when every one was counted; else
    the index of the first refused, the ones counted before it given back."""
    taken: list[str] = []
    for i, (key, limit) in enumerate(quotas):
        if not await take_hourly(commit, key, limit):
            await give_back_each_hourly(commit, taken)
            return i
        taken.append(key)
    return None


async def give_back_each_hourly(commit: Batcher, keys: Sequence[str]) -> None:
    """`give_back_hourly` of each key (what was counted was not done after all)."""
    for key in keys:
        await give_back_hourly(commit, key)


async def hourly_spent(commit: Batcher, key: str) -> int:
    """What was charged under ``key`` (a key naming its hour) this hour so far."""
    raw = await commit.run(key, "GET", key)
    return int(cast(str | bytes | int, raw)) if raw is not None else 0


async def spend_hourly(commit: Batcher, key: str, amount: int) -> int:
    """Charge ``amount`` (> 0) under ``key``; the hour's total now."""
    return int(cast(int, await commit.eval(_SPEND, (key,), (amount, HOUR_MS))))


__all__ = [
    "HOUR_MS",
    "NETWORK_FACTOR",
    "give_back_each_hourly",
    "give_back_hourly",
    "hourly_spent",
    "spend_hourly",
    "take_each_hourly",
    "take_hourly",
]
