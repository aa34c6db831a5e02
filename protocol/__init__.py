"""The wire protocol of the solitaire service: typed messages and a sans-I/O codec.

Nothing in this package does I/O, imports ``engine`` or ``server``, or keeps state.

Modules
-------
``errors``    error codes (:class:`ErrorCode`) and the exception classes below
``fields``    field validators, the annotated field types, :func:`validate_name`
``schema``    :class:`Struct` and the generic map <-> dataclass conversion
``messages``  requests (client -> server), registered in ``CLIENT_MESSAGES``
``events``    replies and pushes (server -> client), registered in ``SERVER_MESSAGES``
``codec``     :func:`decode` / :func:`encode` (server side),
              :func:`encode_request` / :func:`decode_server` (client side)
``version``   :data:`PROTOCOL_VERSION` and :func:`negotiate`
``social``    profiles, daily history and spectating (``profile.get``, ``race.watch``...)
``tokens``    ``token.rotate`` and ``token.revoke_all`` (version 5)
``variants``  the variant descriptors of ``welcome`` (version 6)
``signin``    sign-in codes: ``signin.code``, ``signin.redeem`` (version 7)
``freeplay``  free play: ``free.start`` (version 7)
``rematch``   ``race.rematch``, ``race.decline`` and their pushes (version 7)
``tiers``     ``calendar.get`` and the calendar (version 8)
``devices``   ``devices``, ``device.revoke``, ``device.signed_in``, ``signin.tries_used``
              (version 9)
``spoken``    :func:`~protocol.spoken.as_spoken`: a race message as an older version knows it
              (no ``resigned`` before version 10)

The codec is compiled to C by mypyc when the package is installed (``setup.py``; the source
here is what is compiled); :data:`COMPILED` says whether it is.

Exceptions
----------
Every exception raised on purpose by this package is a :class:`ProtocolError`; decoding
``bytes``/``str`` never raises anything else. ``code`` is the :class:`ErrorCode` sent
in the ``error`` reply, ``id`` the request id when it could be read::

    Exception
     └── ProtocolError          any code (default "internal"); the server may raise it too
          ├── BadRequest        "bad_request"  malformed frame, bad/missing/unknown field
          │    ├── FrameTooLarge "too_large"   frame over the size limit
          │    ├── UnknownType   "unknown_type" no message class for "type"
          │    └── InvalidName   "invalid_name" display name breaks the naming rules
          ├── UnsupportedVersion "unsupported_version"  from negotiate()
          └── EncodeError        "internal"     the caller built an invalid message

Decoding raises; it never returns an error value. Server loop sketch::

    try:
        request = decode(frame)                      # ClientMessage subclass
        reply = await HANDLERS[type(request)](conn, request)
    except ProtocolError as exc:
        reply = ErrorReply.from_error(exc)           # echoes exc.id when known
    await ws.send(encode(reply, binary=isinstance(frame, bytes)))
"""

from protocol import codec
from protocol.codec import (
    MAX_DEPTH,
    MAX_FRAME_SIZE,
    check_tree,
    decode,
    decode_server,
    encode,
    encode_request,
    forget_plain,
    keep_plain,
    parse_frame,
)
from protocol.devices import (
    DeviceInfo,
    DeviceRevoke,
    DevicesGet,
    DeviceSignedIn,
    DevicesReply,
    SigninTriesUsed,
)
from protocol.errors import (
    ERROR_CODES,
    BadRequest,
    EncodeError,
    ErrorCode,
    FrameTooLarge,
    InvalidName,
    ProtocolError,
    UnknownType,
    UnsupportedVersion,
)
from protocol.events import (
    SERVER_MESSAGES,
    ActiveRace,
    DailyGame,
    DayTier,
    ErrorReply,
    Finished,
    GameFinished,
    GameResult,
    GameState,
    Leaderboard,
    LeaderboardEntry,
    Moved,
    PlayerRank,
    Pong,
    Push,
    Reply,
    SafeMove,
    ServerMessage,
    Shutdown,
    Welcome,
)
from protocol.fields import MAX_REQUEST_ID, MAX_SAFE_INT, validate_name
from protocol.freeplay import FreeStart
from protocol.messages import (
    CLIENT_MESSAGES,
    ClientMessage,
    DailyStart,
    Finish,
    GameGet,
    Hello,
    LeaderboardAround,
    LeaderboardRank,
    LeaderboardTop,
    Move,
    Ping,
    Resign,
    Undo,
)
from protocol.races import (
    RaceAround,
    RaceBoard,
    RaceCreate,
    RaceEvent,
    RaceGet,
    RaceHistory,
    RaceInfo,
    RaceJoin,
    RaceLeave,
    RaceLeft,
    RaceQueue,
    RaceQueued,
    Racer,
    RaceRank,
    RaceRankReply,
    RaceRecent,
    RaceRoom,
    RaceStart,
    RaceStarted,
    RaceSummary,
    RaceTop,
    RaceUpdate,
    RatingEntry,
)
from protocol.rematch import (
    RaceDecline,
    RaceDeclined,
    RaceRematch,
    RematchDeclined,
    RematchOffer,
)
from protocol.schema import Struct
from protocol.signin import SigninCode, SigninCodeReply, SigninRedeem
from protocol.social import (
    DailyStats,
    DayResult,
    HistoryGet,
    HistoryPage,
    Profile,
    ProfileGet,
    RaceList,
    RaceListing,
    RaceListReply,
    RaceSpectate,
    RaceSpectators,
    RaceStats,
    RaceUnwatch,
    RaceUnwatched,
    RaceWatch,
    RaceWatching,
    SpectatorBoard,
)
from protocol.solving import DailySeeds, ExportReply, GameExport, Hint, HintReply, SeedsReply
from protocol.tiers import (
    Calendar,
    CalendarDay,
    CalendarGet,
    MonthCrowns,
    TierCell,
    VariantDay,
)
from protocol.tokens import TokenReply, TokenRevokeAll, TokenRotate
from protocol.variants import Family, VariantInfo
from protocol.version import (
    ACCOUNTS,
    DESCRIPTORS,
    DEVICES,
    FAIR_PLAY,
    LEAN_MOVES,
    MOVE_VIEWS,
    PROTOCOL_VERSION,
    RESIGNED,
    RESUME,
    SUPPORTED_VERSIONS,
    TIERS,
    negotiate,
)

#: True when the codec runs compiled by mypyc (``setup.py``), False when it runs as Python.
COMPILED: bool = not codec.__file__.endswith(".py")

__all__ = [
    "ACCOUNTS",
    "CLIENT_MESSAGES",
    "COMPILED",
    "DESCRIPTORS",
    "DEVICES",
    "ERROR_CODES",
    "FAIR_PLAY",
    "LEAN_MOVES",
    "MAX_DEPTH",
    "MAX_FRAME_SIZE",
    "MAX_REQUEST_ID",
    "MAX_SAFE_INT",
    "MOVE_VIEWS",
    "PROTOCOL_VERSION",
    "RESIGNED",
    "RESUME",
    "SERVER_MESSAGES",
    "SUPPORTED_VERSIONS",
    "TIERS",
    "ActiveRace",
    "BadRequest",
    "Calendar",
    "CalendarDay",
    "CalendarGet",
    "ClientMessage",
    "DailyGame",
    "DailySeeds",
    "DailyStart",
    "DailyStats",
    "DayResult",
    "DayTier",
    "DeviceInfo",
    "DeviceRevoke",
    "DeviceSignedIn",
    "DevicesGet",
    "DevicesReply",
    "EncodeError",
    "ErrorCode",
    "ErrorReply",
    "ExportReply",
    "Family",
    "Finish",
    "Finished",
    "FrameTooLarge",
    "FreeStart",
    "GameExport",
    "GameFinished",
    "GameGet",
    "GameResult",
    "GameState",
    "Hello",
    "Hint",
    "HintReply",
    "HistoryGet",
    "HistoryPage",
    "InvalidName",
    "Leaderboard",
    "LeaderboardAround",
    "LeaderboardEntry",
    "LeaderboardRank",
    "LeaderboardTop",
    "MonthCrowns",
    "Move",
    "Moved",
    "Ping",
    "PlayerRank",
    "Pong",
    "Profile",
    "ProfileGet",
    "ProtocolError",
    "Push",
    "RaceAround",
    "RaceBoard",
    "RaceCreate",
    "RaceDecline",
    "RaceDeclined",
    "RaceEvent",
    "RaceGet",
    "RaceHistory",
    "RaceInfo",
    "RaceJoin",
    "RaceLeave",
    "RaceLeft",
    "RaceList",
    "RaceListReply",
    "RaceListing",
    "RaceQueue",
    "RaceQueued",
    "RaceRank",
    "RaceRankReply",
    "RaceRecent",
    "RaceRematch",
    "RaceRoom",
    "RaceSpectate",
    "RaceSpectators",
    "RaceStart",
    "RaceStarted",
    "RaceStats",
    "RaceSummary",
    "RaceTop",
    "RaceUnwatch",
    "RaceUnwatched",
    "RaceUpdate",
    "RaceWatch",
    "RaceWatching",
    "Racer",
    "RatingEntry",
    "RematchDeclined",
    "RematchOffer",
    "Reply",
    "Resign",
    "SafeMove",
    "SeedsReply",
    "ServerMessage",
    "Shutdown",
    "SigninCode",
    "SigninCodeReply",
    "SigninRedeem",
    "SigninTriesUsed",
    "SpectatorBoard",
    "Struct",
    "TierCell",
    "TokenReply",
    "TokenRevokeAll",
    "TokenRotate",
    "Undo",
    "UnknownType",
    "UnsupportedVersion",
    "VariantDay",
    "VariantInfo",
    "Welcome",
    "check_tree",
    "decode",
    "decode_server",
    "encode",
    "encode_request",
    "forget_plain",
    "keep_plain",
    "negotiate",
    "parse_frame",
    "validate_name",
]
