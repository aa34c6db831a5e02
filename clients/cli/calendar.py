"""`solitaire calendar`: the month's days, each variant's tiers and your state in each, with
the month's crowns and badge (protocol version 8). At 80 columns: one line per day, one
column of four marks (easy, medium, hard, expert) per variant."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.text import Text

import protocol as p
from protocol.schema import dump_struct

from . import render
from .commands import Ctx, need_tiers, open_session

__all__ = ["calendar_view", "catch_up_hint", "cmd_calendar", "wrap_entries"]

#: A tier's mark by its state; a catch-up game's state is the lower-case mark.
MARKS = {
    "won": "W",
    "lost": "L",
    "playing": "P",
    "not_played": ".",
    "absent": "-",
    "pending": "?",
    "upcoming": " ",
}
LEGEND = (
    "Each column: easy, medium, hard, expert. W won, L lost, P playing, . not played, "
    "- no deal that day, ? being certified; lower case: a catch-up game (on no board; a deal "
    "of the same tier, not the day's own). "
    "Crowns: easy 1, medium 2, hard 3, expert 4."
)


def _mark(cell: p.TierCell) -> str:
    mark = MARKS.get(cell.state, "?")
    return mark.lower() if cell.catchup else mark


def wrap_entries(entries: Sequence[str], width: int, sep: str = "  ") -> list[str]:
    """``entries`` joined by ``sep`` in lines of at most ``width`` columns, breaking only
    between entries (a variant's name is never cut: "Triple Deck / with Kings")."""
    lines: list[str] = []
    line = ""
    for entry in entries:
        if line and len(line) + len(sep) + len(entry) > width:
            lines.append(line)
            line = entry
        else:
            line = f"{line}{sep}{entry}" if line else entry
    if line:
        lines.append(line)
    return lines


def catch_up_hint(cal: p.Calendar) -> list[str]:
    """The footer's catch-up line: a command that works, for a day and tier the player can
    still play (a past day of this month, on or after the day they joined, its tier not
    played on the day), or why there is none. Never a day before the player joined: the
    server refuses those ("before the day you joined")."""
    playable = [
        (day.date, v.variant, cell.tier)
        for day in cal.days
        if day.catchup_open
        for v in day.variants
        for cell in v.tiers
        if cell.state == "not_played" or (cell.state == "playing" and cell.catchup)
    ]
    if not playable:
        if cal.month != cal.today[:7] or cal.today.endswith("-01"):
            return []  # a month over (no catch-up any more) or to come; or its first day
        if any(day.catchup_open for day in cal.days):
            return ["Nothing to catch up on: every tier of the days since you joined is played."]
        return [
            "Nothing to catch up on yet: a day since you joined (today too) can be played",
            "as catch-up once it is over, until the month ends.",
        ]
    dates = sorted({date for date, _, _ in playable})
    date, variant, tier = max(playable, key=lambda found: found[0])  # the latest open day
    span = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    return [
        f"+ a day to catch up on ({span}), e.g.:",
        f"  solitaire daily {variant} --tier {tier} --date {date}",
    ]


def calendar_view(cal: p.Calendar, width: int = 80) -> RenderableType:
    variants = [v.variant for v in cal.days[0].variants] if cal.days else []
    badge = f", {cal.badge} badge" if cal.badge else ""
    nxt = next(
        (f"{n} for {b}" for n, b in zip(cal.thresholds, _BADGES, strict=True) if cal.crowns < n), ""
    )
    head = Text(f"{cal.month}: {cal.crowns} crowns{badge}", style="bold")
    if nxt:
        head.append(f"  (next: {nxt})", style="dim")
    lines: list[RenderableType] = [head]
    names = [render.name_of(v) for v in variants]
    col = 5
    lines.append(Text("           " + " ".join(f"{i + 1:<{col - 1}}" for i in range(len(names)))))
    for day in cal.days:
        row = Text(day.date[5:] + " " + ("+" if day.catchup_open else " ") + "   ")
        marks = ["".join(_mark(c) for c in v.tiers).ljust(col - 1) for v in day.variants]
        row.append(" ".join(marks))
        if day.date == cal.today:
            row.append("  today", style="bold")
        lines.append(row)
    legend = wrap_entries([f"{i + 1} {n}" for i, n in enumerate(names)], width)
    lines.extend(Text(line, style="dim") for line in legend)
    lines.extend(Text(line, style="dim") for line in catch_up_hint(cal))
    lines.append(Text(LEGEND, style="dim"))
    return Group(*lines)


_BADGES = ("bronze", "silver", "gold", "diamond")


async def cmd_calendar(args: argparse.Namespace, ctx: Ctx) -> int:
    """The month's calendar of tiers (default: this month)."""
    session = await open_session(ctx)
    try:
        need_tiers(session, "the calendar")
        cal = await session.request(
            lambda rid: p.CalendarGet(id=rid, month=args.month, variant=args.variant),
            p.Calendar,
        )
    finally:
        await session.close()
    if ctx.out.json:
        doc = {"command": "calendar", **dump_struct(cal)}
        doc.pop("id", None)
        ctx.out.emit(doc)
    else:
        ctx.out.show(calendar_view(cal, ctx.out.console.width))
    return 0
