"""The typed values of races: statuses, progress, results, summaries and the stored race.

Plain frozen values, no I/O. Their storage form (JSON in Redis hashes and lists) is read and
written here, in one place; their wire form is the protocol's (`protocol.races`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

import protocol as p
import protocol.races as pr
from server.redis import keys

#: A racer seen this recently counts as connected.
CONNECTED_MS = 5_000


class RaceStatus(StrEnum):
    """A race's status. Stored: open, running, finishing, finished.

    ``countdown`` is never stored: it is how a running race before its ``start_at`` is shown.
    ``finishing`` is the short step while one process closes the games and rates the racers.
    """

    OPEN = "open"
    COUNTDOWN = "countdown"
    RUNNING = "running"
    FINISHING = "finishing"
    FINISHED = "finished"


class StoredDataError(ValueError):
    """A stored race value does not have the shape this server writes."""


def _obj(raw: str | bytes) -> dict[str, object]:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise StoredDataError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise StoredDataError("not a JSON object")
    return value


def _int(d: Mapping[str, object], name: str, default: int | None = None) -> int:
    value = d.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise StoredDataError(f"{name}: expected an integer")
    return value


def _opt_int(d: Mapping[str, object], name: str) -> int | None:
    return None if d.get(name) is None else _int(d, name)


def _bool(d: Mapping[str, object], name: str, default: bool = False) -> bool:
    value = d.get(name, default)
    if not isinstance(value, bool):
        raise StoredDataError(f"{name}: expected a bool")
    return value


def _str(d: Mapping[str, object], name: str) -> str:
    value = d.get(name)
    if not isinstance(value, str):
        raise StoredDataError(f"{name}: expected a string")
    return value


@dataclass(frozen=True, slots=True)
class Progress:
    """What opponents may know about a racer's game: counts and flags, never a card."""

    cleared: int = 0
    score: int = 0
    moves: int = 0
    finished: bool = False
    won: bool = False
    stuck: bool = False
    #: The racer gave the game up (`resign`; a forfeit is not a resignation): `stuck` too.
    resigned: bool = False

    @property
    def done(self) -> bool:
        """Nothing more will happen in this game (finished, or no move left)."""
        return self.finished or self.stuck

    def event(self, pid: str) -> pr.RacerProgress:
        return pr.RacerProgress(
            player_id=pid,
            cleared=self.cleared,
            score=self.score,
            moves=self.moves,
            finished=self.finished,
            won=self.won,
            stuck=self.stuck,
            resigned=self.resigned,
        )

    def dumps(self) -> str:
        return json.dumps(
            {
                "cleared": self.cleared,
                "score": self.score,
                "moves": self.moves,
                "finished": self.finished,
                "won": self.won,
                "stuck": self.stuck,
                "resigned": self.resigned,
            }
        )

    @classmethod
    def loads(cls, raw: str | bytes) -> Progress:
        d = _obj(raw)
        return cls(
            cleared=_int(d, "cleared", 0),
            score=_int(d, "score", 0),
            moves=_int(d, "moves", 0),
            finished=_bool(d, "finished"),
            won=_bool(d, "won"),
            stuck=_bool(d, "stuck"),
            resigned=_bool(d, "resigned"),
        )


@dataclass(frozen=True, slots=True)
class RaceResult:
    """One racer's final line of a finished race."""

    player_id: str
    name: str
    place: int
    won: bool
    cleared: int
    score: int
    time_ms: int
    moves: int
    forfeited: bool
    rating: int | None = None
    rating_change: int | None = None
    #: The racer gave the game up (`resign`), rather than ran out of moves or forfeited.
    resigned: bool = False

    def to_wire(self) -> pr.RaceResultEntry:
        return pr.RaceResultEntry(
            player_id=self.player_id,
            name=self.name,
            place=self.place,
            won=self.won,
            cleared=self.cleared,
            score=self.score,
            time_ms=self.time_ms,
            moves=self.moves,
            forfeited=self.forfeited,
            rating=self.rating,
            rating_change=self.rating_change,
            resigned=self.resigned,
        )

    def to_map(self) -> dict[str, object]:
        return {
            "player_id": self.player_id,
            "name": self.name,
            "place": self.place,
            "won": self.won,
            "cleared": self.cleared,
            "score": self.score,
            "time_ms": self.time_ms,
            "moves": self.moves,
            "forfeited": self.forfeited,
            "rating": self.rating,
            "rating_change": self.rating_change,
            "resigned": self.resigned,
        }

    @classmethod
    def from_map(cls, d: Mapping[str, object]) -> RaceResult:
        return cls(
            player_id=_str(d, "player_id"),
            name=_str(d, "name"),
            place=_int(d, "place"),
            won=_bool(d, "won"),
            cleared=_int(d, "cleared"),
            score=_int(d, "score"),
            time_ms=_int(d, "time_ms"),
            moves=_int(d, "moves"),
            forfeited=_bool(d, "forfeited"),
            rating=_opt_int(d, "rating"),
            rating_change=_opt_int(d, "rating_change"),
            resigned=_bool(d, "resigned"),
        )


def dump_results(results: tuple[RaceResult, ...]) -> str:
    return json.dumps([r.to_map() for r in results])


def load_results(raw: str) -> tuple[RaceResult, ...]:
    try:
        items = json.loads(raw)
    except ValueError as exc:
        raise StoredDataError(f"results: not JSON: {exc}") from None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise StoredDataError("results: expected a list of objects")
    return tuple(RaceResult.from_map(i) for i in items)


@dataclass(frozen=True, slots=True)
class RaceSummary:
    """A finished race as every racer's history records it."""

    race_id: str
    variant: str
    finished_at: int
    racers: int


@dataclass(frozen=True, slots=True)
class RecentRace:
    """One row of a player's race history (newest first in Redis)."""

    race_id: str
    variant: str
    finished_at: int
    racers: int
    place: int
    won: bool
    rating_before: int
    rating_after: int

    @classmethod
    def of(cls, summary: RaceSummary, place: int, before: int, after: int) -> RecentRace:
        return cls(
            race_id=summary.race_id,
            variant=summary.variant,
            finished_at=summary.finished_at,
            racers=summary.racers,
            place=place,
            won=place == 1,
            rating_before=before,
            rating_after=after,
        )

    def dumps(self) -> str:
        return json.dumps(
            {
                "race_id": self.race_id,
                "variant": self.variant,
                "finished_at": self.finished_at,
                "racers": self.racers,
                "place": self.place,
                "won": self.won,
                "rating_before": self.rating_before,
                "rating_after": self.rating_after,
            }
        )

    @classmethod
    def loads(cls, raw: str | bytes) -> RecentRace:
        d = _obj(raw)
        return cls(
            race_id=_str(d, "race_id"),
            variant=_str(d, "variant"),
            finished_at=_int(d, "finished_at"),
            racers=_int(d, "racers"),
            place=_int(d, "place"),
            won=_bool(d, "won"),
            rating_before=_int(d, "rating_before"),
            rating_after=_int(d, "rating_after"),
        )

    def to_wire(self) -> p.RaceSummary:
        return p.RaceSummary(
            race_id=self.race_id,
            variant=self.variant,
            finished_at=self.finished_at,
            place=self.place,
            racers=self.racers,
            won=self.won,
            rating_before=self.rating_before,
            rating_after=self.rating_after,
        )


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    """One entry of a race's public event log."""

    version: int
    event: pr.RaceEventBody

    def to_wire(self) -> dict[str, object]:
        return pr.logged_event_map(self.version, self.event)


@dataclass(frozen=True, slots=True)
class RaceState:
    """A race as stored; `racers` in joining order."""

    race_id: str
    variant: str
    status: RaceStatus
    size: int
    seed: int
    creator: str | None
    code: str | None
    created_at: int
    start_at: int | None
    ends_at: int | None
    version: int
    racers: tuple[tuple[str, str], ...]  # (pid, name)
    progress: Mapping[str, Progress] = field(default_factory=dict)
    seen: Mapping[str, int] = field(default_factory=dict)
    #: pid -> until when some process holds a live connection of the racer (`mark_present`)
    present_until: Mapping[str, int] = field(default_factory=dict)
    forfeited: frozenset[str] = frozenset()
    results: tuple[RaceResult, ...] | None = None
    closed: bool = False
    #: when the race's end began (`finishing`), and why (the `finished` event's reason)
    finished_at: int | None = None
    reason: str | None = None
    #: Groups of racers a match found playing from one network (`server.races.networks`):
    #: never rated against each other (docs/fairplay.md, "One network, one rating").
    same_network: tuple[tuple[str, ...], ...] = ()

    def names(self) -> dict[str, str]:
        return dict(self.racers)

    def network_shared(self) -> frozenset[str]:
        """The racers who share their network with another racer of this race."""
        return frozenset(pid for group in self.same_network for pid in group)

    def pids(self) -> list[str]:
        return [pid for pid, _ in self.racers]

    def progress_of(self, pid: str) -> Progress:
        return self.progress.get(pid, NO_PROGRESS)

    def present(self, pid: str, now: int) -> bool:
        """Some process held a live connection of the racer at its latest refresh."""
        return self.present_until.get(pid, 0) > now

    def connected(self, pid: str, now: int) -> bool:
        """Shown as connected: once the race runs, exactly while some process holds a live
        connection of the racer (a close clears that process's mark at once; a process that
        stopped lets it lapse within `PRESENCE_MS`). Before the start, when the clocks have not
        marked everyone yet, a racer seen lately counts too."""
        if self.present(pid, now) or self.status is RaceStatus.OPEN:
            return True
        before_start = self.start_at is None or now < self.start_at
        return before_start and now - self.seen.get(pid, 0) <= CONNECTED_MS

    def done_for(self, pid: str) -> bool:
        """The racer's own game is over for good: its result written (won, stuck, resigned)
        or closed by a forfeit."""
        return pid in self.forfeited or self.progress_of(pid).finished

    def all_done(self) -> bool:
        """Every racer has finished, is stuck or forfeited."""
        return all(self.progress_of(pid).done or pid in self.forfeited for pid in self.pids())

    def shown_status(self, now: int) -> RaceStatus:
        """The status clients see: countdown before the start, never `finishing`."""
        status = self.status
        if status is RaceStatus.RUNNING and self.start_at is not None and now < self.start_at:
            return RaceStatus.COUNTDOWN
        if status is RaceStatus.FINISHING or (
            status is RaceStatus.FINISHED and self.results is None
        ):
            return RaceStatus.FINISHED if self.closed else RaceStatus.RUNNING
        return status

    def info(self, now: int, me: str | None) -> p.RaceInfo:
        """The race as `me` may see it: progress of everyone, never a card; the room's code
        and `me`'s game id only to a racer."""
        results = {r.player_id: r for r in self.results or ()}
        racers = []
        for pid, name in self.racers:
            prog, res = self.progress_of(pid), results.get(pid)
            racers.append(
                p.Racer(
                    player_id=pid,
                    name=name,
                    cleared=prog.cleared,
                    score=prog.score,
                    moves=prog.moves,
                    finished=prog.finished,
                    stuck=prog.stuck,
                    won=prog.won,
                    forfeited=pid in self.forfeited,
                    resigned=prog.resigned and pid not in self.forfeited,
                    connected=self.connected(pid, now),
                    place=res.place if res else None,
                    rating=res.rating if res else None,
                    rating_change=res.rating_change if res else None,
                )
            )
        racer = me is not None and me in self.names()
        mine = racer and self.status is not RaceStatus.OPEN
        return p.RaceInfo(
            race_id=self.race_id,
            variant=self.variant,
            status=self.shown_status(now).value,
            size=self.size,
            racers=tuple(racers),
            server_time=now,
            code=self.code if racer else None,  # the room's key: racers share it
            creator=self.creator,
            start_at=self.start_at,
            ends_at=self.ends_at,
            game_id=keys.race_game_id(self.race_id, me) if mine and me else None,
            version=self.version,
        )


NO_PROGRESS = Progress()


class RaceLoader(Protocol):
    """Reads a race (what fan-out needs to build `race.update` pushes) and hears when a
    racer's last connection on this process leaves it (their grace period starts)."""

    async def load(self, race_id: str) -> RaceState: ...

    async def mark_absent(self, race_id: str, pid: str, instance: str) -> None: ...
