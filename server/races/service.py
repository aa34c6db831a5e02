"""Race mode for request handlers: matchmaking, rooms, the start, and every race query.

Handlers use only this service (and the per-process `RaceFanout` / `Matchmaking` to be told
about events): it reads races, their logs and the race boards, and makes the lobby's
decisions. Each decision is a guarded Redis transition, so any server process may take it
and only one does. What happens once a race runs is the `RaceReferee`'s.
"""

from __future__ import annotations

import datetime as dt
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import cast

import protocol as p
from engine import VARIANT_IDS
from engine.views import json_map
from server.games.deals import lasts_a_move
from server.games.service import GameService, LiveGame
from server.players.registry import PlayerRegistry
from server.races.model import LoggedEvent, RaceState, RaceStatus, RecentRace
from server.races.networks import shared_networks
from server.races.ratings import RaceBoards, RatingRow
from server.races.store import RaceStore
from server.redis import keys
from server.redis.quota import HOUR_MS, NETWORK_FACTOR, give_back_each_hourly, take_each_hourly
from server.runtime.clock import Clock
from server.runtime.errors import (
    Conflict,
    LimitReached,
    NotFound,
    StoreUnavailable,
    translate_redis_errors,
)
from server.transport.address import address_subnet

log = logging.getLogger(__name__)

#: How long a process's mark that it holds a racer's live connection lasts without a refresh
#: (its race clock refreshes it every tick; a crashed process's marks lapse after this).
PRESENCE_MS = 5_000
#: The most events one `race.room` carries, and their logged JSON's bytes at most: the rest
#: of the frame (the race, 8 racers) stays well under the 64 KiB frame limit.
ROOM_EVENTS_MAX = 1000
ROOM_EVENT_BYTES = 48 * 1024
#: A matched race is dealt the moment it is made; one still undealt after this is abandoned.
UNDEALT_MS = 30_000
#: A match whose race is still not made this long after the queue made it was left by a
#: process that stopped: any process makes it (`RaceService.repair_matches`).
UNMADE_MS = 2_000
#: A race dealt and not yet ended: a racer whose game is over may move on (`_free_if_over`).
_UNDER_WAY = frozenset({RaceStatus.RUNNING, RaceStatus.FINISHING})


@dataclass(frozen=True, slots=True)
class RaceSettings:
    countdown_ms: int = 3_000
    time_limit_ms: int = 600_000
    grace_ms: int = 30_000
    fill_wait_ms: int = 15_000
    #: Private rooms one account may create per (sliding) hour.
    rooms_per_hour: int = 20
    #: Wrong room codes an account may try an hour (`race.join`; its client network
    #: `NETWORK_FACTOR` times as many): codes are 5 letters of 32 (33.5 M), and a guesser
    #: found a room in ~33,500 tries among 1,000 open ones at 20 a second (review F8).
    room_misses_per_hour: int = 20
    #: The queue groups accounts of one client network (`server.races.networks`: the /24
    #: of IPv4, the /48 of IPv6) only after this long alone.
    same_address_wait_ms: int = 0
    #: Racers of one network are never rated against each other (docs/fairplay.md).
    unrated_same_network: bool = False


#: Told (player id, race id) when a racer whose game is over leaves a race still running for
#: another race (`RaceService._free_if_over`).
MovedOnListener = Callable[[str, str], Awaitable[None]]


class RaceService:
    def __init__(
        self,
        store: RaceStore,
        boards: RaceBoards,
        games: GameService,
        players: PlayerRegistry,
        clock: Clock,
        settings: RaceSettings,
    ) -> None:
        self.store = store
        self.boards = boards
        self.games = games
        self.players = players
        self.clock = clock
        self.settings = settings
        #: The app's listeners of a racer moving on (its fan-out stops sending them the race).
        self.on_moved_on: list[MovedOnListener] = []

    # -- queries ------------------------------------------------------------------------------

    async def load(self, race_id: str) -> RaceState:
        return await self.store.load(race_id)

    async def events_since(self, race_id: str, since: int) -> list[LoggedEvent]:
        return await self.store.events_since(race_id, since)

    async def events_page(self, race_id: str, since: int) -> list[LoggedEvent]:
        """The oldest events after ``since`` that fit in one `race.room` (`ROOM_EVENTS_MAX`,
        `ROOM_EVENT_BYTES`): a client pages on while the last one's version is below the
        race's."""
        return await self.store.events_page(race_id, since, ROOM_EVENTS_MAX, ROOM_EVENT_BYTES)

    @staticmethod
    def race_of(live: LiveGame) -> str | None:
        """The race a game belongs to, or None for a daily game."""
        return live.race_id

    async def mark_seen(
        self,
        race_id: str,
        pids: Sequence[str],
        now_ms: int | None = None,
        instance: str | None = None,
    ) -> None:
        """Racers connected now (their disconnect grace counts from the latest mark); with
        `instance`, process `instance` holds their live connections (refreshed every race
        clock tick; a racer with one is never forfeited)."""
        now = self.clock.now_ms() if now_ms is None else now_ms
        await self.store.mark_present(race_id, pids, now, instance, PRESENCE_MS)

    async def mark_absent(self, race_id: str, pid: str, instance: str) -> None:
        """The racer's last connection on process `instance` closed: the grace starts now."""
        await self.store.mark_absent(race_id, pid, self.clock.now_ms(), instance)

    async def queued_as(self, pid: str) -> str | None:
        """The queue (``<variant>:<size>``) the player waits in, if any."""
        return await self.store.queued_as(pid)

    @translate_redis_errors
    async def standing(
        self, pid: str, reads: Awaitable[tuple[object, object]] | None = None
    ) -> tuple[RaceState | None, str | None]:
        """(`active_race`, `queued_as`), their two reads in one round trip: ``reads``, those
        queued already (`RaceStore.standing_soon`), or queued now."""
        race_id, queued = await (reads or self.store.standing_soon(pid))
        return await self._active(pid, cast(str | None, race_id)), cast(str | None, queued)

    async def active_race(self, pid: str) -> RaceState | None:
        """The player's race (open, in countdown or running), if any."""
        return await self._active(pid, await self.store.racing(pid))

    async def _active(self, pid: str, race_id: str | None) -> RaceState | None:
        if race_id is None:
            return None
        try:
            race = await self.store.load(race_id)
        except NotFound:
            return None
        if race.status is RaceStatus.FINISHED or pid not in race.names():
            return None
        return race

    async def start_view(self, race: RaceState, pid: str, now_ms: int) -> p.RaceStarted:
        """A racer's own view of the shared deal, at the start and after a reconnect."""
        assert race.start_at is not None and race.ends_at is not None
        game_id = keys.race_game_id(race.race_id, pid)
        try:
            live = await self.games.get(game_id, pid)
        except NotFound:
            # A race start creates every racer's game in its own script; a race dealt by a
            # process of the previous release (which created them one by one after the start)
            # may lack some if that process stopped. The deal and start are in the race, so
            # any process completes it (creation is idempotent); one lookup, only on a miss.
            await self.games.store.start_game(
                game_id, "race", race.variant, race.seed, race.start_at, race.ends_at
            )
            live = await self.games.get(game_id, pid)
        return p.RaceStarted(
            race_id=race.race_id,
            game_id=game_id,
            view=json_map(live.game.view()),
            start_at=race.start_at,
            ends_at=race.ends_at,
            server_time=now_ms,
        )

    async def board_total(self, variant: str, board: str, day: dt.date | None) -> int:
        return await self.boards.total(variant, board, day)

    async def board_top(
        self, variant: str, board: str, day: dt.date | None, offset: int, limit: int
    ) -> list[RatingRow]:
        return await self.boards.top(variant, board, day, offset, limit)

    async def board_around(
        self, variant: str, board: str, day: dt.date | None, pid: str, k: int
    ) -> list[RatingRow]:
        return await self.boards.around(variant, board, day, pid, k)

    async def board_rank(
        self, variant: str, board: str, day: dt.date | None, pid: str
    ) -> RatingRow | None:
        return await self.boards.rank(variant, board, day, pid)

    async def recent(self, variant: str, pid: str, limit: int) -> list[RecentRace]:
        return await self.boards.recent(variant, pid, limit)

    # -- matchmaking and rooms ----------------------------------------------------------------

    async def queue(
        self, pid: str, name: str, variant: str, size: int, address: str = ""
    ) -> tuple[int, str | None]:
        """Wait for opponents; returns (players waiting, race id when matched at once).
        `address` is the client's: accounts of one network (`address_subnet`) are kept apart
        (`enqueue`), and when matched all the same, not rated against each other."""
        async with self.store.turn(pid):
            await self._free_if_over(pid)
            now = self.clock.now_ms()
            race_id = keys.new_race_id(now)  # the race of a match, if this makes one
            waiting, matched = await self.store.enqueue(
                pid,
                variant,
                size,
                now,
                self.settings.fill_wait_ms,
                race_id,
                address_subnet(address),
                self.settings.same_address_wait_ms,
            )
        if not matched:
            return waiting, None
        return 0, await self._start_matched(race_id, variant, size, matched)

    async def try_match(self, variant: str, size: int) -> str | None:
        """Start a group whose fill wait has run out (called periodically)."""
        now = self.clock.now_ms()
        race_id = keys.new_race_id(now)
        _, matched = await self.store.enqueue(
            "",
            variant,
            size,
            now,
            self.settings.fill_wait_ms,
            race_id,
            same_address_wait_ms=self.settings.same_address_wait_ms,
        )
        return await self._start_matched(race_id, variant, size, matched) if matched else None

    async def _start_matched(self, race_id: str, variant: str, size: int, pids: list[str]) -> str:
        """Make the race the queue matched `pids` to (they already point at it). The deadline
        index first (another slot): should this process stop before the race is dealt, the
        referee's tick of any process deals and announces it at its start time instead."""
        now = self.clock.now_ms()
        await self.store.set_active(race_id, now + self.settings.countdown_ms, only_earlier=True)
        names = await self.players.names(pids)
        shared: tuple[tuple[str, ...], ...] = ()
        if self.settings.unrated_same_network:
            shared = shared_networks(pids, await self.store.match_networks(race_id))
        await self.store.create(
            race_id,
            variant,
            size,
            _seed(variant),
            self.clock.now_ms(),
            [(p, names.get(p, "?")) for p in pids],
            same_network=shared,
        )
        await self.store.set_racing(pids, race_id)
        # the start tells each player, wherever they are connected (their server attaches them)
        if await self._begin(race_id, announce=True):
            await claim_pairs(self.boards, variant, race_id, pids, shared)
        return race_id

    async def repair_matches(self) -> list[str]:
        """Make the races of matches whose process stopped before making them (the queue
        matched the players, pointed them at the race id and kept the match in
        `making`): after `UNMADE_MS`, any process makes, deals and announces the race as
        that process would have (created only if absent, started once); a match older than
        `UNDEALT_MS` is dropped (its players are freed by their next race request). Called
        by every process's matchmaking sweep; returns the races made here."""
        now = self.clock.now_ms()
        made = []
        for m in await self.store.making():
            if now - m.at > UNDEALT_MS:
                await self.store.drop_making(m.race_id)
            elif now - m.at >= UNMADE_MS:
                log.warning("race %s: making a match its process left unmade", m.race_id)
                await self._start_matched(m.race_id, m.variant, m.size, m.pids)
                made.append(m.race_id)
        return made

    async def announce(self, pid: str, race_id: str) -> None:
        """Tell the player's connections, wherever they are, that they are in the race (the
        ones not yet following it attach: a second socket of the player)."""
        await self.store.announce_match([pid], race_id)

    async def leave(self, pid: str) -> bool:
        """Leave the queue or an open room."""
        async with self.store.turn(pid):
            return await self._leave(pid)

    async def _leave(self, pid: str) -> bool:
        left = await self.store.unqueue(pid, VARIANT_IDS)
        race_id = await self.store.racing(pid)
        if race_id:
            try:
                race = await self.store.load(race_id)
            except NotFound:
                if not await self._being_made(pid):  # else matched: the race starts anyway
                    await self.store.release([pid], race_id)
                return left
            if race.status is RaceStatus.OPEN:
                outcome = await self.store.leave_room(race_id, pid)  # announced with it
                if outcome:
                    freed = race.pids() if outcome == 2 else [pid]
                    await self.store.release(freed, race_id)
                    if outcome == 2 and race.code:  # closed: its code is free at once
                        await self.store.free_code(race.code, race_id)
                    return True
        return left

    async def create_room(self, pid: str, name: str, variant: str, size: int) -> str:
        async with self.store.turn(pid):
            return await self._create_room(pid, name, variant, size)

    async def _create_room(self, pid: str, name: str, variant: str, size: int) -> str:
        await self._ensure_free(pid)
        now = self.clock.now_ms()
        race_id = keys.new_race_id(now)
        if not await self.store.count_room(pid, race_id, now, self.settings.rooms_per_hour):
            raise LimitReached(
                f"at most {self.settings.rooms_per_hour} private rooms per hour: "
                "join one, or try again later"
            )
        code = await self.store.claim_code(race_id)
        await self.store.create(
            race_id,
            variant,
            size,
            _seed(variant),
            self.clock.now_ms(),
            [(pid, name)],
            creator=pid,
            code=code,
        )
        await self.store.set_racing([pid], race_id)
        return race_id

    async def join_room(self, pid: str, name: str, code: str, network: str = "") -> str:
        """Join the room of `code` (its race id), or stay in it when already there. Each try
        is counted first against the account and its client `network` (`address_network`,
        `NETWORK_FACTOR` times as many) and given back when the code is found: past
        `room_misses_per_hour` wrong codes, every `race.join` is `LimitReached` for the hour
        (a right code too: the guessing stops), concurrent tries included."""
        hour = self.clock.now_ms() // HOUR_MS
        limit = self.settings.room_misses_per_hour
        quotas = [(keys.room_misses(pid, hour), limit)] if limit else []
        if limit and network:
            quotas.append((keys.room_misses(network, hour), limit * NETWORK_FACTOR))
        batch = self.store.batch
        refused = await take_each_hourly(batch, quotas)
        if refused is not None:
            most = quotas[refused][1]
            raise LimitReached(f"too many wrong room codes ({most} an hour); try later")
        race_id = await self.store.race_for_code(code)  # not found: the misses stay counted
        await give_back_each_hourly(batch, [k for k, _ in quotas])
        async with self.store.turn(pid):
            return await self._join_room(pid, name, race_id)

    async def _join_room(self, pid: str, name: str, race_id: str) -> str:
        current = await self.store.racing(pid)
        if current == race_id:
            return race_id
        await self._ensure_free(pid)
        await self.store.join(race_id, pid, name)  # announced with it
        await self.store.set_racing([pid], race_id)
        return race_id

    async def start_room(self, pid: str, race_id: str) -> None:
        race = await self.store.load(race_id)
        if race.creator != pid:
            raise Conflict("only the room's creator can start it")
        if race.status is not RaceStatus.OPEN:
            raise Conflict("the race has already started")
        if len(race.racers) < 2:
            raise Conflict("a race needs at least two racers")
        if not await self._begin(race_id):
            raise Conflict("the race has already started")

    async def _ensure_free(self, pid: str) -> None:
        if await self.store.queued_as(pid):
            raise Conflict("leave the race queue first")
        current = await self._free_if_over(pid)
        if current is not None:
            raise Conflict(f"already in race {current}")

    async def _free_if_over(self, pid: str) -> str | None:
        """The player's race if it is still on for them; a pointer to a race that is over (or
        gone, or a matched race never made or dealt because its process stopped) is cleared
        first, and so is one to a race still running in which the player's own game is over
        (finished, resigned or forfeited): their result stands and is ranked at the race's
        end, the race goes on without them, and an idle rival no longer keeps them out of
        every race until the time limit (cheater review F7)."""
        current = await self.store.racing(pid)
        if not current:
            return None
        try:
            race = await self.store.load(current)
        except NotFound:
            if await self._being_made(pid):
                return current
            race = None
        now = self.clock.now_ms()
        if (
            race is None
            or race.status is RaceStatus.FINISHED
            or (
                race.status is RaceStatus.OPEN
                and race.creator is None
                and now - race.created_at > UNDEALT_MS
            )
        ):
            await self.store.release([pid], current)
            return None
        if race is not None and race.status in _UNDER_WAY and race.done_for(pid):
            if await self.store.release([pid], current):
                for listener in self.on_moved_on:
                    await listener(pid, current)
            return None
        return current

    async def _being_made(self, pid: str) -> bool:
        """The queue matched the player to a race not made yet, lately enough that the
        process matching them is still making it."""
        since = await self.store.matched_at(pid)
        return since is not None and self.clock.now_ms() - since <= UNDEALT_MS

    async def _begin(self, race_id: str, *, announce: bool = False) -> bool:
        """Deal an open race: everyone's game starts at the same server time after a
        countdown. One script on the race's slot starts it whole (games, seen marks, the
        `countdown` event, with `announce` each racer's match); the deadline index, in
        another slot, is written first (a process
        stopping right after leaves a race the referee's tick looks at again, whatever state
        it is in) and again after the start (a tick in between may have moved it later)."""
        now = self.clock.now_ms()
        start_at = now + self.settings.countdown_ms
        ends_at = start_at + self.settings.time_limit_ms
        await self.store.set_active(race_id, start_at, only_earlier=True)
        if not await self.store.begin(
            race_id,
            start_at,
            ends_at,
            retention_days=self.games.store.retention_days,
            announce=announce,
        ):
            return False
        await self.store.set_active(race_id, start_at, only_earlier=True)
        return True


async def claim_pairs(
    boards: RaceBoards,
    variant: str,
    race_id: str,
    pids: Sequence[str],
    same_network: Sequence[Sequence[str]],
) -> None:
    """`RaceBoards.claim_pairs` for a queue race just dealt, of its racers it may rate (not
    those sharing a network with another: `same_network`, the race's groups). An outage only
    costs the claim: the race then rates by the day's rated pairs, unless a later race of
    one of its pairs claims that pair first (docs/fairplay.md)."""
    networked = {pid for group in same_network for pid in group}
    try:
        await boards.claim_pairs(variant, race_id, [p for p in pids if p not in networked])
    except StoreUnavailable as exc:
        log.warning("race %s: its pairs not claimed: %s", race_id, exc)


def _seed(variant: str) -> int:
    """A fresh random seed per race (53 bits, exact in every client's number type) whose deal
    `lasts_a_move` (one dead at once, or after any first move, would be no race at all)."""
    while True:
        seed = secrets.randbits(53)
        if lasts_a_move(variant, seed):
            return seed
