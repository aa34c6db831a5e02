"""Player profiles and history pages, built from the stored histories (`server.players.history`).

Reads settle the history first: games left in the player's outbox by a process that died
between a game's finish and its history record are recorded from the stored game, and days
that are over get their final rank frozen (once; it feeds the average rank percentile).

A marked account (`server.fairplay.review`: a confirmed cheater, off every board) shows no
rank: its days' ``rank``, ``total`` and ``percentile`` and its variants' average
``percentile`` are left out (absent, as for a day whose board expired), and no rank of it is
frozen while it is marked (an unmarked account's ranks are frozen from its restored rows).
Its results, streaks and bests still show: they are its history, not a place on a board.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Awaitable, Callable, Sequence

import protocol as p
from engine import VARIANT_IDS
from server.boards.leaderboard import BoardRef, Leaderboard
from server.games.daily import utc_date
from server.games.store import GameStore
from server.players.history import DayRank, HistoryEntry, VariantStats, percentile_bp
from server.players.registry import Player, PlayerRegistry
from server.races.ratings import Board, RaceBoards
from server.redis import keys
from server.runtime.clock import Clock
from server.runtime.errors import NotFound

__all__ = ["RECENT_DAYS", "Profiles"]

#: A profile's recent results cover this many days (today included).
RECENT_DAYS = 30


class Profiles:
    def __init__(
        self,
        store: GameStore,
        leaderboard: Leaderboard,
        boards: RaceBoards,
        players: PlayerRegistry,
        clock: Clock,
        *,
        day_closed: Callable[[str, dt.date], Awaitable[bool]] | None = None,
    ) -> None:
        self.store = store
        #: Whether a (variant, day) is closed (`server.games.rollover.DayCloser.closed`): a
        #: day's final ranks are frozen only then, with every game of it on its board.
        self.day_closed = day_closed
        self.history = store.history
        self.leaderboard = leaderboard
        self.boards = boards
        self.players = players
        self.clock = clock

    async def player(self, me: Player, player_id: str | None, name: str | None) -> Player:
        """The player asked for: by id, by name (any case), or ``me``. Raises NotFound."""
        if name is not None:
            pid = await self.players.id_for_name(name)
            found = await self.players.get(pid) if pid else None
        elif player_id is not None and player_id != me.id:
            found = await self.players.get(player_id)
        else:
            found = me
        if found is None:
            raise NotFound("no such player")
        return found

    async def settle(self, pid: str) -> None:
        """Record the player's finished games still in the outbox (see `server.players.history`)."""
        for game_id in await self.history.pending(pid):
            try:
                record = await self.store.get(game_id)
            except NotFound:  # expired unfinished: nothing to record
                await self.history.drop_pending(pid, game_id)
                continue
            if record.finished:
                await self.store.record_history(record)

    async def marked(self, pid: str) -> bool:
        """Whether the account is marked as cheating (its ranks are not shown)."""
        return bool(await self.boards.r.hexists(keys.fairplay_marked(), pid))

    async def _freeze(
        self, pid: str, entries: Sequence[HistoryEntry], today: dt.date
    ) -> list[HistoryEntry]:
        """The entries with the final rank of every day that is over (frozen now if new)."""
        out = []
        for e in entries:
            r = e.result
            if (
                e.rank is None
                and r.date < today
                and (self.day_closed is None or await self.day_closed(r.variant, r.date))
            ):
                board = BoardRef.daily(r.variant, r.date)
                row = await self.leaderboard.rank(board, pid)
                rank = (
                    DayRank(row.rank, await self.leaderboard.total(board)) if row else DayRank(0, 0)
                )  # the board expired: the place is unknown
                await self.history.freeze_rank(pid, r.variant, r.date, rank)
                e = dataclasses.replace(e, rank=rank)
            out.append(e)
        return out

    def _day(self, e: HistoryEntry, today: dt.date, marked: bool = False) -> p.DayResult:
        r = e.result
        known = e.rank is not None and e.rank.known and not marked
        oldest = today - dt.timedelta(days=self.store.retention_days)
        return p.DayResult(
            variant=r.variant,
            date=r.date.isoformat(),
            game_id=r.game_id,
            won=r.won,
            resigned=r.resigned,
            cleared=r.cleared,
            score=r.score,
            time_ms=r.time_ms,
            moves=r.moves,
            hints=r.hints,
            finished_at=r.finished_at_ms,
            replayable=oldest < r.date < today,
            rank=e.rank.rank if e.rank and known else None,
            total=e.rank.total if e.rank and known else None,
            percentile=round(percentile_bp(e.rank.rank, e.rank.total) / 100)
            if e.rank and known
            else None,
        )

    async def profile(
        self, req_id: int, me: Player, who: Player, *, months: bool = False
    ) -> p.Profile:
        """The player's profile; ``months`` (version 8): with crowns and badge per month."""
        today = utc_date(self.clock.now_ms())
        await self.settle(who.id)
        first = today - dt.timedelta(days=self.store.retention_days)
        marked = await self.marked(who.id)
        entries = await self.history.since(who.id, VARIANT_IDS, first)
        settled = entries if marked else await self._freeze(who.id, entries, today)
        recent_from = today - dt.timedelta(days=RECENT_DAYS - 1)
        recent = [self._day(e, today, marked) for e in settled if e.result.date >= recent_from]
        stats = await self.history.stats(who.id, VARIANT_IDS, today)
        races = []
        for s in stats:
            row = await self.boards.rank(s.variant, Board.RATING, None, who.id)
            if row is not None or s.forfeits:
                races.append(
                    p.RaceStats(
                        variant=s.variant,
                        rating=row.rating if row else None,
                        wins=row.wins if row else 0,
                        losses=row.losses if row else 0,
                        played=row.played if row else 0,
                        forfeits=s.forfeits,
                    )
                )
        return p.Profile(
            id=req_id,
            player_id=who.id,
            name=who.name,
            joined=who.created_at_ms,
            me=who.id == me.id,
            daily=tuple(_daily(s, marked) for s in stats if s.played),
            races=tuple(races),
            recent=tuple(recent),
            months=await self._months(who.id) if months else None,
        )

    async def _months(self, pid: str) -> tuple[p.MonthCrowns, ...]:
        return tuple(
            p.MonthCrowns(month=m.month, crowns=m.crowns, badge=m.badge.value if m.badge else None)
            for m in await self.store.crowns.months(pid)
        )

    async def page(
        self, req_id: int, who: Player, variant: str, before: dt.date | None, limit: int
    ) -> p.HistoryPage:
        today = utc_date(self.clock.now_ms())
        await self.settle(who.id)
        entries, cursor = await self.history.page(who.id, variant, before, limit)
        marked = await self.marked(who.id)
        settled = entries if marked else await self._freeze(who.id, entries, today)
        return p.HistoryPage(
            id=req_id,
            player_id=who.id,
            variant=variant,
            entries=tuple(self._day(e, today, marked) for e in settled),
            next_before=cursor.isoformat() if cursor else None,
        )


def _daily(s: VariantStats, marked: bool) -> p.DailyStats:
    return p.DailyStats(
        variant=s.variant,
        played=s.played,
        won=s.won,
        streak=s.streak,
        longest_streak=s.longest_streak,
        won_streak=s.won_streak,
        longest_won_streak=s.longest_won_streak,
        best_time_ms=s.best_time_ms,
        best_score=s.best_score,
        percentile=round(s.percentile_bp / 100)
        if s.percentile_bp is not None and not marked
        else None,
        last_played=s.last_played.isoformat() if s.last_played else None,
    )
