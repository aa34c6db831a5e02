"""Monthly progression: crowns for each tier completed, badges at crown counts.

A player completes a tier of a day by winning its game: the ranked game of that day or, later
in the same month, its catch-up game (one attempt each; both count for the month of the
game's day, never twice). Each completed tier earns `CROWNS` (easy 1, medium 2, hard 3,
expert 4) once per (variant, day, tier); the month's crowns give its badge (`BADGES`).

Stored under the player's history tag (``{h:<pid>}``, `server.redis.keys`): a hash per month
(``crowns:<YYYY-MM>``: "<variant>|<date>|<tier>" -> crowns, written once by ``HSETNX``) and a
zset of months (month number -> the month's crowns), both updated by one script with the
removal of the game from the player's ``pending`` outbox: a finish recorded twice (a retry,
the outbox replayed after a crash or restart) adds nothing. A month belongs to the game's
day, not to the clock at the finish, so a game won at 23:59 on the 31st counts for that month
whenever its finish is recorded. Kept without expiry: the profile shows past months.
"""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass
from typing import Final, cast

import redis.asyncio

from server.redis import keys
from server.redis.batch import Batcher, LuaScript
from server.runtime.errors import translate_redis_errors

__all__ = [
    "BADGES",
    "CROWNS",
    "Badge",
    "Crowns",
    "MonthCrowns",
    "badge_for",
    "month_number",
]

#: Crowns per completed tier: harder tiers give more.
CROWNS: Final[dict[str, int]] = {"easy": 1, "medium": 2, "hard": 3, "expert": 4}


class Badge(enum.Enum):
    """A month's badge, by the crowns won that month."""

    BRONZE = "bronze"
    SILVER = "silver"
    GOLD = "gold"
    DIAMOND = "diamond"


#: Crowns a month needs for each badge (a month has at most 10 crowns per variant and day:
#: 1 800 in a 30-day month over six variants). Bronze: every medium tier of one variant for
#: about ten days; diamond: most tiers of two variants every day.
BADGES: Final[tuple[tuple[Badge, int], ...]] = (
    (Badge.BRONZE, 20),
    (Badge.SILVER, 60),
    (Badge.GOLD, 150),
    (Badge.DIAMOND, 300),
)


def badge_for(crowns: int) -> Badge | None:
    """The badge a month with ``crowns`` crowns earns (None below bronze)."""
    best: Badge | None = None
    for badge, needed in BADGES:
        if crowns >= needed:
            best = badge
    return best


def month_number(date: dt.date) -> int:
    """Months since year 0: ``year * 12 + month - 1`` (sorts months in order)."""
    return date.year * 12 + date.month - 1


def _month_of(number: int) -> tuple[int, int]:
    return number // 12, number % 12 + 1


@dataclass(frozen=True, slots=True)
class MonthCrowns:
    """One month's crowns and badge (``month``: ``YYYY-MM``)."""

    month: str
    crowns: int
    badge: Badge | None


# KEYS: the month's crowns hash, the months zset, the pending outbox.
# ARGV: field, crowns, month number, game id. Returns 1 when the crowns were added now.
_AWARD_LUA = """
local added = 0
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('ZINCRBY', KEYS[2], ARGV[2], ARGV[3])
  added = 1
end
redis.call('SREM', KEYS[3], ARGV[4])
return added
"""


class Crowns:
    """Players' crowns in Redis. ``redis`` must use ``decode_responses=True``."""

    def __init__(self, redis_client: redis.asyncio.Redis, commit: Batcher | None = None) -> None:
        self._r = redis_client
        self._commit = commit or Batcher(redis_client)
        self._award = LuaScript.of(_AWARD_LUA)

    @translate_redis_errors
    async def award(
        self,
        pid: str,
        variant: str,
        date: dt.date,
        tier: str,
        game_id: str | None,
        *,
        won: bool,
    ) -> bool:
        """Record a finished tier game of ``date`` (crowns only if ``won``) and take it out of
        the player's outbox (``game_id``; None: the caller settles the outbox); True when
        crowns were added now (exactly once per tier and day)."""
        crowns = CROWNS[tier] if won else 0
        if not crowns:
            if game_id is None:
                return False
            await self._commit.run(
                keys.history_pending(pid), "SREM", keys.history_pending(pid), game_id
            )
            return False
        done = await self._commit.eval(
            self._award,
            (
                keys.crowns(pid, date.year, date.month),
                keys.crown_months(pid),
                keys.history_pending(pid),
            ),
            (f"{variant}|{date.isoformat()}|{tier}", crowns, month_number(date), game_id or ""),
        )
        return bool(done)

    @translate_redis_errors
    async def months(self, pid: str) -> list[MonthCrowns]:
        """Every month with crowns, newest first."""
        raw = cast(
            list[tuple[str, float]],
            await self._r.zrange(keys.crown_months(pid), 0, -1, withscores=True),
        )
        out = []
        for member, score in sorted(raw, key=lambda row: -int(row[0])):
            year, month = _month_of(int(member))
            crowns = int(score)
            out.append(MonthCrowns(f"{year:04d}-{month:02d}", crowns, badge_for(crowns)))
        return out

    @translate_redis_errors
    async def of_month(self, pid: str, year: int, month: int) -> dict[str, int]:
        """The month's crowns by "<variant>|<date>|<tier>"."""
        raw = cast(dict[str, str], await self._r.hgetall(keys.crowns(pid, year, month)))
        return {field: int(v) for field, v in raw.items()}
