"""The referee of running races: progress, deadlines (time limit, grace), forfeits, the end.

Racers' games are ordinary stored games (`r.<race>.<player>`) played through `GameService`;
the referee publishes each racer's progress and decides when a race ends. Every decision is
a guarded Redis transition, so any server process may take it and only one does.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable

import protocol.races as pr
from server.boards.leaderboard import BoardRef, Leaderboard
from server.games.service import GameService, LiveGame
from server.races.model import Progress, RaceResult, RaceState, RaceStatus, RaceSummary
from server.races.ratings import RaceBoards
from server.races.service import UNDEALT_MS, RaceSettings, claim_pairs
from server.races.store import RaceStore
from server.redis import keys
from server.runtime.clock import Clock
from server.runtime.errors import GameOver, NotFound

log = logging.getLogger(__name__)

#: A race whose end began this long ago and is still `finishing` was left so by a process that
#: stopped: the next tick anywhere takes its end over (ending takes well under a second).
FINISHING_STALE_MS = 15_000
_DEFAULTS = RaceSettings()
#: Marks of `ride` kept at most (one per game, taken by the move's `on_played`).
TOLD_MAX = 10_000


def progress_of(live: LiveGame, *, forfeited: bool = False) -> Progress:
    """What opponents may know about a racer's game: counts and flags, never a card. A game
    closed because its racer `forfeited` is closed as resigned, but is no resignation."""
    game = live.game
    return Progress(
        cleared=game.cleared,
        score=game.score,
        moves=game.moves,
        finished=live.record.finished,
        won=game.won,
        stuck=game.over and not game.won,
        resigned=resigned(live) and not forfeited,
    )


def resigned(live: LiveGame) -> bool:
    """The racer gave the game up (`resign`, or closed as resigned by a forfeit)."""
    result = live.record.result
    return result is not None and result.resigned


class RaceReferee:
    def __init__(
        self,
        store: RaceStore,
        games: GameService,
        leaderboard: Leaderboard,
        boards: RaceBoards,
        clock: Clock,
        grace_ms: int,
        *,
        countdown_ms: int = _DEFAULTS.countdown_ms,
        time_limit_ms: int = _DEFAULTS.time_limit_ms,
    ) -> None:
        self.store = store
        self.games = games
        self.leaderboard = leaderboard
        self.boards = boards
        self.clock = clock
        self.grace_ms = grace_ms
        #: The race timings a matched race gets when a tick deals it (`_deal`).
        self.countdown_ms = countdown_ms
        self.time_limit_ms = time_limit_ms
        #: game id -> the seq whose progress `ride` recorded, until `on_played` of that move.
        self._told: dict[str, int] = {}

    # -- during the race ----------------------------------------------------------------------

    def ride(self, live: LiveGame, seq: int, move: str) -> Awaitable[None] | None:
        """A racer's move about to be appended (`GameService.on_append`): its progress, sent
        in the append's batch (one round trip), recorded only if the append stores it
        (`RaceStore.record_move_progress`). None for a daily game."""
        if live.race_id is None:
            return None
        return self._ride(live.race_id, live, seq, move)

    async def _ride(self, race_id: str, live: LiveGame, seq: int, move: str) -> None:
        pid = live.record.player_id
        progress = progress_of(live)  # as after the append: it changes no engine state
        game = (live.game_key, live.log_key)
        if await self.store.record_move_progress(race_id, pid, progress, game, seq, move):
            if len(self._told) >= TOLD_MAX:  # only a refused append leaves one behind
                self._told.clear()
            self._told[live.record.game_id] = seq

    async def on_played(self, race_id: str, live: LiveGame) -> None:
        """After a racer's move (or resign): publish progress, end the race when decided.
        A move whose progress rode in its append's batch (`ride`) is not recorded twice; one
        whose rider recorded nothing (its script ran before a reloaded append) is, here."""
        pid = live.record.player_id
        progress = progress_of(live)
        if self._told.pop(live.record.game_id, None) != live.seq:
            await self.store.record_progress(race_id, pid, progress)
        if progress.won:
            await self.end(race_id, reason="won")
        elif progress.done:
            race = await self.store.load(race_id)
            if race.all_done():
                await self.end(race_id, reason="all finished")

    async def due(self, now_ms: int) -> list[str]:
        """Races whose next deadline has passed (whether or not anyone here races in them)."""
        return await self.store.due(now_ms)

    async def tick(self, race_id: str) -> None:
        """Enforce the race's clocks: the time limit and the disconnect grace period. A race
        in the deadline index in any other state is settled too: one gone or finished leaves
        the index (an end cut short is completed), a match still undealt at its start time
        (its process stopped while making it) is dealt and announced here, a room still open
        (its start was cut short, or is under way) is looked at again later, and one left
        `finishing` is taken over."""
        now = self.clock.now_ms()
        try:
            race = await self.store.load(race_id)
        except NotFound:
            await self.store.set_active(race_id, None)
            return
        if race.status is RaceStatus.FINISHED:  # also completes an end cut short
            await self.store.release(race.pids(), race_id)
            if race.code:
                await self.store.free_code(race.code, race_id)
            await self.store.set_active(race_id, None)
            return
        if race.status is RaceStatus.OPEN:
            if race.creator is None and now - race.created_at > UNDEALT_MS:
                await self.store.set_active(race_id, None)  # a match never dealt: abandoned
            elif race.creator is None:
                await self._deal(race, now)
            else:
                await self.store.set_active(race_id, now + UNDEALT_MS)
            return
        if race.status is RaceStatus.FINISHING:
            await self._take_over(race, now)
            return
        if race.start_at is None or race.ends_at is None:  # never written so by a start
            log.warning("race %s: running without a clock", race_id)
            await self.store.set_active(race_id, None)
            return
        if now >= race.ends_at:
            await self.end(race_id, reason="time limit")
            return
        if now < race.start_at:  # a start's index write of another process, a bit early
            await self.store.set_active(race_id, race.start_at)
            return
        gone = [
            pid
            for pid in race.pids()
            if pid not in race.forfeited
            and not race.progress_of(pid).finished
            and not race.present(pid, now)
            and now - race.seen.get(pid, race.start_at) > self.grace_ms
        ]
        for pid in gone:
            await self.forfeit(race, pid, now)
        if gone:  # reloaded after our forfeits: whoever forfeits last sees them all
            race = await self.store.load(race_id)
            if race.status is RaceStatus.RUNNING and (
                race.all_done() or len(race.racers) - len(race.forfeited) <= 1
            ):
                await self.end(race_id, reason="forfeit")
                return
        await self.store.set_active(race_id, self.next_check(race, now))

    async def _deal(self, race: RaceState, now: int) -> None:
        """Deal a race the queue matched whose process stopped before dealing it (its index
        entry, written first, came due at its start time): started and announced to its
        racers in one step (`RaceStore.begin`), as that process would have. Two processes
        doing it at once (or the maker, slow but alive) start it once."""
        start_at = now + self.countdown_ms
        ends_at = start_at + self.time_limit_ms
        await self.store.set_racing(race.pids(), race.race_id)  # made: clear the marks
        if await self.store.begin(
            race.race_id,
            start_at,
            ends_at,
            retention_days=self.games.store.retention_days,
            announce=True,
        ):
            log.warning("race %s: dealt a match its process left undealt", race.race_id)
            await claim_pairs(
                self.boards, race.variant, race.race_id, race.pids(), race.same_network
            )
            await self.store.set_active(race.race_id, start_at)
        else:  # started meanwhile by another: looked at again from its start on
            await self.store.set_active(race.race_id, start_at, only_earlier=True)

    def next_check(self, race: RaceState, now: int) -> int:
        """When to look at a running race again: its time limit, or sooner when a racer may
        forfeit before it. A race whose racers all left together is ticked by no process's
        clock (none holds a connection of it) but by this deadline index alone, so a grace
        that runs out must be in it (issue #25: such a race ran until its time limit)."""
        assert race.ends_at is not None
        due = race.ends_at
        for pid in race.pids():
            if pid in race.forfeited or race.progress_of(pid).finished:
                continue
            # Gone: the grace runs from the last mark. Present: it cannot start before the
            # presence lapses; look again then (a racer who stays is looked at once a grace).
            last = race.seen.get(pid, race.start_at or now)
            if race.present(pid, now):
                last = max(last, race.present_until.get(pid, now))
            due = min(due, max(last + self.grace_ms + 1, now + 1))
        return due

    async def forfeit(self, race: RaceState, pid: str, now_ms: int) -> bool:
        """The racer loses by default when gone beyond the grace and connected to no process
        (decided and announced atomically in Redis, once); their game is closed as resigned."""
        if not await self.store.forfeit_if_gone(race.race_id, pid, now_ms, self.grace_ms):
            return False
        try:
            live, _ = await self.games.close(
                keys.race_game_id(race.race_id, pid), pid, race.names().get(pid, "?"), resigned=True
            )
            await self.store.set_progress(race.race_id, pid, progress_of(live, forfeited=True))
        except (GameOver, NotFound):
            pass
        await self.games.store.history.add_forfeit(pid, race.variant)  # for the profile
        return True

    # -- the end ------------------------------------------------------------------------------

    async def end(self, race_id: str, reason: str) -> None:
        """Close every racer's game, rank them, rate them: once, whoever gets here first."""
        now = self.clock.now_ms()
        # The deadline index first (another slot): if this process stops while the race is
        # `finishing`, a tick anywhere takes the end over soon, not at the time limit.
        await self.store.set_active(race_id, now + FINISHING_STALE_MS, only_earlier=True)
        if not await self.store.start_finishing(race_id, now, reason):
            return
        await self._complete(race_id, reason, now)

    async def _take_over(self, race: RaceState, now: int) -> None:
        """Complete the end of a race left `finishing` by a process that stopped: one taker
        (a compare-and-set on `finished_at`), after `FINISHING_STALE_MS`."""
        began = race.finished_at if race.finished_at is not None else now
        if now - began < FINISHING_STALE_MS:
            await self.store.set_active(race.race_id, began + FINISHING_STALE_MS)
            return
        if not await self.store.take_over_finishing(race.race_id, began, now):
            return
        log.warning("race %s: taking over an end left unfinished since %d", race.race_id, began)
        await self.store.set_active(race.race_id, now + FINISHING_STALE_MS)
        await self._complete(race.race_id, race.reason or "time limit", began)

    async def _complete(self, race_id: str, reason: str, finished_at: int) -> None:
        """The end of a `finishing` race; every step is idempotent, so a process taking over
        an end cut short repeats it whole: games already closed are read back, the ratings
        already applied are reported again, the win counts once."""
        race = await self.store.load(race_id)
        names = race.names()
        no_attempt: set[str] = set()
        held: set[str] = set()  # racers whose result the fair-play screen holds
        gave_up: set[str] = set()  # racers who resigned (a forfeit is not a resignation)
        timed_out = reason == "time limit"
        for pid, name in race.racers:
            live = await self._close(race, pid, name)
            if live is None:
                continue
            # Held by the screen, whatever a review said since: a `clear` before the race's
            # end rated the racer, one after it did not (review F1); an end taken over
            # after a crash must see what the first attempt saw.
            if live.record.held is not None:
                held.add(pid)
            if resigned(live) and pid not in race.forfeited:
                gave_up.add(pid)
            if not real_attempt(live, pid in race.forfeited, timed_out):
                no_attempt.add(pid)
        # Racers of one network (a main and its second accounts) are never rated against
        # each other: they keep their places, unrated (fairplay.md). A race every racer
        # forfeited is unrated: nobody played it out (cheater review F5).
        unrated = race.network_shared()
        board = BoardRef.race(race.variant, race_id)
        standings = await self.leaderboard.top(board, 0, len(race.racers))
        ordered = standing_order([e.player_id for e in standings], race.forfeited, no_attempt)
        places = {pid: i + 1 for i, pid in enumerate(ordered)}
        summary = RaceSummary(
            race_id=race_id, variant=race.variant, finished_at=finished_at, racers=len(places)
        )
        # A private room is casual: it has places, but no ratings and no wins (fairplay.md).
        # A racer who shares a network with another racer keeps their place but is not rated.
        rated_places = {pid: i + 1 for i, pid in enumerate(p for p in ordered if p not in unrated)}
        all_forfeited = set(names) <= set(race.forfeited)
        rated = race.creator is None and len(rated_places) >= 2 and not all_forfeited
        # A racer the screen holds keeps their place, but is rated as one who made no real
        # attempt: last, a loss, and nobody gains from them. Unrated, it was an escape from
        # any loss: a losing racer tripped the screen on purpose (a burst of moves and
        # undos), and with one racer left nobody was rated (cheater review F1).
        weightless = frozenset(no_attempt | held) & set(rated_places)
        outcome = await self.boards.rate(summary, rated_places, weightless) if rated else None
        changes = outcome.changes if outcome else {}
        by_pid = {e.player_id: e for e in standings}
        results = []
        for pid in ordered:
            e = by_pid[pid]
            change = changes.get(pid)
            results.append(
                RaceResult(
                    player_id=pid,
                    name=names.get(pid, e.name),
                    place=places[pid],
                    won=e.won,
                    cleared=e.cleared,
                    score=e.score,
                    time_ms=e.time_ms,
                    moves=e.moves,
                    forfeited=pid in race.forfeited,
                    rating=change[1] if change else None,
                    rating_change=change[1] - change[0] if change else None,
                    resigned=pid in gave_up,
                )
            )
        # A win counts when the race was rated (not casual, no pair repeated that day), the
        # winner was rated in it and beat a rated racer who really tried and is not
        # provisional (not of the winner's network: those are unrated). A held racer is
        # passed over: the best placed racer after them is rated the winner (review F-F:
        # their stats counted the win, the day's wins board did not).
        winner = next((p for p in ordered if p not in held), None)
        won = winner in rated_places and winner not in race.forfeited
        if outcome and changes and won and outcome.weighty - {winner}:
            assert winner is not None
            await self.boards.add_win(race.variant, keys.race_date(race_id), winner, race_id)
        ended = pr.RaceEnded(reason=reason, results=tuple(r.to_wire() for r in results))
        await self.store.finish(race_id, tuple(results), ended)
        await self.store.index_finished(race.variant, race_id, finished_at)
        # The racers' index and the deadline index live in other slots (Redis Cluster): freed
        # after the race's own atomic end, idempotently (`tick` completes an end cut short).
        await self.store.release(race.pids(), race_id)
        if race.code:  # a room's code is free once its race is over
            await self.store.free_code(race.code, race_id)
        await self.store.set_active(race_id, None)

    async def _close(self, race: RaceState, pid: str, name: str) -> LiveGame | None:
        """Close a racer's game (unless it is) and record its final progress either way; the
        closed game (None when there is none)."""
        gid = keys.race_game_id(race.race_id, pid)
        try:
            live, _ = await self.games.close(gid, pid, name, resigned=pid in race.forfeited)
        except GameOver:  # closed before, and its standing is gone: its record still tells
            try:
                live = await self.games.refresh(await self.games.get(gid, pid))
            except NotFound:
                log.warning("race %s: no game for %s", race.race_id, pid)
                return None
        except NotFound:
            log.warning("race %s: no game for %s", race.race_id, pid)
            return None
        forfeited = pid in race.forfeited
        await self.store.set_progress(race.race_id, pid, progress_of(live, forfeited=forfeited))
        return live


def standing_order(
    ranked: list[str], forfeited: frozenset[str] | set[str], no_attempt: frozenset[str] | set[str]
) -> list[str]:
    """The race's places from its board's order (`ranked`): the racers who made a real
    attempt, then those who resigned without one, then those who forfeited."""
    return (
        [p for p in ranked if p not in forfeited and p not in no_attempt]
        + [p for p in ranked if p not in forfeited and p in no_attempt]
        + [p for p in ranked if p in forfeited]
    )


def real_attempt(live: LiveGame, forfeited: bool, timed_out: bool) -> bool:
    """Whether the racer really played (docs/fairplay.md): cleared a card, or played the
    game until it was over (won or stuck) or until the race's time limit (`timed_out`) without
    resigning or forfeiting. Draws and undos alone are no attempt, however many: a racer who
    resigns after five stock draws, or stays idle until another wins, gives nobody points."""
    result = live.record.result
    if live.game.cleared > 0 or live.game.won:
        return True
    if forfeited or (result is not None and result.resigned):
        return False
    # A finished game counts as over (`GameService._sealed`): the result says whether the
    # engine found it over when it ended (stuck), rather than closed by the race.
    return timed_out or (result is not None and result.over)
