"""Authoritative play: engine games rebuilt from Redis, every move validated then persisted.

A `LiveGame` is the engine state of one stored game, cached per process. Redis is the truth:
every write carries the sequence number the cached state was built at, so a stale cache (the
same player on another server process) is detected by the store, dropped and rebuilt.
The one code path for daily games and races: races reuse `GameService` with their own records.

The service publishes what happened to listeners the app registers once (`on_played`: every
write a player made, durable, before its reply, e.g. a race's progress; `on_finished`: a game
found over after its last move was acknowledged): handlers only decode and encode.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import cast

from engine import VARIANT_IDS, Game, IllegalMove, OverState, OverStepper, new_game
from engine import variant as variant_of
from engine.views import Event, View, json_map
from server.boards.leaderboard import Entry
from server.games.deals import SolverPool, settle_over
from server.games.store import (
    DAY_OVER_MESSAGE,
    FinalResult,
    GameRecord,
    GameStore,
    PlayedLog,
    day_end_of,
)
from server.redis.keys import RaceGameKeys, parse_game_id
from server.runtime.clock import Clock
from server.runtime.errors import (
    Conflict,
    DayOver,
    GameOver,
    NotFound,
    NotStarted,
    StoreUnavailable,
)
from server.runtime.metrics import Metrics

#: Positions the game-over search visits before it lets other connections run (Triple
#: Easthaven's search expands one in 0.05-0.15 ms); every other variant decides in one slice.
OVER_SLICE_NODES = 20
#: Positions the search visits inside the move itself: progress is nearly always this close
#: (the median search ends at its first position), and it stays below the probe after which
#: the search computes its relaxation (`engine.easthaven.over.PROBE_NODES`, 0.3-5 ms), so a move
#: never carries that cost; the search goes on after the reply otherwise (`_judge`).
OVER_INLINE_NODES = 4
#: Positions a game-over search visits on the event loop, in slices after its move's reply,
#: before it is handed to a search worker to run to its end (`GameService._judge`): nearly
#: every search ends well before (about 25 ms of CPU at most here).
OVER_LOOP_NODES = 500

log = logging.getLogger(__name__)


@dataclass(slots=True)
class LiveGame:
    """A stored game and its engine state at `seq` moves."""

    record: GameRecord
    game: Game
    seq: int
    last_move_at_ms: int
    #: The Redis keys of the game's record and move log, built once per game.
    game_key: str = ""
    log_key: str = ""
    times_key: str = ""
    #: The race the game belongs to (None for a daily game), from its id, once per game.
    race_id: str | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: Set when the engine state got ahead of Redis (a write failed): rebuild before use.
    stale: bool = False
    #: The game-over search still running after its move was acknowledged (see `_judge`).
    judging: asyncio.Task[None] | None = None
    #: `seq` after the latest undo: a search of an earlier position no longer speaks for now.
    undone_at: int = -1
    #: The stored move texts in order (`undo` included): the game's log, `seq` long.
    log: list[str] = field(default_factory=list)
    #: The server's interval before each move (its `times` list as the append script writes
    #: it: now minus the previous move's time), `seq` long: the fair-play screen of the
    #: game's finish runs from here (`PlayedLog`), its seq checked by the finish's step.
    times: list[int] = field(default_factory=list)
    #: A daily game's UTC day end (ms): no write after it (docs/fairplay.md); 0 for a race.
    day_end_ms: int = 0
    #: The moves in card words as this process said them (`engine.words`), kept while they
    #: are the whole log (a log only grows), for a client without the rules; None: not made.
    words: list[str] | None = None

    @property
    def elapsed_ms(self) -> int:
        """Server-measured time from the deal being served to the last move."""
        return max(0, self.last_move_at_ms - self.record.started_at_ms)

    def logged(self, stored: str, now: int) -> None:
        """A move the store has appended at `now`: the log, its time and interval."""
        self.log.append(stored)
        self.times.append(max(0, now - self.last_move_at_ms))
        self.last_move_at_ms = now

    def played(self) -> PlayedLog | None:
        """What the screen of this game's finish reads, if this process has all of it (a
        log older than the times list, or a race game: None, the store reads it)."""
        if self.race_id is not None or len(self.times) != len(self.log):
            return None
        return PlayedLog(self.log, self.times, self.last_move_at_ms, self.record)


@dataclass(slots=True)  # not frozen: one a move, and a frozen __init__ costs twice as much
class Played:
    """A move or undo that is durable in Redis (not changed once made)."""

    live: LiveGame
    move: str
    #: What the move did (`MoveResult.events`), made while the engine's time is counted.
    events: list[Event]
    entry: Entry | None  # the leaderboard entry when this move ended the game
    #: The whole view after the move, when the caller asked for it (`play(with_view=True)`).
    view: dict[str, object] | None = None


def _over_search(game: Game) -> OverStepper:
    return game.over_search()


#: Told of a player's write (move, undo, resign, finish) once it is durable, before its reply;
#: what it returns is awaited (None: nothing to do for this game, and no coroutine made).
PlayedListener = Callable[[LiveGame], Awaitable[None] | None]
#: Told of a game found over after its last move was acknowledged, with its board entry.
FinishedListener = Callable[[LiveGame, Entry], Awaitable[None]]
#: Told of a move about to be appended (the game as the move leaves it, the seq the append
#: writes, the move's log text): it may return an awaitable whose Redis command joins the
#: append's batch right behind it (`GameService.on_append`), or None.
AppendRider = Callable[[LiveGame, int, str], Awaitable[object] | None]

#: The variants ranked by score, whose games the player finishes (`finish`) rather than loses.
SCORED_VARIANTS = tuple(v for v in VARIANT_IDS if variant_of(v).scored)


class GameService:
    """Loads, plays and finishes games for players; `cache_size` bounds the process cache."""

    def __init__(
        self,
        store: GameStore,
        clock: Clock,
        cache_size: int = 10_000,
        hint_penalty_ms: int = 30_000,
        metrics: Metrics | None = None,
        solvers: SolverPool | None = None,
        race_time_limit_ms: int = 0,
    ) -> None:
        self.hint_penalty_ms = hint_penalty_ms
        #: A race game takes no move from its start plus this on (0: no limit here): the
        #: referee's tick that ends the race comes up to 0.2 s later (cheater review F4).
        self.race_time_limit_ms = race_time_limit_ms
        self.store = store
        self.clock = clock
        self.cache_size = cache_size
        self._cache: OrderedDict[str, LiveGame] = OrderedDict()
        self._metrics = metrics
        self._search_slot = asyncio.Semaphore(1)  # game-over searches, one at a time
        #: Where long game-over searches finish (None: on the event loop, in slices); closed
        #: by `aclose`.
        self._solvers = solvers
        self._searches: set[asyncio.Task[None]] = set()
        #: A game's game-over search (`Game.over_search`), and the positions a search may
        #: take on the loop before a worker finishes it: attributes, so that a test can slow
        #: or stop the searches of a running server without replacing the compiled engine's
        #: method on its class (which a compiled caller of it would not see: setup.py).
        self.over_search: Callable[[Game], OverStepper] = _over_search
        self.over_loop_nodes = OVER_LOOP_NODES
        #: Called after every write a player made (move, undo, resign, finish), durable,
        #: before its reply: the app registers the race referee (progress, maybe the end).
        self.on_played: list[PlayedListener] = []
        #: Called with a game and its entry when a game ends after its last move was
        #: acknowledged (the game-over search finished later); the app tells the player.
        self.on_finished: list[FinishedListener] = []
        #: Called just before a move's append (not a finishing move's): an awaitable it
        #: returns is started in the same event-loop iteration, right after the append, so its
        #: command goes in the append's batch (one round trip; a racer's progress). Its first
        #: step must queue its command (`Batcher.send`) without suspending before, and the
        #: command must check in Redis that the append stored the move (it runs even when
        #: Redis refused the append). The move waits for it; its error fails the move's reply.
        self.on_append: list[AppendRider] = []

    # -- loading ------------------------------------------------------------------------------

    async def start_daily(self, variant: str, date: dt.date, player_id: str, seed: int) -> LiveGame:
        """The player's game of the day: created now, or the one already started (resumed)."""
        record = await self.store.start_daily(variant, date, player_id, seed, self.clock.now_ms())
        if record.seq == 0 and not record.finished and record.game_id not in self._cache:
            return self._build(record, [])  # nothing played yet: no log to read back
        return await self.current(record.game_id, player_id)

    async def start_game(self, game_id: str, kind: str, variant: str, seed: int) -> LiveGame:
        """A new game of another kind than the daily (a free game), its time from now."""
        record = await self.store.start_game(game_id, kind, variant, seed, self.clock.now_ms())
        if record.seq == 0 and not record.finished and record.game_id not in self._cache:
            return self._build(record, [])
        return await self.current(record.game_id, player_id=record.player_id)

    async def start_tier(
        self,
        variant: str,
        date: dt.date,
        player_id: str,
        tier: str,
        seed: int,
        *,
        catchup: bool = False,
    ) -> LiveGame:
        """The player's game of one tier of a day (ranked, or a catch-up game): created now,
        or the one already started (one attempt per tier and day)."""
        record = await self.store.start_tier(
            variant, date, player_id, tier, seed, self.clock.now_ms(), catchup=catchup
        )
        if record.seq == 0 and not record.finished and record.game_id not in self._cache:
            return self._build(record, [])
        return await self.current(record.game_id, player_id)

    def _cached(self, game_id: str, player_id: str) -> LiveGame | None:
        """The player's game if this process has it cached (no coroutine: the move path).
        Raises NotFound for another player's game."""
        live = self._cache.get(game_id)
        if live is not None:
            if live.record.player_id != player_id:
                raise NotFound("no such game")
            self._cache.move_to_end(game_id)
        return live

    async def get(self, game_id: str, player_id: str) -> LiveGame:
        """The player's game, from the cache when it is current. Raises NotFound."""
        live = self._cached(game_id, player_id)
        if live is not None:
            return live
        if parse_game_id(game_id).player_id != player_id:
            raise NotFound("no such game")
        return await self._load(game_id)

    async def current(self, game_id: str, player_id: str) -> LiveGame:
        """The player's game for a read (`game.get`): the copy cached here only if Redis holds
        nothing newer. Another process may have moved the game on (the same player in two
        windows); a write would detect that, a read must too, or it shows an older game than
        one already acknowledged. One round trip (the record's status, seq and hints: a hint
        taken on another process moves no seq, but its penalty is part of the game)."""
        cached = game_id in self._cache
        live = await self.get(game_id, player_id)
        if not cached or live.stale:
            return live if not live.stale else await self.refresh(live)
        status, seq, hints = await self.store.version(live.game_key)
        if seq == live.seq and (status == "finished") == live.record.finished:
            if hints > live.record.hints:  # counts only grow
                live.record = replace(live.record, hints=hints)
            return live
        async with live.lock:
            return await self.refresh(live)

    async def _load(self, game_id: str) -> LiveGame:
        record, moves, times = await self.store.load_played(game_id)
        return self._build(record, moves, times)

    def _build(
        self, record: GameRecord, moves: list[str], times: list[int] | None = None
    ) -> LiveGame:
        """The engine state of a stored game and its log, cached."""
        game_id = record.game_id
        started = time.perf_counter()
        game = new_game(record.variant, record.seed)
        game.replay(moves)  # the log only ever holds moves the engine accepted
        self.count_engine(record.variant, time.perf_counter() - started)
        # Judging the last position here could take long: a finished record says it ended;
        # otherwise the next move (or `over_search`) judges afresh.
        if record.finished:
            game.settle_over(True)
            game.seal()
        else:
            game.defer_over()
        k = parse_game_id(game_id)
        race_id = k.race_id if isinstance(k, RaceGameKeys) else None
        # `record.day_end_ms`, from the keys parsed here (the property parses the id again)
        day_end_ms = day_end_of(record.kind, k)
        live = LiveGame(
            record,
            game,
            len(moves),
            record.last_move_at_ms,
            k.game,
            k.log,
            k.times,
            race_id,
            log=list(moves),
            times=[] if times is None else times,
            day_end_ms=day_end_ms,
        )
        self._cache[game_id] = live
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return live

    async def reviewed(self, live: LiveGame) -> LiveGame:
        """A held game's review read afresh (a reviewer may have cleared it since it was
        cached: `server.fairplay.review`); other games are returned as they are."""
        if live.record.flagged:
            stored = await self.store.get(live.record.game_id)
            live.record = replace(live.record, review=stored.review)
        return live

    def forget(self, game_id: str) -> None:
        self._cache.pop(game_id, None)

    async def refresh(self, live: LiveGame) -> LiveGame:
        """Reload a game whose cached state may be stale, keeping the lock object."""
        self.forget(live.record.game_id)
        fresh = await self._load(live.record.game_id)
        fresh.lock = live.lock
        return fresh

    # -- playing ------------------------------------------------------------------------------

    async def play(
        self,
        game_id: str,
        player_id: str,
        name: str,
        text: str,
        expected_seq: int | None,
        *,
        with_view: bool = False,
    ) -> Played:
        """Validate and persist one move (`undo` included); finish the game when it ends;
        tell the `on_played` listeners. ``with_view``: the reply carries the whole view.

        Raises IllegalMove (nothing changes), Conflict, GameOver, NotFound, StoreUnavailable.
        """
        played = await self._play(game_id, player_id, name, text, expected_seq)
        live = played.live
        if self._metrics is not None:
            self._metrics.moves.inc(live.record.variant)
        await self._published(live, finished=played.entry is not None)
        if with_view:
            played = replace(played, view=self.view(live))
        return played

    async def _published(self, live: LiveGame, *, finished: bool) -> None:
        """Count a game a player's write finished; tell the `on_played` listeners."""
        if finished and self._metrics is not None:
            self._metrics.games_finished.inc(live.record.variant)
        for listener in self.on_played:
            if (told := listener(live)) is not None:
                await told

    def view(self, live: LiveGame) -> dict[str, object]:
        """The game's whole view (what its player sees), its engine time counted."""
        started = time.perf_counter()
        view = json_map(self.told(live))
        self.count_engine(live.record.variant, time.perf_counter() - started)
        return view

    @staticmethod
    def told(live: LiveGame) -> View:
        """The engine's view of `live` as a player is told it: ``over`` only once the game
        is finished (``over`` never true while ``finished`` is false, docs/protocol.md).

        A game-over search that ends after its move's reply (`_judge`) records its verdict
        in the engine at once, but the game is finished (its result durable in Redis, then
        ``game.finished`` pushed) only once `_finish_over` has run: until then the position
        is shown as it was before the verdict (not over, undo and moves as they stand),
        never a game over that no result backs yet. The same during a move's own finish
        (its result is being written) for a `game.get` from the player's other window."""
        game = live.game
        if live.record.finished or game.over_state is not OverState.OVER:
            return game.view()
        game.defer_over()  # the view of the unjudged position: no await, nobody sees between
        try:
            return game.view()
        finally:
            game.settle_over(True)

    async def _play(
        self, game_id: str, player_id: str, name: str, text: str, expected_seq: int | None
    ) -> Played:
        live = self._cached(game_id, player_id) or await self.get(game_id, player_id)
        async with live.lock:
            if live.stale:
                live = await self.refresh(live)
            for attempt in range(2):
                if self.day_over(live):  # (checked first: `_check_day` is a coroutine)
                    live = await self._check_day(live, name)
                if live.record.finished:
                    raise GameOver("the game is over")
                if expected_seq is not None and expected_seq != live.seq:
                    if attempt == 0:  # another process may have moved on: check Redis
                        live = await self.refresh(live)
                        continue
                    raise Conflict(
                        f"the game is at move {live.seq}, not {expected_seq}", current_seq=live.seq
                    )
                try:
                    return await self._play_locked(live, name, text)
                except IllegalMove:
                    # Without `expected_seq` the player means the game as it is now: a copy
                    # cached here may be behind one another process moved on (both windows
                    # of one player). Illegal there too, or no newer state: the error stands.
                    if (
                        expected_seq is not None
                        or attempt == 1
                        or await self.store.length(live.log_key) == live.seq
                    ):
                        raise
                    live = await self.refresh(live)
                except Conflict as exc:
                    if isinstance(exc, GameOver) or attempt == 1:
                        self.forget(game_id)
                        if isinstance(exc, DayOver):  # another process's clock closed it
                            await self._close_refused(game_id, player_id, name)
                        raise
                    live = await self.refresh(live)
            raise AssertionError("unreachable")

    # -- the day's end ------------------------------------------------------------------------

    def day_over(self, live: LiveGame) -> bool:
        """True when `live` is a daily game whose UTC day is over, by this process's clock or
        because it was closed at its day's end (by any process)."""
        if not live.day_end_ms:
            return False
        r = live.record.result
        return self.clock.now_ms() >= live.day_end_ms or (r is not None and r.rollover)

    async def _check_day(self, live: LiveGame, name: str) -> LiveGame:
        """Refuse a write to a daily game whose day is over (`DayOver`), closing it first as
        it stands if nobody has yet (the caller holds its lock)."""
        if not self.day_over(live):
            return live
        if not live.record.finished:
            try:
                await self._close_day_locked(live, name)
            except Conflict as exc:
                if isinstance(exc, GameOver):
                    raise
                # Changed elsewhere since this copy (a move, a hint counted on another
                # process): close the game as Redis holds it.
                live = await self.refresh(live)
                if not live.record.finished:
                    await self._close_day_locked(live, name)
        raise DayOver(DAY_OVER_MESSAGE)

    async def ensure_day_open(self, live: LiveGame, name: str) -> None:
        """Raise `DayOver` (closing the game first) when `live`'s day is over."""
        if self.day_over(live):
            async with live.lock:
                await self._check_day(live, name)

    async def _close_refused(self, game_id: str, player_id: str, name: str) -> None:
        """After the store refused a write for the day: close the game now (best effort; the
        rollover sweep does it otherwise)."""
        try:
            await self.close_day(game_id, player_id, name)
        except (Conflict, StoreUnavailable, NotFound):
            log.info("closing %s at its day's end is left to the sweep", game_id)

    async def close_day(self, game_id: str, player_id: str, name: str) -> LiveGame:
        """Close a daily game whose day is over as it stands (docs/fairplay.md): the
        rollover result, once, whatever process does it. Returns the game (finished)."""
        for _attempt in range(3):
            live = await self.get(game_id, player_id)
            async with live.lock:
                if live.stale:
                    live = await self.refresh(live)
                if live.record.finished:
                    return live
                try:
                    await self._close_day_locked(live, name)
                except Conflict as exc:
                    if isinstance(exc, GameOver):
                        raise
                    self.forget(game_id)  # and again (no `continue` here: mypyc)
                else:
                    return live
        raise Conflict("the game kept changing while it was being closed")

    async def _close_day_locked(self, live: LiveGame, name: str) -> None:
        """Finish `live` with its rollover result: a loss for the win-goal games (a game
        won would be finished already), the score as it stands for the scoring ones, the
        time up to the day's end (its clock ran until then), as of the day's end."""
        end = live.day_end_ms
        if live.judging is not None:  # a pending verdict speaks for a position now closed
            live.judging.cancel()
        game = live.game
        hints = live.record.hints
        result = FinalResult(
            won=game.won,
            over=True,
            resigned=False,
            cleared=game.cleared,
            score=game.score,
            points=game.points,
            time_ms=max(0, end - live.record.started_at_ms) + hints * self.hint_penalty_ms,
            moves=game.moves,
            hints=hints,
            rollover=True,
        )
        try:
            record, _ = await self.store.finish(
                live.record.game_id, result, name, end, None, live.seq, rollover=True
            )
        except (Conflict, StoreUnavailable):
            self.forget(live.record.game_id)
            raise
        self._sealed(live, record)

    def _race_time_up(self, record: GameRecord, now: int) -> bool:
        """Whether a race game takes no more moves at ``now``: from its race's ``ends_at``,
        written with the game (a process's own ``race_time_limit_ms`` may differ while a
        rolling restart changes the flag: cheater review F-J); for a game written before it
        was, from this process's limit."""
        if record.ends_at_ms is not None:
            return now >= record.ends_at_ms
        limit = self.race_time_limit_ms
        return limit > 0 and now >= record.started_at_ms + limit

    async def _play_locked(self, live: LiveGame, name: str, text: str) -> Played:
        game = live.game
        now = self.clock.now_ms()  # the move's time (one clock read a move)
        if now < live.record.started_at_ms:
            raise NotStarted("the race has not started yet")
        if live.record.kind == "race" and self._race_time_up(live.record, now):
            raise GameOver("the race's time is up")
        started = time.perf_counter()
        try:
            outcome = game.play(text)  # the engine's one reading of a log line (`undo` too)
            stored = outcome.move
            search = self.over_search(game)
            over = search.step(OVER_INLINE_NODES)
            if over is None:  # a long search: the move does not wait for it (`_judge`)
                game.defer_over()
            events = outcome.events()
        finally:
            self.count_engine(live.record.variant, time.perf_counter() - started)
        try:
            if over:
                result = self._result(live, game, resigned=False, last_move_at=now)
                record, entry = await self.store.finish(
                    live.record.game_id,
                    result,
                    name,
                    now,
                    stored,
                    live.seq,
                    played=live.played(),
                )
                self._sealed(live, record)
                live.seq += 1
                live.logged(stored, now)
                return Played(live, stored, events, entry)
            live.seq = await self._append(live, stored, now)
            live.logged(stored, now)
            if outcome.undo:
                live.undone_at = live.seq
            if over is None and live.judging is None:
                live.judging = asyncio.create_task(self._judge(live, search, live.seq, name))
                self._searches.add(live.judging)  # a reference until done (asyncio keeps none)
                live.judging.add_done_callback(self._searches.discard)
            return Played(live, stored, events, None)
        except BaseException:
            live.stale = True  # the engine moved on but Redis did not: rebuild before next use
            self.forget(live.record.game_id)
            raise

    async def _append(self, live: LiveGame, stored: str, now: int) -> int:
        """Append the move; the `on_append` riders' commands in the same batch, right behind
        it. The append's outcome decides the move (its error first)."""
        append = self.store.append(
            live.game_key, live.log_key, live.times_key, live.seq, stored, now, live.day_end_ms
        )
        riders = [
            r for ride in self.on_append if (r := ride(live, live.seq + 1, stored)) is not None
        ]
        if not riders:
            return await append
        # Tasks started in this order run their first steps in this order in the next
        # iteration: the append's command is queued, then each rider's, before the batch goes.
        seq, *rode = await asyncio.gather(append, *riders, return_exceptions=True)
        for outcome in (seq, *rode):
            if isinstance(outcome, BaseException):
                raise outcome
        return cast(int, seq)

    async def _judge(self, live: LiveGame, search: OverStepper, seq: int, name: str) -> None:
        """Finish a game-over search after its move was acknowledged, in slices between which
        other connections run; end the game if it is over.

        One search per game at a time. A position with no progress reachable makes every
        position reachable from it dead too, so a verdict "over" about the position at `seq`
        holds for the current one unless an undo went back past it; a verdict "not over" about
        an earlier position says nothing about now, so the current position is searched next.

        Searches run on the event loop one at a time per process, for `OVER_LOOP_NODES`
        positions at most; what is left goes to a search worker process, which runs it to the
        end with no budget (a few Triple Easthaven positions have shuttle spaces of hundreds
        of thousands of positions, tens of seconds of CPU). Should a worker fail (out of
        memory, killed), the game stays open and the player may finish it; a later move's
        search decides again.
        """
        try:
            while True:
                async with self._search_slot:
                    over = await self._run(live, search)
                if over is None:
                    over = await self._offload(live, search)
                async with live.lock:
                    if (
                        live.record.finished
                        or live.stale
                        or self._cache.get(live.record.game_id) is not live
                    ):
                        return
                    current = live.seq == seq
                    if over and (current or live.undone_at <= seq):
                        live.game.settle_over(True)
                        await self._finish_over(live, name)
                        return
                    if current:
                        live.game.settle_over(over)
                        return
                    search, seq = self.over_search(live.game), live.seq
        except DayOver:  # its day ended meanwhile: the game is closed as it stood instead
            log.info("game-over search of %s outlived its day", live.record.game_id)
        except Exception:
            log.exception("game-over search of %s failed", live.record.game_id)
        finally:
            live.judging = None

    async def _run(self, live: LiveGame, search: OverStepper) -> bool | None:
        """The search's verdict, or None when it is left for a worker (`OVER_LOOP_NODES`;
        without workers it runs here to its end)."""
        nodes = 0
        while self._solvers is None or nodes < self.over_loop_nodes:
            await asyncio.sleep(0)
            started = time.perf_counter()
            verdict = search.step(OVER_SLICE_NODES)
            self.count_engine(live.record.variant, time.perf_counter() - started)
            if verdict is not None:
                return verdict
            nodes += OVER_SLICE_NODES
        return None

    async def _offload(self, live: LiveGame, search: OverStepper) -> bool:
        """Run the rest of a search in a worker to its end; its CPU counts as engine time."""
        assert self._solvers is not None
        log.info(
            "game-over search of %s handed to a worker after %d positions",
            live.record.game_id,
            self.over_loop_nodes,
        )
        started = time.perf_counter()
        over, cpu = await self._solvers.run(settle_over, search.task())
        self.count_engine(live.record.variant, cpu)
        log.info(
            "game-over search of %s: %s after %.1f s in a worker",
            live.record.game_id,
            "over" if over else "not over",
            time.perf_counter() - started,
        )
        return bool(over)

    async def aclose(self) -> None:
        """Stop the game-over searches still running (shutdown) and their worker; their games
        stay open."""
        for task in list(self._searches):
            task.cancel()
        await asyncio.gather(*self._searches, return_exceptions=True)
        if self._solvers is not None:
            self._solvers.close()

    async def _finish_over(self, live: LiveGame, name: str) -> None:
        """End a game found over after its last move: as of that move's time."""
        result = self._result(live, live.game, resigned=False, last_move_at=live.last_move_at_ms)
        try:
            record, entry = await self.store.finish(
                live.record.game_id,
                result,
                name,
                self.clock.now_ms(),
                None,
                live.seq,
                played=live.played(),
            )
        except StoreUnavailable:  # maybe finished in Redis: the next load completes it
            self.forget(live.record.game_id)
            raise
        self._sealed(live, record)
        if self._metrics is not None:
            self._metrics.games_finished.inc(live.record.variant)
        for played in self.on_played:  # a race hears of its racer's game ending
            if (told := played(live)) is not None:
                await told
        for listener in self.on_finished:
            await listener(live, entry)

    def count_engine(self, variant: str, seconds: float) -> None:
        """Add time spent in the engine on a game of `variant` to the per-variant counter."""
        if self._metrics is not None:
            self._metrics.engine_cpu.inc(variant, seconds)

    async def resign(self, game_id: str, player_id: str, name: str) -> tuple[LiveGame, Entry]:
        """End the game now, as it stands; the result goes on the leaderboard once; tell the
        `on_played` listeners.

        A copy cached here may be behind the game another process moved on: the resign is
        then made on the stored game (never refused for this process's staleness)."""
        live, entry = await self._resign(game_id, player_id, name)
        await self._published(live, finished=True)
        return live, entry

    async def finish(self, game_id: str, player_id: str, name: str) -> tuple[LiveGame, Entry]:
        """A player ends a scoring game as it stands (finished, not resigned: RULINGS.md);
        tell the `on_played` listeners. Conflict for a game of another variant."""
        live = await self.get(game_id, player_id)
        if not variant_of(live.record.variant).scored:
            raise Conflict(
                f"only the scoring games ({', '.join(SCORED_VARIANTS)}) are finished; "
                "resign this one"
            )
        await self.ensure_day_open(live, name)
        if live.record.finished:
            raise GameOver("the game is over")
        live, entry = await self.close(game_id, player_id, name, resigned=False)
        await self._published(live, finished=True)
        return live, entry

    async def _resign(self, game_id: str, player_id: str, name: str) -> tuple[LiveGame, Entry]:
        live = await self.get(game_id, player_id)
        async with live.lock:
            for attempt in range(2):
                if live.stale:
                    live = await self.refresh(live)
                live = await self._check_day(live, name)
                if live.record.finished:
                    raise GameOver("the game is over")
                result = self._result(
                    live, live.game, resigned=True, last_move_at=live.last_move_at_ms
                )
                try:
                    record, entry = await self.store.finish(
                        game_id,
                        result,
                        name,
                        self.clock.now_ms(),
                        None,
                        live.seq,
                        played=live.played(),
                    )
                except Conflict as exc:
                    if isinstance(exc, GameOver) or attempt == 1:
                        self.forget(game_id)
                        if isinstance(exc, DayOver):  # another process's clock closed it
                            await self._close_refused(game_id, player_id, name)
                        raise
                    live = await self.refresh(live)  # moved on elsewhere: resign that game
                    continue
                except StoreUnavailable:  # maybe finished in Redis: reload next time
                    self.forget(game_id)
                    raise
                self._sealed(live, record)
                return live, entry
            raise AssertionError("unreachable")

    async def close(
        self, game_id: str, player_id: str, name: str, *, resigned: bool
    ) -> tuple[LiveGame, Entry]:
        """Finish the game as it stands unless it already is (a race ending); exactly once."""
        for _attempt in range(3):
            live = await self.get(game_id, player_id)
            async with live.lock:
                if live.stale or live.record.finished:
                    live = await self.refresh(live)
                live = await self._check_day(live, name)
                result = self._result(
                    live,
                    live.game,
                    resigned=resigned and not live.record.finished,
                    last_move_at=live.last_move_at_ms,
                )
                try:
                    record, entry = await self.store.finish(
                        game_id,
                        result,
                        name,
                        self.clock.now_ms(),
                        None,
                        live.seq,
                        played=live.played(),
                    )
                except Conflict as exc:
                    if isinstance(exc, GameOver):
                        if isinstance(exc, DayOver):
                            self.forget(game_id)
                            await self._close_refused(game_id, player_id, name)
                        raise
                    self.forget(game_id)  # and again (no `continue` here: mypyc)
                except StoreUnavailable:  # maybe finished in Redis: reload next time
                    self.forget(game_id)
                    raise
                else:
                    self._sealed(live, record)
                    return live, entry
        raise Conflict("the game kept changing while it was being closed")

    def _sealed(self, live: LiveGame, record: GameRecord) -> None:
        """Store the finished record; the engine forgets its undo snapshots (`Game.seal`): a
        finished game stays cached for its views, but at a few objects instead of a few per
        move, which the garbage collector's full passes would walk again and again. A result
        the fair-play screen held is counted (`solitaire_results_held`)."""
        if record.flagged and not live.record.finished and self._metrics is not None:
            self._metrics.results_held.inc(record.variant)
        live.record = record
        # A finished game is over, here as on a process that rebuilds it from Redis
        # (`_build`): the same view on every process (the chaos test compares them).
        live.game.settle_over(True)
        live.game.seal()

    async def add_hint(self, live: LiveGame, name: str, seq: int) -> int:
        """Count a hint searched at ``seq`` moves on the game; each adds the hint penalty
        to its final time. Refused (`DayOver`) once a daily game's day is over, and
        (`Conflict`) when the game moved on meanwhile, here or on another process: the hint
        is then not given, nor counted."""
        async with live.lock:
            live = await self._check_day(live, name)
        try:
            n = await self.store.add_hint(live.record.game_id, self.clock.now_ms(), seq)
        except DayOver:
            self.forget(live.record.game_id)
            await self._close_refused(live.record.game_id, live.record.player_id, name)
            raise
        except Conflict:
            live.stale = True  # the next request rebuilds it from Redis
            raise
        live.record = replace(live.record, hints=n)
        # The copy the hint started from may have been replaced meanwhile (a refresh for
        # another connection's request): the cached one counts it too.
        cached = self._cache.get(live.record.game_id)
        if cached is not None and cached is not live and cached.record.hints < n:
            cached.record = replace(cached.record, hints=n)
        return n

    def _result(
        self, live: LiveGame, game: Game, *, resigned: bool, last_move_at: int
    ) -> FinalResult:
        hints = live.record.hints
        return FinalResult(
            won=game.won,
            over=game.over or resigned,
            resigned=resigned,
            cleared=game.cleared,
            score=game.score,
            points=game.points,
            time_ms=max(0, last_move_at - live.record.started_at_ms) + hints * self.hint_penalty_ms,
            moves=game.moves,
            hints=hints,
        )


__all__ = [
    "SCORED_VARIANTS",
    "AppendRider",
    "FinishedListener",
    "GameService",
    "IllegalMove",
    "LiveGame",
    "Played",
    "PlayedListener",
]
