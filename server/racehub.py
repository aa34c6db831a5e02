"""Per-process fan-out of race events to the racers connected here, and the race clocks.

Every process subscribes (Redis pub/sub) to the channels of the races its connections are in
and of the players waiting in its queue, so racers on different server processes see each
other. A ticker starts each racer's game at the race's start time, keeps the racers' presence
fresh, and runs the race deadlines (time limit, disconnect grace) for races it knows and for
overdue races nobody is connected to.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import protocol as p

from . import keys
from .errors import ServerError
from .racestore import RaceState

if TYPE_CHECKING:
    from .connection import Connection
    from .services import Services

log = logging.getLogger(__name__)

TICK_S = 0.2
SWEEP_EVERY = 5  # ticks between sweeps of overdue races and group queues
CONNECTED_MS = 5_000  # a racer seen this recently counts as connected
UPDATE_KINDS = frozenset({"joined", "left", "countdown", "finished", "forfeit"})


def race_info(race: RaceState, now: int, me: str | None) -> p.RaceInfo:
    """The race as `me` may see it: progress of everyone, never a card."""
    status = race.status
    if status == "running" and race.start_at is not None and now < race.start_at:
        status = "countdown"
    elif status == "finishing" or (status == "finished" and race.results is None):
        status = "running" if not race.closed else "finished"
    results = {r["player_id"]: r for r in race.results or []}
    racers = []
    for pid, name in race.racers:
        prog, res = race.progress.get(pid, {}), results.get(pid, {})
        racers.append(p.Racer(
            player_id=pid, name=name, cleared=int(prog.get("cleared", 0)),
            score=int(prog.get("score", 0)), moves=int(prog.get("moves", 0)),
            finished=bool(prog.get("finished", False)), stuck=bool(prog.get("stuck", False)),
            won=bool(prog.get("won", False)), forfeited=pid in race.forfeited,
            connected=now - race.seen.get(pid, 0) <= CONNECTED_MS or race.status == "open",
            place=res.get("place"), rating=res.get("rating"),
            rating_change=res.get("rating_change")))
    mine = me in race.names() and race.status != "open"
    return p.RaceInfo(race_id=race.race_id, variant=race.variant, status=status,
                      size=race.size, racers=tuple(racers), server_time=now, code=race.code,
                      creator=race.creator, start_at=race.start_at, ends_at=race.ends_at,
                      game_id=keys.race_game_id(race.race_id, me) if mine and me else None,
                      version=race.version)


class RaceHub:
    def __init__(self, services: Services) -> None:
        self.s = services
        self.by_race: dict[str, set[Connection]] = defaultdict(set)
        self.by_player: dict[str, set[Connection]] = defaultdict(set)
        self.queued: dict[Connection, tuple[str, int]] = {}
        self.started: dict[str, set[Connection]] = defaultdict(set)
        self.meta: dict[str, RaceState] = {}
        self.pubsub = services.redis.pubsub(ignore_subscribe_messages=True)
        self._tasks: list[asyncio.Task[None]] = []
        self._subscribed: set[str] = set()

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._reader()), asyncio.create_task(self._ticker())]

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()

    # -- membership ---------------------------------------------------------------------------

    async def _subscribe(self, channel: str) -> None:
        if channel not in self._subscribed:
            self._subscribed.add(channel)
            await self.pubsub.subscribe(channel)

    async def _unsubscribe(self, channel: str) -> None:
        if channel in self._subscribed:
            self._subscribed.discard(channel)
            with contextlib.suppress(Exception):
                await self.pubsub.unsubscribe(channel)

    async def attach(self, conn: Connection, race_id: str) -> None:
        """Send this connection the race's events from now on."""
        if conn not in self.by_race[race_id]:
            self.by_race[race_id].add(conn)
            await self._subscribe(keys.race_channel(race_id))

    async def watch_player(self, conn: Connection, pid: str) -> None:
        self.by_player[pid].add(conn)
        await self._subscribe(keys.player_channel(pid))

    async def detach(self, conn: Connection) -> None:
        """A connection closed: stop sending to it (its racer's grace period runs from now)."""
        self.queued.pop(conn, None)
        for race_id in [r for r, conns in self.by_race.items() if conn in conns]:
            self.by_race[race_id].discard(conn)
            self.started[race_id].discard(conn)
            if not self.by_race[race_id]:
                await self._forget_race(race_id)
        for pid in [q for q, conns in self.by_player.items() if conn in conns]:
            self.by_player[pid].discard(conn)
            if not self.by_player[pid]:
                del self.by_player[pid]
                await self._unsubscribe(keys.player_channel(pid))

    async def _forget_race(self, race_id: str) -> None:
        self.by_race.pop(race_id, None)
        self.started.pop(race_id, None)
        self.meta.pop(race_id, None)
        await self._unsubscribe(keys.race_channel(race_id))

    # -- fan-out ------------------------------------------------------------------------------

    async def _reader(self) -> None:
        while True:
            if not self._subscribed:
                await asyncio.sleep(TICK_S)
                continue
            try:
                msg = await self.pubsub.get_message(timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception:  # a Redis outage: keep trying, the ticker resyncs state
                log.warning("race pub/sub read failed", exc_info=True)
                await asyncio.sleep(1.0)
                continue
            if msg is None or msg.get("type") != "message":
                continue
            try:
                await self._deliver(str(msg["channel"]), str(msg["data"]))
            except Exception:
                log.exception("cannot deliver race event")

    async def _deliver(self, channel: str, data: str) -> None:
        prefix_race, prefix_player = keys.race_channel(""), keys.player_channel("x")[:-1]
        if channel.startswith(prefix_race):
            race_id = channel[len(prefix_race):]
            version, _, raw = data.partition(" ")
            event: dict[str, Any] = json.loads(raw)
            for conn in list(self.by_race.get(race_id, ())):
                conn.send(p.RaceEvent(race_id=race_id, version=int(version), event=event))
            if event.get("kind") in UPDATE_KINDS:
                await self.push_update(race_id)
            if event.get("kind") == "finished":
                await self._forget_race(race_id)
        elif channel.startswith(prefix_player):
            pid = channel[len(prefix_player):]
            kind, _, race_id = data.partition(" ")
            if kind == "matched":
                for conn in list(self.by_player.get(pid, ())):
                    self.queued.pop(conn, None)
                    await self.attach(conn, race_id)
                await self.push_update(race_id)

    async def push_update(self, race_id: str) -> None:
        conns = list(self.by_race.get(race_id, ()))
        if not conns:
            return
        race = await self.s.races.store.load(race_id)
        self.meta[race_id] = race
        now = self.s.clock.now_ms()
        for conn in conns:
            me = conn.player.id if conn.player else None
            conn.send(p.RaceUpdate(race=race_info(race, now, me)))

    # -- clocks -------------------------------------------------------------------------------

    async def _ticker(self) -> None:
        n = 0
        while True:
            await asyncio.sleep(TICK_S)
            n += 1
            try:
                await self._tick(sweep=n % SWEEP_EVERY == 0)
            except asyncio.CancelledError:
                raise
            except ServerError:
                log.warning("race tick failed", exc_info=True)
            except Exception:
                log.exception("race tick failed")

    async def _tick(self, sweep: bool) -> None:
        now = self.s.clock.now_ms()
        races = self.s.races
        for race_id in list(self.by_race):
            race = self.meta.get(race_id)
            if race is None or sweep:
                race = await races.store.load(race_id)
                self.meta[race_id] = race
            if race.status != "running" or race.start_at is None:
                continue
            pids = sorted({c.player.id for c in self.by_race[race_id] if c.player})
            if sweep or now >= race.start_at:
                await races.store.touch(race_id, pids, now)
            if now >= race.start_at:
                await self._send_started(race, now)
            if sweep or (race.ends_at is not None and now >= race.ends_at):
                await races.tick(race_id)
        if sweep:
            for race_id in await races.store.due(now):
                await races.tick(race_id)
            for variant, size in set(self.queued.values()):
                await races.try_match(variant, size)

    async def _send_started(self, race: RaceState, now: int) -> None:
        """Each racer's own view of the shared deal, at the start and after a reconnect."""
        for conn in list(self.by_race.get(race.race_id, ())):
            if conn in self.started[race.race_id] or conn.player is None:
                continue
            pid = conn.player.id
            if pid not in race.names():
                continue
            self.started[race.race_id].add(conn)
            game_id = keys.race_game_id(race.race_id, pid)
            live = await self.s.games.get(game_id, pid)
            assert race.start_at is not None and race.ends_at is not None
            conn.send(p.RaceStarted(race_id=race.race_id, game_id=game_id, view=live.game.view(),
                                    start_at=race.start_at, ends_at=race.ends_at,
                                    server_time=now))
