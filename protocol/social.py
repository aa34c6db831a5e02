"""Profiles, daily history and spectating: who a player is, what they played, who is racing.

Requests: ``profile.get``, ``history.get``, ``race.list``, ``race.watch``, ``race.unwatch``.
Pushes to spectators: ``race.spectate`` (a racer's board, delayed) plus the ordinary
``race.event`` / ``race.update`` of the race (delayed alike); to racers and spectators:
``race.spectators`` (how many watch). A spectator's boards are the racers' own views: every
face-down and stock card stays hidden, during the race and after it.
"""

from __future__ import annotations

from typing import Annotated

from protocol.errors import BadRequest
from protocol.events import Push, Reply
from protocol.fields import (
    Count,
    DateText,
    DisplayName,
    Flag,
    GameId,
    Int,
    Limit,
    ListOf,
    Millis,
    PlayerId,
    RankNo,
    Score,
    VariantName,
    View,
)
from protocol.messages import ClientMessage
from protocol.races import RaceId, RaceInfoMap, RacerList, SmallLimit, Status
from protocol.schema import Nested, Struct, fields_of, struct
from protocol.tiers import MonthList

Percent = Annotated[int, Int(0, 100)]


# -- requests ----------------------------------------------------------------------------------


@struct
class ProfileGet(ClientMessage, type="profile.get"):
    """A player's profile: the requester's own, or another's by ``player_id`` or ``name``."""

    player_id: PlayerId | None = None
    name: DisplayName | None = None

    def check(self) -> None:
        if self.player_id is not None and self.name is not None:
            raise BadRequest("give at most one of 'player_id' or 'name'")


@struct
class HistoryGet(ClientMessage, type="history.get"):
    """A page of a player's daily results on ``variant``, newest first: the days before
    ``before`` (the previous page's ``next_before``; absent: from the newest)."""

    variant: VariantName
    player_id: PlayerId | None = None
    before: DateText | None = None
    limit: Limit = 30


@struct
class RaceList(ClientMessage, type="race.list"):
    """The races in countdown or running now (optionally of one variant), to watch."""

    variant: VariantName | None = None
    limit: SmallLimit = 20


@struct
class RaceWatch(ClientMessage, type="race.watch"):
    """Watch a race as a spectator (not a racer: no game, no moves)."""

    race_id: RaceId


@struct
class RaceUnwatch(ClientMessage, type="race.unwatch"):
    """Stop watching a race (closing the connection does too)."""

    race_id: RaceId


# -- nested structs ----------------------------------------------------------------------------


@struct
class DailyStats(Struct):
    """A player's daily-challenge record on one variant. Streaks count consecutive UTC days;
    a current streak is alive while its last day is today or yesterday."""

    variant: VariantName
    played: Count
    won: Count
    streak: Count
    longest_streak: Count
    won_streak: Count
    longest_won_streak: Count
    best_time_ms: Millis | None = None
    best_score: Score | None = None
    percentile: Percent | None = None
    last_played: DateText | None = None


@struct
class RaceStats(Struct):
    """A player's race record on one variant (only variants raced); ``rating`` is absent
    until a race of the variant was rated."""

    variant: VariantName
    wins: Count
    losses: Count
    played: Count
    forfeits: Count
    rating: Score | None = None


@struct
class DayResult(Struct):
    """One finished daily game. ``rank``/``total``/``percentile`` are the final place, once
    the day is over; ``replayable`` is true once ``game.export`` serves ``game_id``."""

    variant: VariantName
    date: DateText
    game_id: GameId
    won: Flag
    resigned: Flag
    cleared: Count
    score: Score
    time_ms: Millis
    moves: Count
    hints: Count
    finished_at: Millis
    replayable: Flag
    rank: RankNo | None = None
    total: Count | None = None
    percentile: Percent | None = None


@struct
class SpectatorBoard(Struct):
    """A racer's board as the racer sees it (``view``: hidden cards hidden) after ``seq``
    moves, as it stood at ``as_of``; ``view`` is absent until a position old enough to show
    is known (it follows in a ``race.spectate`` push)."""

    player_id: PlayerId
    name: DisplayName
    seq: Count
    as_of: Millis
    view: View | None = None


@struct
class RaceListing(Struct):
    """A race one can watch."""

    race_id: RaceId
    variant: VariantName
    status: Status
    racers: RacerList
    spectators: Count
    start_at: Millis | None = None
    ends_at: Millis | None = None


DailyStatsList = Annotated[tuple[DailyStats, ...], ListOf(Nested(DailyStats), 0, 64)]
RaceStatsList = Annotated[tuple[RaceStats, ...], ListOf(Nested(RaceStats), 0, 64)]
DayResults = Annotated[tuple[DayResult, ...], ListOf(Nested(DayResult), 0, 31 * 64)]
Boards = Annotated[tuple[SpectatorBoard, ...], ListOf(Nested(SpectatorBoard), 0, 8)]
BoardMap = Annotated[SpectatorBoard, Nested(SpectatorBoard)]
Listings = Annotated[tuple[RaceListing, ...], ListOf(Nested(RaceListing), 0, 100)]


# -- replies and pushes ------------------------------------------------------------------------


@struct
class Profile(Reply, type="profile"):
    """Reply to ``profile.get``. ``recent``: the last 30 days' daily results, newest first."""

    player_id: PlayerId
    name: DisplayName
    joined: Millis
    me: Flag
    daily: DailyStatsList
    races: RaceStatsList
    recent: DayResults
    #: Version 8: crowns and badge of every month with crowns, newest first (past ones kept).
    months: MonthList | None = None


@struct
class HistoryPage(Reply, type="history"):
    """Reply to ``history.get``; ``next_before`` is absent on the last page."""

    player_id: PlayerId
    variant: VariantName
    entries: DayResults
    next_before: DateText | None = None


@struct
class RaceListReply(Reply, type="race.list"):
    """Reply to ``race.list``: the newest races first."""

    races: Listings


@struct
class RaceWatching(Reply, type="race.watching"):
    """Reply to ``race.watch``: the race, each racer's board and the spectators' delay."""

    race: RaceInfoMap
    boards: Boards
    spectators: Count
    delay_ms: Millis


@struct
class RaceUnwatched(Reply, type="race.unwatched"):
    """Reply to ``race.unwatch``."""

    race_id: RaceId


@struct
class RaceSpectate(Push, type="race.spectate"):
    """Push to spectators: a racer's board after a move, ``delay_ms`` after the move."""

    race_id: RaceId
    board: BoardMap


@struct
class RaceSpectators(Push, type="race.spectators"):
    """Push to a race's racers and spectators: how many spectators watch it now."""

    race_id: RaceId
    count: Count


for _cls in (
    ProfileGet,
    HistoryGet,
    RaceList,
    RaceWatch,
    RaceUnwatch,
    DailyStats,
    RaceStats,
    DayResult,
    SpectatorBoard,
    RaceListing,
    Profile,
    HistoryPage,
    RaceListReply,
    RaceWatching,
    RaceUnwatched,
    RaceSpectate,
    RaceSpectators,
):
    fields_of(_cls)
