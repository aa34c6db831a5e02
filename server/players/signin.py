"""One-time sign-in codes: the same player on another device (protocol version 7).

A signed-in player asks for a code (`SigninCodes.issue`): eight characters of
`protocol.signin.SIGNIN_ALPHABET` drawn with `secrets` (31**8, about 2**39.6), kept in Redis
only as a SHA-256 digest for `CODE_TTL_MS`, one live code per player (a new one kills the old
one). Another client redeems it (`SigninCodes.redeem`): the code dies at once and that device
gets a token of its own for the same player (`server.players.registry`: kept in the player's
devices set, replaced by its own `token.rotate`, dropped by any `token.revoke_all`).

Guessing is bounded per client address group and hour (`attempts_per_hour`, every attempt
counted, right or wrong): at the default 20 an hour an address needs on the order of 10**10
hours to hit a given live code. A redeemed device creates no player, so the per-address
account quota and the queue's same-address rules see the one account they always saw.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from dataclasses import dataclass
from typing import Final, cast

import redis.asyncio

import protocol.devices as pd
from protocol.signin import SIGNIN_ALPHABET, SIGNIN_CODE_LENGTH, normalize_code, show_code
from server.players.registry import Player, PlayerRegistry, hash_token, typed_id
from server.redis import keys, pubsub
from server.redis.batch import Batcher, LuaScript
from server.redis.quota import HOUR_MS, NETWORK_FACTOR, take_hourly
from server.runtime.clock import Clock
from server.runtime.errors import (
    InvalidCode,
    LimitReached,
    TokenRevoked,
    translate_redis_errors,
)

__all__ = ["CODE_TTL_MS", "MAX_DEVICES", "IssuedCode", "Redeemed", "SigninCodes", "new_code"]

#: How long a code lives.
CODE_TTL_MS: Final = 5 * 60_000
#: Devices signed in by a code one player may hold (`token.revoke_all` drops them all).
MAX_DEVICES: Final = 32

# KEYS: the new code's key, the player's code-of key, the old code's key (or the new one's
# again when the player has none), by_token.  ARGV: the code's value ("<pid>|<expires at
# ms>": the app's clock decides when it dies, PX only cleans up), new code digest, ttl ms,
# the old digest (""), the pid, the asking session's token digest.
# Returns 1 when stored, 0 when the player's old code changed meanwhile (the caller reads it
# again), -1 when the new digest is taken (another player's live code: the caller draws
# again), -2 when the asking session's token is dead (revoked or rotated away): such a
# session neither gets a code nor kills the live one.
_ISSUE_LUA = """
if redis.call('HGET', KEYS[4], ARGV[6]) ~= ARGV[5] then
  return -2
end
if (redis.call('GET', KEYS[2]) or '') ~= ARGV[4] then
  return 0
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return -1
end
if ARGV[4] ~= '' then
  redis.call('DEL', KEYS[3])
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 1
"""

# KEYS: the code's key, by_token, the player hash, the player's devices, the code-of key,
# the devices' records.  ARGV: the code's value as read ("<pid>|<expires at ms>"), the new
# token's digest, the pid, the most devices a player may hold, the new device's id, its
# record ("code|<now ms>|<digest>|<name>").
# Returns 1 when the code was the player's and is now dead with the token stored, 0 when the
# code is dead (used or expired meanwhile) or the player gone, -2 when the token digest or
# device id collides (the caller draws again), -3 when the player holds the most devices
# already.
_REDEEM_LUA = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('EXISTS', KEYS[3]) == 0 then
  return 0
end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 or redis.call('HEXISTS', KEYS[6], ARGV[5]) == 1
    or ARGV[5] == 'original' then
  return -2
end
if redis.call('SCARD', KEYS[4]) >= tonumber(ARGV[4]) then
  return -3
end
redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[5])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('SADD', KEYS[4], ARGV[2])
redis.call('HSET', KEYS[6], ARGV[5], ARGV[6])
return 1
"""

# KEYS: the player's code-of key, the code's key.  ARGV: the code's digest as read.
# Voids the player's live code (both keys) unless it changed meanwhile: a named redemption
# used up the account's tries.
_VOID_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 1
end
return 0
"""


def new_code() -> str:
    """Eight characters of the alphabet, from `secrets` (never `random`)."""
    return "".join(secrets.choice(SIGNIN_ALPHABET) for _ in range(SIGNIN_CODE_LENGTH))


def _digest(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Redeemed:
    """A redeemed code: the player (as the new device's session knows it), the device's
    token, its id and name, and when it signed in (server ms)."""

    player: Player
    token: str
    device: str
    device_name: str
    signed_in_at_ms: int


@dataclass(frozen=True, slots=True)
class IssuedCode:
    """A code as shown (``ABCD-EFGH``) and when it dies (server ms)."""

    code: str
    expires_at_ms: int


class SigninCodes:
    """Issues and redeems sign-in codes. ``redis`` must use ``decode_responses=True``."""

    def __init__(
        self,
        redis: redis.asyncio.Redis,
        players: PlayerRegistry,
        clock: Clock,
        commit: Batcher,
        attempts_per_hour: int = 0,
        attempts_per_account_hour: int = 0,
    ) -> None:
        self._r = redis
        self._players = players
        self._clock = clock
        self._commit = commit
        self._issue = LuaScript.of(_ISSUE_LUA)
        self._redeem = LuaScript.of(_REDEEM_LUA)
        self._void = LuaScript.of(_VOID_LUA)
        #: Codes tried per client address group and hour; 0: no limit.
        self.attempts_per_hour = attempts_per_hour
        #: Codes tried naming one account per hour (its live code dies past them); 0: none.
        self.attempts_per_account_hour = attempts_per_account_hour

    @translate_redis_errors
    async def issue(self, player: Player) -> IssuedCode:
        """A new code for ``player`` (as its session knows it: its `token_hash`); the
        player's previous code, if live, dies. ``TokenRevoked`` when the session's token is
        dead (its device revoked, or the token rotated away): nothing changes."""
        mine = keys.signin_code_of(player.id)
        for _ in range(8):
            old = cast(str | None, await self._r.get(mine)) or ""
            code = new_code()
            digest = _digest(code)
            new_key = keys.signin_code(digest)
            old_key = keys.signin_code(old) if old else new_key
            expires = self._clock.now_ms() + CODE_TTL_MS
            res = await self._commit.eval(
                self._issue,
                (new_key, mine, old_key, keys.players_by_token()),
                (
                    f"{player.id}|{expires}",
                    digest,
                    CODE_TTL_MS,
                    old,
                    player.id,
                    player.token_hash or "-",
                ),
            )
            if res == -2:
                raise TokenRevoked("this session's token was revoked; say hello again")
            if res == 1:
                return IssuedCode(code=show_code(code), expires_at_ms=expires)
        raise RuntimeError("could not store a sign-in code")  # ~impossible

    @translate_redis_errors
    async def redeem(
        self,
        typed: str,
        address: str | None,
        network: str | None = None,
        *,
        name: str | None = None,
        device_name: str = "",
    ) -> Redeemed:
        """The player a live code belongs to and a new token of theirs for this device; the
        code dies. Without ``name``, raises ``LimitReached`` past `attempts_per_hour`
        attempts from ``address`` (the client's address group) or `NETWORK_FACTOR` times as
        many from ``network`` (its /24 or /48: a guesser spreading over a site's addresses).
        With ``name`` (the account's), the attempt is counted against that account
        (`attempts_per_account_hour`; past them ``LimitReached`` for named attempts only, and
        the first refusal of the hour voids the account's live code and tells its devices)
        and against the address and network on named counters of their own (same limits);
        a code of another account is wrong; a name of no account is counted as a nameless
        attempt. ``InvalidCode`` for any code that is
        not live (malformed, wrong, used, expired or another account's: one answer)."""
        named: str | None = None
        if name is None:
            await self._count_attempt(address)
            await self._count_attempt(network, NETWORK_FACTOR)
        else:
            named = await self._players.id_for_name(name)
            if named is None:  # no account to count against: the address pays for it
                await self._count_attempt(address)
                await self._count_attempt(network, NETWORK_FACTOR)
                raise InvalidCode("no such sign-in code (wrong, used or expired)")
            await self._count_attempt(address, named=True)  # the address pays too
            await self._count_attempt(network, NETWORK_FACTOR, named=True)
            await self._count_account_attempt(named)
        code = normalize_code(typed)
        if code is None:
            raise InvalidCode("no such sign-in code (wrong, used or expired)")
        code_key = keys.signin_code(_digest(code))
        value = cast(str | None, await self._r.get(code_key)) or ""
        pid, _, expires = value.partition("|")
        if (
            not keys.valid_player_id(pid)
            or not expires.isdigit()
            or self._clock.now_ms() >= int(expires)
            or (named is not None and pid != named)
        ):
            raise InvalidCode("no such sign-in code (wrong, used or expired)")
        label = device_name.replace("|", " ")
        for _ in range(5):
            token = secrets.token_urlsafe(24)  # 192 bits, as registration's
            token_hash = hash_token(token)
            device = typed_id(6)  # 8 characters
            now = self._clock.now_ms()
            res = await self._commit.eval(
                self._redeem,
                (
                    code_key,
                    keys.players_by_token(),
                    keys.player(pid),
                    keys.player_devices(pid),
                    keys.signin_code_of(pid),
                    keys.player_device_info(pid),
                ),
                (value, token_hash, pid, MAX_DEVICES, device, f"code|{now}|{token_hash}|{label}"),
            )
            if res == -3:
                raise LimitReached(
                    f"{MAX_DEVICES} devices are signed in as this player already; sign them "
                    "all out (token.revoke_all) and sign in again"
                )
            if res == 0:
                raise InvalidCode("no such sign-in code (wrong, used or expired)")
            if res == 1:
                player = await self._players.get(pid)
                if player is None:  # deleted in between: the token leads nowhere
                    raise InvalidCode("no such sign-in code (wrong, used or expired)")
                await self._announce(pid, device, label, now)
                return Redeemed(
                    player=Player(
                        id=player.id,
                        name=player.name,
                        created_at_ms=player.created_at_ms,
                        epoch=player.epoch,
                        token_hash=token_hash,
                    ),
                    token=token,
                    device=device,
                    device_name=label,
                    signed_in_at_ms=now,
                )
        raise RuntimeError("could not allocate a unique token")  # ~impossible

    async def _announce(self, pid: str, device: str, name: str, at_ms: int) -> None:
        """Tell the player's other sessions (version 9) a new device signed in."""
        await self._publish(pid, pd.DeviceSignedIn(device=device, name=name, signed_in_at=at_ms))

    async def _publish(self, pid: str, push: pubsub.PlayerPushBody) -> None:
        """Push to the player's version 9 sessions on every process (best effort: what it
        tells stands without it)."""
        with contextlib.suppress(Exception):
            await self._r.publish(
                keys.player_channel(pid),
                pubsub.encode(pubsub.PlayerPush(player_id=pid, push=push)),
            )

    async def _count_account_attempt(self, pid: str) -> None:
        """Count a named try against account ``pid``; past `attempts_per_account_hour`,
        ``LimitReached``. The first refusal of the hour voids the account's live code and
        tells its version 9 sessions (`signin.tries_used`); later ones change nothing, so a
        guesser cannot kill each new code of the owner's with one more try."""
        hour = self._clock.now_ms() // HOUR_MS
        key = keys.signin_attempts_of(pid, hour)
        if await take_hourly(self._commit, key, self.attempts_per_account_hour):
            return
        until = (hour + 1) * HOUR_MS
        first = await self._r.set(keys.signin_tries_used_of(pid, hour), "1", nx=True, px=HOUR_MS)
        if first:
            mine = keys.signin_code_of(pid)
            digest = cast(str | None, await self._r.get(mine))
            if digest:
                await self._commit.eval(self._void, (mine, keys.signin_code(digest)), (digest,))
            await self._publish(pid, pd.SigninTriesUsed(until=until))
        raise LimitReached(
            f"too many sign-in codes tried naming this account "
            f"({self.attempts_per_account_hour} an hour); sign in without the name (a new "
            "code from your signed-in device, redeemed without the name, still works), or "
            "name the account again after the hour"
        )

    async def _count_attempt(
        self, address: str | None, factor: int = 1, *, named: bool = False
    ) -> None:
        """Count a try against ``address`` (an address group, or a network with ``factor``
        5); named tries have counters of their own at the same limits, so a burnt address
        still lets its users sign in by name, and a name guesser's address pays."""
        if address is None:
            return
        hour = self._clock.now_ms() // HOUR_MS
        key = (keys.signin_named_attempts if named else keys.signin_attempts)(address, hour)
        if not await take_hourly(self._commit, key, self.attempts_per_hour * factor):
            where = "this address" if factor == 1 else "this network"
            what = "sign-in codes naming an account" if named else "sign-in codes"
            raise LimitReached(
                f"too many {what} tried from {where} "
                f"({self.attempts_per_hour * factor} an hour); try again later"
            )
