"""Player registry: unique names, bearer tokens stored only as SHA-256 digests."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

import redis.asyncio

from server.redis import keys
from server.redis.movelog import LuaScript, MoveLog
from server.runtime.clock import Clock, SystemClock
from server.runtime.errors import InvalidInput, NameTaken, translate_redis_errors

__all__ = ["MAX_TOKEN_LEN", "Player", "PlayerRegistry", "check_name", "hash_token"]

_NAME_RE = re.compile(r"[A-Za-z0-9_-]{3,20}")
MAX_TOKEN_LEN = 128  # token_urlsafe(24) is 32 chars; anything far longer is garbage

# KEYS: by_name, by_token, player hash.  ARGV: folded name, pid, token hash, name, created_at.
# Returns 1 on success, 0 if the name is taken, -1 if the pid or token hash collides
# (caller retries with fresh random values). Checks come first so a refusal writes nothing.
_CREATE_LUA = """
if redis.call('EXISTS', KEYS[3]) == 1 or redis.call('HEXISTS', KEYS[2], ARGV[3]) == 1 then
  return -1
end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[2])
redis.call('HSET', KEYS[3], 'name', ARGV[4], 'token_hash', ARGV[3], 'created_at_ms', ARGV[5])
return 1
"""


@dataclass(frozen=True, slots=True)
class Player:
    id: str
    name: str
    created_at_ms: int


def check_name(name: str) -> str:
    """Local sanity check (the protocol layer validates first): 3..20 of ``[A-Za-z0-9_-]``."""
    if not isinstance(name, str) or _NAME_RE.fullmatch(name) is None:
        raise InvalidInput("name must be 3-20 characters of A-Z a-z 0-9 _ -")
    return name


def hash_token(token: str) -> str:
    """The only form in which a token is ever stored."""
    return hashlib.sha256(token.encode()).hexdigest()


def _new_player_id() -> str:
    """12 url-safe characters (72 bits), never starting with ``-``: ids are typed as command
    arguments (``solitaire profile <id>``), where a leading dash reads as an option."""
    while True:
        pid = secrets.token_urlsafe(9)
        if not pid.startswith("-"):
            return pid


class PlayerRegistry:
    """Creates and looks up players. ``redis`` must use ``decode_responses=True``."""

    def __init__(
        self, redis: redis.asyncio.Redis, clock: Clock | None = None, commit: MoveLog | None = None
    ) -> None:
        self._r = redis
        self._clock = clock or SystemClock()
        #: A new player's script goes through the group commit (a burst of sign-ups batches).
        self._commit = commit or MoveLog(redis)
        self._create = LuaScript.of(_CREATE_LUA)

    async def create(self, name: str) -> tuple[str, str]:
        """Register ``name``; returns ``(player_id, token)``. The token is shown only once.

        Raises ``NameTaken`` if the name is used by anyone, ignoring case.
        """
        player, token = await self.register(name)
        return player.id, token

    @translate_redis_errors
    async def register(self, name: str) -> tuple[Player, str]:
        """`create`, returning the new player as stored (no read back)."""
        check_name(name)
        folded = name.casefold()
        for _ in range(5):
            pid, token = _new_player_id(), secrets.token_urlsafe(24)  # 192-bit token
            now = self._clock.now_ms()
            res = await self._commit.eval(
                self._create,
                (keys.players_by_name(), keys.players_by_token(), keys.player(pid)),
                (folded, pid, hash_token(token), name, now),
            )
            if res == 1:
                return Player(id=pid, name=name, created_at_ms=now), token
            if res == 0:
                raise NameTaken(f"name {name!r} is taken")
        raise RuntimeError("could not allocate a unique player id")  # ~impossible

    @translate_redis_errors
    async def authenticate(self, token: str) -> Player | None:
        """The player owning ``token``, or None for unknown/malformed tokens."""
        if not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN_LEN:
            return None
        pid = await self._r.hget(keys.players_by_token(), hash_token(token))
        if pid is None:
            return None
        return await self.get(cast(str, pid))

    @translate_redis_errors
    async def get(self, pid: str) -> Player | None:
        if not keys.valid_player_id(pid):
            return None
        data = cast(dict[str, str], await self._r.hgetall(keys.player(pid)))
        return _player(pid, data)

    @translate_redis_errors
    async def names(self, pids: Iterable[str]) -> dict[str, str]:
        """Batch ``pid -> name`` (one round trip); unknown ids are omitted."""
        wanted = list(dict.fromkeys(p for p in pids if keys.valid_player_id(p)))
        if not wanted:
            return {}
        async with self._r.pipeline(transaction=False) as pipe:
            for pid in wanted:
                pipe.hget(keys.player(pid), "name")
            got: list[Any] = await pipe.execute()
        return {pid: name for pid, name in zip(wanted, got, strict=True) if name is not None}

    @translate_redis_errors
    async def id_for_name(self, name: str) -> str | None:
        """The player id using ``name`` (case-insensitive), if any."""
        res = await self._r.hget(keys.players_by_name(), name.casefold())
        return cast(str | None, res)


def _player(pid: str, data: dict[str, str]) -> Player | None:
    if not data:
        return None
    return Player(id=pid, name=data["name"], created_at_ms=int(data["created_at_ms"]))
