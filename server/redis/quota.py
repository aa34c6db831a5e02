"""Hourly quotas in Redis: a counter per key and hour that refuses once its limit is reached.

One script serves every quota of the server (new players per client address, sign-in codes
tried per address, free games started per player): a refused attempt is not counted, so a
client that waits for the next hour is not punished for the refusals.
"""

from __future__ import annotations

from typing import Final

from server.redis.batch import Batcher, LuaScript

HOUR_MS: Final = 3_600_000

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


async def take_hourly(commit: Batcher, key: str, limit: int) -> bool:
    """Count one under ``key`` (a key naming its hour: server/redis/keys.py); False, with
    nothing counted, once ``limit`` were counted this hour. ``limit`` 0 lets everything through."""
    if not limit:
        return True
    return bool(await commit.eval(_TAKE, (key,), (limit, HOUR_MS)))


__all__ = ["HOUR_MS", "take_hourly"]
