"""Live streams: today's board of a variant, and a running race's events for spectators.

Both are NDJSON (one JSON object a line), or server-sent events when the request accepts
``text/event-stream`` (each object one ``data:`` line, its ``type`` as the event name).

**Boards.** One `BoardFeed` per variant and day in each process, shared by every reader of
it: while it has readers it polls the board's size in Redis every `POLL_S` (one ``ZCARD``,
whatever the number of readers), and when the size changed (or every `RESCAN_S`, for an
entry taken off while another came in) reads the board's members and sends each reader one
``entry`` line per new row (with its rank then) and one ``removed`` line per row taken off
(a fair-play review). The board is the one ``leaderboard.*`` reads: held results and marked
accounts are never on it. A finish reaches the readers of every process within
``POLL_S`` plus a round trip. At the day's end a feed sends ``end`` and closes. A row that
comes in while a reader connects may reach it twice (in the first rows and as new), never
not at all: readers key rows by name.

**Races.** A race stream is a spectator like a WebSocket's (`server.races.spectate`): the
same delay, the same lagging boards (nothing a racer still playing has not seen); the messages
are the protocol's pushes (``race.watching`` first, then ``race.event``, ``race.update``,
``race.spectate``), as JSON. It ends after the race's end.

Idle readers cost one queue and one open response each; a keep-alive line every
`KEEPALIVE_S` lets proxies and readers see the stream alive (benchmarks/api_streams.py).

**Hang-ups.** aiohttp does not cancel a handler whose client went away, and a stream would
notice only at its next write (up to `KEEPALIVE_S` later), holding its per-address slot that
long. `Hangups` looks at every open stream's connection once every `HANGUP_CHECK_S` (one task
per process, whatever the number of streams) and ends those whose client is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, cast

from aiohttp import web

import protocol as p
import protocol.races as pr
from protocol.codec import encode
from server.api.delayed import delayed_race
from server.api.views import BoardEntryJson, board_entry
from server.boards.leaderboard import MAX_LIMIT, BoardRef, entry_from_json
from server.games.daily import DAY_MS, day_start_ms, utc_date
from server.players.registry import Player
from server.races.spectate import spectator_info
from server.redis import keys
from server.runtime.errors import raise_if_cancelled
from server.services import Services

__all__ = ["POLL_S", "BoardFeeds", "Hangups", "RaceReader", "StreamWriter", "serve_race"]

log = logging.getLogger(__name__)

#: How often a feed with readers looks at its board's size.
POLL_S: Final = 0.25
#: How often it reads the whole member list anyway.
RESCAN_S: Final = 5.0
#: A line (or an SSE comment) this often on a quiet stream.
KEEPALIVE_S: Final = 15.0
#: Lines queued for one reader before it is dropped as too slow.
READER_QUEUE: Final = 1_000
#: How often the open streams' connections are looked at (a gone client's stream ends).
HANGUP_CHECK_S: Final = 0.25

Line = dict[str, object]


class StreamWriter:
    """An open streamed response: NDJSON, or SSE when the client asked for it."""

    def __init__(self, request: web.Request) -> None:
        accept = request.headers.get("Accept", "")
        self.sse = "text/event-stream" in accept
        self.response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream" if self.sse else "application/x-ndjson",
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",  # nginx: pass each line at once
                "Access-Control-Allow-Origin": "*",
                "X-Content-Type-Options": "nosniff",
            }
        )
        self.request = request

    async def open(self) -> None:
        await self.response.prepare(self.request)

    async def send(self, line: Line | str) -> None:
        text = line if isinstance(line, str) else json.dumps(line, separators=(",", ":"))
        if self.sse:
            kind = "message"
            if not isinstance(line, str):
                kind = str(line.get("type", "message"))
            else:
                with contextlib.suppress(ValueError):
                    kind = str(json.loads(line).get("type", "message"))
            payload = f"event: {kind}\ndata: {text}\n\n"
        else:
            payload = text + "\n"
        await self.response.write(payload.encode())

    async def keepalive(self) -> None:
        await self.response.write(b": keep-alive\n\n" if self.sse else b'{"type":"ping"}\n')


def end_queue(queue: asyncio.Queue[Any]) -> None:
    """Put the end (None) into a reader's queue, making room for it if it is full."""
    with contextlib.suppress(asyncio.QueueFull):
        queue.put_nowait(None)
        return
    with contextlib.suppress(asyncio.QueueEmpty):
        queue.get_nowait()
    queue.put_nowait(None)


class Hangups:
    """The open streams of this process, each ended soon after its client went away."""

    def __init__(self) -> None:
        #: id(request) -> (request, queue): requests are not hashable.
        self._open: dict[int, tuple[web.Request, asyncio.Queue[Any]]] = {}
        self._task: asyncio.Task[None] | None = None

    def add(self, request: web.Request, queue: asyncio.Queue[Any]) -> None:
        """Watch ``request``'s connection: once it is gone, the stream's ``queue`` ends."""
        self._open[id(request)] = (request, queue)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    def remove(self, request: web.Request) -> None:
        self._open.pop(id(request), None)

    def __len__(self) -> int:
        return len(self._open)

    async def _run(self) -> None:
        while self._open:
            await asyncio.sleep(HANGUP_CHECK_S)
            for key, (request, queue) in list(self._open.items()):
                transport = request.transport
                if transport is None or transport.is_closing():
                    del self._open[key]
                    end_queue(queue)

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


# -- boards ------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Reader:
    queue: asyncio.Queue[Line | None] = field(default_factory=lambda: asyncio.Queue(READER_QUEUE))


class BoardFeed:
    """Today's board of one variant's tier (medium: the daily board), polled once for all
    readers of this process."""

    def __init__(
        self, services: Services, variant: str, date: dt.date, tier: str = keys.DAILY_TIER
    ) -> None:
        self.services = services
        self.variant, self.date, self.tier = variant, date, tier
        self.ref = BoardRef.daily(variant, date, tier)
        self.readers: set[_Reader] = set()
        self._known: set[str] | None = None  # board members
        self._task: asyncio.Task[None] | None = None

    def add(self, reader: _Reader) -> None:
        self.readers.add(reader)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    def remove(self, reader: _Reader) -> None:
        self.readers.discard(reader)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _publish(self, line: Line | None) -> None:
        for reader in list(self.readers):
            try:
                reader.queue.put_nowait(line)
            except asyncio.QueueFull:  # too slow: dropped; its stream ends
                self.readers.discard(reader)
                with contextlib.suppress(asyncio.QueueEmpty):
                    reader.queue.get_nowait()
                reader.queue.put_nowait(None)

    async def _run(self) -> None:
        r = self.services.redis
        clock = self.services.clock
        size = -1
        last_scan = 0.0
        loop = asyncio.get_running_loop()
        end_ms = day_start_ms(self.date) + DAY_MS
        while self.readers:
            try:
                if clock.now_ms() >= end_ms:
                    self._publish({"type": "end", "date": self.date.isoformat()})
                    self._publish(None)
                    self.readers.clear()
                    return
                n = int(await r.zcard(self.ref.board_key))
                if n != size or loop.time() - last_scan >= RESCAN_S:
                    size, last_scan = n, loop.time()
                    await self._scan()
            except Exception:
                raise_if_cancelled()
                log.warning("board feed %s %s failed", self.variant, self.date, exc_info=True)
            await asyncio.sleep(POLL_S)
        self._known = None

    async def _scan(self) -> None:
        r = self.services.redis
        members = cast(list[str], await r.zrange(self.ref.board_key, 0, -1))
        if self._known is None:
            self._known = set(members)
            return
        current = set(members)
        new = [(i + 1, m) for i, m in enumerate(members) if m not in self._known]
        gone = self._known - current
        self._known = current
        if new:
            pids = [m.partition(":")[2] for _, m in new]
            raws = cast(list[str | None], await r.hmget(self.ref.entries_key, pids))
            for (rank, _), pid, raw in zip(new, pids, raws, strict=True):
                if raw:
                    entry = board_entry(entry_from_json(rank, pid, raw))
                    self._publish(self._line("entry", entry, len(members)))
        if gone:
            names = await self.services.players.names(m.partition(":")[2] for m in gone)
            for m in sorted(gone):
                self._publish(
                    {
                        "type": "removed",
                        "name": names.get(m.partition(":")[2], ""),
                        "total": len(members),
                    }
                )

    def _line(self, kind: str, entry: BoardEntryJson, total: int) -> Line:
        return {
            "type": kind,
            "variant": self.variant,
            "tier": self.tier,
            "date": self.date.isoformat(),
            "total": total,
            "entry": dict(entry),
        }

    async def prime(self) -> None:
        """Learn the board's members before a first reader's snapshot, so that a row coming
        in between is sent to it (twice at worst: in the snapshot and as new), never lost."""
        if self._known is None:
            self._known = set(
                cast(list[str], await self.services.redis.zrange(self.ref.board_key, 0, -1))
            )

    async def snapshot(self, top: int) -> tuple[list[Line], int]:
        """The current top rows, as the lines a new reader gets first."""
        lb = self.services.leaderboard
        rows = await lb.top(self.ref, 0, top) if top else []
        total = await lb.total(self.ref)
        return [self._line("entry", board_entry(e), total) for e in rows], total


class BoardFeeds:
    """This process's board feeds, by (variant, day, tier)."""

    def __init__(self, services: Callable[[], Services]) -> None:
        self._services = services
        self._feeds: dict[tuple[str, dt.date, str], BoardFeed] = {}
        #: The race streams open here (ended at shutdown with the board streams).
        self.races: set[RaceReader] = set()
        #: Every stream open here, ended when its client goes.
        self.hangups = Hangups()

    def readers(self) -> int:
        return sum(len(f.readers) for f in self._feeds.values())

    async def serve(
        self, request: web.Request, variant: str, top: int, tier: str = keys.DAILY_TIER
    ) -> web.StreamResponse:
        services = self._services()
        date = utc_date(services.clock.now_ms())
        feed = self._feeds.get((variant, date, tier))
        if feed is None:
            for key in [k for k, f in self._feeds.items() if not f.readers]:
                del self._feeds[key]
            feed = self._feeds[(variant, date, tier)] = BoardFeed(services, variant, date, tier)
        out = StreamWriter(request)
        reader = _Reader()
        feed.add(reader)  # before the snapshot: a row coming in meanwhile is not lost
        self.hangups.add(request, reader.queue)
        try:
            await feed.prime()
            first, total = await feed.snapshot(min(top, MAX_LIMIT))
            await out.open()
            await out.send(
                {
                    "type": "board",
                    "variant": variant,
                    "tier": tier,
                    "date": date.isoformat(),
                    "total": total,
                }
            )
            for row in first:
                await out.send(row)
            while True:
                try:
                    line: Line | None = await asyncio.wait_for(reader.queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    await out.keepalive()
                    continue
                if line is None:
                    break
                await out.send(line)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            feed.remove(reader)
            self.hangups.remove(request)
        return out.response

    def end_all(self) -> None:
        """End every stream (a shutdown): each handler returns after its current line."""
        for feed in self._feeds.values():
            feed._publish(None)
            feed.readers.clear()
        for reader in list(self.races):
            reader.end()

    async def aclose(self) -> None:
        self.end_all()
        await self.hangups.aclose()
        for feed in self._feeds.values():
            await feed.stop()


# -- races -------------------------------------------------------------------------------------


class RaceReader:
    """A spectator of one race on an HTTP stream (`server.races.fanout.Recipient`)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[p.ServerMessage | None] = asyncio.Queue(READER_QUEUE)

    @property
    def player(self) -> Player | None:
        return None  # nobody: a spectator who races in nothing

    def speaks(self, version: int) -> bool:
        """The stream shows races in the newest protocol version's shape (docs/api.md)."""
        return version <= p.PROTOCOL_VERSION

    def send(self, message: p.ServerMessage) -> None:
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:  # too slow: its stream ends
            self.end()

    def end(self) -> None:
        end_queue(self.queue)


def is_race_end(message: p.ServerMessage) -> bool:
    """The race's end (its results): the last event a spectator gets."""
    return isinstance(message, p.RaceEvent) and message.event.get("kind") == RACE_ENDED


RACE_ENDED: Final = pr.RaceEnded.kind


def message_json(message: p.ServerMessage) -> str:
    return encode(message, False, validate=False)


async def serve_race(
    request: web.Request, services: Services, feeds: BoardFeeds, race_id: str
) -> web.StreamResponse:
    """A running race's events, as a spectator of this process sees them."""
    spectators = services.spectators
    reader = RaceReader()
    watching = await spectators.watch(reader, 0, race_id)  # NotFound: no such race
    if watching.race.status != "finished":  # its counts as of the delay ago, as what follows
        state = await delayed_race(services, await services.races.load(race_id))
        watching = dataclasses.replace(
            watching, race=spectator_info(state, services.clock.now_ms())
        )
    out = StreamWriter(request)
    feeds.races.add(reader)
    feeds.hangups.add(request, reader.queue)
    try:
        await out.open()
        await out.send(message_json(watching))
        if watching.race.status == "finished":
            return out.response
        while True:
            try:
                message = await asyncio.wait_for(reader.queue.get(), KEEPALIVE_S)
            except TimeoutError:
                await out.keepalive()
                continue
            if message is None:
                break
            await out.send(message_json(message))
            if is_race_end(message):  # its last boards come in the same batch
                while not reader.queue.empty():
                    last = reader.queue.get_nowait()
                    if last is not None:
                        await out.send(message_json(last))
                break
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        feeds.races.discard(reader)
        feeds.hangups.remove(request)
        with contextlib.suppress(Exception):
            await spectators.unwatch(reader, race_id)
    return out.response
