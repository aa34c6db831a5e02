"""Spectators of races: the racers' boards, delayed, and lagging behind what any racer still
playing has not seen.

A spectator is a connection watching a race it does not race in. While the race runs, a
racer's board is shown only as it stood at the newest position of their game by which every
card they had turned up had been seen by every racer still playing (`server.races.seen`: all
racers play one deal, so a card one racer turned up may be another's next card). No card on a
board is then unknown to those racers, and no run of boards shows a move onto, or off, such a
card (a "??" mask did not do: the next legal move onto it told its rank). A board catches up
when the other racers have seen those cards, or stop playing; once the race is over, boards
show what the racer saw. The race's events and updates (everyone's counts, which every racer
gets live anyway) are not held back beyond the delay below.

Each server process keeps its own spectators (`Spectators`, one per process, registered
with `RaceFanout`, whose pub/sub reader hands it every message of a watched race's channel, so
racers and spectators may be on any processes). On each racer's progress event the process
plays the racer's new moves from the stored log on its own engine copy of the game and sends
the racer's view (what the racer sees: face-down and stock cards hidden) of the position
shown `DELAY_MS` later, with the other boards that may now show a newer position; the race's
public events and updates go out with the same delay, so what a spectator sees is a few
seconds old and cannot help a racer. Only views ever leave: never a seed, a log or a full state,
during the race or after it.

Spectator counts are kept per race in Redis (``sol:{r:<id>}:watchers``: process id ->
spectators there) and announced on the race channel (`pubsub.SpectatorsChanged`), which
reaches the racers as ``race.spectators`` pushes. A process's count counts only while it is
fresh (``sol:{r:<id>}:watchers:alive``: process id -> until when): every race clock sweep
(about once a second) a process moves its own counts on by `WATCH_FRESH_MS` and drops the
counts of the races it watches or races in that no process refreshed in time, announcing the
new total. A process that crashed (killed, its spectators never told to leave) thus stops
being counted within `WATCH_FRESH_MS` plus a sweep, by any process that follows the race
(issue #25: such counts stayed until the race ended).

There is one `Spectators` per app, built with the other services (`Services.spectators`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections import defaultdict
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, cast

import redis.asyncio

import protocol as p
import protocol.races as pr
from engine import UNDO, Game, new_game
from engine.views import json_map
from server.games.store import GameStore
from server.races.fanout import UPDATE_EVENTS, RaceFanout, Recipient, spoken_to
from server.races.model import RaceState, RaceStatus
from server.races.seen import Sightings
from server.races.service import RaceService
from server.redis import keys, pubsub
from server.redis.batch import LuaScript
from server.runtime.clock import Clock
from server.runtime.errors import Conflict, NotFound, translate_redis_errors

__all__ = ["DELAY_MS", "WATCH_FRESH_MS", "Spectators"]

log = logging.getLogger(__name__)

#: How long after a move spectators see it (and every race event): long enough that a
#: spectator relaying the board cannot help a racer, short enough to feel live.
DELAY_MS = 3_000
#: Races listed by `race.list` are read from this many of the newest active races.
LIST_SCAN = 200
#: The watchers keys outlive their last change by this long (then nobody follows the race).
WATCHERS_TTL_MS = 86_400_000
#: A process's spectator count of a race counts this long after its last heartbeat (its race
#: clock's sweep, about once a second): a stopped process's spectators leave the counts then.
WATCH_FRESH_MS = 5_000

# Drops the counts of processes whose heartbeat lapsed (KEYS[1] watchers, KEYS[2] alive,
# `now`) and sums the others; returns {total, dropped}.
_SWEEP_FN = """
local function sweep(watchers, alive, now)
  local total, dropped = 0, 0
  local flat = redis.call('HGETALL', watchers)
  for i = 1, #flat, 2 do
    local fresh = tonumber(redis.call('ZSCORE', alive, flat[i]) or '0')
    if fresh < now then
      redis.call('HDEL', watchers, flat[i])
      redis.call('ZREM', alive, flat[i])
      dropped = dropped + 1
    else
      total = total + tonumber(flat[i + 1])
    end
  end
  return {total, dropped}
end
"""

# KEYS: watchers, alive. ARGV: process id, its spectators of the race, ttl ms, now, fresh
# until. Sets this process's count (what it holds: a count it lost while paused comes back;
# 0 drops it), fresh until then, and drops the lapsed counts of other processes. Returns
# {total, changed}: changed is 1 when the total may differ from the last one announced.
_COUNT_LUA = (
    _SWEEP_FN
    + """
local old = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local n = tonumber(ARGV[2])
if n > 0 then
  redis.call('HSET', KEYS[1], ARGV[1], n)
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
else
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
end
local out = sweep(KEYS[1], KEYS[2], tonumber(ARGV[4]))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
if old ~= n or out[2] > 0 then return {out[1], 1} end
return {out[1], 0}
"""
)


@dataclass(slots=True)
class _State:
    """One position of a racer's game as a spectator may be shown it: after `seq` logged
    moves, reached at `as_of`; `new`: the labels of the deal first turned up by its move."""

    seq: int
    as_of: int
    view: dict[str, object]
    new: frozenset[int] = frozenset()


@dataclass(slots=True)
class _Copy:
    """This process's engine copy of one racer's game, after `seq` logged moves; `seen`
    follows which of the deal's cards the racer has seen (None: it lost track, or the deal
    hides nothing).

    `base` is the newest position known to be showable while the race runs (every card the
    racer had seen by then, every racer still playing has seen), `pending` the positions after
    it, oldest first: each is shown once the cards it and those before it turned up have been
    seen by every racer still playing (`Spectators._lagged`)."""

    game: Game
    seq: int
    log_key: str
    times_key: str
    seen: Sightings | None
    hides: bool
    base: _State
    pending: list[_State] = dataclasses.field(default_factory=list)
    #: When the racer reached this position (their last move, or the start).
    as_of: int = 0
    #: The view last shown of this board, to tell when a newer one may be shown.
    shown: dict[str, object] | None = None


def spectator_info(race: RaceState, now_ms: int) -> p.RaceInfo:
    """The race as a spectator sees it: everyone's progress, no room code, no game id."""
    return dataclasses.replace(race.info(now_ms, None), code=None, game_id=None)


class Spectators:
    """The spectators connected to this process, and the boards they are shown."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        fanout: RaceFanout,
        races: RaceService,
        store: GameStore,
        clock: Clock,
        delay_ms: int | None = None,
    ) -> None:
        self._r = client
        self._fanout = fanout
        self._races = races
        self._store = store
        self._clock = clock
        self.delay_ms = DELAY_MS if delay_ms is None else delay_ms
        self._watching: dict[str, set[Recipient]] = defaultdict(set)
        #: The reverse: the races each connection watches here (`watched_by`, `_gone`: what
        #: it watches, not a scan of every race watched here).
        self._watched: dict[Recipient, set[str]] = {}
        self._copies: dict[tuple[str, str], _Copy] = {}
        self._names: dict[str, dict[str, str]] = {}  # race id -> racer names (watched races)
        #: Per watched race, the racers this process was told have stopped playing: by the
        #: race's events it handled (and the race as its first spectator here found it), so a
        #: board never moves on for a stop its spectators are told of only later.
        self._stopped: dict[str, set[str]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        #: Its script runs through the game store's group commit (one per app).
        self._count = LuaScript.of(_COUNT_LUA)
        fanout.watchers.append(self)
        fanout.on_gone(self._gone)

    # -- RaceWatcher ----------------------------------------------------------------------------

    def watching(self, race_id: str) -> bool:
        return bool(self._watching.get(race_id))

    def watched_by(self, conn: Recipient) -> bool:
        return conn in self._watched

    def _add(self, conn: Recipient, race_id: str) -> None:
        self._watching[race_id].add(conn)
        self._watched.setdefault(conn, set()).add(race_id)

    def _discard(self, conn: Recipient, race_id: str) -> None:
        """Take ``conn`` off the race's spectators here (its set goes once empty)."""
        conns = self._watching.get(race_id)
        if conns is not None:
            conns.discard(conn)
            if not conns:
                del self._watching[race_id]
        races = self._watched.get(conn)
        if races is not None:
            races.discard(race_id)
            if not races:
                del self._watched[conn]

    async def on_message(self, msg: pubsub.RaceEventPublished | pubsub.SpectatorsChanged) -> None:
        race_id = msg.race_id
        if not self.watching(race_id):
            return
        if isinstance(msg, pubsub.SpectatorsChanged):  # not delayed: it shows nothing
            self._send_now(race_id, [p.RaceSpectators(race_id=race_id, count=msg.count)])
            return
        event = msg.event
        out: list[p.ServerMessage] = [
            p.RaceEvent(race_id=race_id, version=msg.version, event=pr.dump_race_event(event))
        ]
        delay = self.delay_ms
        if (isinstance(event, pr.RacerProgress) and event.finished) or isinstance(
            event, pr.RacerForfeited
        ):
            self._stopped.setdefault(race_id, set()).add(event.player_id)
        if isinstance(event, (pr.RacerProgress, pr.RacerForfeited)):
            # A racer moved (their board may move on), saw more or stopped playing (the
            # others' boards may catch up).
            for moved in await self._moved_on(race_id):
                out.append(p.RaceSpectate(race_id=race_id, board=moved))
        if isinstance(event, UPDATE_EVENTS):
            race = await self._races.load(race_id)
            self._names[race_id] = race.names()
            out.insert(0, p.RaceUpdate(race=spectator_info(race, self._clock.now_ms())))
            if isinstance(event, pr.RaceCountdown):  # the deal, once the racers have it
                delay += max(0, event.start_at - self._clock.now_ms())
                for pid in race.pids():
                    board = await self._board(race_id, pid, race.names().get(pid))
                    copy = self._copies.get((race_id, pid))
                    if board is not None and copy is not None:
                        copy.shown = board.view
                        out.append(p.RaceSpectate(race_id=race_id, board=board))
            if isinstance(event, pr.RaceEnded):  # over: every board as its racer saw it
                for pid in race.pids():
                    board = await self._board(race_id, pid, race.names().get(pid), live=False)
                    if board is not None:
                        out.append(p.RaceSpectate(race_id=race_id, board=board))
        self._send_later(race_id, out, delay)
        if isinstance(event, pr.RaceEnded):
            asyncio.get_running_loop().call_later(
                delay / 1000, lambda: self._spawn(self._end(race_id))
            )

    # -- requests -------------------------------------------------------------------------------

    async def watch(self, conn: Recipient, req_id: int, race_id: str) -> p.RaceWatching:
        """Start watching: the race and each racer's board as old as the delay allows."""
        me = conn.player.id if conn.player else None
        race = await self._races.load(race_id)
        if me is not None and me in race.names():
            raise Conflict("racers cannot watch their own race")
        now = self._clock.now_ms()
        live = race.status is not RaceStatus.FINISHED
        count = 0
        if live and conn not in self._watching.get(race_id, ()):
            self._add(conn, race_id)
            try:
                await self._fanout.follow(race_id)
                count = await self._change(race_id)
            except BaseException:  # not counted (an outage): not watching either
                self._discard(conn, race_id)
                if race_id not in self._watching:
                    with contextlib.suppress(Exception):  # the race's channel, if followed
                        await self._fanout.unfollow(race_id)
                raise
        elif live:
            count = await self._total(race_id)
        boards = []
        self._names[race_id] = race.names()
        for pid in race.pids():  # every copy current first: what they saw
            await self._sync(race_id, pid)
        # Who stopped, as the race this spectator is shown says: for this reply only (the
        # other spectators here learn of a stop by its event, in its turn).
        stopped = {
            pid for pid in race.pids() if race.progress_of(pid).finished or pid in race.forfeited
        }
        stopped |= self._stopped.setdefault(race_id, set(stopped))
        for pid, name in race.racers:
            board = await self._board(race_id, pid, name, live=live, stopped=stopped)
            if board is None:
                continue
            age = now - board.as_of
            if live and age < self.delay_ms:  # too fresh: shown once it is old enough
                self._send_later(
                    race_id,
                    [p.RaceSpectate(race_id=race_id, board=board)],
                    self.delay_ms - age,
                    only=conn,
                )
                board = dataclasses.replace(board, view=None)
            boards.append(board)
        if not live:
            self._forget_copies(race_id)
        return p.RaceWatching(
            id=req_id,
            race=spectator_info(race, now),
            boards=tuple(boards),
            spectators=count,
            delay_ms=self.delay_ms,
        )

    async def unwatch(self, conn: Recipient, race_id: str) -> None:
        """Stop watching; NotFound when this connection was not watching the race."""
        conns = self._watching.get(race_id)
        if not conns or conn not in conns:
            raise NotFound("not watching that race")
        await self._leave(conn, race_id)

    @translate_redis_errors
    async def running(self, variant: str | None, limit: int) -> list[p.RaceListing]:
        """The races in countdown or running now, newest first."""
        ids = cast(list[str], await self._r.zrevrange(keys.races_active(), 0, LIST_SCAN - 1))
        now = self._clock.now_ms()
        found: list[RaceState] = []
        for race_id in ids:
            try:
                race = await self._races.load(race_id)
            except NotFound:
                continue
            if race.shown_status(now) in (RaceStatus.COUNTDOWN, RaceStatus.RUNNING) and (
                variant is None or race.variant == variant
            ):
                found.append(race)
        found.sort(key=lambda r: (r.start_at or 0, r.race_id), reverse=True)
        out: list[p.RaceListing] = []
        for race in found[:limit]:
            out.append(
                p.RaceListing(
                    race_id=race.race_id,
                    variant=race.variant,
                    status=race.shown_status(now).value,
                    racers=race.info(now, None).racers,
                    spectators=await self._total(race.race_id),
                    start_at=race.start_at,
                    ends_at=race.ends_at,
                )
            )
        return out

    # -- boards ---------------------------------------------------------------------------------

    async def _sync(self, race_id: str, pid: str) -> _Copy | None:
        """The racer's copy brought up to the stored log (None: not dealt, or it failed)."""
        game_id = keys.race_game_id(race_id, pid)
        copy = self._copies.get((race_id, pid))
        try:
            if copy is None:
                record, moves = await self._store.load(game_id)
                game = new_game(record.variant, record.seed)
                seen = Sightings(game)
                k = keys.parse_game_id(game_id)
                start = _State(0, record.started_at_ms, json_map(game.view()), seen.dealt_up)
                copy = _Copy(
                    game,
                    0,
                    k.log,
                    k.times,
                    seen if seen.hides else None,
                    seen.hides,
                    start,
                    as_of=record.started_at_ms,
                )
                await self._follow(copy, moves, record.last_move_at_ms)
                self._copies[(race_id, pid)] = copy
                record = await self._store.get(game_id)
            else:
                more = cast(list[str], await self._r.lrange(copy.log_key, copy.seq, -1))
                record = await self._store.get(game_id)
                await self._follow(copy, more, record.last_move_at_ms)
        except NotFound:  # the race has not been dealt
            return None
        except Exception:  # a copy that cannot follow: rebuilt from the log next time
            log.exception("spectator copy of %s failed", game_id)
            self._copies.pop((race_id, pid), None)
            return None
        if copy.seq == record.seq:  # the record is of this position: over, or not, now
            copy.as_of = max(record.last_move_at_ms, record.started_at_ms)
        return copy

    async def _follow(self, copy: _Copy, moves: list[str], last_ms: int) -> None:
        """Play `moves` (the next ones of the stored log) on the copy, keeping each position
        a spectator may yet be shown, timed by the game's times list (same slot as its log,
        pushed by the same script: it holds at least the moves read before it)."""
        if not moves:
            return
        intervals = [
            int(t)
            for t in cast(
                list[str],
                await self._r.lrange(copy.times_key, copy.seq, copy.seq + len(moves) - 1),
            )
        ]
        for i, move in enumerate(moves):
            copy.game.defer_over()  # not over: the next move was accepted (`Game.replay`)
            copy.game.play(move)
            copy.seq += 1
            if i < len(moves) - 1:  # judged after the last move only (`after` reads `over`)
                copy.game.defer_over()
            copy.as_of = copy.as_of + intervals[i] if i < len(intervals) else last_ms
            new: frozenset[int] = frozenset()
            if copy.seen is not None:
                try:
                    new = copy.seen.after(copy.game, move.strip().lower() == UNDO)
                except ValueError:  # lost track: this board shows no view until the end
                    log.exception("spectator copy lost track of a race game's cards")
                    copy.seen = None
            if not copy.hides:  # nothing hidden: every position may be shown
                copy.base = _State(copy.seq, copy.as_of, {})
            elif copy.seen is not None:
                view = json_map(copy.game.view())
                copy.pending.append(_State(copy.seq, copy.as_of, view, new))

    async def _pids(self, race_id: str) -> list[str]:
        names = self._names.get(race_id)
        if names is None:
            names = self._names[race_id] = (await self._races.load(race_id)).names()
        return list(names)

    async def _shown(self, race_id: str, stopped: set[str]) -> set[int] | None:
        """The cards (labels) every racer still playing (not in `stopped`) has seen; None:
        show every card (no racer plays on). Raises LookupError when some racer's sightings
        are unknown."""
        shown: set[int] | None = None
        for pid in await self._pids(race_id):
            if pid in stopped:
                continue
            copy = self._copies.get((race_id, pid)) or await self._sync(race_id, pid)
            if copy is None:
                raise LookupError(f"no copy of {pid}'s game")
            if not copy.hides:
                continue
            if copy.seen is None:
                raise LookupError(f"lost track of {pid}'s cards")
            shown = set(copy.seen.seen) if shown is None else shown & copy.seen.seen
        return shown

    async def _lagged(
        self, race_id: str, copy: _Copy, live: bool, stopped: set[str] | None = None
    ) -> _State | None:
        """The position of the racer's game a spectator is shown: while the race runs, the
        newest one by which every card the racer had turned up (every card on the board, and
        every card a move went onto or came from) has been seen by every racer still playing,
        so that neither a board nor a run of boards tells anything of a card one of them has
        not seen; the position now once nobody plays on (or the race is over, or the deal
        hides nothing). None when that cannot be told (no view until it can).

        `stopped`: who stopped playing as one new spectator is told (its `race.watching`); the
        copy then does not move on, as the others here have not been told yet. Otherwise the
        racers stopped by the events this process handled, and the copy moves on."""
        now = _State(copy.seq, copy.as_of, {})
        if not live or not copy.hides:
            return now
        try:
            shown = await self._shown(
                race_id, self._stopped.get(race_id, set()) if stopped is None else stopped
            )
        except LookupError:
            return None
        if shown is None:
            return now
        if copy.seen is None:
            return None
        if stopped is not None:  # for one spectator: the copy stays where it is
            state = copy.base
            for later in copy.pending:
                if not later.new <= shown:
                    break
                state = later
            return state
        while copy.pending and copy.pending[0].new <= shown:
            copy.base = copy.pending.pop(0)
        return copy.base

    async def _board(
        self,
        race_id: str,
        pid: str,
        name: str | None,
        live: bool = True,
        stopped: set[str] | None = None,
    ) -> p.SpectatorBoard | None:
        """The racer's board, from this process's copy brought up to the stored log; `live`:
        the race runs (the board lags, see `_lagged`)."""
        copy = await self._sync(race_id, pid)
        if copy is None:
            return None
        return await self._board_of(race_id, pid, name, copy, live, stopped)

    async def _board_of(
        self,
        race_id: str,
        pid: str,
        name: str | None,
        copy: _Copy,
        live: bool,
        stopped: set[str] | None = None,
    ) -> p.SpectatorBoard | None:
        state = await self._lagged(race_id, copy, live, stopped)
        if state is None:
            return None
        view = state.view if state.view else json_map(copy.game.view())
        if name is None:
            names = self._names.get(race_id)
            if names is None or pid not in names:
                names = self._names[race_id] = (await self._races.load(race_id)).names()
            name = names.get(pid, "?")
        return p.SpectatorBoard(
            player_id=pid, name=name, seq=state.seq, as_of=state.as_of, view=view
        )

    async def _moved_on(self, race_id: str) -> list[p.SpectatorBoard]:
        """After any event of the race, every board that may now show a newer position than
        the one last shown: its racer moved, or another racer saw more or stopped playing."""
        out = []
        pids = await self._pids(race_id)
        copies = [await self._sync(race_id, pid) for pid in pids]  # all first: what they saw
        for pid, copy in zip(pids, copies, strict=True):
            if copy is None:
                continue
            board = await self._board_of(race_id, pid, None, copy, True)
            if board is not None and board.view != copy.shown:
                copy.shown = board.view
                out.append(board)
        return out

    def _forget_copies(self, race_id: str) -> None:
        self._names.pop(race_id, None)
        self._stopped.pop(race_id, None)
        for key in [k for k in self._copies if k[0] == race_id]:
            del self._copies[key]

    # -- delivery -------------------------------------------------------------------------------

    def _send_now(
        self, race_id: str, messages: list[p.ServerMessage], only: Recipient | None = None
    ) -> None:
        for conn in [only] if only is not None else list(self._watching.get(race_id, ())):
            if conn in self._watching.get(race_id, ()):
                for m in messages:
                    conn.send(spoken_to(conn, m))

    def _send_later(
        self,
        race_id: str,
        messages: list[p.ServerMessage],
        delay_ms: int,
        only: Recipient | None = None,
    ) -> None:
        # A timer, not a task: nothing is left pending when the loop closes at shutdown.
        asyncio.get_running_loop().call_later(
            max(0, delay_ms) / 1000, self._send_now, race_id, messages, only
        )

    # -- membership -----------------------------------------------------------------------------

    @translate_redis_errors
    async def _total(self, race_id: str) -> int:
        """The race's spectators on every process whose count is fresh (a read: lapsed
        counts are left for a heartbeat to drop and announce)."""
        now = self._clock.now_ms()
        async with self._r.pipeline(transaction=False) as pipe:  # one slot
            pipe.hgetall(keys.race_watchers(race_id))
            pipe.zrangebyscore(keys.race_watchers_alive(race_id), now, "+inf")
            counts, fresh = await pipe.execute()
        alive = set(cast(list[str], fresh))
        return sum(int(v) for k, v in cast(dict[str, str], counts).items() if k in alive)

    async def _announce(self, race_id: str, total: int) -> None:
        msg = pubsub.SpectatorsChanged(race_id=race_id, count=total)
        await self._r.publish(keys.race_channel(race_id), pubsub.encode(msg))

    async def _count_here(self, race_id: str, now: int) -> tuple[int, bool]:
        """Write this process's spectator count of the race (fresh for `WATCH_FRESH_MS`),
        drop lapsed ones: (the race's total, whether it may have changed)."""
        total, changed = cast(
            list[int],
            await self._store.batch.eval(
                self._count,
                (keys.race_watchers(race_id), keys.race_watchers_alive(race_id)),
                (
                    self._fanout.instance,
                    len(self._watching.get(race_id, ())),
                    WATCHERS_TTL_MS,
                    now,
                    now + WATCH_FRESH_MS,
                ),
            ),
        )
        return int(total), bool(changed)

    @translate_redis_errors
    async def _change(self, race_id: str) -> int:
        """Count this process's spectators of the race (after one came or went) and announce
        the total."""
        total, _ = await self._count_here(race_id, self._clock.now_ms())
        await self._announce(race_id, total)
        return total

    @translate_redis_errors
    async def heartbeat(self, now_ms: int, racing: Sequence[str] = ()) -> None:
        """Keep this process's spectator counts fresh (restoring one lost while it was
        paused), and drop the counts of processes that stopped refreshing theirs, in the races
        watched here and `racing` (some racer here is in them), announcing each total that
        changed: called by the race clock about once a second."""
        for race_id in sorted(set(self._watching) | set(racing)):
            total, changed = await self._count_here(race_id, now_ms)
            if changed:
                log.info("race %s: %d spectators, counted again", race_id, total)
                await self._announce(race_id, total)

    async def _leave(self, conn: Recipient, race_id: str) -> None:
        conns = self._watching.get(race_id)
        if conns is None or conn not in conns:
            return
        self._discard(conn, race_id)
        if race_id not in self._watching:
            self._forget_copies(race_id)
            await self._fanout.unfollow(race_id)
        await self._change(race_id)

    async def _end(self, race_id: str) -> None:
        """The race ended and its last frames went out: its spectators are done."""
        for conn in list(self._watching.get(race_id, ())):
            await self._leave(conn, race_id)

    def _gone(self, conn: Recipient) -> None:
        for race_id in sorted(self._watched.get(conn, ())):
            self._spawn(self._leave(conn, race_id))

    def _spawn(self, job: Coroutine[Any, Any, None]) -> None:
        async def run() -> None:
            try:
                await job
            except Exception:
                log.warning("spectator bookkeeping failed", exc_info=True)

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)  # a reference until done (asyncio keeps none)
        task.add_done_callback(self._tasks.discard)
