"""The month index of a player's tier games: what `calendar.get` reads instead of every game
the month could hold (docs/performance.md, "The month calendar").

A month of six variants has 1,488 possible tier games per player (31 days x 6 variants x 4
tiers x ranked or catch-up); the calendar used to read them all. Each daily, ranked tier and
catch-up game a player starts is now noted in ``sol:{h:<pid>}:cal:<YYYY-MM>`` (a set of
``<DD>|<variant>|<tier>|<r or c>``), in the same batch as the start's first write and
acknowledged before the start is: an index member may name a game whose start then failed
(the calendar finds no record and shows the tier unplayed), never the other way round.

Games started before the index existed: the first read of a month whose set lacks the mark
``*`` scans that month once as the calendar used to (only from the account's first UTC day to
today: no game can be older than the account), then adds what it found and the mark in one
script; the later reads trust the set. A returning player's `welcome` needs one day only (its
tier cells and daily games): a set without ``*`` but with the day's mark ``<DD>|*`` is
trusted for that day, which the first `welcome` of the day marks after scanning the day's 48
possible games (a scan that cost every returning player's `hello` 72 record reads:
docs/performance.md). The set expires with the month's last games.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

import redis.asyncio

from server.boards.leaderboard import board_expire_at
from server.games.daily import last_of_month
from server.redis import keys
from server.redis.batch import Batcher, LuaScript
from server.runtime.errors import translate_redis_errors

__all__ = ["BACKFILLED", "MonthGame", "MonthIndex", "day_mark"]

#: The member saying the month's games started before the index are in the set too.
BACKFILLED = "*"

# KEYS[1] the month's set; ARGV[1] its expiry (Unix s), ARGV[2..] the members to add.
_ADD_LUA = """
redis.call('SADD', KEYS[1], unpack(ARGV, 2))
redis.call('EXPIREAT', KEYS[1], ARGV[1])
return 1
"""


@dataclass(frozen=True, slots=True)
class MonthGame:
    """One tier game a player started: its day, variant, tier, ranked or catch-up."""

    date: dt.date
    variant: str
    tier: str
    catchup: bool

    @property
    def member(self) -> str:
        return f"{self.date.day:02d}|{self.variant}|{self.tier}|{'c' if self.catchup else 'r'}"

    @classmethod
    def parse(cls, year: int, month: int, member: str) -> MonthGame | None:
        """The game a member names; None for the mark or anything malformed."""
        parts = member.split("|")
        if len(parts) != 4 or parts[3] not in ("r", "c") or parts[2] not in keys.TIER_NAMES:
            return None
        if not parts[0].isdigit():
            return None
        try:
            date = dt.date(year, month, int(parts[0]))
        except ValueError:
            return None
        return cls(date, parts[1], parts[2], parts[3] == "c")

    def game_id(self, pid: str) -> str:
        return keys.tier_game_id(self.variant, self.date, pid, self.tier, catchup=self.catchup)


def _retrieved(fut: asyncio.Future[object]) -> None:
    if not fut.cancelled():
        fut.exception()  # its failure is the start's (the same batch): not logged again


class MonthIndex:
    """Players' month indexes in Redis (``redis`` with ``decode_responses=True``); every
    command runs through the app's group commit."""

    def __init__(
        self, redis_client: redis.asyncio.Redis, commit: Batcher, retention_days: int
    ) -> None:
        self._r = redis_client
        self._commit = commit
        self.retention_days = retention_days
        self._add = LuaScript.of(_ADD_LUA)

    def expire_at(self, year: int, month: int) -> int:
        """Unix seconds at which the month's last games expire, and its index with them."""
        return board_expire_at(last_of_month(dt.date(year, month, 1)), self.retention_days)

    def note_soon(
        self, pid: str, variant: str, date: dt.date, tier: str, *, catchup: bool
    ) -> asyncio.Future[object]:
        """Queue the note of a game being started in this iteration's batch: the caller's
        next write (the start's `enlist`, or its record's script) must be queued before it
        awaits anything else, so both go in one pipeline. The future is its acknowledgement."""
        game = MonthGame(date, variant, tier, catchup)
        noted = self._commit.eval_soon(
            self._add,
            (keys.calendar_games(pid, date.year, date.month),),
            (self.expire_at(date.year, date.month), game.member),
        )
        noted.add_done_callback(_retrieved)  # a start that failed first never awaits it
        return noted

    @translate_redis_errors
    async def read(self, pid: str, year: int, month: int) -> frozenset[MonthGame] | None:
        """The games the player started in the month; None while the month has no mark (its
        games from before the index must be scanned once: `backfill`)."""
        key = keys.calendar_games(pid, year, month)
        members = cast(list[str], await self._commit.run(key, "SMEMBERS", key))
        if BACKFILLED not in members:
            return None
        found = (MonthGame.parse(year, month, m) for m in members)
        return frozenset(g for g in found if g is not None)

    @translate_redis_errors
    async def read_day(self, pid: str, date: dt.date) -> frozenset[MonthGame] | None:
        """The games the player started on ``date``; None while neither the month nor the
        day is marked (the day must be scanned once: `backfill` with ``day``)."""
        key = keys.calendar_games(pid, date.year, date.month)
        members = cast(list[str], await self._commit.run(key, "SMEMBERS", key))
        if BACKFILLED not in members and day_mark(date) not in members:
            return None
        prefix = f"{date.day:02d}|"
        found = (MonthGame.parse(date.year, date.month, m) for m in members if m.startswith(prefix))
        return frozenset(g for g in found if g is not None)

    @translate_redis_errors
    async def backfill(
        self,
        pid: str,
        year: int,
        month: int,
        games: Iterable[MonthGame],
        *,
        day: dt.date | None = None,
    ) -> None:
        """Add the games a scan found, and the mark (the month's, or ``day``'s when the scan
        covered that day only), in one script (a game noted meanwhile stays: members are only
        ever added)."""
        members = [g.member for g in games]
        mark = BACKFILLED if day is None else day_mark(day)
        await self._commit.eval(
            self._add,
            (keys.calendar_games(pid, year, month),),
            (self.expire_at(year, month), *members, mark),
        )


def day_mark(date: dt.date) -> str:
    """The member saying the day's games started before the index are in the set too."""
    return f"{date.day:02d}|{BACKFILLED}"
