"""Requests: the messages a client sends to the server.

Each request is a frozen, keyword-only dataclass (`@struct`) deriving from :class:`ClientMessage`
with its wire ``type`` given as a class keyword. Defining the class registers it in
:data:`CLIENT_MESSAGES`; nothing else is needed to add a request::

    @struct
    class Rename(ClientMessage, type="player.rename"):
        name: DisplayName

Every request carries the client-chosen ``id`` (``0..2**31-1``) that its reply echoes.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from protocol.errors import BadRequest
from protocol.fields import (
    Around,
    Count,
    DateText,
    DisplayName,
    Features,
    Flag,
    GameId,
    Limit,
    MoveText,
    Offset,
    RequestId,
    TierName,
    Token,
    VariantName,
    Versions,
)
from protocol.schema import Struct, fields_of, register, struct

_client_messages: dict[str, type[ClientMessage]] = {}

CLIENT_MESSAGES: Mapping[str, type[ClientMessage]] = MappingProxyType(_client_messages)
"""Every request class by its wire ``type``."""


@struct
class ClientMessage(Struct):
    """Base class of requests. ``type`` is the wire type; ``id`` the request id."""

    type: ClassVar[str]
    id: RequestId

    def __init_subclass__(cls, *, type: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if type is not None:
            cls.type = type
            register(_client_messages, cls, type)


@struct
class Hello(ClientMessage, type="hello"):
    """First request of every connection. Give exactly one of ``name`` (to create a
    player) or ``token`` (to resume one); ``versions`` lists the protocol versions spoken."""

    versions: Versions
    name: DisplayName | None = None
    token: Token | None = None
    #: Optional behaviours asked for, added without a version: ``rules_free`` (issue 27).
    features: Features | None = None

    def check(self) -> None:
        if (self.name is None) == (self.token is None):
            raise BadRequest("give exactly one of 'name' or 'token'")


@struct
class Ping(ClientMessage, type="ping"):
    """Liveness / latency probe; answered by ``pong``."""


@struct
class DailyStart(ClientMessage, type="daily.start"):
    """Start (or resume) today's daily game of ``variant``; answered by ``game``.

    Version 8: ``tier`` picks one of the day's tiers (absent: ``medium``, the daily game);
    ``date``, a past day of the current month (UTC), starts (or resumes) that day's
    catch-up game of the tier instead: on no board, counted for the month's crowns."""

    variant: VariantName
    tier: TierName | None = None
    date: DateText | None = None


@struct
class GameGet(ClientMessage, type="game.get"):
    """Fetch the current state of one of the player's games; answered by ``game``."""

    game_id: GameId


@struct
class Move(ClientMessage, type="move"):
    """Play one move in the engine's text notation; answered by ``moved``.

    ``expected_seq`` is the number of moves the client believes are applied; the server
    answers ``conflict`` if it differs (stale or duplicate submission). ``with_view`` (version
    4 on) asks for the whole new view in the reply.
    """

    game_id: GameId
    move: MoveText
    expected_seq: Count | None = None
    with_view: Flag | None = None


@struct
class Undo(ClientMessage, type="undo"):
    """Take back the last move; answered by ``moved`` (``with_view`` as for ``move``)."""

    game_id: GameId
    expected_seq: Count | None = None
    with_view: Flag | None = None


@struct
class Resign(ClientMessage, type="resign"):
    """Give up the game; the result is recorded. Answered by ``finished``."""

    game_id: GameId


@struct
class Finish(ClientMessage, type="finish"):
    """End a scoring game (the Triple Deck games, which are finished, not lost) as it stands:
    its score is recorded, not as a resignation. Protocol 3 on; answered by ``finished``."""

    game_id: GameId


@struct
class LeaderboardTop(ClientMessage, type="leaderboard.top"):
    """A page of a daily leaderboard (``date`` defaults to today, UTC; ``tier``, version 8:
    that tier's board, absent or ``medium``: the daily board)."""

    variant: VariantName
    date: DateText | None = None
    tier: TierName | None = None
    offset: Offset = 0
    limit: Limit = 20


@struct
class LeaderboardAround(ClientMessage, type="leaderboard.around"):
    """The ``k`` entries above and below the requesting player, and the player's own."""

    variant: VariantName
    date: DateText | None = None
    tier: TierName | None = None
    k: Around = 5


@struct
class LeaderboardRank(ClientMessage, type="leaderboard.rank"):
    """The requesting player's rank; answered by ``rank``."""

    variant: VariantName
    date: DateText | None = None
    tier: TierName | None = None


for _cls in _client_messages.values():
    fields_of(_cls)  # fail at import time, not on first use, if a declaration is wrong
