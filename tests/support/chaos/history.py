"""What the simulated clients did and saw: one `Op` per request, in the order sent."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path


class Outcome(StrEnum):
    """How a request ended, from the client's side."""

    OK = "ok"  # a reply of the expected type
    ERROR = "error"  # an error reply (``code`` says which)
    LOST = "lost"  # the connection closed or the reply never came: the outcome is unknown


class Kind(StrEnum):
    START = "daily.start"
    GET = "game.get"
    MOVE = "move"
    RACE_QUEUE = "race.queue"
    RACE_GET = "race.get"
    RACE_CREATE = "race.create"
    RACE_JOIN = "race.join"
    RACE_START = "race.start"
    RACE_LEAVE = "race.leave"
    RACE_LIST = "race.list"
    WATCH = "race.watch"
    UNWATCH = "race.unwatch"


@dataclass(slots=True)
class Op:
    """One request and its answer. Times are the test process's monotonic clock (seconds)."""

    client: str
    kind: Kind
    sent_at: float
    game_id: str = ""
    move: str = ""
    expected_seq: int | None = None
    outcome: Outcome = Outcome.LOST
    code: str = ""  # the error code of an ERROR
    done_at: float = 0.0
    #: The game's seq in the reply (moves applied after a move; the state read by a get).
    seq: int | None = None
    #: The view in the reply, when there was one (checked against the stored game).
    view: dict[str, object] | None = None


@dataclass(slots=True)
class RaceSeen:
    """A race as its racers saw it: dealt, its deadlines, and how it ended."""

    race_id: str
    racers: list[str] = field(default_factory=list)
    ends_at_ms: int = 0
    finished_seen_at: float | None = None


@dataclass(slots=True)
class BoardSeen:
    """A racer's board as a spectator was shown it (`race.watching` or `race.spectate`):
    when it came (the test's monotonic clock), the racers the spectator had been told had
    stopped playing (a `progress` event with `finished`, a `forfeit`), and whether the race
    was over (its end event came first, or it was watched finished)."""

    client: str
    race_id: str
    player_id: str
    seq: int
    view: dict[str, object]
    at: float = 0.0
    stopped: tuple[str, ...] = ()
    final: bool = False


@dataclass(slots=True)
class Session:
    """One client's connections: when each was lost and whether a request succeeded after."""

    client: str
    disconnects: list[float] = field(default_factory=list)
    successes: list[float] = field(default_factory=list)


@dataclass(slots=True)
class History:
    ops: list[Op] = field(default_factory=list)
    races: dict[str, RaceSeen] = field(default_factory=dict)
    sessions: dict[str, Session] = field(default_factory=dict)
    faults: list[tuple[float, str]] = field(default_factory=list)
    boards: list[BoardSeen] = field(default_factory=list)

    def session(self, client: str) -> Session:
        found = self.sessions.get(client)
        if found is None:
            found = self.sessions[client] = Session(client)
        return found

    def dump(self, path: Path) -> None:
        """The whole history as JSON (kept beside a failing run, for reading)."""
        path.write_text(json.dumps(asdict(self), indent=1, default=str))
