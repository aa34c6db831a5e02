"""The race clock: starts each local racer's game on time and enforces the race deadlines.

Every tick (0.2 s) it looks at the races some connection here is in: at ``start_at`` it sends
each racer their start view (`race.started`, again after a reconnect), it keeps the racers'
presence fresh in Redis (the disconnect grace counts from the last mark), and it asks the
referee to enforce the time limit and the grace period. Every few ticks it also sweeps Redis
for overdue races nobody here is connected to, and keeps this process's spectator counts fresh
(dropping those of stopped processes: `Spectators.heartbeat`).
"""

from __future__ import annotations

import asyncio
import logging

from server.races.fanout import RaceFanout
from server.races.model import RaceStatus
from server.races.referee import RaceReferee
from server.races.rematch import Rematches
from server.races.service import RaceService
from server.runtime.clock import Clock
from server.runtime.errors import ServerError, raise_if_cancelled

log = logging.getLogger(__name__)

TICK_S = 0.2
SWEEP_EVERY = 5  # ticks between sweeps of every local race and of overdue races


class RaceClock:
    def __init__(
        self,
        fanout: RaceFanout,
        races: RaceService,
        referee: RaceReferee,
        clock: Clock,
        rematches: Rematches | None = None,
    ) -> None:
        self.fanout = fanout
        self.races = races
        self.referee = referee
        self.clock = clock
        #: Rematch offers: the expired ones' rooms are closed on every sweep.
        self.rematches = rematches

    async def run(self) -> None:
        """Tick until cancelled (an app cleanup_ctx)."""
        n = 0
        while True:
            raise_if_cancelled()
            await asyncio.sleep(TICK_S)
            n += 1
            try:
                await self.tick(sweep=n % SWEEP_EVERY == 0)
            except asyncio.CancelledError:
                raise
            except ServerError:
                raise_if_cancelled()
                log.warning("race tick failed", exc_info=True)
            except Exception:
                raise_if_cancelled()
                log.exception("race tick failed")

    async def tick(self, sweep: bool) -> None:
        now = self.clock.now_ms()
        for race_id in self.fanout.races():
            race = None if sweep else self.fanout.latest(race_id)
            if race is None:
                race = await self.races.load(race_id)
                self.fanout.remember(race)
            if race.status is not RaceStatus.RUNNING or race.start_at is None:
                continue
            if sweep or now >= race.start_at:
                await self.races.mark_seen(
                    race_id, self.fanout.connected_players(race_id), now, self.fanout.instance
                )
            if now >= race.start_at:
                await self.fanout.send_started(race, now, self.races.start_view)
            if sweep or (race.ends_at is not None and now >= race.ends_at):
                await self.referee.tick(race_id)
        if sweep:
            for race_id in await self.referee.due(now):
                await self.referee.tick(race_id)
            racing = self.fanout.races()
            for watcher in self.fanout.watchers:  # spectator counts: fresh, and swept
                await watcher.heartbeat(now, racing)
            if self.rematches is not None:
                await self.rematches.sweep()
