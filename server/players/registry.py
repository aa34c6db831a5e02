"""Player registry: unique names, bearer tokens stored only as SHA-256 digests."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

import redis.asyncio

from server.players.names import fold_name, is_reserved
from server.redis import keys, pubsub
from server.redis.batch import Batcher, LuaScript, as_map
from server.redis.quota import (
    HOUR_MS,
    NETWORK_FACTOR,
    give_back_each_hourly,
    take_each_hourly,
)
from server.runtime.clock import Clock, SystemClock
from server.runtime.errors import (
    InvalidInput,
    LimitReached,
    NameTaken,
    NotTrusted,
    ReservedName,
    TokenRevoked,
    translate_redis_errors,
)

__all__ = ["MAX_TOKEN_LEN", "Player", "PlayerRegistry", "check_name", "hash_token", "typed_id"]

_NAME_RE = re.compile(r"[A-Za-z0-9_-]{3,20}")
MAX_TOKEN_LEN = 128  # token_urlsafe(24) is 32 chars; anything far longer is garbage

# KEYS: by_name, by_token, player hash, by_fold.  ARGV: casefolded name, pid, token hash,
# name, created_at, folded name (look-alikes folded, `names.fold_name`).
# Returns 1 on success, 0 if the name is taken, -1 if the pid or token hash collides
# (caller retries with fresh random values). Checks come first so a refusal writes nothing:
# the name's two, then the pid's, then the token's HSETNX, the check and its write in one
# command (7 commands a new player, not 8: issue #30, redis-server per game). A taken name
# answers 0 even when the random values collide too: the caller's answer either way.
_CREATE_LUA = """
local call = redis.call
if call('HEXISTS', KEYS[1], ARGV[1]) == 1 or call('HEXISTS', KEYS[4], ARGV[6]) == 1 then
  return 0
end
if call('EXISTS', KEYS[3]) == 1 or call('HSETNX', KEYS[2], ARGV[3], ARGV[2]) == 0 then
  return -1
end
call('HSET', KEYS[1], ARGV[1], ARGV[2])
call('HSET', KEYS[4], ARGV[6], ARGV[2])
call('HSET', KEYS[3], 'name', ARGV[4], 'token_hash', ARGV[3], 'created_at_ms', ARGV[5])
return 1
"""

# KEYS: by_token, player hash, the player's devices, their records (`keys.player_device_info`),
# the revoked digests, `keys.revocations`.  ARGV: pid, the caller's token hash, the new token
# hash, "1" to revoke every session (the player's `epoch` goes up), now ms, a code device's
# trial ms, the revoked digests' ttl ms, the revocations kept. Every rotation kills a token:
# the player joins the revocations stream, which every process's session sweep reads. A
# plain rotation puts the old digest in the revoked set: every session still open with the
# old token (another connection of the device) is closed by the sweep, so a device's
# sessions all hold its current token and `device.revoke` closes them all.
# A device signed in by a code (its hash in the devices set) replaces its own token only (its
# record follows); the first device's token is the hash's `token_hash`. Revoking every
# session drops every token of the player, devices included: the new one is the only one
# left, and the caller becomes the original device (a code device keeps how and when it
# signed in, in the `orig_*` fields). A code device on trial may not revoke every session.
# Returns the player's epoch after the change, -1 if the caller's token is no longer the
# player's (revoked meanwhile), -2 if the new hash collides (caller retries), -3 if the
# caller is a code device on trial.
_ROTATE_LUA = """
if redis.call('HGET', KEYS[1], ARGV[2]) ~= ARGV[1] then
  return -1
end
if redis.call('HEXISTS', KEYS[1], ARGV[3]) == 1 then
  return -2
end
local mine, mine_id
local info = redis.call('HGETALL', KEYS[4])
for i = 1, #info, 2 do
  local how, at, h, name = string.match(info[i + 1], '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
  if h == ARGV[2] then
    mine = {how, at, h, name}
    mine_id = info[i]
  end
end
if ARGV[4] == '1' and mine and tonumber(mine[2]) + tonumber(ARGV[6]) > tonumber(ARGV[5]) then
  return -3
end
local current = redis.call('HGET', KEYS[2], 'token_hash')
if ARGV[4] == '1' then
  for _, h in ipairs(redis.call('SMEMBERS', KEYS[3])) do
    redis.call('HDEL', KEYS[1], h)
  end
  redis.call('DEL', KEYS[3], KEYS[4], KEYS[5])
end
redis.call('HDEL', KEYS[1], ARGV[2])
redis.call('HSET', KEYS[1], ARGV[3], ARGV[1])
if ARGV[4] ~= '1' then
  redis.call('SADD', KEYS[5], ARGV[2])
  redis.call('PEXPIRE', KEYS[5], ARGV[7])
end
if ARGV[4] ~= '1' and redis.call('SREM', KEYS[3], ARGV[2]) == 1 then
  redis.call('SADD', KEYS[3], ARGV[3])
  if mine then
    local rec = mine[1] .. '|' .. mine[2] .. '|' .. ARGV[3] .. '|' .. mine[4]
    redis.call('HSET', KEYS[4], mine_id, rec)
  end
else
  if current and current ~= '' then
    redis.call('HDEL', KEYS[1], current)
  end
  redis.call('HSET', KEYS[2], 'token_hash', ARGV[3])
  if ARGV[4] == '1' and redis.call('SISMEMBER', KEYS[3], ARGV[2]) == 0 and mine then
    redis.call('HSET', KEYS[2], 'orig_how', mine[1], 'orig_at', mine[2], 'orig_name', mine[4])
  end
end
redis.call('XADD', KEYS[6], 'MAXLEN', '~', ARGV[8], '*', 'p', ARGV[1])
if ARGV[4] == '1' then
  return redis.call('HINCRBY', KEYS[2], 'epoch', 1)
end
return tonumber(redis.call('HGET', KEYS[2], 'epoch') or '0')
"""

#: Entries `keys.revocations` keeps (about: trimmed with ``MAXLEN ~``). A process reads what
#: is new there every `server.app.SESSION_SWEEP_S`; more deaths than this in between are
#: caught by its full sweep (`server.app.FULL_SWEEP_S`).
REVOCATIONS_KEPT: Final = 10_000
#: Revocations one read of `Registry.revoked_since` returns at most.
REVOCATIONS_READ: Final = 1_000

#: How long a dead token's digest stays in `keys.player_revoked` (a revoked device's, a
#: rotated-away one's): longer than any connection lives.
REVOKED_TTL_MS: Final = 30 * 24 * 3_600_000

#: Players `backfill_folds` reads per HSCAN step.
BACKFILL_BATCH = 500


@dataclass(frozen=True, slots=True)
class Player:
    id: str
    name: str
    created_at_ms: int
    #: Goes up with every `token.revoke_all`: a session opened at a lower epoch is closed.
    epoch: int = 0
    #: SHA-256 of the token the session said hello with ("" when not known): a session's
    #: detail, not the player's (left out of comparisons).
    token_hash: str = dataclasses.field(default="", compare=False, repr=False)


def check_name(name: str) -> str:
    """Local sanity check (the protocol layer validates first): 3..20 of ``[A-Za-z0-9_-]``."""
    if not isinstance(name, str) or _NAME_RE.fullmatch(name) is None:
        raise InvalidInput("name must be 3-20 characters of A-Z a-z 0-9 _ -")
    return name


def hash_token(token: str) -> str:
    """The only form in which a token is ever stored."""
    return hashlib.sha256(token.encode()).hexdigest()


def typed_id(nbytes: int) -> str:
    """``nbytes`` random bytes as url-safe text, never starting with ``-``: players type these
    ids as command arguments (``solitaire profile <id>``, ``solitaire device-revoke <id>``),
    where a leading dash reads as an option."""
    while True:
        token = secrets.token_urlsafe(nbytes)
        if not token.startswith("-"):
            return token


def _new_player_id() -> str:
    """12 url-safe characters (72 bits)."""
    return typed_id(9)


async def announce_revoked(client: redis.asyncio.Redis, pid: str) -> None:
    """Tell every process that a token of ``pid`` died (`pubsub.SessionsRevoked`): each runs
    its session sweep at once and closes the player's dead sessions there with 4001. Best
    effort: a lost message leaves the sweep's `server.app.SESSION_SWEEP_S` as the bound."""
    with contextlib.suppress(Exception):
        await client.publish(
            keys.player_channel(pid), pubsub.encode(pubsub.SessionsRevoked(player_id=pid))
        )


class PlayerRegistry:
    """Creates and looks up players. ``redis`` must use ``decode_responses=True``."""

    def __init__(
        self,
        redis: redis.asyncio.Redis,
        clock: Clock | None = None,
        commit: Batcher | None = None,
        accounts_per_hour: int = 0,
    ) -> None:
        self._r = redis
        self._clock = clock or SystemClock()
        #: A new player's script goes through the group commit (a burst of sign-ups batches).
        self._commit = commit or Batcher(redis)
        self._create = LuaScript.of(_CREATE_LUA)
        self._rotate = LuaScript.of(_ROTATE_LUA)
        #: New players per address group and hour (`register`'s ``address``); 0: no limit.
        self.accounts_per_hour = accounts_per_hour

    async def create(self, name: str) -> tuple[str, str]:
        """Register ``name``; returns ``(player_id, token)``. The token is shown only once.

        Raises ``NameTaken`` if the name is used by anyone, ignoring case.
        """
        player, token = await self.register(name)
        return player.id, token

    @translate_redis_errors
    async def register(
        self, name: str, address: str | None = None, network: str | None = None
    ) -> tuple[Player, str]:
        """`create`, returning the new player as stored (no read back).

        ``address``: the client's address group (`server.transport.address.address_group`);
        with `accounts_per_hour` set, raises ``LimitReached`` once that many players were
        created from it this hour, or `NETWORK_FACTOR` times as many from its ``network``
        (`address_network`: an IPv6 /48 holds 65,536 groups; cheater review F2). A refused
        name does not count."""
        check_name(name)
        if is_reserved(name):
            raise ReservedName(f"the name {name!r} is reserved")
        quotas: list[tuple[str, int]] = []
        what: list[str] = []  # what each quota counts, for the refusal's message
        if self.accounts_per_hour:
            hour = self._clock.now_ms() // HOUR_MS
            if address is not None:
                quotas.append((keys.accounts_by_address(address, hour), self.accounts_per_hour))
                what.append("address")
            if network is not None and network != address:
                limit = self.accounts_per_hour * NETWORK_FACTOR
                quotas.append((keys.accounts_by_address(network, hour), limit))
                what.append("network")
        refused = await take_each_hourly(self._commit, quotas)
        if refused is not None:
            raise LimitReached(
                f"too many new players from this {what[refused]} ({quotas[refused][1]} an "
                "hour); try again later or play with your token"
            )
        try:
            return await self._register(name)
        except BaseException:
            with contextlib.suppress(Exception):  # nothing was created: give the quota back
                await give_back_each_hourly(self._commit, [k for k, _ in quotas])
            raise

    async def _register(self, name: str) -> tuple[Player, str]:
        folded = name.casefold()
        for _ in range(5):
            pid, token = _new_player_id(), secrets.token_urlsafe(24)  # 192-bit token
            now = self._clock.now_ms()
            token_hash = hash_token(token)
            res = await self._commit.eval(
                self._create,
                (
                    keys.players_by_name(),
                    keys.players_by_token(),
                    keys.player(pid),
                    keys.players_by_fold(),
                ),
                (folded, pid, token_hash, name, now, fold_name(name)),
            )
            if res == 1:
                return Player(id=pid, name=name, created_at_ms=now, token_hash=token_hash), token
            if res == 0:
                raise NameTaken(f"name {name!r} is taken (or one that looks like it)")
        raise RuntimeError("could not allocate a unique player id")  # ~impossible

    @translate_redis_errors
    async def rotate(
        self, player: Player, revoke_all: bool = False, trust_ms: int = 0
    ) -> tuple[Player, str]:
        """A new token for ``player`` (as its session knows it: its `token_hash`); the old
        one stops working at once, and every other session still open with it is closed by
        the session sweep (its digest joins `keys.player_revoked`). ``revoke_all`` also
        raises the player's epoch: every other session of the player is closed (the app's
        session sweep reads `epochs`).
        Returns the player as the session now is, and the new token; raises
        ``TokenRevoked`` when the session's token was replaced or revoked meanwhile and
        ``NotTrusted`` when ``revoke_all`` comes from a device signed in by a code less than
        ``trust_ms`` ago (`server.players.devices`)."""
        for _ in range(5):
            token = secrets.token_urlsafe(24)
            new_hash = hash_token(token)
            res = await self._commit.eval(
                self._rotate,
                (
                    keys.players_by_token(),
                    keys.player(player.id),
                    keys.player_devices(player.id),
                    keys.player_device_info(player.id),
                    keys.player_revoked(player.id),
                    keys.revocations(),
                ),
                (
                    player.id,
                    player.token_hash,
                    new_hash,
                    "1" if revoke_all else "0",
                    self._clock.now_ms(),
                    trust_ms,
                    REVOKED_TTL_MS,
                    REVOCATIONS_KEPT,
                ),
            )
            epoch = cast(int, res)
            if epoch >= 0:
                await announce_revoked(self._r, player.id)
                return dataclasses.replace(player, epoch=epoch, token_hash=new_hash), token
            if epoch == -1:
                raise TokenRevoked("this session's token was revoked; say hello again")
            if epoch == -3:
                raise NotTrusted(
                    "this device signed in with a code less than "
                    f"{trust_ms // 86_400_000 or 1} day(s) ago: it may not sign every other "
                    "device out yet (an older device can sign it out)"
                )
        raise RuntimeError("could not allocate a unique token")  # ~impossible

    @translate_redis_errors
    async def epochs(self, pids: Iterable[str]) -> dict[str, int]:
        """Each player's epoch (`Player.epoch`, one round trip); unknown players omitted."""
        wanted = list(dict.fromkeys(p for p in pids if keys.valid_player_id(p)))
        if not wanted:
            return {}
        async with self._r.pipeline(transaction=False) as pipe:
            for pid in wanted:
                pipe.hget(keys.player(pid), "epoch")
            got: list[Any] = await pipe.execute()
        return {pid: int(epoch or 0) for pid, epoch in zip(wanted, got, strict=True)}

    @translate_redis_errors
    async def revocations_head(self) -> str:
        """The id of the newest entry of `keys.revocations` ("0-0" when there is none): where
        a process that starts now begins reading (no session of it is older)."""
        newest = cast(
            list[tuple[str, dict[str, str]]],
            await self._r.xrevrange(keys.revocations(), "+", "-", count=1),
        )
        return newest[0][0] if newest else "0-0"

    @translate_redis_errors
    async def revoked_since(self, after: str) -> tuple[str, set[str], bool]:
        """The players with a token dead since entry ``after`` of `keys.revocations`: the id
        of the last entry read (``after`` when none), their ids, and whether more entries may
        follow (`REVOCATIONS_READ` were read). One command, whatever the players connected."""
        got = cast(
            list[tuple[str, dict[str, str]]],
            await self._r.xrange(keys.revocations(), f"({after}", "+", count=REVOCATIONS_READ),
        )
        if not got:
            return after, set(), False
        pids = {f["p"] for _, f in got if "p" in f}
        return got[-1][0], pids, len(got) == REVOCATIONS_READ

    @translate_redis_errors
    async def revoked_sessions(self, players: Sequence[Player]) -> list[bool]:
        """For each session's ``player`` (as it said hello), whether its device was revoked
        on its own since (`device.revoke`: its token digest in `keys.player_revoked`); one
        pipelined round trip."""
        if not players:
            return []
        async with self._r.pipeline(transaction=False) as pipe:
            for player in players:
                pipe.sismember(keys.player_revoked(player.id), player.token_hash or "-")
            got: list[Any] = await pipe.execute()
        return [bool(x) for x in got]

    @translate_redis_errors
    async def backfill_folds(self) -> int:
        """Put the players created before `players_by_fold` existed into it (once; later
        calls return at once). A look-alike pair both registered before keeps both names;
        the older fold entry wins. Returns how many entries were added."""
        if await self._r.exists(keys.players_folded()):
            return 0
        added = 0
        cursor: int = 0
        while True:
            cursor, batch = await self._r.hscan(
                keys.players_by_name(), cursor, count=BACKFILL_BATCH
            )
            for folded, pid in cast(dict[str, str], batch).items():
                added += int(await self._r.hsetnx(keys.players_by_fold(), fold_name(folded), pid))
            if not cursor:
                break
        await self._r.set(keys.players_folded(), "1")
        return added

    @translate_redis_errors
    async def authenticate(self, token: str) -> Player | None:
        """The player owning ``token``, or None for unknown/malformed tokens."""
        if not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN_LEN:
            return None
        # Through the group commit, not redis-py: a returning player's every `hello` reads
        # these, and redis-py's per-call machinery cost several times the command (#30).
        digest = hash_token(token)
        by_token = keys.players_by_token()
        pid = await self._commit.run(by_token, "HGET", by_token, digest)
        if pid is None:
            return None
        player = await self.get(cast(str, pid))
        return dataclasses.replace(player, token_hash=digest) if player else None

    @translate_redis_errors
    async def get(self, pid: str) -> Player | None:
        if not keys.valid_player_id(pid):
            return None
        key = keys.player(pid)
        return _player(pid, as_map(await self._commit.run(key, "HGETALL", key)))

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
        """The player id using ``name`` (case-insensitive, or a look-alike of it), if any."""
        res = await self._r.hget(keys.players_by_name(), name.casefold())
        if res is None:
            res = await self._r.hget(keys.players_by_fold(), fold_name(name))
        return cast(str | None, res)


def _player(pid: str, data: dict[str, str]) -> Player | None:
    if not data:
        return None
    return Player(
        id=pid,
        name=data["name"],
        created_at_ms=int(data["created_at_ms"]),
        epoch=int(data.get("epoch", 0)),
    )
