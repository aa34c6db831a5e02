"""Race mode: matchmaking, rooms, the start, live progress, the end and the results.

Racers' games are ordinary stored games (`r.<race>.<player>`) played through `GameService`,
the code path of daily games. This module decides when a race starts and ends; every
decision is a guarded Redis transition, so any server process may take it and only one does.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import secrets
from dataclasses import dataclass
from typing import Any

from engine import VARIANT_IDS

from . import keys
from .clock import Clock
from .errors import Conflict, GameOver, NotFound
from .games import GameService, LiveGame
from .leaderboard import BoardRef, Leaderboard
from .players import PlayerRegistry
from .racestore import RaceState, RaceStore, new_race_id
from .ratings import RaceBoards

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RaceSettings:
    countdown_ms: int = 3_000
    time_limit_ms: int = 600_000
    grace_ms: int = 30_000
    fill_wait_ms: int = 15_000


def progress_of(live: LiveGame) -> dict[str, Any]:
    """What opponents may know about a racer's game: counts and flags, never a card."""
    game = live.game
    return {"cleared": game.cleared, "score": game.score, "moves": game.moves,
            "finished": live.record.finished, "won": game.won,
            "stuck": game.over and not game.won}


class RaceService:
    def __init__(self, store: RaceStore, games: GameService, boards: RaceBoards,
                 leaderboard: Leaderboard, players: PlayerRegistry, clock: Clock,
                 settings: RaceSettings) -> None:
        self.players = players
        self.store = store
        self.games = games
        self.boards = boards
        self.leaderboard = leaderboard
        self.clock = clock
        self.settings = settings

    # -- matchmaking and rooms ----------------------------------------------------------------

    async def queue(self, pid: str, name: str, variant: str, size: int) -> tuple[int, str | None]:
        """Wait for opponents; returns (players waiting, race id when matched at once)."""
        now = self.clock.now_ms()
        waiting, matched = await self.store.enqueue(pid, variant, size, now,
                                                    self.settings.fill_wait_ms)
        if not matched:
            return waiting, None
        return 0, await self._start_matched(variant, size, matched)

    async def try_match(self, variant: str, size: int) -> str | None:
        """Start a group whose fill wait has run out (called periodically)."""
        _, matched = await self.store.enqueue("", variant, size, self.clock.now_ms(),
                                              self.settings.fill_wait_ms)
        return await self._start_matched(variant, size, matched) if matched else None

    async def _start_matched(self, variant: str, size: int, pids: list[str]) -> str:
        names = await self.games_names(pids)
        race_id = new_race_id(self.clock.now_ms())
        await self.store.create(race_id, variant, size, _seed(), self.clock.now_ms(),
                                [(p, names.get(p, "?")) for p in pids])
        await self.store.set_racing(pids, race_id)
        await self._begin(race_id, "open")
        for pid in pids:  # wherever each player is connected, their server attaches them
            await self.store.r.publish(keys.player_channel(pid), f"matched {race_id}")
        return race_id

    async def games_names(self, pids: list[str]) -> dict[str, str]:
        return await self.players.names(pids)

    async def leave(self, pid: str) -> bool:
        """Leave the queue or an open room."""
        left = await self.store.unqueue(pid, VARIANT_IDS)
        race_id = await self.store.racing(pid)
        if race_id:
            try:
                race = await self.store.load(race_id)
            except NotFound:
                await self.store.set_racing([pid], None)
                return left
            if race.status == "open":
                outcome = await self.store.leave_room(race_id, pid)
                if outcome:
                    freed = [p for p, _ in race.racers] if outcome == 2 else [pid]
                    await self.store.set_racing(freed, None)
                    await self.store.emit(race_id, {"kind": "left", "player_id": pid,
                                                    "closed": outcome == 2})
                    return True
        return left

    async def create_room(self, pid: str, name: str, variant: str, size: int) -> str:
        await self._ensure_free(pid)
        race_id = new_race_id(self.clock.now_ms())
        code = await self.store.claim_code(race_id)
        await self.store.create(race_id, variant, size, _seed(), self.clock.now_ms(),
                                [(pid, name)], creator=pid, code=code)
        await self.store.set_racing([pid], race_id)
        return race_id

    async def join_room(self, pid: str, name: str, code: str) -> str:
        race_id = await self.store.race_for_code(code)
        current = await self.store.racing(pid)
        if current == race_id:
            return race_id
        await self._ensure_free(pid)
        await self.store.join(race_id, pid, name)
        await self.store.set_racing([pid], race_id)
        await self.store.emit(race_id, {"kind": "joined", "player_id": pid, "name": name})
        return race_id

    async def start_room(self, pid: str, race_id: str) -> None:
        race = await self.store.load(race_id)
        if race.creator != pid:
            raise Conflict("only the room's creator can start it")
        if race.status != "open":
            raise Conflict("the race has already started")
        if len(race.racers) < 2:
            raise Conflict("a race needs at least two racers")
        if not await self._begin(race_id, "open"):
            raise Conflict("the race has already started")

    async def _ensure_free(self, pid: str) -> None:
        if await self.store.queued_as(pid):
            raise Conflict("leave the race queue first")
        current = await self.store.racing(pid)
        if current:
            try:
                race = await self.store.load(current)
            except NotFound:
                await self.store.set_racing([pid], None)
                return
            if race.status != "finished":
                raise Conflict(f"already in race {current}")
            await self.store.set_racing([pid], None)

    async def _begin(self, race_id: str, from_status: str) -> bool:
        """Deal the race: everyone's game starts at the same server time after a countdown."""
        now = self.clock.now_ms()
        start_at = now + self.settings.countdown_ms
        ends_at = start_at + self.settings.time_limit_ms
        if not await self.store.transition(race_id, from_status, status="running",
                                           start_at=start_at, ends_at=ends_at):
            return False
        race = await self.store.load(race_id)
        for pid, _ in race.racers:
            await self.games.store.start_game(keys.race_game_id(race_id, pid), "race",
                                              race.variant, race.seed, start_at)
        await self.store.touch(race_id, [p for p, _ in race.racers], start_at)
        await self.store.set_active(race_id, start_at)
        await self.store.emit(race_id, {"kind": "countdown", "start_at": start_at,
                                        "ends_at": ends_at})
        return True

    # -- during the race ----------------------------------------------------------------------

    async def on_played(self, live: LiveGame) -> None:
        """After a racer's move (or resign): publish progress, end the race when decided."""
        race_id = live.record.game_id.split(".")[1]
        pid = live.record.player_id
        progress = progress_of(live)
        await self.store.set_progress(race_id, pid, progress)
        await self.store.emit(race_id, {"kind": "progress", "player_id": pid, **progress})
        if progress["won"]:
            await self.end(race_id, reason="won")
        elif progress["finished"] or progress["stuck"]:
            race = await self.store.load(race_id)
            if self._all_done(race):
                await self.end(race_id, reason="all finished")

    @staticmethod
    def _all_done(race: RaceState) -> bool:
        return all(race.progress.get(p, {}).get("finished") or
                   race.progress.get(p, {}).get("stuck") or p in race.forfeited
                   for p, _ in race.racers)

    async def tick(self, race_id: str) -> None:
        """Enforce the race's clocks: the time limit and the disconnect grace period."""
        race = await self.store.load(race_id)
        if race.status != "running" or race.start_at is None or race.ends_at is None:
            if race.status == "finished":
                await self.store.set_active(race_id, None)
            return
        now = self.clock.now_ms()
        if now >= race.ends_at:
            await self.end(race_id, reason="time limit")
            return
        if now < race.start_at:
            return
        forfeits = [pid for pid, _ in race.racers
                    if pid not in race.forfeited
                    and not race.progress.get(pid, {}).get("finished")
                    and now - race.seen.get(pid, race.start_at) > self.settings.grace_ms]
        for pid in forfeits:
            await self.forfeit(race, pid)
        if forfeits:
            race = await self.store.load(race_id)
            if self._all_done(race) or len(race.racers) - len(race.forfeited) <= 1:
                await self.end(race_id, reason="forfeit")
                return
        await self.store.set_active(race_id, race.ends_at)

    async def forfeit(self, race: RaceState, pid: str) -> None:
        await self.store.add_forfeit(race.race_id, pid, race.forfeited)
        race.forfeited.add(pid)
        try:
            live, _ = await self.games.close(keys.race_game_id(race.race_id, pid), pid,
                                             race.names().get(pid, "?"), resigned=True)
            await self.store.set_progress(race.race_id, pid, progress_of(live))
        except (GameOver, NotFound):
            pass
        await self.store.emit(race.race_id, {"kind": "forfeit", "player_id": pid})

    # -- the end ------------------------------------------------------------------------------

    async def end(self, race_id: str, reason: str) -> None:
        """Close every racer's game, rank them, rate them: once, whoever gets here first."""
        now = self.clock.now_ms()
        if not await self.store.transition(race_id, "running", status="finishing",
                                           finished_at=now, reason=reason):
            return
        race = await self.store.load(race_id)
        names = race.names()
        for pid, name in race.racers:
            try:
                live, _ = await self.games.close(keys.race_game_id(race_id, pid), pid, name,
                                                 resigned=pid in race.forfeited)
                await self.store.set_progress(race_id, pid, progress_of(live))
            except (GameOver, NotFound):
                log.warning("race %s: no game for %s", race_id, pid)
        board = BoardRef.race(race.variant, race_id)
        standings = await self.leaderboard.top(board, 0, len(race.racers))
        ordered = [e.player_id for e in standings if e.player_id not in race.forfeited]
        ordered += [e.player_id for e in standings if e.player_id in race.forfeited]
        places = {pid: i + 1 for i, pid in enumerate(ordered)}
        summary = {"race_id": race_id, "variant": race.variant, "finished_at": now,
                   "racers": len(places)}
        changes = await self.boards.apply(race.variant, race_id, places, summary) \
            if len(places) >= 2 else {}
        by_pid = {e.player_id: e for e in standings}
        results = []
        for pid in ordered:
            e = by_pid[pid]
            before, after = changes.get(pid, (None, None))
            results.append({"player_id": pid, "name": names.get(pid, e.name), "place": places[pid],
                            "won": e.won, "cleared": e.cleared, "score": e.score,
                            "time_ms": e.time_ms, "moves": e.moves,
                            "forfeited": pid in race.forfeited, "rating": after,
                            "rating_change": (after - before) if after is not None
                            and before is not None else None})
        if ordered:
            await self.boards.add_win(race.variant, _race_date(race_id), ordered[0])
        await self.store.transition(race_id, "finishing", status="finished",
                                    results=json.dumps(results))
        await self.store.set_racing([p for p, _ in race.racers], None)
        await self.store.set_active(race_id, None)
        await self.store.emit(race_id, {"kind": "finished", "reason": reason,
                                        "results": results})


def _seed() -> int:
    """A fresh random seed per race (53 bits, exact in every client's number type)."""
    return secrets.randbits(53)


def _race_date(race_id: str) -> dt.date:
    return dt.datetime.strptime(race_id.split("-")[0], "%Y%m%d").date()
