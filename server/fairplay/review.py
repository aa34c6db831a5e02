"""The review desk: held results, account marks and the audit log, in Redis.

* A result the screen held (`server.fairplay.screen`) is listed in ``sol:{fp}:held``. `clear`
  writes its entry to its board as it would have been written at its finish (the same rank
  key and member: it takes the rank it earned); `confirm` keeps it off for good. A held
  catch-up result (on no board) is listed too: `clear` awards its crowns (the history's
  record), `confirm` keeps it crownless. So is a held race result: its race was rated when it
  ended (this racer as one who made no real attempt), and a review records the verdict only
  (the evidence a `mark` rests on).
* `mark` records a confirmed cheater in ``sol:{fp}:marked`` and takes the account's entries
  off every daily board it is on (past days included: the player's history lists them) and
  off every race rating board; its later results are held at their finish and its race
  ratings stay off the boards (`server.races.ratings`). `unmark` writes its entries back from
  the games' records (results still held stay off) and its ratings from its stats.
  Entries are moved in the boards' own sorted sets, so reads stay one script, unfiltered;
  each board is its own slot and is changed by its own script.
* Every action that changes a board (`clear`, `mark`, `unmark`) then bumps ``sol:{fp}:gen``:
  the open-data files built before it (`server.api.opendata`) are stale on every process at
  once, and are built again at the next request.
* Every action is appended to ``sol:{fp}:audit`` with who, when, what and why.

Used by the `solitaire-admin` console script (`server.fairplay.admin`).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import cast

import redis.asyncio

from server.boards.leaderboard import BoardEntries, BoardRef
from server.fairplay.screen import Verdict
from server.games.store import GameRecord, GameStore
from server.races.ratings import Rating
from server.redis import keys
from server.redis.batch import LuaScript
from server.runtime.errors import Conflict, NotFound

__all__ = ["Action", "AuditRecord", "HeldResult", "ReviewDesk"]

# KEYS: board, members, entries. ARGV: pid. Takes the player's entry off one board (the
# entry stays in its game's record). Returns 1 if there was one.
_REMOVE_LUA = """
local m = redis.call('HGET', KEYS[2], ARGV[1])
if not m then return 0 end
redis.call('ZREM', KEYS[1], m)
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
"""

# KEYS: a race wins board. ARGV: pid. Takes the player off it; returns {wins, expire-at ms}
# ({0, 0} if not on it; expire-at 0: no TTL), what `_RESTORE_WIN_LUA` needs to give it back.
_REMOVE_WIN_LUA = """
local n = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not n then return {0, 0} end
local ttl = redis.call('PTTL', KEYS[1])
local t = redis.call('TIME')
local at = 0
if ttl > 0 then at = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl end
redis.call('ZREM', KEYS[1], ARGV[1])
return {tonumber(n), at}
"""

# KEYS: a race wins board. ARGV: pid, wins, expire-at ms (0: none). Gives a marked player's
# wins back; a board gone meanwhile (the player was its only winner) is made again with its
# expiry, unless that has passed. Returns 1 if restored.
_RESTORE_WIN_LUA = """
local at = tonumber(ARGV[3])
if redis.call('EXISTS', KEYS[1]) == 0 and at > 0 and at <= tonumber(redis.call('TIME')[1]) * 1000
then return 0 end
redis.call('ZINCRBY', KEYS[1], ARGV[2], ARGV[1])
if at > 0 then redis.call('PEXPIREAT', KEYS[1], at) end
return 1
"""

# KEYS: game. ARGV: review, reviewer, at. Reviews a held, unreviewed result once.
# Returns 1 done, 0 not held or already reviewed, -1 no game.
_REVIEW_LUA = """
local st = redis.call('HMGET', KEYS[1], 'status', 'held', 'review')
if not st[1] then return -1 end
if not st[2] or st[3] then return 0 end
redis.call('HSET', KEYS[1], 'review', ARGV[1], 'reviewed_by', ARGV[2], 'reviewed_at', ARGV[3])
return 1
"""


class Action(StrEnum):
    """What a reviewer did (the audit log's ``action``)."""

    CLEAR = "clear"
    CONFIRM = "confirm"
    MARK = "mark"
    UNMARK = "unmark"


@dataclass(frozen=True, slots=True)
class HeldResult:
    """One result awaiting review, with the screen's evidence."""

    game_id: str
    player_id: str
    variant: str
    date: dt.date
    finished_at_ms: int
    won: bool
    moves: int
    time_ms: int
    hints: int
    verdict: Verdict
    #: A catch-up game (on no board): clearing it awards its crowns only.
    catchup: bool = False
    #: A race game: its race was rated when it ended, this racer as one who made no real
    #: attempt (`server.races.referee`); a review records the verdict and nothing else.
    race: bool = False


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One line of the audit log."""

    at_ms: int
    reviewer: str
    action: Action
    target: str
    note: str
    detail: str = ""

    def dumps(self) -> str:
        return json.dumps(
            {
                "at": self.at_ms,
                "who": self.reviewer,
                "action": self.action.value,
                "target": self.target,
                "note": self.note,
                "detail": self.detail,
            },
            separators=(",", ":"),
        )

    @classmethod
    def loads(cls, raw: str) -> AuditRecord:
        d = json.loads(raw)
        return cls(
            at_ms=int(d["at"]),
            reviewer=str(d["who"]),
            action=Action(d["action"]),
            target=str(d["target"]),
            note=str(d.get("note", "")),
            detail=str(d.get("detail", "")),
        )


#: Day numbers in the players' histories count from here (`server.players.history`).
_EPOCH = dt.date(1970, 1, 1)


def _held_kind(game_id: str) -> keys.DailyGameKeys | keys.RaceGameKeys:
    """A game the screen can hold (a daily or race game), parsed; NotFound otherwise."""
    k = keys.parse_game_id(game_id)
    if not isinstance(k, keys.DailyGameKeys | keys.RaceGameKeys):
        raise NotFound("only daily and race results are held")
    return k


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class ReviewDesk:
    """Review actions on one Redis (single or cluster; ``decode_responses=True``)."""

    def __init__(self, client: redis.asyncio.Redis, variants: Sequence[str]) -> None:
        self._r = client
        self.variants = tuple(variants)
        self.store = GameStore(client)
        self.entries: BoardEntries = self.store.entries
        #: Its scripts run through its store's group commit.
        self.batch = self.store.batch
        self._remove = LuaScript.of(_REMOVE_LUA)
        self._review = LuaScript.of(_REVIEW_LUA)
        self._remove_win = LuaScript.of(_REMOVE_WIN_LUA)
        self._restore_win = LuaScript.of(_RESTORE_WIN_LUA)

    async def aclose(self) -> None:
        await self.store.batch.aclose()

    # -- held results -------------------------------------------------------------------------

    async def held(self, limit: int = 100) -> list[HeldResult]:
        """Results awaiting review, oldest first. Listed games no longer held (finished
        without a hold by another process, expired, reviewed) leave the list."""
        ids = cast(list[str], await self._r.zrange(keys.fairplay_held(), 0, max(0, limit - 1)))
        out: list[HeldResult] = []
        for gid in ids:
            try:
                record = await self.store.get(gid)
            except NotFound:
                record = None
            if record is None or not record.flagged or record.review is not None:
                await self._r.zrem(keys.fairplay_held(), gid)
                continue
            r, held = record.result, record.held
            assert r is not None and held is not None
            out.append(
                HeldResult(
                    game_id=gid,
                    player_id=record.player_id,
                    variant=record.variant,
                    date=record.date,
                    finished_at_ms=record.finished_at_ms or 0,
                    won=r.won,
                    moves=r.moves,
                    time_ms=r.time_ms,
                    hints=r.hints,
                    verdict=Verdict.loads(held),
                    catchup=record.catchup,
                    race=record.kind == "race",
                )
            )
        return out

    async def _reviewed(self, game_id: str, review: str, reviewer: str) -> GameRecord:
        k = _held_kind(game_id)
        done = int(
            cast(int, await self.batch.eval(self._review, (k.game,), (review, reviewer, _now_ms())))
        )
        if done == -1:
            raise NotFound(f"no such game: {game_id}")
        if done == 0:
            raise Conflict(f"{game_id} is not a result awaiting review")
        await self._r.zrem(keys.fairplay_held(), game_id)
        return await self.store.get(game_id)

    async def clear(self, game_id: str, reviewer: str, note: str = "") -> AuditRecord:
        """The result was human: it enters its board with the rank key it earned (unless the
        account is marked: then when it is unmarked). The entry is written before the review
        is: a clear cut short is simply run again (the board's write is exactly once)."""
        k = _held_kind(game_id)
        try:
            before = await self.store.get(game_id)
        except NotFound:
            raise NotFound(f"no such game: {game_id}") from None
        if before.held is None or before.review is not None:
            raise Conflict(f"{game_id} is not a result awaiting review")
        detail = "entered its board"
        if isinstance(k, keys.RaceGameKeys):  # the race was rated when it ended, for good
            detail = "a race result: the review is recorded, the race's rating stands"
        elif before.catchup:  # on no board: the history's record below awards its crowns
            detail = "a catch-up result: its crowns awarded"
        elif await self._r.hexists(keys.fairplay_marked(), before.player_id):
            detail = "the account is marked: enters the board when unmarked"
        elif before.entry is not None:
            await self.entries.write(k, before.entry)
        record = await self._reviewed(game_id, "cleared", reviewer)
        if isinstance(k, keys.RaceGameKeys):
            return await self._audit(Action.CLEAR, reviewer, game_id, note, detail)
        await self.store.record_history(record)  # the player's profile counts it now
        await self._boards_changed()
        return await self._audit(Action.CLEAR, reviewer, game_id, note, detail)

    async def confirm(self, game_id: str, reviewer: str, note: str = "") -> AuditRecord:
        """The result was not human: it stays off the boards for good."""
        await self._reviewed(game_id, "confirmed", reviewer)
        return await self._audit(Action.CONFIRM, reviewer, game_id, note)

    # -- accounts -----------------------------------------------------------------------------

    async def marked(self) -> dict[str, str]:
        return cast(dict[str, str], await self._r.hgetall(keys.fairplay_marked()))

    async def mark(self, pid: str, reviewer: str, note: str = "") -> AuditRecord:
        """Mark a confirmed cheater: every result leaves every board, past ones included."""
        keys.player(pid)  # a valid id, or ValueError
        mark: dict[str, object] = {"by": reviewer, "at": _now_ms(), "note": note}
        if not await self._r.hsetnx(keys.fairplay_marked(), pid, json.dumps(mark)):
            raise Conflict(f"{pid} is already marked")
        removed = 0
        for variant, date in await self._days(pid):
            for tier in keys.TIER_NAMES:  # the daily board (medium) and the other tiers'
                b = BoardRef.daily(variant, date, tier)
                removed += int(
                    cast(
                        int,
                        await self.batch.eval(
                            self._remove, (b.board_key, b.members_key, b.entries_key), (pid,)
                        ),
                    )
                )
        ratings = 0
        for variant in self.variants:
            ratings += int(await self._r.zrem(keys.rating_board(variant), pid))
        # Race wins of the days of the player's recent races: taken off, kept in the mark.
        wins: dict[str, list[int]] = {}
        for variant, day in await self._race_days(pid):
            board = keys.race_wins_board(variant, day)
            n, at = cast(list[int], await self.batch.eval(self._remove_win, (board,), (pid,)))
            if int(n):
                wins[f"{variant}|{day.isoformat()}"] = [int(n), int(at)]
        mark["wins"] = wins
        await self._r.hset(keys.fairplay_marked(), pid, json.dumps(mark))
        await self._boards_changed()
        detail = (
            f"{removed} daily entries, {ratings} ratings and"
            f" {sum(n for n, _ in wins.values())} race wins"
            " taken off the boards"
        )
        return await self._audit(Action.MARK, reviewer, pid, note, detail)

    async def unmark(self, pid: str, reviewer: str, note: str = "") -> AuditRecord:
        """Undo a mark: the account's results (those not held) and ratings are back."""
        keys.player(pid)
        raw_mark = cast(str | None, await self._r.hget(keys.fairplay_marked(), pid))
        if raw_mark is None or not await self._r.hdel(keys.fairplay_marked(), pid):
            raise Conflict(f"{pid} is not marked")
        restored = 0
        for variant, date in await self._days(pid):
            gid = keys.daily_game_id(variant, date, pid)
            try:
                record = await self.store.get(gid)
            except NotFound:
                continue
            if record.finished and record.entry is not None and not record.flagged:
                k = keys.parse_game_id(gid)
                assert isinstance(k, keys.DailyGameKeys)
                rank, _ = await self.entries.write(k, record.entry)
                restored += rank > 0
        ratings = 0
        for variant in self.variants:
            raw = cast(str | None, await self._r.hget(keys.rating_stats(variant), pid))
            if raw:
                await self._r.zadd(keys.rating_board(variant), {pid: Rating.load(raw).shown})
                ratings += 1
        wins = 0
        for where, (n, at) in dict(json.loads(raw_mark).get("wins", {})).items():
            variant, day = str(where).split("|", 1)
            board = keys.race_wins_board(variant, dt.date.fromisoformat(day))
            if await self.batch.eval(self._restore_win, (board,), (pid, int(n), int(at))):
                wins += int(n)
        await self._boards_changed()
        detail = (
            f"{restored} daily entries, {ratings} ratings and {wins} race wins back on the boards"
        )
        return await self._audit(Action.UNMARK, reviewer, pid, note, detail)

    async def _boards_changed(self) -> None:
        """Files built from the boards so far (open data) are stale, on every process."""
        await self._r.incr(keys.fairplay_generation())

    async def _race_days(self, pid: str) -> list[tuple[str, dt.date]]:
        """The (variant, day) of each of the player's recent races (`server.races.ratings`
        keeps the latest of each variant): the wins boards they may be on."""
        out: set[tuple[str, dt.date]] = set()
        for variant in self.variants:
            raw = cast(list[str], await self._r.lrange(keys.rating_recent(variant, pid), 0, -1))
            for item in raw:
                race_id = str(json.loads(item).get("race_id", ""))
                if keys.valid_race_id(race_id):
                    out.add((variant, keys.race_date(race_id)))
        return sorted(out)

    async def _days(self, pid: str) -> list[tuple[str, dt.date]]:
        """Every (variant, day) the player finished a daily game on (their history)."""
        out: list[tuple[str, dt.date]] = []
        for variant in self.variants:
            days = cast(list[str], await self._r.zrange(keys.history_days(pid, variant), 0, -1))
            out += [(variant, _EPOCH + dt.timedelta(days=int(d))) for d in days]
        return out

    # -- audit --------------------------------------------------------------------------------

    async def _audit(
        self, action: Action, reviewer: str, target: str, note: str, detail: str = ""
    ) -> AuditRecord:
        rec = AuditRecord(_now_ms(), reviewer, action, target, note, detail)
        await self._r.rpush(keys.fairplay_audit(), rec.dumps())
        return rec

    async def audit(self, limit: int = 100) -> list[AuditRecord]:
        """The latest ``limit`` actions, oldest first."""
        raw = cast(list[str], await self._r.lrange(keys.fairplay_audit(), -max(1, limit), -1))
        return [AuditRecord.loads(r) for r in raw]
