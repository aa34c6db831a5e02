"""Server messages: replies to requests (carrying the request's ``id``) and pushes (no ``id``).

Each server message is a frozen, keyword-only dataclass deriving from :class:`Reply`
(has ``id``), :class:`Push` (no ``id``) or, for ``error`` only, :class:`ServerMessage`
directly (its ``id`` is optional). Defining the class registers it in
:data:`SERVER_MESSAGES`. Nested maps are typed structs: :class:`GameResult` and
:class:`LeaderboardEntry`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Final

from protocol.errors import ProtocolError, UnsupportedVersion
from protocol.fields import (
    TEXT,
    Count,
    DateText,
    DisplayName,
    EngineEvents,
    ErrorCodeText,
    Features,
    Flag,
    GameId,
    Kind,
    ListOf,
    Millis,
    MoveLog,
    MoveText,
    MoveWords,
    PlayerId,
    RankNo,
    Reason,
    RequestId,
    Score,
    Str,
    Text,
    TierName,
    Token,
    VariantName,
    VariantNames,
    Version,
    Versions,
    View,
)
from protocol.schema import Nested, Struct, fields_of, register, struct
from protocol.variants import VariantInfoList
from protocol.version import SUPPORTED_VERSIONS

_server_messages: dict[str, type[ServerMessage]] = {}

SERVER_MESSAGES: Mapping[str, type[ServerMessage]] = MappingProxyType(_server_messages)
"""Every server message class by its wire ``type``."""


# --- nested records --------------------------------------------------------------------------


#: A result's review status (version 5): held by the fair-play screen.
RESULT_STATUS: Final = Str(1, 16, r"flagged", "a result status")
#: The one `GameResult.status` value so far.
FLAGGED: Final = "flagged"


@struct
class GameResult(Struct):
    """How a game ended (or stands, if ``over`` is false). ``rank`` is the daily rank."""

    won: Flag
    over: Flag
    cleared: Count
    score: Score
    time_ms: Millis
    moves: Count
    resigned: Flag
    rank: RankNo | None = None
    hints: Count = 0
    #: Version 5: ``flagged`` while the fair-play screen holds the result for review (it is
    #: then on no leaderboard); absent otherwise.
    status: Annotated[str, RESULT_STATUS] | None = None
    #: Version 8: true for a catch-up game's result (never ranked: no ``rank``).
    catchup: Flag | None = None


@struct
class LeaderboardEntry(Struct):
    """One line of a leaderboard; ``me`` marks the requesting player's own entry."""

    rank: RankNo
    player_id: PlayerId
    name: DisplayName
    won: Flag
    cleared: Count
    score: Score
    time_ms: Millis
    moves: Count
    finished_at: Millis
    me: Flag
    hints: Count = 0


RACE_ID: Final = Str(1, 64, r"[A-Za-z0-9_-]{1,64}", "a race id")
RACE_STATUS: Final = Str(1, 16, r"open|countdown|running|finished", "a race status")


@struct
class ActiveRace(Struct):
    """The player's race that has not finished (``welcome.race``, version 3)."""

    race_id: Annotated[str, RACE_ID]
    variant: VariantName
    status: Annotated[str, RACE_STATUS]  # open, countdown or running
    game_id: GameId | None = None  # the player's own race game, once dealt


@struct
class DailyGame(Struct):
    """One of the player's daily games of today (``welcome.daily``, version 3). Version 8
    lists the games of every tier (``tier``) and the catch-up games in play (``catchup``)."""

    variant: VariantName
    game_id: GameId
    finished: Flag
    tier: TierName | None = None
    catchup: Flag | None = None


#: A tier's state for the player (version 8: ``welcome.tiers``, ``calendar``): ``not_played``,
#: ``playing``, ``won``, ``lost``; ``absent`` (no deal of the tier that day), ``pending``
#: (today's or a past day's tier not certified yet), ``upcoming`` (a day still to come).
TIER_STATE: Final = Str(
    3, 10, r"not_played|playing|won|lost|absent|pending|upcoming", "a tier state"
)
TierState = Annotated[str, TIER_STATE]


@struct
class DayTier(Struct):
    """One tier of one variant on one day, and the player's state in it (version 8).
    ``catchup``: the state is the catch-up game's (played after the day, on no board);
    ``game_id``: the player's game of the tier, when started; ``par``: the deal's par."""

    variant: VariantName
    tier: TierName
    state: TierState
    catchup: Flag = False
    game_id: GameId | None = None
    par: Count | None = None


DayTierList = Annotated[tuple[DayTier, ...], ListOf(Nested(DayTier), 0, 256)]


@struct
class SafeMove(Struct):
    """A foundation move safe to play for the player (``moved.safe``), and it in words."""

    move: MoveText
    text: Text


ResultMap = Annotated[GameResult, Nested(GameResult)]
SafeMoves = Annotated[tuple[SafeMove, ...], ListOf(Nested(SafeMove), 0, 64)]
EntryMap = Annotated[LeaderboardEntry, Nested(LeaderboardEntry)]
EntryList = Annotated[tuple[LeaderboardEntry, ...], ListOf(Nested(LeaderboardEntry), 0, 100)]


# --- bases -----------------------------------------------------------------------------------


@struct
class ServerMessage(Struct):
    """Base class of every server message; ``type`` is the wire type."""

    type: ClassVar[str]

    def __init_subclass__(cls, *, type: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if type is not None:
            cls.type = type
            register(_server_messages, cls, type)


@struct
class Reply(ServerMessage):
    """A server message answering the request whose ``id`` it echoes."""

    id: RequestId


@struct
class Push(ServerMessage):
    """A server message sent unprompted; it has no ``id``."""


# --- replies ---------------------------------------------------------------------------------


@struct
class ErrorReply(ServerMessage, type="error"):
    """A request failed. ``id`` is absent when the request's id could not be read.

    ``versions`` (optional, added without a version bump: a new optional field) lists the
    protocol versions the server speaks; it is sent with ``unsupported_version`` only.
    """

    code: ErrorCodeText
    message: Text
    id: RequestId | None = None
    versions: Versions | None = None

    @classmethod
    def from_error(cls, error: ProtocolError, id: int | None = None) -> ErrorReply:
        """The reply for ``error``; ``id`` overrides ``error.id`` when given."""
        message = error.message
        if len(message) > TEXT.max_len:
            message = message[: TEXT.max_len - 3] + "..."
        versions = None
        if isinstance(error, UnsupportedVersion):
            versions = error.versions or tuple(sorted(SUPPORTED_VERSIONS))
        return cls(
            code=error.code, message=message, id=error.id if id is None else id, versions=versions
        )


@struct
class Welcome(Reply, type="welcome"):
    """Reply to ``hello`` (and ``signin.redeem``, version 7). ``token`` is present only when
    the player was just created or the device signed in with a code: the client must store
    it to resume the identity later. ``variant_info`` (version 6 on)
    describes each variant of ``variants``, in the same order."""

    version: Version
    player_id: PlayerId
    name: DisplayName
    server_time: Millis
    variants: VariantNames
    token: Token | None = None
    race: Annotated[ActiveRace, Nested(ActiveRace)] | None = None  # version 3 on
    daily: Annotated[tuple[DailyGame, ...], ListOf(Nested(DailyGame), 0, 64)] | None = None
    variant_info: VariantInfoList | None = None  # version 6 on
    #: The ``hello.features`` the server took up (only when the hello asked for some).
    features: Features | None = None
    tiers: DayTierList | None = None  # version 8: today's tiers of every variant


@struct
class Pong(Reply, type="pong"):
    """Reply to ``ping``."""

    server_time: Millis


@struct
class GameState(Reply, type="game"):
    """Reply to ``daily.start`` and ``game.get``: the whole visible state of a game."""

    game_id: GameId
    variant: VariantName
    date: DateText
    view: View
    seq: Count
    started_at: Millis
    server_time: Millis
    elapsed_ms: Millis
    finished: Flag
    result: ResultMap | None = None
    par: Count | None = None
    hints: Count = 0
    #: The game's moves in order as stored (``undo`` included), version 3 on.
    log: MoveLog | None = None
    #: The same moves in card words (``moved.text``), added without a version (issue 27).
    log_text: MoveWords | None = None
    #: The foundation moves safe to play now (as in ``moved.safe``), added without a version.
    safe: SafeMoves | None = None
    #: The time each hint adds (a daily game's; absent in races), added without a version.
    hint_penalty_ms: Count | None = None
    #: Version 7: true for a free game (``free.start``: unranked, on no board).
    free: Flag | None = None
    #: Version 8: the game's tier, and whether it is a catch-up game (on no board).
    tier: TierName | None = None
    catchup: Flag | None = None


@struct
class Moved(Reply, type="moved"):
    """Reply to ``move`` and ``undo`` (whose ``move`` is ``"undo"``).

    ``view`` is sent to version 1 clients, and from version 4 to a request ``with_view``;
    otherwise (version 2 on) the client follows ``events``.
    """

    game_id: GameId
    move: MoveText
    seq: Count
    events: EngineEvents
    elapsed_ms: Millis
    finished: Flag
    view: View | None = None
    result: ResultMap | None = None
    #: Added without a version (clients ignore fields they do not know): the move in words
    #: (``J♦ to the foundation``), what it changed in the view (`engine.patches`), and the
    #: foundation moves now safe to play for the player (`engine.words.safe_moves`).
    text: Text | None = None
    changes: View | None = None
    safe: SafeMoves | None = None


@struct
class Finished(Reply, type="finished"):
    """Reply to ``resign``."""

    game_id: GameId
    result: ResultMap


@struct
class Leaderboard(Reply, type="leaderboard"):
    """Reply to ``leaderboard.top`` and ``leaderboard.around``."""

    variant: VariantName
    date: DateText
    kind: Kind
    total: Count
    offset: Count
    entries: EntryList
    par: Count | None = None
    tier: TierName | None = None  # version 8


@struct
class PlayerRank(Reply, type="rank"):
    """Reply to ``leaderboard.rank``; ``entry`` is absent if the player has no result."""

    variant: VariantName
    date: DateText
    total: Count
    entry: EntryMap | None = None
    tier: TierName | None = None  # version 8


# --- pushes ----------------------------------------------------------------------------------


@struct
class GameFinished(Push, type="game.finished"):
    """Version 2: the game ended after its last ``moved`` reply was sent, because the server's
    search found that no move can make progress any more (Triple Easthaven's end, which can
    take longer to decide than a move should wait). ``seq`` is the game's move count."""

    game_id: GameId
    seq: Count
    result: ResultMap


@struct
class Shutdown(Push, type="shutdown"):
    """The server is going away; reconnect after ``retry_after_ms``."""

    reason: Reason
    retry_after_ms: Millis


for _cls in (
    GameResult,
    LeaderboardEntry,
    ActiveRace,
    DailyGame,
    SafeMove,
    *_server_messages.values(),
):
    fields_of(_cls)  # fail at import time, not on first use, if a declaration is wrong
