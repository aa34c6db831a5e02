"""Board rendering with rich: one function per variant family, all working on engine views.

A view (``Game.view()``) never holds a face-down card's identity; it is drawn as a back
(``░░░``). Piles are drawn as numbered columns, wrapped into groups that fit the console
width; Tri Peaks is drawn as its three peaks with position numbers above every card.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from rich.console import Group, RenderableType
from rich.text import Text

from engine import HIDDEN, VARIANTS

SUIT_SYMBOLS: Final = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
BACK: Final = "░░░"
CELL: Final = 3  # characters per card
GAP: Final = 1
RED: Final = "bold red"
BLACK: Final = "bold"


@dataclass(frozen=True)
class Style:
    """How cards are written: suit symbols (default) or letters (``ascii``)."""

    ascii: bool = False

    def card(self, text: str | None, *, top: bool = False) -> Text:
        """One card in a 3-character cell: ``10♥``, `` A♠``, a back or blank (None)."""
        if text is None:
            return Text(" " * CELL)
        if text == HIDDEN:
            return Text(BACK, style="dim")
        rank, suit = text[:-1], text[-1].upper()
        shown = rank + (suit if self.ascii else SUIT_SYMBOLS.get(suit, suit))
        style = RED if suit in "DH" else BLACK
        if top:
            style += " underline"
        return Text(shown.rjust(CELL), style=style)

    def empty(self, suit: str | None = None) -> Text:
        """An empty place: ``  ·`` or, for a suit foundation, ``·♣``."""
        if suit is None:
            return Text("  ·", style="dim")
        return Text(" ·" + (suit if self.ascii else SUIT_SYMBOLS[suit]), style="dim")


def _columns(piles: list[list[str]], width: int, style: Style,
             empty_mark: bool = True) -> list[Text]:
    """Piles as numbered columns (bottom card first), wrapped into groups fitting `width`."""
    n = len(piles)
    col = CELL + GAP
    fit = max(1, (width + GAP) // col)
    groups = math.ceil(n / fit)
    per = math.ceil(n / groups)
    lines: list[Text] = []
    for g in range(groups):
        idx = list(range(g * per, min(n, (g + 1) * per)))
        header = Text()
        for i in idx:
            header.append(f"{i + 1:>{CELL}}" + " " * GAP, style="cyan")
        lines.append(header)
        height = max((len(piles[i]) for i in idx), default=0)
        for row in range(max(height, 1)):
            line = Text()
            for i in idx:
                pile = piles[i]
                if row < len(pile):
                    line.append_text(style.card(pile[row], top=row == len(pile) - 1))
                elif row == 0 and empty_mark:
                    line.append_text(style.empty())
                else:
                    line.append(" " * CELL)
                line.append(" " * GAP)
            lines.append(line)
        if g + 1 < groups:
            lines.append(Text())
    for line in lines:
        line.rstrip()
    return lines


def _pairing(view: Mapping[str, Any], style: Style, width: int) -> list[Text]:
    piles = [list(p) for p in view["piles"]]
    lines = [Text(f"Removed: {view.get('discard', 0)} cards", style="dim")]
    lines += _columns(piles, width, style)
    return lines


# Tri Peaks geometry: x offset (in characters) of every position, row by row.
_TP_ROWS: Final = ((0, 3), (3, 9), (9, 18), (18, 28))


def _tripeaks_x() -> list[int]:
    x = [0] * 28
    for k in range(10):
        x[18 + k] = 4 * k
    for k in range(9):
        x[9 + k] = 4 * k + 2
    for p in range(3):
        for i in range(2):
            x[3 + 2 * p + i] = 12 * p + 4 * i + 4
        x[p] = 12 * p + 6
    return x


_TP_X: Final = _tripeaks_x()


def _tripeaks(view: Mapping[str, Any], style: Style, width: int) -> list[Text]:
    tableau: list[str | None] = list(view["tableau"])
    lines: list[Text] = []
    for start, end in _TP_ROWS:
        numbers, cards = Text(), Text()
        for pos in range(start, end):
            pad = _TP_X[pos] - len(cards.plain)
            numbers.append(" " * (_TP_X[pos] - len(numbers.plain)))
            cards.append(" " * pad)
            if tableau[pos] is None:
                numbers.append(" " * CELL)
                cards.append(" " * CELL)
            else:
                numbers.append(f"{pos + 1:>{CELL}}", style="cyan")
                cards.append_text(style.card(tableau[pos]))
        numbers.rstrip()
        cards.rstrip()
        lines += [numbers, cards]
    foundation = list(view.get("foundation") or [])
    line = Text("Foundation ")
    line.append_text(style.card(foundation[-1], top=True) if foundation else style.empty())
    line.append(f"   ({len(foundation)} played)   Stock {view.get('stock', 0)}")
    lines += [Text(), line]
    return lines


def _tableau_piles(view: Mapping[str, Any]) -> list[list[str]]:
    return [[HIDDEN] * int(p["down"]) + list(p["up"]) for p in view["piles"]]


def _foundation_row(view: Mapping[str, Any], style: Style, suited: bool) -> Text:
    line = Text("Foundations ")
    for i, f in enumerate(view["foundations"]):
        if suited and i % 3 == 0 and i:
            line.append(" ")
        if f:
            line.append_text(style.card(f[-1]))
        else:
            line.append_text(style.empty("CDHS"[i // 3] if suited else None))
        line.append(" ")
    line.rstrip()
    return line


def _tripledeck(view: Mapping[str, Any], style: Style, width: int) -> list[Text]:
    waste = list(view.get("waste") or [])
    top = Text(f"Stock {view.get('stock', 0):>3}   Waste {len(waste):>3}: ")
    shown = waste[-3:]
    for k, c in enumerate(shown):
        top.append_text(style.card(c, top=k == len(shown) - 1))
        top.append(" ")
    if not waste:
        top.append_text(style.empty())
    top.rstrip()
    return [top, _foundation_row(view, style, suited=False), Text(),
            *_columns(_tableau_piles(view), width, style)]


def _easthaven(view: Mapping[str, Any], style: Style, width: int) -> list[Text]:
    top = Text(f"Stock {view.get('stock', 0):>3}")
    return [top, _foundation_row(view, style, suited=True), Text(),
            *_columns(_tableau_piles(view), width, style)]


_FAMILY: Final = {
    "fourteen-out": _pairing,
    "triple-fourteens": _pairing,
    "triple-triangle": _tripeaks,
    "triple-deck": _tripledeck,
    "triple-deck-kings": _tripledeck,
    "triple-easthaven": _easthaven,
}


def fmt_time(ms: int) -> str:
    """``m:ss`` (or ``h:mm:ss``) from milliseconds."""
    s = max(0, ms) // 1000
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02}:{sec:02}" if h else f"{m}:{sec:02}"


def progress_text(variant_id: str, data: Mapping[str, Any]) -> str:
    """``cleared 12/52`` or ``score 345/936`` from a view or result map."""
    cls = VARIANTS[variant_id]
    if cls.scored:
        return f"score {data.get('score', 0)}/{_max_score(cls.ranks.stop - 1)}"
    total = 28 if variant_id == "triple-triangle" else cls.decks * 4 * len(cls.ranks)
    return f"cleared {data.get('cleared', 0)}/{total}"


def _max_score(top_rank: int) -> int:
    return 12 * top_rank * (top_rank + 1) // 2


def status_line(view: Mapping[str, Any], *, title: str | None = None,
                elapsed_ms: int | None = None, extra: str = "") -> Text:
    """The line above a board: variant, moves, cleared/score, clock."""
    variant_id = str(view["variant"])
    parts = [title or VARIANTS[variant_id].title, f"moves {view.get('moves', 0)}",
             progress_text(variant_id, view)]
    if elapsed_ms is not None:
        parts.append(f"time {fmt_time(elapsed_ms)}")
    if extra:
        parts.append(extra)
    line = Text(" · ".join(parts), style="bold")
    if view.get("won"):
        line.append("  WON", style="bold green")
    elif view.get("over"):
        line.append("  GAME OVER", style="bold yellow")
    return line


def render_board(view: Mapping[str, Any], *, width: int = 80, ascii: bool = False,
                 title: str | None = None, elapsed_ms: int | None = None,
                 extra: str = "") -> RenderableType:
    """The whole board of a view, with its status line, fitting `width` where possible."""
    style = Style(ascii=ascii)
    body = _FAMILY[str(view["variant"])](view, style, width)
    return Group(status_line(view, title=title, elapsed_ms=elapsed_ms, extra=extra), *body)
