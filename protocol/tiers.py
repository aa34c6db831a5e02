"""Tiers per day, the month calendar and badges (protocol version 8).

Request: ``calendar.get`` (a month's days, each variant's tiers and the player's state in
each), answered by ``calendar``. The day's tiers of today also come with ``welcome``
(``tiers``), a tier is chosen with ``daily.start``'s ``tier``, a catch-up game with its
``date``, and ``profile`` carries ``months`` (crowns and badge per month).
"""

from __future__ import annotations

from typing import Annotated, Final

from protocol.events import Reply, TierState
from protocol.fields import COUNT, Count, DateText, Flag, ListOf, Str, TierName, VariantName
from protocol.messages import ClientMessage
from protocol.schema import Nested, Struct, fields_of, struct

__all__ = [
    "BADGE",
    "MONTH",
    "Calendar",
    "CalendarDay",
    "CalendarGet",
    "MonthCrowns",
    "MonthList",
    "TierCell",
    "VariantDay",
]

#: A month, ``YYYY-MM`` (1970-01 to 2999-12: a calendar has no other).
MONTH: Final = Str(7, 7, r"(19[7-9][0-9]|2[0-9]{3})-(0[1-9]|1[0-2])", "a month YYYY-MM")
MonthText = Annotated[str, MONTH]
#: A month's badge by its crowns.
BADGE: Final = Str(4, 7, r"bronze|silver|gold|diamond", "a badge")
BadgeName = Annotated[str, BADGE]


@struct
class CalendarGet(ClientMessage, type="calendar.get"):
    """The calendar of ``month`` (absent: the current month, UTC); answered by ``calendar``.
    Only the current month's past days can be played as catch-up."""

    month: MonthText | None = None
    variant: VariantName | None = None  # absent: every variant


@struct
class TierCell(Struct):
    """The player's state in one tier of a day (``catchup``: the catch-up game's state;
    absent when false). Kept small: a month of six variants has 744 of them."""

    tier: TierName
    state: TierState
    catchup: Flag | None = None


@struct
class VariantDay(Struct):
    """One variant's tiers of a day, easiest first."""

    variant: VariantName
    tiers: Annotated[tuple[TierCell, ...], ListOf(Nested(TierCell), 0, 4)]


@struct
class CalendarDay(Struct):
    """One day of the month: every variant's tiers and the player's state in each.
    ``catchup_open``: a past day of the current month, whose tiers not played on the day
    can be played now as catch-up games."""

    date: DateText
    catchup_open: Flag
    variants: Annotated[tuple[VariantDay, ...], ListOf(Nested(VariantDay), 0, 64)]


@struct
class MonthCrowns(Struct):
    """A month's crowns and the badge they earn (absent below bronze)."""

    month: MonthText
    crowns: Count
    badge: BadgeName | None = None


MonthList = Annotated[tuple[MonthCrowns, ...], ListOf(Nested(MonthCrowns), 0, 1200)]


@struct
class Calendar(Reply, type="calendar"):
    """Reply to ``calendar.get``: ``today`` (UTC), every day of ``month`` in order, and the
    player's crowns and badge of the month so far (``crowns``: each tier won, ranked or
    catch-up: easy 1, medium 2, hard 3, expert 4)."""

    month: MonthText
    today: DateText
    days: Annotated[tuple[CalendarDay, ...], ListOf(Nested(CalendarDay), 0, 31)]
    crowns: Count
    badge: BadgeName | None = None
    #: Crowns each badge needs (bronze, silver, gold, diamond), for the client to show.
    thresholds: Annotated[tuple[int, ...], ListOf(COUNT, 4, 4)] = (20, 60, 150, 300)


for _cls in (CalendarGet, TierCell, VariantDay, CalendarDay, MonthCrowns, Calendar):
    fields_of(_cls)
