"""`solitaire calendar`: the month's days, each variant's tiers and your state in each, with
the month's crowns and badge (protocol version 8). At 80 columns: one line per day, one
column of four marks (easy, medium, hard, expert) per variant."""

from __future__ import annotations

import argparse

from rich.console import Group, RenderableType
from rich.text import Text

import protocol as p
from protocol.schema import dump_struct

from . import render
from .commands import Ctx, need_tiers, open_session

__all__ = ["calendar_view", "cmd_calendar"]

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


def calendar_view(cal: p.Calendar) -> RenderableType:
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
    width = 5
    lines.append(Text("           " + " ".join(f"{i + 1:<{width - 1}}" for i in range(len(names)))))
    for day in cal.days:
        row = Text(day.date[5:] + " " + ("+" if day.catchup_open else " ") + "   ")
        marks = ["".join(_mark(c) for c in v.tiers).ljust(width - 1) for v in day.variants]
        row.append(" ".join(marks))
        if day.date == cal.today:
            row.append("  today", style="bold")
        lines.append(row)
    lines.append(
        Text("  ".join(f"{i + 1} {n}" for i, n in enumerate(names)), style="dim", overflow="fold")
    )
    lines.append(
        Text("+ a past day to catch up: solitaire daily VARIANT --tier T --date D", style="dim")
    )
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
        ctx.out.show(calendar_view(cal))
    return 0
