"""A player's devices: listed (`Devices.list`), revoked one at a time (`Devices.revoke`).

The original device is the one whose token is the player hash's ``token_hash`` (the one that
registered, or the last to revoke every session; its ``orig_how``/``orig_at``/``orig_name``
fields say how and when it signed in, absent for the registering one). Every device signed
in by a code (`server.players.signin`) has a record in `keys.player_device_info`:
``code|signed in at ms|token digest|name`` under an 8-character id.

Trust: a device signed in by a code is on trial for `Devices.trust_ms` from its sign-in. On
trial it may revoke only devices signed in after it and not every session
(`server.players.registry.PlayerRegistry.rotate`, ``revoke_all``): a code stolen for a few
minutes cannot lock the owner out. Any other device may revoke any device but itself.
A revoked device's token dies at once; its digest goes to `keys.player_revoked`, whose open
sessions the app's session sweep closes (`PlayerRegistry.revoked_sessions`): at once on every
process, told by `server.redis.pubsub.SessionsRevoked` (the sweep every
`server.app.SESSION_SWEEP_S` seconds stays the fallback).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final, cast

import redis.asyncio

from server.players.registry import (
    REVOCATIONS_KEPT,
    REVOKED_TTL_MS,
    Player,
    announce_revoked,
)
from server.redis import keys
from server.redis.batch import Batcher, LuaScript
from server.runtime.clock import Clock
from server.runtime.errors import translate_redis_errors

__all__ = ["DEFAULT_TRUST_MS", "REVOKED_TTL_MS", "Device", "Devices", "RevokeRefused"]

#: A code device's trial: 7 days.
DEFAULT_TRUST_MS: Final = 7 * 24 * 3_600_000

# The shared head of both scripts: the player's devices as flat records.
# KEYS: by_token, player hash, devices set, device info, revoked set.
# ARGV[1] pid, ARGV[2] the caller's token digest.
_DEVICES_LUA = """
if redis.call('HGET', KEYS[1], ARGV[2]) ~= ARGV[1] then
  return -1
end
local devs = {}
local p = redis.call('HMGET', KEYS[2], 'token_hash', 'created_at_ms', 'orig_how', 'orig_at',
  'orig_name')
if p[1] and p[1] ~= '' then
  devs[#devs + 1] = {'original', p[3] or 'original', tonumber(p[4] or p[2] or '0'), p[1],
    p[5] or ''}
end
local seen = {}
local info = redis.call('HGETALL', KEYS[4])
for i = 1, #info, 2 do
  local how, at, h, name = string.match(info[i + 1], '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
  if h and redis.call('SISMEMBER', KEYS[3], h) == 1 then
    devs[#devs + 1] = {info[i], how, tonumber(at), h, name}
    seen[h] = true
  end
end
for _, h in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  if not seen[h] then  -- signed in before devices had records
    devs[#devs + 1] = {string.sub(h, 1, 8), 'code', 0, h, ''}
  end
end
"""

# KEYS[6] `keys.revocations`. ARGV[3] the device to revoke, ARGV[4] now ms, ARGV[5] trust ms,
# ARGV[6] revoked ttl ms, ARGV[7] the revocations kept (the player joins that stream, which
# the session sweeps read). Returns -1 when the caller's token is dead, -4 no such device, -5
# the caller itself, -3 the caller is on trial and the device is not newer; else 1.
_REVOKE_LUA = (
    _DEVICES_LUA
    + """
local me, target
for _, d in ipairs(devs) do
  if d[4] == ARGV[2] then me = d end
  if d[1] == ARGV[3] then target = d end
end
if not target then
  return -4
end
if target == me then
  return -5
end
if me and me[2] == 'code' and me[3] + tonumber(ARGV[5]) > tonumber(ARGV[4])
    and target[3] <= me[3] then
  return -3
end
redis.call('HDEL', KEYS[1], target[4])
redis.call('SADD', KEYS[5], target[4])
redis.call('PEXPIRE', KEYS[5], ARGV[6])
if target[1] == 'original' then
  redis.call('HSET', KEYS[2], 'token_hash', '')
else
  redis.call('SREM', KEYS[3], target[4])
  redis.call('HDEL', KEYS[4], target[1])
end
redis.call('XADD', KEYS[6], 'MAXLEN', '~', ARGV[7], '*', 'p', ARGV[1])
return 1
"""
)

_LIST_LUA = (
    _DEVICES_LUA
    + """
local out = {}
for _, d in ipairs(devs) do
  out[#out + 1] = d[1]
  out[#out + 1] = d[2]
  out[#out + 1] = tostring(d[3])
  out[#out + 1] = d[4] == ARGV[2] and '1' or '0'
  out[#out + 1] = d[5]
end
return out
"""
)


@dataclass(frozen=True, slots=True)
class Device:
    """One device as the asking device sees it."""

    id: str
    name: str
    how: str  # "original" or "code"
    signed_in_at_ms: int
    current: bool
    can_revoke: bool


class RevokeRefused(IntEnum):
    """Why `Devices.revoke` refused."""

    TOKEN_DEAD = -1
    NOT_TRUSTED = -3
    NO_SUCH_DEVICE = -4
    SELF = -5


class Devices:
    """The player's devices. ``redis`` must use ``decode_responses=True``."""

    def __init__(
        self,
        redis: redis.asyncio.Redis,
        clock: Clock,
        commit: Batcher,
        trust_ms: int = DEFAULT_TRUST_MS,
    ) -> None:
        self._r = redis
        self._clock = clock
        self._commit = commit
        self._list = LuaScript.of(_LIST_LUA)
        self._revoke = LuaScript.of(_REVOKE_LUA)
        #: A code device's trial (ms); 0: none.
        self.trust_ms = trust_ms

    def _keys(self, pid: str) -> tuple[str, ...]:
        return (
            keys.players_by_token(),
            keys.player(pid),
            keys.player_devices(pid),
            keys.player_device_info(pid),
            keys.player_revoked(pid),
        )

    @translate_redis_errors
    async def list(self, player: Player) -> tuple[list[Device], int | None]:
        """The player's devices oldest first, as ``player``'s device sees them, and when that
        device's trial ends (None when it is not on trial). An empty list when the
        session's token is dead."""
        res = await self._commit.eval(
            self._list, self._keys(player.id), (player.id, player.token_hash)
        )
        if not isinstance(res, list):
            return [], None
        flat = cast(list[str], res)
        raw = [
            (flat[i], flat[i + 1], int(flat[i + 2]), flat[i + 3] == "1", flat[i + 4])
            for i in range(0, len(flat), 5)
        ]
        raw.sort(key=lambda r: (r[2], r[0] != "original", r[0]))
        now = self._clock.now_ms()
        mine = next((r for r in raw if r[3]), None)
        trial_end: int | None = None
        if mine is not None and mine[1] == "code" and mine[2] + self.trust_ms > now:
            trial_end = mine[2] + self.trust_ms
        devices = [
            Device(
                id=d,
                name=name,
                how=how,
                signed_in_at_ms=at,
                current=cur,
                can_revoke=(mine is not None and not cur and (trial_end is None or at > mine[2])),
            )
            for d, how, at, cur, name in raw
        ]
        return devices, trial_end

    @translate_redis_errors
    async def revoke(self, player: Player, device: str) -> RevokeRefused | None:
        """Sign ``device`` out (its token dies; every process is told at once to sweep, and
        closes its open sessions with 4001); None when done, else why not."""
        res = cast(
            int,
            await self._commit.eval(
                self._revoke,
                (*self._keys(player.id), keys.revocations()),
                (
                    player.id,
                    player.token_hash,
                    device,
                    self._clock.now_ms(),
                    self.trust_ms,
                    REVOKED_TTL_MS,
                    REVOCATIONS_KEPT,
                ),
            ),
        )
        if res != 1:
            return RevokeRefused(res)
        await announce_revoked(self._r, player.id)  # every process closes its sessions now
        return None
