"""Race messages: matchmaking, private rooms, live progress and race leaderboards.

Racers play with the ordinary ``move`` / ``undo`` / ``resign`` requests on the race game id
they receive in ``race.started``; everything here is about the race around those games.
Race events (``race.event``) are public: they never carry a card. Their bodies are a closed
family of typed classes (:class:`RaceEventBody` and its subclasses, one per ``kind``); the
``event`` field of ``race.event`` / ``race.room`` stays a plain map on the wire and in the
message classes (clients may read it as a map), and :func:`dump_race_event` /
:func:`load_race_event` convert between that map and the typed body.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Final

from protocol.errors import BadRequest
from protocol.events import RACE_ID, RACE_STATUS, Push, Reply
from protocol.fields import (
    Count,
    DateText,
    DisplayName,
    Flag,
    GameId,
    Int,
    JsonMap,
    ListOf,
    Millis,
    Offset,
    PlayerId,
    Reason,
    Score,
    Str,
    VariantName,
    View,
    kind_of,
)
from protocol.messages import ClientMessage
from protocol.schema import Nested, Struct, fields_of, load_struct, register, struct

ROOM_CODE: Final = Str(4, 8, r"[A-Z0-9]{4,8}", "a room code of 4-8 capital letters or digits")
STATUS: Final = RACE_STATUS
BOARD: Final = Str(1, 8, r"rating|wins", "'rating' or 'wins'")

RaceId = Annotated[str, RACE_ID]
RoomCode = Annotated[str, ROOM_CODE]
GroupSize = Annotated[int, Int(2, 8)]
Status = Annotated[str, STATUS]
BoardName = Annotated[str, BOARD]
Event = Annotated[dict[str, object], JsonMap()]
Events = Annotated[tuple[dict[str, object], ...], ListOf(JsonMap(), 0, 1000)]
SmallLimit = Annotated[int, Int(1, 100)]
Around = Annotated[int, Int(1, 50)]
Recent = Annotated[int, Int(1, 50)]


# -- requests ----------------------------------------------------------------------------------


@struct
class RaceQueue(ClientMessage, type="race.queue"):
    """Wait for opponents on ``variant``: ``size`` 2 is head-to-head, up to 8 a group race
    (started with at least 2 racers when the group has not filled after a short wait)."""

    variant: VariantName
    size: GroupSize = 2


@struct
class RaceLeave(ClientMessage, type="race.leave"):
    """Leave the queue, or a private room that has not started."""


@struct
class RaceCreate(ClientMessage, type="race.create"):
    """Open a private room for up to ``size`` racers; its code is shared out of band."""

    variant: VariantName
    size: GroupSize = 8


@struct
class RaceJoin(ClientMessage, type="race.join"):
    """Enter a private room by its code."""

    code: RoomCode


@struct
class RaceStart(ClientMessage, type="race.start"):
    """Start a private room (its creator only, with at least two racers)."""

    race_id: RaceId


@struct
class RaceGet(ClientMessage, type="race.get"):
    """The race's state and its events after version ``since`` (resync after reconnecting)."""

    race_id: RaceId
    since: Count = 0


@struct
class RaceTop(ClientMessage, type="race.top"):
    """A page of a race board: ``rating`` (per variant) or ``wins`` (races won on ``date``)."""

    variant: VariantName
    board: BoardName = "rating"
    date: DateText | None = None
    offset: Offset = 0
    limit: SmallLimit = 20


@struct
class RaceAround(ClientMessage, type="race.around"):
    """The ``k`` entries above and below the requesting player on a race board."""

    variant: VariantName
    board: BoardName = "rating"
    date: DateText | None = None
    k: Around = 5


@struct
class RaceRank(ClientMessage, type="race.rank"):
    """The requesting player's entry on a race board."""

    variant: VariantName
    board: BoardName = "rating"
    date: DateText | None = None


@struct
class RaceRecent(ClientMessage, type="race.recent"):
    """The requesting player's latest finished races on ``variant``."""

    variant: VariantName
    limit: Recent = 10


# -- nested structs ----------------------------------------------------------------------------


@struct
class Racer(Struct):
    """One racer as everyone sees them: progress only, never a card."""

    player_id: PlayerId
    name: DisplayName
    cleared: Count = 0
    score: Score = 0
    moves: Count = 0
    finished: Flag = False
    stuck: Flag = False
    won: Flag = False
    forfeited: Flag = False
    #: Version 10 on: the racer gave their game up (``resign``); absent for older versions.
    resigned: Flag | None = None
    connected: Flag = True
    place: Count | None = None
    rating: Score | None = None
    rating_change: Score | None = None


RacerList = Annotated[tuple[Racer, ...], ListOf(Nested(Racer), 0, 8)]


@struct
class RaceInfo(Struct):
    race_id: RaceId
    variant: VariantName
    status: Status
    size: GroupSize
    racers: RacerList
    server_time: Millis
    code: RoomCode | None = None
    creator: PlayerId | None = None
    start_at: Millis | None = None
    ends_at: Millis | None = None
    game_id: GameId | None = None  # the recipient's own game, once the race has started
    version: Count = 0


@struct
class RatingEntry(Struct):
    rank: Count
    player_id: PlayerId
    name: DisplayName
    rating: Score
    wins: Count
    losses: Count
    played: Count
    me: Flag


@struct
class RaceSummary(Struct):
    race_id: RaceId
    variant: VariantName
    finished_at: Millis
    place: Count
    racers: Count
    won: Flag
    rating_before: Score
    rating_after: Score


RaceInfoMap = Annotated[RaceInfo, Nested(RaceInfo)]
RatingEntries = Annotated[tuple[RatingEntry, ...], ListOf(Nested(RatingEntry), 0, 101)]
RatingEntryMap = Annotated[RatingEntry, Nested(RatingEntry)]
Summaries = Annotated[tuple[RaceSummary, ...], ListOf(Nested(RaceSummary), 0, 50)]


# -- race events: the closed family of public event bodies ------------------------------------

_race_events: dict[str, type[RaceEventBody]] = {}

RACE_EVENTS: Mapping[str, type[RaceEventBody]] = MappingProxyType(_race_events)
"""Every race event body class by its ``kind``."""


@struct
class RaceEventBody(Struct):
    """Base of the public race events; ``kind`` is the wire discriminator."""

    kind: ClassVar[str]

    def __init_subclass__(cls, *, kind: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if kind is not None:
            cls.kind = kind
            register(_race_events, cls, kind)


@struct
class RacerJoined(RaceEventBody, kind="joined"):
    player_id: PlayerId
    name: DisplayName


@struct
class RacerLeft(RaceEventBody, kind="left"):
    """A racer left an open room; ``closed`` when it was the creator (the room is gone)."""

    player_id: PlayerId
    closed: Flag


@struct
class RaceCountdown(RaceEventBody, kind="countdown"):
    start_at: Millis
    ends_at: Millis


@struct
class RacerProgress(RaceEventBody, kind="progress"):
    player_id: PlayerId
    cleared: Count
    score: Score
    moves: Count
    finished: Flag
    won: Flag
    stuck: Flag
    #: The racer gave their game up (``resign``); sent to version 10 and later only.
    resigned: Flag = False


@struct
class RacerForfeited(RaceEventBody, kind="forfeit"):
    player_id: PlayerId


@struct
class RaceResultEntry(Struct):
    """One racer's final line; ``rating`` / ``rating_change`` are ``null`` when unrated."""

    player_id: PlayerId
    name: DisplayName
    place: Count
    won: Flag
    cleared: Count
    score: Score
    time_ms: Millis
    moves: Count
    forfeited: Flag
    rating: Score | None = None
    rating_change: Score | None = None
    #: The racer gave their game up (``resign``); sent to version 10 and later only.
    resigned: Flag = False


ResultEntries = Annotated[tuple[RaceResultEntry, ...], ListOf(Nested(RaceResultEntry), 0, 8)]


@struct
class RaceEnded(RaceEventBody, kind="finished"):
    reason: Reason
    results: ResultEntries


def _wire_map(obj: Struct) -> dict[str, object]:
    """Like `dump_struct`, but a ``None`` optional goes out as ``null`` (the event log's form)."""
    out: dict[str, object] = {}
    for f in fields_of(type(obj)):
        value = getattr(obj, f.name)
        if value is None:
            out[f.name] = None
        elif isinstance(value, tuple) and value and isinstance(value[0], Struct):
            out[f.name] = [_wire_map(item) for item in value]
        else:
            out[f.name] = f.spec.dump(value, f.name)
    obj.check()
    return out


def dump_race_event(event: RaceEventBody) -> dict[str, object]:
    """The wire map of an event body: ``{"kind": ..., <fields in declaration order>}``."""
    if RACE_EVENTS.get(getattr(type(event), "kind", "")) is not type(event):
        raise BadRequest(f"{type(event).__name__} is not a registered race event")
    return {"kind": event.kind, **_wire_map(event)}


def load_race_event(data: object, *, path: str = "event") -> RaceEventBody:
    """The typed body of a wire map; raises :class:`BadRequest` for anything else."""
    if not isinstance(data, Mapping):
        raise BadRequest(f"{path}: expected a map, got {kind_of(data)}")
    kind = data.get("kind")
    cls = RACE_EVENTS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise BadRequest(f"{path}.kind: unknown race event kind {str(kind)[:32]!r}")
    return load_struct(cls, data, path, ignore=_KIND)


def logged_event_map(version: int, event: RaceEventBody) -> dict[str, object]:
    """An event as ``race.room`` lists it: ``{"v": version, "kind": ..., ...}``."""
    return {"v": version, **dump_race_event(event)}


_KIND: Final = frozenset({"kind"})


# -- replies and pushes ------------------------------------------------------------------------


@struct
class RaceQueued(Reply, type="race.queued"):
    """Reply to ``race.queue``: waiting (a ``race.update`` push follows when matched)."""

    variant: VariantName
    size: GroupSize
    waiting: Count


@struct
class RaceLeft(Reply, type="race.left"):
    """Reply to ``race.leave``."""


@struct
class RaceRoom(Reply, type="race.room"):
    """Reply to ``race.create`` / ``race.join`` / ``race.start`` / ``race.get``: the race."""

    race: RaceInfoMap
    events: Events = ()


@struct
class RaceUpdate(Push, type="race.update"):
    """Push: the race changed (matched, joined, countdown, finished); the whole state."""

    race: RaceInfoMap


@struct
class RaceEvent(Push, type="race.event"):
    """Push: one public race event (progress, forfeit...), numbered by ``version``."""

    race_id: RaceId
    version: Count
    event: Event


@struct
class RaceStarted(Push, type="race.started"):
    """Push to each racer at the start: their own game id and view of the shared deal."""

    race_id: RaceId
    game_id: GameId
    view: View
    start_at: Millis
    ends_at: Millis
    server_time: Millis


@struct
class RaceBoard(Reply, type="race.board"):
    """Reply to ``race.top`` / ``race.around``."""

    variant: VariantName
    board: BoardName
    total: Count
    offset: Count
    entries: RatingEntries
    date: DateText | None = None


@struct
class RaceRankReply(Reply, type="race.rank"):
    """Reply to ``race.rank``; ``entry`` is absent when the player is not on the board."""

    variant: VariantName
    board: BoardName
    total: Count
    entry: RatingEntryMap | None = None
    date: DateText | None = None


@struct
class RaceHistory(Reply, type="race.history"):
    """Reply to ``race.recent``: newest first."""

    variant: VariantName
    races: Summaries


for _cls in (
    Racer,
    RaceInfo,
    RatingEntry,
    RaceSummary,
    RaceResultEntry,
    *RACE_EVENTS.values(),
    RaceQueue,
    RaceLeave,
    RaceCreate,
    RaceJoin,
    RaceStart,
    RaceGet,
    RaceTop,
    RaceAround,
    RaceRank,
    RaceRecent,
    RaceQueued,
    RaceLeft,
    RaceRoom,
    RaceUpdate,
    RaceEvent,
    RaceStarted,
    RaceBoard,
    RaceRankReply,
    RaceHistory,
):
    fields_of(_cls)
