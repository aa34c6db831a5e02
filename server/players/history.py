"""Each player's daily results by UTC day, and the streaks and totals computed from them.

A finished daily game is first of all its stored result, written by the finish steps of
`server.games.store` on the game's own keys (``{d:<variant>:<date>:<pid>}``) and its board's
(``{d:<variant>:<date>}``). A player's history lives on the player's own keys (``{h:<pid>}``,
`server.redis.keys`), which Redis Cluster may put in another slot, so no one script can write both.
Instead the history is derived from the stored result, exactly once:

1. before the finish script, the game id goes into the player's ``pending`` set (an outbox);
2. after it, `History.record` runs one script on the player's keys that adds the day's result
   unless it is already there (``HSETNX``), updates the totals and streak runs from the stored
   days, trims days older than `keys.HISTORY_KEEP_DAYS`, and takes the game out of ``pending``
   (a won daily game's crowns first, in the same script: `server.players.crowns` keys share
   the player's tag);
3. if a process dies between the two scripts, the game stays pending, and the next read of
   the player's profile or history records it from the stored game (`server.players.profiles`).

So two processes finishing games of one player, or a finish retried, never count twice, and
a streak is a pure function of the stored days whatever order they were recorded in.

Streaks: a daily streak is a run of consecutive UTC days with a finished daily game of the
variant; a won-streak counts days with a won game. The script keeps the latest run of each
(``start``/``end`` day numbers) and the longest run ever. A current streak is alive while its
last day is today or yesterday (today's game may still be played).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import redis.asyncio

from server.players.crowns import month_number
from server.redis import keys
from server.redis.batch import Batcher, LuaScript
from server.runtime.errors import is_outage, translate_redis_errors

__all__ = [
    "DailyResult",
    "DayRank",
    "History",
    "HistoryEntry",
    "VariantStats",
    "day_number",
    "percentile_bp",
]

log = logging.getLogger(__name__)

_EPOCH = dt.date(1970, 1, 1)


def day_number(date: dt.date) -> int:
    """Days since 1970-01-01 (the UTC day's number; what the day lists store)."""
    return (date - _EPOCH).days


def _date(day: int) -> dt.date:
    return _EPOCH + dt.timedelta(days=day)


def percentile_bp(rank: int, total: int) -> int:
    """Rank percentile in basis points: the share of the other players one placed ahead of,
    10000 for first place (and for a board of one), 0 for last."""
    if total <= 1:
        return 10_000
    return round(10_000 * (total - rank) / (total - 1))


@dataclass(frozen=True, slots=True)
class DailyResult:
    """A finished daily game as the history records it."""

    variant: str
    date: dt.date
    player_id: str
    won: bool
    resigned: bool
    cleared: int
    score: int
    points: int
    time_ms: int
    moves: int
    hints: int
    finished_at_ms: int

    @property
    def game_id(self) -> str:
        return keys.daily_game_id(self.variant, self.date, self.player_id)

    def dumps(self) -> str:
        """The day's stored result: ``json.dumps`` (compact) of its fields, written out (the
        same bytes, tests/server/players/test_history.py; every daily finish makes one)."""
        return (
            f'{{"won":{"true" if self.won else "false"},'
            f'"resigned":{"true" if self.resigned else "false"},'
            f'"cleared":{int(self.cleared)},"score":{int(self.score)},'
            f'"points":{int(self.points)},"time_ms":{int(self.time_ms)},'
            f'"moves":{int(self.moves)},"hints":{int(self.hints)},'
            f'"finished_at":{int(self.finished_at_ms)}}}'
        )

    @classmethod
    def loads(cls, variant: str, date: dt.date, pid: str, raw: str) -> DailyResult:
        d = json.loads(raw)
        return cls(
            variant=variant,
            date=date,
            player_id=pid,
            won=bool(d["won"]),
            resigned=bool(d["resigned"]),
            cleared=int(d["cleared"]),
            score=int(d["score"]),
            points=int(d["points"]),
            time_ms=int(d["time_ms"]),
            moves=int(d["moves"]),
            hints=int(d["hints"]),
            finished_at_ms=int(d["finished_at"]),
        )


@dataclass(frozen=True, slots=True)
class DayRank:
    """A player's final place on a day's board (``total`` 0: the board had expired)."""

    rank: int
    total: int

    @property
    def known(self) -> bool:
        return self.total > 0

    @classmethod
    def loads(cls, raw: str) -> DayRank:
        rank, _, total = raw.partition(":")
        return cls(int(rank), int(total))


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One day of a player's history: the result, and the final rank once the day is over."""

    result: DailyResult
    rank: DayRank | None


@dataclass(frozen=True, slots=True)
class VariantStats:
    """A player's daily totals on one variant; streaks as of ``today``."""

    variant: str
    played: int
    won: int
    streak: int
    longest_streak: int
    won_streak: int
    longest_won_streak: int
    best_time_ms: int | None
    best_score: int | None
    percentile_bp: int | None  # average over the days with a known final rank
    last_played: dt.date | None
    forfeits: int = 0  # races of the variant lost by forfeit


# Lua: the streak runs of one day list. `run(set, s, e, long, d)` accounts for day `d` just
# added to `set`, the latest run being days s..e and the longest `long` (the stats hash's
# p..'s', p..'e', p..'long', read by the caller's one HMGET); it answers the new s, e, long
# for the caller's one HSET. In order (d after the latest run) it is O(1); a day recorded
# late walks the stored days around it (at most the kept days).
_LUA_RUNS = """
local call = redis.call
local function has(set, d) return call('ZSCORE', set, d) ~= false end
local function run(set, s, e, long, d)
  local len
  if e == nil or d > e then
    if e ~= nil and d == e + 1 then e = d else s = d; e = d end
    len = e - s + 1
  else
    local lo, hi = d, d
    while has(set, lo - 1) do lo = lo - 1 end
    while has(set, hi + 1) do hi = hi + 1 end
    if hi == e then s = math.min(s, lo); len = e - s + 1 else len = hi - lo + 1 end
  end
  if len > long then long = len end
  return s, e, long
end
"""

# KEYS: days, won, res, rank, stats, pending.
# ARGV: day number, won (0/1), result JSON, game id, score, time_ms, keep days.
# Returns 1 when the day was recorded now, 0 when it already was (nothing changes).
# The stats hash is read by one HMGET and written by one HSET (counts, runs and bests
# together: 4 commands fewer than a read and a write each, 8 for a won game); the newest
# kept day is the played run's end (`pe`, never trimmed), not a ZRANGE.
_RECORD_BODY = """
local day, won = tonumber(ARGV[1]), ARGV[2] == '1'
call('SREM', KEYS[6], ARGV[4])
if call('HSETNX', KEYS[3], day, ARGV[3]) == 0 then return 0 end
call('ZADD', KEYS[1], day, day)
local f = call('HMGET', KEYS[5], 'played', 'ps', 'pe', 'plong', 'best_score',
  'won', 'ws', 'we', 'wlong', 'best_time')
local ps, pe, plong = run(KEYS[1], tonumber(f[2]), tonumber(f[3]), tonumber(f[4] or '0'), day)
local score, best = tonumber(ARGV[5]), tonumber(f[5])
if best == nil or score > best then best = score end
if won then
  call('ZADD', KEYS[2], day, day)
  local ws, we, wlong = run(KEYS[2], tonumber(f[7]), tonumber(f[8]), tonumber(f[9] or '0'), day)
  local t, bt = tonumber(ARGV[6]), tonumber(f[10])
  if bt == nil or t < bt then bt = t end
  call('HSET', KEYS[5], 'played', (tonumber(f[1]) or 0) + 1, 'ps', ps, 'pe', pe,
    'plong', plong, 'best_score', best, 'won', (tonumber(f[6]) or 0) + 1, 'ws', ws,
    'we', we, 'wlong', wlong, 'best_time', bt)
else
  call('HSET', KEYS[5], 'played', (tonumber(f[1]) or 0) + 1, 'ps', ps, 'pe', pe,
    'plong', plong, 'best_score', best)
end
local cutoff = pe - tonumber(ARGV[7])
local old = call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff)
if #old > 0 then
  call('HDEL', KEYS[3], unpack(old))
  call('HDEL', KEYS[4], unpack(old))
  call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff)
  call('ZREMRANGEBYSCORE', KEYS[2], '-inf', cutoff)
end
return 1
"""
_RECORD_LUA = _LUA_RUNS + _RECORD_BODY

# The same for a won daily game, its crowns first, in the same script (the crowns' keys share
# the player's tag): KEYS 7, 8 the month's crowns hash and the months zset
# (`server.players.crowns`, whose award script this repeats), ARGV 8-10 the crowns' field
# ("<variant>|<date>|<tier>"), crowns and month number. Crowns once per field (HSETNX).
_RECORD_CROWNED_LUA = (
    _LUA_RUNS
    + """
if call('HSETNX', KEYS[7], ARGV[8], ARGV[9]) == 1 then
  call('ZINCRBY', KEYS[8], ARGV[9], ARGV[10])
end
"""
    + _RECORD_BODY
)

# KEYS: res, rank, stats. ARGV: day, rank, total, percentile basis points (-1: unknown).
# Freezes a day's final rank once; the first time it also adds to the percentile average.
_FINAL_RANK_LUA = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2] .. ':' .. ARGV[3]) == 0 then return 0 end
local bp = tonumber(ARGV[4])
if bp >= 0 then
  redis.call('HINCRBY', KEYS[3], 'pct_sum', bp)
  redis.call('HINCRBY', KEYS[3], 'pct_n', 1)
end
return 1
"""


def _int(d: dict[str, str], name: str) -> int | None:
    v = d.get(name)
    return int(v) if v is not None else None


def _streak(d: dict[str, str], p: str, today: int) -> tuple[int, int]:
    """(current, longest) run of a day list as of day number ``today``."""
    s, e, long = _int(d, p + "s"), _int(d, p + "e"), _int(d, p + "long") or 0
    current = e - s + 1 if s is not None and e is not None and e >= today - 1 else 0
    return current, long


def stats_of(variant: str, raw: dict[str, str], today: dt.date) -> VariantStats:
    """The stats hash of a variant as `VariantStats` (streaks alive as of ``today``)."""
    t = day_number(today)
    streak, longest = _streak(raw, "p", t)
    won_streak, longest_won = _streak(raw, "w", t)
    n, total = _int(raw, "pct_n") or 0, _int(raw, "pct_sum") or 0
    last = _int(raw, "pe")
    return VariantStats(
        variant=variant,
        played=_int(raw, "played") or 0,
        won=_int(raw, "won") or 0,
        streak=streak,
        longest_streak=longest,
        won_streak=won_streak,
        longest_won_streak=longest_won,
        best_time_ms=_int(raw, "best_time"),
        best_score=_int(raw, "best_score"),
        percentile_bp=round(total / n) if n else None,
        last_played=_date(last) if last is not None else None,
        forfeits=_int(raw, "forfeits") or 0,
    )


class History:
    """Player histories in Redis. ``redis`` must use ``decode_responses=True``."""

    def __init__(
        self,
        redis: redis.asyncio.Redis,
        keep_days: int = keys.HISTORY_KEEP_DAYS,
        commit: Batcher | None = None,
    ) -> None:
        self._r = redis
        self.keep_days = keep_days
        #: The finish path's two steps here go through the game store's group commit.
        self._commit = commit or Batcher(redis)
        self._record = LuaScript.of(_RECORD_LUA)
        self._record_crowned = LuaScript.of(_RECORD_CROWNED_LUA)
        self._final_rank = LuaScript.of(_FINAL_RANK_LUA)

    @translate_redis_errors
    async def mark_pending(self, pid: str, game_id: str) -> None:
        """Put a game in the player's outbox before its finish script runs (step 1)."""
        pending = keys.history_pending(pid)
        await self._commit.run(pending, "SADD", pending, game_id)

    def mark_pending_soon(self, pid: str, game_id: str) -> asyncio.Future[object]:
        """`mark_pending` queued in this iteration's batch; the future holds its reply."""
        pending = keys.history_pending(pid)
        return self._commit.run_soon(pending, "SADD", pending, game_id)

    @translate_redis_errors
    async def pending(self, pid: str) -> list[str]:
        return sorted(cast(set[str], await self._r.smembers(keys.history_pending(pid))))

    @translate_redis_errors
    async def drop_pending(self, pid: str, game_id: str) -> None:
        """Forget a pending game that no longer exists (expired unfinished)."""
        await self._r.srem(keys.history_pending(pid), game_id)

    @translate_redis_errors
    async def record(self, result: DailyResult) -> bool:
        """Record a finished daily game once; True when it was recorded now."""
        return bool(await self.record_soon(result))

    def record_soon(
        self,
        result: DailyResult,
        *,
        crowns: tuple[str, int] | None = None,
        game_id: str | None = None,
    ) -> asyncio.Future[object]:
        """`record` queued in this iteration's batch; the future's reply is true when the
        game was recorded now. ``crowns``: the tier won and its crowns, awarded first in the
        same script (a won daily game: one round trip, not an award then a record).
        ``game_id``: the result's `DailyResult.game_id`, when the caller has it."""
        pid, v = result.player_id, result.variant
        names = keys.history_record_keys(pid, v, result.date if crowns is not None else None)
        args: tuple[str | int, ...] = (
            day_number(result.date),
            int(result.won),
            result.dumps(),
            game_id or result.game_id,
            result.score,
            result.time_ms,
            self.keep_days,
        )
        if crowns is None:
            return self._commit.eval_soon(self._record, names, args)
        tier, n = crowns
        d = result.date
        return self._commit.eval_soon(
            self._record_crowned,
            names,
            (*args, f"{v}|{d.isoformat()}|{tier}", n, month_number(d)),
        )

    @translate_redis_errors
    async def freeze_rank(self, pid: str, variant: str, date: dt.date, rank: DayRank) -> None:
        """Keep a day's final rank (the first call wins; later calls change nothing)."""
        bp = percentile_bp(rank.rank, rank.total) if rank.known else -1
        await self._commit.eval(
            self._final_rank,
            (
                keys.history_results(pid, variant),
                keys.history_ranks(pid, variant),
                keys.history_stats(pid, variant),
            ),
            (day_number(date), rank.rank, rank.total, bp),
        )

    async def add_forfeit(self, pid: str, variant: str) -> None:
        """Count a race forfeit (the referee decides each forfeit once). An outage loses the
        count rather than hold up the race."""
        try:
            await self._r.hincrby(keys.history_stats(pid, variant), "forfeits", 1)
        except Exception as exc:
            if not is_outage(exc):
                raise
            log.warning("forfeit of %s not counted: %s", pid, exc)

    @translate_redis_errors
    async def stats(self, pid: str, variants: Sequence[str], today: dt.date) -> list[VariantStats]:
        """Each variant's totals and streaks (one round trip)."""
        async with self._r.pipeline(transaction=False) as pipe:
            for v in variants:
                pipe.hgetall(keys.history_stats(pid, v))
            raws: list[Any] = await pipe.execute()
        return [
            stats_of(v, cast(dict[str, str], raw), today)
            for v, raw in zip(variants, raws, strict=True)
        ]

    @translate_redis_errors
    async def page(
        self, pid: str, variant: str, before: dt.date | None, limit: int
    ) -> tuple[list[HistoryEntry], dt.date | None]:
        """Up to ``limit`` days before ``before`` (exclusive; None: from the newest), newest
        first, and the ``before`` of the next page (None on the last page)."""
        top = f"({day_number(before)}" if before is not None else "+inf"
        days = [
            int(d)
            for d in cast(
                list[str],
                await self._r.zrevrangebyscore(
                    keys.history_days(pid, variant), top, "-inf", start=0, num=limit + 1
                ),
            )
        ]
        more = len(days) > limit
        days = days[:limit]
        entries = await self._entries(pid, variant, days)
        return entries, (_date(days[-1]) if more and days else None)

    @translate_redis_errors
    async def since(self, pid: str, variants: Sequence[str], first: dt.date) -> list[HistoryEntry]:
        """Every variant's days from ``first`` on, newest first."""
        async with self._r.pipeline(transaction=False) as pipe:
            for v in variants:
                pipe.zrangebyscore(keys.history_days(pid, v), day_number(first), "+inf")
            found: list[Any] = await pipe.execute()
        out: list[HistoryEntry] = []
        for v, days in zip(variants, found, strict=True):
            out += await self._entries(pid, v, [int(d) for d in days])
        out.sort(key=lambda e: (e.result.date, e.result.finished_at_ms), reverse=True)
        return out

    async def _entries(self, pid: str, variant: str, days: list[int]) -> list[HistoryEntry]:
        if not days:
            return []
        async with self._r.pipeline(transaction=False) as pipe:
            pipe.hmget(keys.history_results(pid, variant), days)
            pipe.hmget(keys.history_ranks(pid, variant), days)
            results, ranks = cast(tuple[list[str | None], list[str | None]], await pipe.execute())
        out = []
        for day, raw, rank in zip(days, results, ranks, strict=True):
            if raw is None:  # trimmed between the two reads
                continue
            result = DailyResult.loads(variant, _date(day), pid, raw)
            out.append(HistoryEntry(result, DayRank.loads(rank) if rank else None))
        return out
