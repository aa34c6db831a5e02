"""Race ratings (OpenSkill, Plackett-Luce: any number of racers) and race boards in Redis.

A rating is stored as JSON per player and variant; the board holds the displayed rating
(`display`: 1000 + 40 x the conservative ordinal mu - 3 sigma), so a new player shows 1000.
Each race is applied exactly once: one script reads the racers' ratings, the update is computed
here, and a second script writes it only if those ratings are still as read (else it is computed
again: optimistic, as WATCH/MULTI was, but scripts through the Batcher work on a Redis Cluster
whose master dies, where redis-py's cluster transaction raised AttributeError). The write also
adds the race id to the variant's applied set, and it is skipped when the id is already there (the
ratings it applied are then read back from the racers' recent races, so a race end completed
by another process reports the same changes). A race's win counts once on its day's wins board
the same way (an applied set in the board's slot, one script).

Boosting (docs/fairplay.md): two players are rated against each other once per UTC day (a race
in which some pair of its racers was rated together that day is unrated for everyone), and a
racer who made no real attempt (`no_attempt`, a result the fair-play screen holds included)
loses as last but gives nobody points: the others are rated among themselves only. A
provisional racer (fewer distinct rivals than the `provisional_rivals` threshold,
`--race-provisional-rivals`; a race adds one rival at most) is rated from the racers who
really tried, losing to any of them but gaining only over established ones, and moves
nobody else's rating: its losses give the winner nothing (as Glicko's and Lichess's
provisional ratings weigh little).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import cast

import redis.asyncio
from openskill.models import PlackettLuce

from server.races.model import RaceSummary, RecentRace
from server.redis import keys
from server.redis.batch import Batcher, LuaScript
from server.runtime.errors import translate_redis_errors

MODEL = PlackettLuce()
RECENT_MAX = 50
#: Distinct rivals kept in a rating (the newest), and so the largest provisional threshold.
RIVALS_MAX = 50
#: The rated pairs of a day are kept this long (the day, and slack for its last races).
PAIRS_TTL_S = 2 * 86_400

# KEYS: the day's pair owners (the race's own day). ARGV: race id, ttl s, pairs... Claims
# for the race each pair no earlier race of the day was dealt with.
_CLAIM_LUA = """
for i = 3, #ARGV do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[1]) end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""

# KEYS: applied, pairs of the day, stats, the pair owners of the race's day. ARGV: race id,
# n pairs, pairs..., pids... Returns {race already applied 0/1, some pair rated together
# today or dealt together first in another race 0/1, {each pid's rating JSON or false}}.
_RATE_READ_LUA = """
local n = tonumber(ARGV[2])
local met = 0
for i = 1, n do
  if redis.call('SISMEMBER', KEYS[2], ARGV[2 + i]) == 1 then met = 1 end
  local owner = redis.call('HGET', KEYS[4], ARGV[2 + i])
  if owner and owner ~= ARGV[1] then met = 1 end
end
local pids = {}
for i = 3 + n, #ARGV do pids[#pids + 1] = ARGV[i] end
return {redis.call('SISMEMBER', KEYS[1], ARGV[1]), met, redis.call('HMGET', KEYS[3], unpack(pids))}
"""

# KEYS: applied, pairs of the day, stats, board, the pair owners of the race's day, then each
# racer's recent list. ARGV: race id,
# pairs TTL s, recent max, n pairs, pairs..., then per racer 5 values: pid, its rating JSON as
# read ("" none), the new JSON ("" unchanged), the board's rating ("" stays off), its recent
# item ("" none: the race is unrated). Writes the race's ratings if it is not applied yet, no pair
# was rated together today meanwhile and every rating is still as read. Returns 1 written,
# 2 applied already, 0 changed meanwhile (read again).
_RATE_WRITE_LUA = """
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 2 end
local n = tonumber(ARGV[4])
local first = 5 + n
local rated = ARGV[first + 4] ~= ''
if rated then
  for i = 1, n do
    if redis.call('SISMEMBER', KEYS[2], ARGV[4 + i]) == 1 then return 0 end
    local owner = redis.call('HGET', KEYS[5], ARGV[4 + i])
    if owner and owner ~= ARGV[1] then return 0 end
  end
end
for i = first, #ARGV, 5 do
  local cur = redis.call('HGET', KEYS[3], ARGV[i]) or ''
  if cur ~= ARGV[i + 1] then return 0 end
end
redis.call('SADD', KEYS[1], ARGV[1])
if not rated then return 1 end
if n > 0 then
  redis.call('SADD', KEYS[2], unpack(ARGV, 5, 4 + n))
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
local k = 6
for i = first, #ARGV, 5 do
  if ARGV[i + 2] ~= '' then redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 2]) end
  if ARGV[i + 3] ~= '' then redis.call('ZADD', KEYS[4], ARGV[i + 3], ARGV[i]) end
  redis.call('LPUSH', KEYS[k], ARGV[i + 4])
  redis.call('LTRIM', KEYS[k], 0, tonumber(ARGV[3]) - 1)
  k = k + 1
end
return 1
"""

# KEYS: wins board, its applied set. ARGV: race id, winner, ttl_s. Counts the race's win
# once. Returns 1 counted, 0 already counted.
_ADD_WIN_LUA = """
if redis.call('SADD', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('ZINCRBY', KEYS[1], 1, ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return 1
"""


class Board(StrEnum):
    """The race boards of a variant: by rating, or by races won on one day."""

    RATING = "rating"
    WINS = "wins"


def display(mu: float, sigma: float) -> int:
    return round(1000 + 40 * (mu - 3 * sigma))


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float
    wins: int = 0
    losses: int = 0
    played: int = 0
    #: Distinct players this one was rated against after a real attempt of both (newest
    #: last, at most `RIVALS_MAX`): fewer than the provisional threshold, and it is
    #: provisional.
    rivals: tuple[str, ...] = ()

    @property
    def shown(self) -> int:
        return display(self.mu, self.sigma)

    def provisional(self, threshold: int) -> bool:
        """Too few distinct rivals yet for its results to move anyone else's rating."""
        return len(self.rivals) < min(threshold, RIVALS_MAX)

    def met(self, others: Sequence[str]) -> Rating:
        """With the first of `others` it has not met yet among its rivals: one rival a race,
        however many racers, so accounts of one person leave the provisional status by
        five races, not by one group race of six (cheater review F2)."""
        new = next((r for r in others if r not in self.rivals), None)
        if new is None:
            return self
        return replace(self, rivals=(*self.rivals, new)[-RIVALS_MAX:])

    @classmethod
    def fresh(cls) -> Rating:
        r = MODEL.rating()
        return cls(float(r.mu), float(r.sigma))

    @classmethod
    def load(cls, raw: str | None) -> Rating:
        if not raw:
            return cls.fresh()
        d = json.loads(raw)
        return cls(
            mu=float(d["mu"]),
            sigma=float(d["sigma"]),
            wins=int(d.get("wins", 0)),
            losses=int(d.get("losses", 0)),
            played=int(d.get("played", 0)),
            rivals=tuple(str(r) for r in d.get("rivals", ())),
        )

    def dump(self) -> str:
        return json.dumps(
            {
                "mu": self.mu,
                "sigma": self.sigma,
                "wins": self.wins,
                "losses": self.losses,
                "played": self.played,
                "rivals": list(self.rivals),
            }
        )


def rate(before: Mapping[str, Rating], places: Mapping[str, int]) -> dict[str, Rating]:
    """New ratings after one race; `places` are 1-based, ties share a place."""
    pids = list(places)
    teams = [[MODEL.rating(mu=before[p].mu, sigma=before[p].sigma)] for p in pids]
    rated = MODEL.rate(teams, ranks=[places[p] for p in pids])
    out = {}
    for pid, team in zip(pids, rated, strict=True):
        old, won = before[pid], places[pid] == 1
        out[pid] = replace(
            old,
            mu=float(team[0].mu),
            sigma=float(team[0].sigma),
            wins=old.wins + won,
            losses=old.losses + (not won),
            played=old.played + 1,
        )
    return out


def pair_key(a: str, b: str) -> str:
    """The member of the day's rated pairs (`keys.rating_pairs`) for two players."""
    return "|".join(sorted((a, b)))


def rate_race(
    before: Mapping[str, Rating],
    places: Mapping[str, int],
    no_attempt: frozenset[str],
    provisional: frozenset[str] = frozenset(),
) -> dict[str, Rating]:
    """New ratings after one race, where the racers in `no_attempt` (no real attempt) rank
    last and lose, while nobody gains from them, and those in `provisional` are rated from
    the racers who really tried (losing to any, gaining only over established ones) but move
    nobody else: the others are rated among themselves only (one racer left alone keeps
    their rating)."""
    weightless = no_attempt | (provisional & set(places))
    weighty = [p for p in places if p not in weightless]
    out: dict[str, Rating] = {}
    if no_attempt:
        last = max(places.values()) + 1
        full = rate(before, {p: last if p in no_attempt else places[p] for p in places})
        out.update({p: full[p] for p in no_attempt if p in full})
        for p in no_attempt & set(places):
            # Racers who all gave up tie for last, and a tie shrinks sigma: the shown rating
            # (mu - 3 sigma) rose after a loss (two forfeits: 1000 -> 1032). Giving up never
            # raises it; the loss is still counted.
            if out[p].shown > before[p].shown:
                out[p] = replace(out[p], mu=before[p].mu, sigma=before[p].sigma)
    # A provisional racer is rated from the racers who really tried, the provisional ones
    # among them only when they beat it: it loses to anyone, and gains only over
    # established racers. Rated from the whole race, a fresh account won +57 to +138 a race
    # over alts that queued and resigned (cheater review F3); from everyone who tried, over
    # alts that cleared one card first (+529 in five races, then established on alts alone).
    tried = [p for p in places if p not in no_attempt]
    for p in provisional & set(tried):
        field = [q for q in tried if q == p or q not in provisional or places[q] < places[p]]
        out[p] = _ranked(before, places, field)[p] if len(field) >= 2 else before[p]
    if len(weighty) >= 2:
        out.update(_ranked(before, places, weighty))
    else:
        out.update({p: before[p] for p in weighty})
    return out


def _ranked(
    before: Mapping[str, Rating], places: Mapping[str, int], pids: Sequence[str]
) -> dict[str, Rating]:
    """`rate` among `pids` only, their places renumbered from 1 (ties kept)."""
    ranks = {place: i + 1 for i, place in enumerate(sorted({places[p] for p in pids}))}
    return rate(before, {p: ranks[places[p]] for p in pids})


@dataclass(frozen=True, slots=True)
class RatedRace:
    """What rating a race did: pid -> (rating before, after) as displayed (empty: unrated),
    and the racers whose result weighed on others (a real attempt, not provisional)."""

    changes: dict[str, tuple[int, int]]
    weighty: frozenset[str]


@dataclass(frozen=True, slots=True)
class RatingRow:
    rank: int
    player_id: str
    rating: int
    wins: int
    losses: int
    played: int


class RaceBoards:
    """Ratings, the rating board, daily race-win boards and recent races."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        retention_days: int,
        batch: Batcher | None = None,
        *,
        provisional_rivals: int = 0,
    ) -> None:
        self.r = client
        #: A racer with fewer distinct rivals than this is provisional (`rate_race`); 0: none.
        self.provisional_rivals = provisional_rivals
        self.retention_s = retention_days * 86_400
        #: Scripts run through the shared group commit (`Services` hands it the store's).
        self.batch = batch if batch is not None else Batcher(client)
        self._add_win = LuaScript.of(_ADD_WIN_LUA)
        self._rate_read = LuaScript.of(_RATE_READ_LUA)
        self._rate_write = LuaScript.of(_RATE_WRITE_LUA)
        self._claim = LuaScript.of(_CLAIM_LUA)

    @translate_redis_errors
    async def claim_pairs(self, variant: str, race_id: str, pids: Sequence[str]) -> None:
        """A queue race is dealt: it claims each pair of its racers (`pids`, those it may rate)
        that no earlier race of its day was dealt with. A race rates only pairs it claimed
        (or claimed by none: dealt by an older release), so that the once-a-day rule follows
        the order races are dealt in, not the order they end in: two racers who left a group
        race (their games over) could otherwise race each other at once, end first, and so
        leave the race they were losing unrated for everyone (cheater review C1)."""
        pairs = [pair_key(a, b) for i, a in enumerate(pids) for b in pids[i + 1 :]]
        if pairs:
            owners = keys.rating_pair_owners(variant, keys.race_date(race_id))
            await self.batch.eval(self._claim, (owners,), (race_id, PAIRS_TTL_S, *pairs))

    async def apply(
        self,
        summary: RaceSummary,
        places: Mapping[str, int],
        no_attempt: frozenset[str] = frozenset(),
    ) -> dict[str, tuple[int, int]]:
        """Rate a finished race once; returns pid -> (rating before, after) as displayed,
        on a repeated call the ones applied the first time (from the racers' recent races).
        Empty when some pair of the racers was rated against each other on the race's UTC
        day already (the race is then unrated). `no_attempt`: see `rate_race`."""
        return (await self.rate(summary, places, no_attempt)).changes

    @translate_redis_errors
    async def rate(
        self,
        summary: RaceSummary,
        places: Mapping[str, int],
        no_attempt: frozenset[str] = frozenset(),
    ) -> RatedRace:
        """`apply`, also telling which racers weighed on the others (`RatedRace`): the
        provisional ones are known from the ratings as read (on a repeated call, as they
        are now)."""
        variant, race_id = summary.variant, summary.race_id
        stats, board = keys.rating_stats(variant), keys.rating_board(variant)
        applied = keys.rating_applied(variant)
        # The race's own day (its id's, as its claims'), not its finish's: judged by the
        # finish, a race dealt before midnight and a throwaway race of its pair dealt after
        # it but ending first shared a day of rated pairs, not of claims (review C1, again).
        day = keys.race_date(race_id)
        pairs_key = keys.rating_pairs(variant, day)
        owners = keys.rating_pair_owners(variant, day)
        pids = list(places)
        pairs = [pair_key(a, b) for i, a in enumerate(pids) for b in pids[i + 1 :]]
        # A marked account (`server.fairplay.review`) is still rated, but stays off the board.
        marked = await self._marked(pids)
        recents = tuple(keys.rating_recent(variant, p) for p in pids)
        while True:
            applied_already, met, raw = cast(
                tuple[int, int, list[str | None]],
                await self.batch.eval(
                    self._rate_read,
                    (applied, pairs_key, stats, owners),
                    (race_id, len(pairs), *pairs, *pids),
                ),
            )
            before = {p: Rating.load(v) for p, v in zip(pids, raw, strict=True)}
            provisional = frozenset(
                p for p in pids if before[p].provisional(self.provisional_rivals)
            )
            weighty = frozenset(pids) - no_attempt - provisional
            if applied_already:
                return RatedRace(await self._applied(variant, race_id, pids), weighty)
            args: list[str | int] = [race_id, PAIRS_TTL_S, RECENT_MAX, len(pairs), *pairs]
            if met:  # rated against each other today already: unrated
                for p, old in zip(pids, raw, strict=True):
                    args += [p, old or "", "", "", ""]
            else:
                after = rate_race(before, places, no_attempt, provisional)
                tried = [p for p in pids if p not in no_attempt]
                for p, old in zip(pids, raw, strict=True):
                    moved = after[p] is not before[p]
                    # Rivals: the others who really tried, when this racer did too.
                    new = after[p].met([q for q in tried if q != p]) if p in tried else after[p]
                    item = RecentRace.of(summary, places[p], before[p].shown, after[p].shown)
                    args += [
                        p,
                        old or "",
                        new.dump() if new != before[p] else "",
                        after[p].shown if moved and p not in marked else "",
                        item.dumps(),
                    ]
            done = int(
                cast(
                    int,
                    await self.batch.eval(
                        self._rate_write,
                        (applied, pairs_key, stats, board, owners, *recents),
                        tuple(args),
                    ),
                )
            )
            if done == 2:
                return RatedRace(await self._applied(variant, race_id, pids), weighty)
            if done == 1:
                if met:
                    return RatedRace({}, weighty)
                return RatedRace({p: (before[p].shown, after[p].shown) for p in pids}, weighty)

    async def _applied(
        self, variant: str, race_id: str, pids: Sequence[str]
    ) -> dict[str, tuple[int, int]]:
        """The (before, after) ratings a race already applied, from each racer's recent races
        (a racer whose item has been trimmed since is left out)."""
        async with self.r.pipeline(transaction=False) as pipe:
            for p in pids:
                pipe.lrange(keys.rating_recent(variant, p), 0, RECENT_MAX - 1)
            lists = cast(list[list[str]], await pipe.execute())
        out: dict[str, tuple[int, int]] = {}
        for p, items in zip(pids, lists, strict=True):
            for raw in items:
                item = RecentRace.loads(raw)
                if item.race_id == race_id:
                    out[p] = (item.rating_before, item.rating_after)
                    break
        return out

    async def _marked(self, pids: Sequence[str]) -> set[str]:
        """The racers whose accounts are marked as cheating (off every race board)."""
        if not pids:
            return set()
        flags = cast(list[str | None], await self.r.hmget(keys.fairplay_marked(), list(pids)))
        return {p for p, f in zip(pids, flags, strict=True) if f is not None}

    @translate_redis_errors
    async def add_win(self, variant: str, day: dt.date, pid: str, race_id: str) -> bool:
        """Count the race's win for `pid` on the day's wins board, once per race; False when
        it was already counted, or the account is marked."""
        if await self._marked([pid]):
            return False
        return bool(
            await self.batch.eval(
                self._add_win,
                (keys.race_wins_board(variant, day), keys.race_wins_applied(variant, day)),
                (race_id, pid, self.retention_s),
            )
        )

    # -- queries ------------------------------------------------------------------------------

    def _board(self, variant: str, board: str, day: dt.date | None) -> str:
        if Board(board) is Board.RATING:
            return keys.rating_board(variant)
        if day is None:
            raise ValueError("the wins board is per day")
        return keys.race_wins_board(variant, day)

    @translate_redis_errors
    async def total(self, variant: str, board: str, day: dt.date | None) -> int:
        return int(await self.r.zcard(self._board(variant, board, day)))

    @translate_redis_errors
    async def top(
        self, variant: str, board: str, day: dt.date | None, offset: int, limit: int
    ) -> list[RatingRow]:
        rows = cast(
            list[tuple[str, float]],
            await self.r.zrevrange(
                self._board(variant, board, day), offset, offset + limit - 1, withscores=True
            ),
        )
        return await self._rows(variant, rows, offset)

    @translate_redis_errors
    async def rank(
        self, variant: str, board: str, day: dt.date | None, pid: str
    ) -> RatingRow | None:
        key = self._board(variant, board, day)
        pos = cast(int | None, await self.r.zrevrank(key, pid))
        if pos is None:
            return None
        score = cast(float, await self.r.zscore(key, pid))
        rows = await self._rows(variant, [(pid, score)], pos)
        return rows[0]

    @translate_redis_errors
    async def around(
        self, variant: str, board: str, day: dt.date | None, pid: str, k: int
    ) -> list[RatingRow]:
        key = self._board(variant, board, day)
        pos = cast(int | None, await self.r.zrevrank(key, pid))
        if pos is None:
            return []
        start = max(0, pos - k)
        rows = cast(
            list[tuple[str, float]], await self.r.zrevrange(key, start, pos + k, withscores=True)
        )
        return await self._rows(variant, rows, start)

    async def _rows(
        self, variant: str, rows: Sequence[tuple[str, float]], offset: int
    ) -> list[RatingRow]:
        if not rows:
            return []
        raw = cast(
            list[str | None], await self.r.hmget(keys.rating_stats(variant), [p for p, _ in rows])
        )
        out = []
        for i, ((pid, score), stats) in enumerate(zip(rows, raw, strict=True)):
            r = Rating.load(stats)
            out.append(RatingRow(offset + i + 1, pid, int(score), r.wins, r.losses, r.played))
        return out

    @translate_redis_errors
    async def recent(self, variant: str, pid: str, limit: int) -> list[RecentRace]:
        raw = cast(list[str], await self.r.lrange(keys.rating_recent(variant, pid), 0, limit - 1))
        return [RecentRace.loads(x) for x in raw]
