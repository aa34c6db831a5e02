"""Matchmaking on this process: the connections waiting in a race queue, and the queue sweep.

A queue fills at once when enough players wait (`RaceService.queue`); a group queue that has
not filled starts with the players there once its fill wait has run out, which a sweep here
checks every second for the queues some connection here waits in. A match is announced on
each player's channel, so the fan-out attaches the player's connections wherever they are.
The sweep also makes the races of matches a stopped process left unmade (any process does).
"""

from __future__ import annotations

import asyncio
import logging

from server.races.fanout import RaceFanout, Recipient
from server.races.service import RaceService
from server.runtime.errors import ServerError, raise_if_cancelled

log = logging.getLogger(__name__)

SWEEP_S = 1.0


class Matchmaking:
    def __init__(self, races: RaceService, fanout: RaceFanout) -> None:
        self.races = races
        self.fanout = fanout
        self._waiting: dict[Recipient, tuple[str, int]] = {}
        fanout.on_matched(self.forget)
        fanout.on_gone(self.forget)

    def forget(self, conn: Recipient) -> None:
        """The connection no longer waits (matched, left or closed)."""
        self._waiting.pop(conn, None)

    def groups(self) -> set[tuple[str, int]]:
        """The queues (variant, size) some connection here waits in."""
        return set(self._waiting.values())

    async def queue(
        self, conn: Recipient, pid: str, name: str, variant: str, size: int, address: str = ""
    ) -> tuple[int, str | None]:
        """Queue the player (from client `address`); returns (players waiting, race id when
        matched at once)."""
        await self.fanout.watch_player(conn, pid)  # before queueing: a match is announced there
        self._waiting[conn] = (variant, size)
        try:
            waiting, race_id = await self.races.queue(pid, name, variant, size, address)
        except BaseException:
            self.forget(conn)
            raise
        if race_id is not None:
            self.forget(conn)
        return waiting, race_id

    async def resume(self, conn: Recipient, pid: str, queue: str) -> None:
        """A player waiting in `queue` (``<variant>:<size>``, as stored) reconnected through
        `conn`: it hears of the match, and this process sweeps that queue."""
        variant, _, size = queue.rpartition(":")
        await self.fanout.watch_player(conn, pid)
        self._waiting[conn] = (variant, int(size))

    async def leave(self, conn: Recipient, pid: str) -> bool:
        """Leave the queue or an open room."""
        self.forget(conn)
        return await self.races.leave(pid)

    async def sweep(self) -> None:
        for variant, size in sorted(self.groups()):
            await self.races.try_match(variant, size)
        await self.races.repair_matches()  # matches a stopped process left unmade

    async def run(self) -> None:
        """Sweep until cancelled (an app cleanup_ctx)."""
        while True:
            raise_if_cancelled()
            await asyncio.sleep(SWEEP_S)
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except ServerError:
                raise_if_cancelled()
                log.warning("matchmaking sweep failed", exc_info=True)
            except Exception:
                raise_if_cancelled()
                log.exception("matchmaking sweep failed")
