"""The end of a UTC day: close its unfinished daily games, then mark the day closed.

Every process runs `DayCloser.run` (a cleanup_ctx of the app). Once its clock has passed a
day's end it sweeps that day, variant by variant: each game in the day's index of started
games (``sol:{d:<variant>:<date>}:started``, written before the game's record) is closed as
it stands unless it is finished (`GameService.close_day`, a Lua-guarded finish: exactly once
whoever does it), then taken out of the index. When the index is empty, one script on the
index's slot writes the day's closed marker (``...:closed``): from then on no game of that day
can change (a new game of it is refused by the same slot's script), so its seeds and exports
are published (`DayCloser.closed`). Several processes sweeping together only repeat idempotent
steps. A game whose record is missing (a start that died between its two steps) holds the day
open for `MISSING_GRACE_MS` at most.

Why these markers rather than Redis ``TIME``: a game's scripts run on its own slot, so on a
cluster each master's clock would be "the" clock of its games, and the tests run the server on a
manual clock. Instead, each game's script refuses a write whose caller's clock has passed the
day's end and then marks the game ``day_over`` in its record: the first process whose clock
passes midnight (the sweep reaches every open game) closes the game for every process, even
one whose clock is behind. The closed marker is written only after every game is settled, on
the slot that admits new games of the day, so no process publishes early by its own clock.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from typing import cast

import redis.asyncio

from engine import VARIANT_IDS
from server.boards.leaderboard import board_expire_at
from server.games.daily import DAY_MS, day_start_ms, last_of_month, ms_until_rollover, utc_date
from server.games.service import GameService
from server.games.store import GameStore
from server.players.registry import PlayerRegistry
from server.redis import keys
from server.redis.batch import LuaScript
from server.runtime.clock import Clock
from server.runtime.errors import (
    Conflict,
    StoreUnavailable,
    raise_if_cancelled,
    translate_redis_errors,
)

__all__ = [
    "CLOSE_LOOKBACK_DAYS",
    "MISSING_GRACE_MS",
    "MONTH_GRACE_MS",
    "DayCloser",
]

log = logging.getLogger(__name__)

#: An indexed game without a record (its start died half way) is dropped after this long.
MISSING_GRACE_MS = 60_000
#: Days before today the background sweep looks at (a process stopped over a few midnights);
#: an older day is swept when its seeds or exports are first asked for (`day_closed`).
CLOSE_LOOKBACK_DAYS = 7
#: How long after a month's end its catch-up seeds wait (`DayCloser.month_closed`): the clock
#: skew between processes a deployment tolerates (`--month-close-grace-ms`).
MONTH_GRACE_MS = 300_000
#: Games read per round trip by the sweep.
SWEEP_BATCH = 200

# KEYS: the day's started index, its closed marker. ARGV: now_ms, expire_at.
# Writes the marker once the index is empty. Returns 1 when the day is closed, else 0.
_CLOSE_DAY_LUA = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 1 end
if redis.call('ZCARD', KEYS[1]) > 0 then return 0 end
redis.call('SET', KEYS[2], ARGV[1])
redis.call('EXPIREAT', KEYS[2], ARGV[2])
return 1
"""


class DayCloser:
    """Closes the days that are over (see the module docstring)."""

    def __init__(
        self,
        redis_client: redis.asyncio.Redis,
        store: GameStore,
        games: GameService,
        players: PlayerRegistry,
        clock: Clock,
        *,
        interval_s: float = 1.0,
        month_grace_ms: int = MONTH_GRACE_MS,
    ) -> None:
        self._r = redis_client
        self.store = store
        self.games = games
        self.players = players
        self.clock = clock
        #: Pause between two sweeps of a day not closed yet.
        self.interval_s = interval_s
        #: A month's catch-up seeds wait this long past its end (`month_closed`).
        self.month_grace_ms = month_grace_ms
        #: Its script runs through the store's group commit.
        self._close_day = LuaScript.of(_CLOSE_DAY_LUA)
        #: Days seen closed (they never reopen).
        self._closed: set[tuple[str, dt.date]] = set()
        #: Days closed with no game in them since the last summary line (`run`): each is
        #: logged at debug only (a new data dir closes 6 variants x 7 days of nothing).
        self._closed_empty: list[tuple[str, dt.date]] = []

    async def run(self) -> None:
        """Sweep every day that is over and not closed; then sleep until the next midnight
        (by this process's clock) or, while a day is still open, for `interval_s`."""
        while True:
            raise_if_cancelled()
            done = True
            try:
                today = utc_date(self.clock.now_ms())
                for back in range(1, CLOSE_LOOKBACK_DAYS + 1):
                    done = await self.sweep(today - dt.timedelta(days=back)) and done
            except StoreUnavailable as exc:
                log.warning("closing the days that are over waits for Redis: %s", exc)
                done = False
            except Exception:
                raise_if_cancelled()
                log.exception("closing the days that are over failed")
                done = False
            self._log_empty_days()
            if done:
                wait = min(60.0, ms_until_rollover(self.clock.now_ms()) / 1000)
            else:
                wait = self.interval_s
            await asyncio.sleep(wait)

    def _log_empty_days(self) -> None:
        """One line for the days closed with nothing in them since the last call."""
        if not self._closed_empty:
            return
        days = sorted({date for _, date in self._closed_empty})
        span = str(days[0]) if len(days) == 1 else f"{days[0]} to {days[-1]}"
        log.info(
            "closed %d daily days with no game in them (%d variants, %s)",
            len(self._closed_empty),
            len({variant for variant, _ in self._closed_empty}),
            span,
        )
        self._closed_empty.clear()

    @translate_redis_errors
    async def closed(self, variant: str, date: dt.date) -> bool:
        """True once no game of (variant, date) can change any more (the marker in Redis)."""
        if (variant, date) in self._closed:
            return True
        found = bool(await self._r.exists(keys.daily_closed(variant, date)))
        if found:
            self._closed.add((variant, date))
        return found

    async def day_closed(self, date: dt.date) -> bool:
        """True once every variant of ``date`` is closed; a day older than the background
        sweep looks at is swept now (once: then its markers say it)."""
        today = utc_date(self.clock.now_ms())
        if date < today - dt.timedelta(days=self.store.retention_days):
            return date < today  # nothing of it is kept (its games expired with its boards)
        for variant in VARIANT_IDS:
            if not await self.closed(variant, date):
                if date < today - dt.timedelta(days=CLOSE_LOOKBACK_DAYS):
                    return await self.sweep(date)
                return False
        return True

    async def month_closed(self, date: dt.date) -> bool:
        """True once ``date``'s month is over by `month_grace_ms` and its last day closed: no
        catch-up game of the month can start or take a move any more (a catch-up start needs
        a day of the current month, a catch-up game's writes stop at the month's end, both by
        the clock of the process serving them), so the month's catch-up deals are published
        (docs/fairplay.md).

        The grace is for the other processes' clocks: catch-up games are in no day's started
        index, so no sweep marks them over, and a process whose clock lags could otherwise
        take a catch-up move after this one published the seed the move is played on. With
        the grace, a process lagging by less than `month_grace_ms` is past the month's end
        too by the time any process publishes."""
        last = last_of_month(date)
        month_end = day_start_ms(last) + DAY_MS
        if self.clock.now_ms() < month_end + self.month_grace_ms:
            return False
        return await self.day_closed(last)

    @translate_redis_errors
    async def sweep(self, date: dt.date) -> bool:
        """One pass over ``date`` (whose end this process's clock has passed); True when
        every variant of it is closed."""
        if self.clock.now_ms() < day_start_ms(date) + DAY_MS:
            return False
        closed = True
        for variant in VARIANT_IDS:
            if not await self.closed(variant, date):
                closed = await self._sweep_variant(variant, date) and closed
        return closed

    async def _sweep_variant(self, variant: str, date: dt.date) -> bool:
        index = keys.daily_started(variant, date)
        now = self.clock.now_ms()
        offset = 0  # games left in the index ahead of the batch (not settled yet)
        settled_games = 0
        while True:
            raw = cast(
                list[tuple[str, float]],
                await self._r.zrange(index, offset, offset + SWEEP_BATCH - 1, withscores=True),
            )
            if not raw:
                break
            ids = [game_id for game_id, _ in raw]
            records = await self.store.get_many(ids)
            settled: list[str] = []
            waiting = 0
            names = await self.players.names(
                [r.player_id for r in records if r is not None and not r.finished]
            )
            for (game_id, started), record in zip(raw, records, strict=True):
                if record is None:
                    if now - int(started) >= MISSING_GRACE_MS:
                        settled.append(game_id)  # its start died: it will never exist
                    else:
                        waiting += 1
                    continue
                if not record.finished:
                    pid = record.player_id
                    try:
                        await self.games.close_day(game_id, pid, names.get(pid, pid))
                    except Conflict:
                        waiting += 1  # a process is writing it right now: the next pass
                        continue
                    except StoreUnavailable:
                        raise
                    except Exception:  # one bad game must not hold the others open
                        log.exception("closing %s at its day's end failed", game_id)
                        waiting += 1
                        continue
                settled.append(game_id)
            if settled:
                await self._r.zrem(index, *settled)
                settled_games += len(settled)
            offset += waiting
        if offset:
            return False
        expire_at = board_expire_at(date, self.store.retention_days)
        done = bool(
            await self.store.batch.eval(
                self._close_day, (index, keys.daily_closed(variant, date)), (now, expire_at)
            )
        )
        if done:
            self._closed.add((variant, date))
            if settled_games:
                log.info("daily %s of %s closed: %d games settled", variant, date, settled_games)
            else:
                log.debug("daily %s of %s closed: no game in it", variant, date)
                self._closed_empty.append((variant, date))
        return done
