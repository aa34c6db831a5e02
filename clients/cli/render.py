"""All of the client's rendering: data in, text or rich renderables out.

Boards: one function per variant family, all working on engine views. A view
(``Game.view()``) never holds a face-down card's identity; it is drawn as a back (``░░░``).
Piles are drawn as numbered columns, wrapped into groups that fit the console width; Tri
Peaks is drawn as its three peaks with position numbers above every card.

Then the rest of what a person reads: results, the replies of the in-game commands, the
lines of a moves script, leaderboards, the variants table, race rooms, progress and
standings, and the client's notices. `View` is where the commands send what they show.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

import protocol as p
from engine import HIDDEN, VARIANTS
from engine.tripeaks import TABLEAU as TRIPEAKS_CARDS
from engine.tripeaks import TriPeaks
from engine.views import (
    EASTHAVEN_VARIANTS,
    PAIRING_VARIANTS,
    TRIPEAKS_VARIANTS,
    TRIPLE_DECK_VARIANTS,
    EasthavenView,
    PairingView,
    TableauView,
    TriPeaksView,
    TripleDeckView,
)
from engine.views import View as GameView
from protocol import races as pr
from protocol.events import FLAGGED
from protocol.schema import dump_struct

from .games import GameBackend, Outcome
from .ingame import Help, Left, LegalMoves, Played, Redraw, Reply, Resigned, Said

SUIT_SYMBOLS: Final = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
#: A card code in running text (``5C``, ``10H``, ``QS``), not a move token such as ``f8H``.
_CARD_CODE: Final = re.compile(r"(?<![\w])(10|[2-9AJQK])([CDHS])(?![\w])")


def card_words(text: str, ascii: bool = False) -> str:
    """`text` with its card codes written as the board writes cards: ``5C`` -> ``5♣``."""
    if ascii:
        return text
    return _CARD_CODE.sub(lambda m: m.group(1) + SUIT_SYMBOLS[m.group(2)], text)


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


def _columns(
    piles: list[list[str]], width: int, style: Style, empty_mark: bool = True
) -> list[Text]:
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


def _pairing(view: PairingView, style: Style, width: int) -> list[Text]:
    piles = [list(pile) for pile in view["piles"]]
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
    for peak in range(3):
        for i in range(2):
            x[3 + 2 * peak + i] = 12 * peak + 4 * i + 4
        x[peak] = 12 * peak + 6
    return x


_TP_X: Final = _tripeaks_x()


def _tripeaks(view: TriPeaksView, style: Style, width: int) -> list[Text]:
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


def _tableau_piles(view: TableauView) -> list[list[str]]:
    return [[HIDDEN] * int(pile["down"]) + list(pile["up"]) for pile in view["piles"]]


def _foundation_row(view: TableauView, style: Style, suited: bool) -> Text:
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


def _tripledeck(view: TripleDeckView, style: Style, width: int) -> list[Text]:
    waste = list(view.get("waste") or [])
    top = Text(f"Stock {view.get('stock', 0):>3}   Waste {len(waste):>3}: ")
    shown = waste[-3:]
    for k, c in enumerate(shown):
        top.append_text(style.card(c, top=k == len(shown) - 1))
        top.append(" ")
    if not waste:
        top.append_text(style.empty())
    top.rstrip()
    return [
        top,
        _foundation_row(view, style, suited=False),
        Text(),
        *_columns(_tableau_piles(view), width, style),
    ]


def _easthaven(view: EasthavenView, style: Style, width: int) -> list[Text]:
    top = Text(f"Stock {view.get('stock', 0):>3}")
    return [
        top,
        _foundation_row(view, style, suited=True),
        Text(),
        *_columns(_tableau_piles(view), width, style),
    ]


def _body(view: GameView, style: Style, width: int) -> list[Text]:
    """The board of a view, drawn by its variant's family (KeyError: an unknown variant)."""
    if view["variant"] in PAIRING_VARIANTS:
        return _pairing(view, style, width)
    if view["variant"] in TRIPEAKS_VARIANTS:
        return _tripeaks(view, style, width)
    if view["variant"] in TRIPLE_DECK_VARIANTS:
        return _tripledeck(view, style, width)
    if view["variant"] in EASTHAVEN_VARIANTS:
        return _easthaven(view, style, width)
    raise KeyError(view["variant"])


def fmt_time(ms: int) -> str:
    """``m:ss`` (or ``h:mm:ss``) from milliseconds."""
    s = max(0, ms) // 1000
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02}:{sec:02}" if h else f"{m}:{sec:02}"


def progress_text(variant_id: str, data: Mapping[str, object]) -> str:
    """``cleared 12/52`` or ``score 345/936`` from a view or result map."""
    cleared, score = data.get("cleared", 0), data.get("score", 0)
    return progress_of(
        variant_id,
        cleared if isinstance(cleared, int) else 0,
        score if isinstance(score, int) else 0,
    )


def progress_of(variant_id: str, cleared: int, score: int) -> str:
    """``cleared 12/52`` or ``score 345/936``."""
    cls = VARIANTS[variant_id]
    foundations = cls.decks * len(SUIT_SYMBOLS)
    if cls.scored:
        top = max(cls.ranks)
        return f"score {score}/{foundations * top * (top + 1) // 2}"
    total = TRIPEAKS_CARDS if issubclass(cls, TriPeaks) else foundations * len(cls.ranks)
    return f"cleared {cleared}/{total}"


def status_line(
    view: GameView, *, title: str | None = None, elapsed_ms: int | None = None, extra: str = ""
) -> Text:
    """The line above a board: variant, moves, cleared/score, clock."""
    variant_id = str(view["variant"])
    parts = [
        title or VARIANTS[variant_id].title,
        f"moves {view.get('moves', 0)}",
        progress_text(variant_id, view),
    ]
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


def render_board(
    view: GameView,
    *,
    width: int = 80,
    ascii: bool = False,
    title: str | None = None,
    elapsed_ms: int | None = None,
    extra: str = "",
) -> RenderableType:
    """The whole board of a view, with its status line, fitting `width` where possible."""
    style = Style(ascii=ascii)
    body = _body(view, style, width)
    return Group(status_line(view, title=title, elapsed_ms=elapsed_ms, extra=extra), *body)


def title_of(variant_id: str) -> str:
    return VARIANTS[variant_id].title


def name_of(variant_id: str) -> str:
    """The short name of a variant for tables: ``Tri Peaks`` for ``Triple Triangle (Tri Peaks)``."""
    title = VARIANTS[variant_id].title
    m = re.fullmatch(r".*\((.+)\)", title)
    return m.group(1) if m else title


def _value_of(variant_id: str, cleared: int, score: int) -> str:
    """``12/52`` or ``345/936``: `progress_of` without its label."""
    return progress_of(variant_id, cleared, score).split(" ", 1)[1]


# -- output -----------------------------------------------------------------------------------


#: One JSON object as ``--json`` prints it (a command's document): JSON values by key.
JsonDoc = dict[str, object]

#: The panel beside the board (racers) takes this many columns, and goes beside the board only
#: on a terminal at least this wide (under it otherwise: at 80 columns nothing wraps).
SIDE_WIDTH: Final = 44
SIDE_BY_SIDE_WIDTH: Final = 120


@dataclass
class View:
    """Where the commands send what they show: a rich console, or JSON on stdout."""

    console: Console
    ascii: bool = False
    json: bool = False
    side: Callable[[], RenderableType] | None = None  # drawn beside the board (race progress)

    def emit(self, doc: JsonDoc) -> None:
        """Print one machine-readable JSON object (``--json``) on stdout."""
        sys.stdout.write(json.dumps(doc) + "\n")
        sys.stdout.flush()

    def show(self, *renderables: RenderableType | None, soft_wrap: bool | None = None) -> None:
        """Print each renderable given (None: nothing)."""
        for renderable in renderables:
            if renderable is not None:
                self.console.print(renderable, soft_wrap=soft_wrap)

    def board(self, game: GameBackend) -> None:
        side = self.side() if self.side is not None else None
        beside = side is not None and self.console.width >= SIDE_BY_SIDE_WIDTH
        width = self.console.width - (SIDE_WIDTH if beside else 0)
        board = render_board(
            game.view,
            width=width,
            ascii=self.ascii,
            title=title_of(game.variant),
            elapsed_ms=game.elapsed_ms(),
        )
        if side is None or not beside:
            self.console.print(board)  # a narrow terminal: the panel goes under the board
            if side is not None:
                self.console.print(side)
            return
        grid = Table.grid(padding=(0, 3))
        grid.add_row(board, side)
        self.console.print(grid)

    def reply(self, game: GameBackend, reply: Reply, resume_hint: str) -> None:
        """What an in-game command's reply shows."""
        if isinstance(reply, Redraw) or (isinstance(reply, Played) and reply.outcome.ok):
            self.board(game)
        else:
            self.show(reply_text(reply, resume_hint, self.ascii))


# -- results ----------------------------------------------------------------------------------


def result_json(result: p.GameResult | None) -> JsonDoc | None:
    """A result as ``--json`` prints it: the protocol's ``result`` map."""
    return dump_struct(result) if result is not None else None


def result_text(variant_id: str, result: p.GameResult | None) -> str:
    """``WON · cleared 52/52 · time 3:02 · moves 26`` (and the hints, if any)."""
    if not result:
        return "no result"
    verdict = "WON" if result.won else ("resigned" if result.resigned else "over")
    return (
        f"{verdict} · {progress_of(variant_id, result.cleared, result.score)} · "
        f"time {fmt_time(result.time_ms)} · moves {result.moves}"
        + (f" · hints {result.hints}" if result.hints else "")
    )


def result_line(variant_id: str, result: p.GameResult | None, rank: str | None = None) -> Text:
    """``Result: ...`` with the rank line, if any."""
    line = Text("Result: ", style="bold")
    line.append(
        result_text(variant_id, result),
        style="bold green" if result and result.won else "bold",
    )
    if rank:
        line.append(f" · {rank}", style="bold cyan")
    if result and result.status == FLAGGED:
        line.append(f" · {HELD_FOR_REVIEW}", style="bold yellow")
    return line


#: A result the fair-play screen holds (protocol 5 ``status: "flagged"``), in words.
HELD_FOR_REVIEW: Final = "held for review: not on the leaderboard until a reviewer clears it"


ALREADY_FINISHED: Final = "This game is already finished."


def vs_par(par: int, value: int, counts: bool) -> str:
    """A result against par: moves over par for the win games (wins only), points under par
    for the scoring games; "par" when equal."""
    if not counts:
        return ""
    diff = value - par
    return "par" if diff == 0 else f"{diff:+d}"


# -- the in-game commands ---------------------------------------------------------------------


def intro_text(names: Iterable[str]) -> Text:
    """The hint under the first board: the commands of the table."""
    quoted = ", ".join(f"'{name}'" for name in names)
    return Text(f"Type a move, or {quoted}.", style="dim")


def help_text(notation: str, commands: Iterable[tuple[str, str]]) -> Text:
    lines = [notation, "Commands", *(f"  {name:<8} {text}" for name, text in commands)]
    return Text("\n".join(lines))


def reply_text(reply: Reply, resume_hint: str = "", ascii: bool = False) -> Text | None:
    """The text of a reply that does not draw the board (None: nothing to say); cards in
    the engine's reasons are written as the board writes them (``5♣``, or ``5C`` in ASCII)."""
    if isinstance(reply, Help):
        return help_text(reply.notation, reply.commands)
    if isinstance(reply, LegalMoves):
        return Text(f"legal moves: {', '.join(reply.moves) if reply.moves else '(none)'}")
    if isinstance(reply, Said):
        return Text(reply.text)
    if isinstance(reply, Played):
        return Text(f"✗ {card_words(str(reply.outcome.reason), ascii)}", style="bold yellow")
    if isinstance(reply, Resigned):
        if reply.outcome is None:
            return Text("not resigned")
        return (
            Text(f"cannot resign: {card_words(str(reply.outcome.reason), ascii)}", style="yellow")
            if not reply.outcome.ok
            else None
        )
    if isinstance(reply, Left):
        return Text(("\n" if reply.eof else "") + f"Left the game. {resume_hint}".rstrip())
    return None


RECONNECTED: Final = Text("(reconnected; the game goes on)", style="dim")


# -- moves scripts ----------------------------------------------------------------------------


def script_step(
    number: int, text: str, outcome: Outcome, variant_id: str, view: GameView, ascii: bool = False
) -> Text:
    """One line of a moves script: ``  12  3 7        ok   cleared 8/52`` or why refused."""
    if outcome.ok:
        return Text(f"{number:>4}  {outcome.move:<10} ok   {progress_text(variant_id, view)}")
    return Text(
        f"{number:>4}  {text:<10} refused: {card_words(str(outcome.reason), ascii)}", style="yellow"
    )


def script_stopped(line: int, move: str, reason: str | None, ascii: bool = False) -> Text:
    why = card_words(reason, ascii) if reason else reason
    return Text(f"stopped at line {line} ({move!r}): {why}", style="bold red")


# -- leaderboards and variants ----------------------------------------------------------------


def _entry_style(me: bool) -> str:
    return "bold reverse" if me else ""


def daily_leaderboard(
    variant_id: str, board: p.Leaderboard, rank: p.PlayerRank, around_me: bool
) -> list[RenderableType]:
    """A daily board (or a line saying it is empty) and, when not on it, the player's rank."""
    scored = VARIANTS[variant_id].scored
    tier = f" ({board.tier})" if board.tier else ""
    title = f"{title_of(variant_id)} · daily{tier} {board.date} · {board.total} result(s)"
    if board.par is not None:
        title += f" · par {board.par}"
    shown: list[RenderableType] = []
    if not board.entries:
        shown.append(
            Text(
                f"{title}\n(no results yet)"
                if not around_me
                else f"{title}\nYou have no result on {board.date}."
            )
        )
    else:
        shown.append(_daily_table(title, board, scored))
    if rank.entry is not None and not any(e.me for e in board.entries):
        shown.append(Text(f"You: rank {rank.entry.rank} of {rank.total}", style="bold"))
    return shown


def _daily_table(title: str, board: p.Leaderboard, scored: bool) -> Table:
    table = Table(title=title, title_style="bold", header_style="bold cyan")
    table.add_column("", width=1)
    table.add_column("rank", justify="right")
    table.add_column("name")
    table.add_column("won", justify="center")
    table.add_column("score" if scored else "cleared", justify="right")
    table.add_column("time", justify="right")
    table.add_column("moves", justify="right")
    par = board.par
    if par is not None:
        table.add_column("vs par", justify="right")
    hints = any(e.hints for e in board.entries)
    if hints:
        table.add_column("hints", justify="right")
    for e in board.entries:
        row = [
            "▶" if e.me else "",
            str(e.rank),
            e.name,
            "✓" if e.won else "",
            str(e.score if scored else e.cleared),
            fmt_time(e.time_ms),
            str(e.moves),
        ]
        if par is not None:
            row.append(vs_par(par, e.score if scored else e.moves, e.won or scored))
        if hints:
            row.append(str(e.hints))
        table.add_row(*row, style=_entry_style(e.me))
    return table


_Justify = Literal["left", "right"]


def race_leaderboard(variant_id: str, board: p.RaceBoard, board_name: str) -> RenderableType:
    """A race board (rating, or wins on a date), or a line saying it is empty."""
    what = "rating" if board_name == "rating" else f"wins {board.date or ''}".strip()
    title = f"{title_of(variant_id)} · races · {what} · {board.total} player(s)"
    if not board.entries:
        return Text(f"{title}\n(no rated races yet)")
    table = Table(title=title, title_style="bold", header_style="bold cyan")
    columns: tuple[tuple[str, _Justify], ...] = (
        ("", "left"),
        ("rank", "right"),
        ("name", "left"),
        ("rating" if board_name == "rating" else "wins today", "right"),
        ("wins", "right"),
        ("losses", "right"),
        ("played", "right"),
    )
    for col, just in columns:
        table.add_column(col, justify=just)
    for e in board.entries:
        table.add_row(
            "▶" if e.me else "",
            str(e.rank),
            e.name,
            str(e.rating),
            str(e.wins),
            str(e.losses),
            str(e.played),
            style=_entry_style(e.me),
        )
    return table


@dataclass(frozen=True)
class VariantRow:
    id: str
    title: str
    cards: int
    scored: bool


def variants_table(rows: Iterable[VariantRow]) -> Table:
    table = Table(header_style="bold cyan")
    table.add_column("variant")
    table.add_column("title")
    table.add_column("cards", justify="right")
    table.add_column("ranked by")
    for r in rows:
        table.add_row(r.id, r.title, str(r.cards), "score" if r.scored else "cleared")
    return table


# -- races ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RaceNews:
    """Something that happened to a racer, from a race event."""

    kind: str  # progress, joined, left, forfeit
    player_id: str
    racer: p.Racer


def race_news(news: RaceNews, me: str, variant_id: str) -> Text | None:
    """A line about another racer (or None): joined, left, forfeited, or their progress."""
    name = news.racer.name
    if news.kind == "joined":
        return Text(f"{name} joined", style="dim")
    if news.kind == "left":
        return Text(f"{name} left", style="dim")
    if news.kind == "forfeit":
        return Text(f"{name} forfeited", style="dim")
    if news.kind == "progress" and news.player_id != me:
        r = news.racer
        if r.resigned:  # protocol 10: the race says a resignation apart from a stuck game
            where = progress_of(variant_id, r.cleared, r.score)
            return Text(f"{r.name} resigned ({where}, {r.moves} moves)", style="dim")
        return Text(
            f"  {r.name}: {progress_of(variant_id, r.cleared, r.score)}, {r.moves} moves",
            style="dim",
        )
    return None


def race_room(info: p.RaceInfo, now_ms: int, json: bool) -> Text | None:
    """Who is in the room, and the countdown once it runs."""
    names = ", ".join(r.name for r in info.racers)
    if info.status == "countdown" and info.start_at:
        secs = max(0, info.start_at - now_ms) / 1000
        return Text(f"Racers: {names}. Starting in {secs:.0f} s...")
    if json:
        return None
    return Text(f"Racers ({len(info.racers)}/{info.size}): {names}", style="dim")


def room_created(code: str | None, interactive: bool, players: int) -> Text:
    line = Text("Room code: ")
    line.append(str(code), style="bold")
    line.append(
        "  - share it; "
        + (
            "type 'start' when everyone is in."
            if interactive
            else f"starting when {players} racers are in."
        )
    )
    return line


def room_joined(code: str) -> Text:
    return Text(f"Joined room {code}; waiting for the start.")


def race_queued(waiting: int, size: int) -> Text:
    return Text(
        f"Waiting for opponents ({waiting} waiting, {size} needed)... type 'quit' to leave."
    )


def cannot_start(message: str) -> Text:
    return Text(f"cannot start: {message}", style="yellow")


WAITING_FOR_RACERS: Final = Text(
    "Waiting for the other racers to finish... (Ctrl-C leaves: the race goes on without you,"
    " your result stands, and `solitaire race VARIANT` races again at once)",
    style="dim",
)


def race_panel(
    racers: Mapping[str, p.Racer], me: str, variant_id: str, spectators: int = 0
) -> RenderableType:
    """The racers' progress, one line each (never a card), and how many watch."""
    grid = Table.grid(padding=(0, 1))
    for justify in ("left", "right", "right", "left"):
        grid.add_column(no_wrap=True, justify=justify)
    grid.add_row(
        Text("Racers", style="bold"),
        Text(f"{spectators} watching" if spectators else "", style="dim"),
    )
    for pid, r in racers.items():
        grid.add_row(
            Text(("▶ " if pid == me else "  ") + r.name, style="bold" if pid == me else ""),
            Text(_value_of(variant_id, r.cleared, r.score)),
            Text(f"{r.moves}m"),
            Text(_racer_state(r), style="yellow"),
        )
    return grid


def _racer_state(r: p.Racer) -> str:
    for flag, word in (
        (r.won, "won"),
        (r.forfeited, "forfeit"),
        (bool(r.resigned), "resigned"),
        (r.stuck, "stuck"),
        (r.finished, "done"),
    ):
        if flag:
            return word
    return "" if r.connected else "away"


#: Why a race ended (`race.event` ``finished``'s ``reason``), in words.
END_REASONS: Final = {
    "won": "a racer cleared the deal",
    "all finished": "every racer finished",
    "time limit": "time ran out",
    "forfeit": "the others forfeited",
}


def standings_title(results: Sequence[pr.RaceResultEntry], me: str, reason: str) -> str:
    """``You won the race`` or ``bobby won the race; you placed 2nd of 2``, and why it ended."""
    first = next((r for r in results if r.place == 1), None)
    mine = next((r for r in results if r.player_id == me), None)
    if first is None:
        title = "Race result"
    elif first.player_id == me:
        title = "You won the race"
    else:
        title = f"{first.name} won the race"
        if mine is not None:
            title += f"; you placed {_ordinal(mine.place)} of {len(results)}"
    why = END_REASONS.get(reason, reason)
    return f"{title} ({why})" if why else title


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def race_standings(
    results: Sequence[pr.RaceResultEntry], me: str, reason: str, variant_id: str
) -> Table:
    table = Table(
        title=standings_title(results, me, reason),
        title_style="bold",
        header_style="bold cyan",
    )
    for col in ("", "place", "name", "end", "cleared/score", "time", "moves", "rating", "±"):
        table.add_column(col)
    for r in results:
        mine = r.player_id == me
        change = r.rating_change
        table.add_row(
            "▶" if mine else "",
            str(r.place),
            r.name,
            "✓" if r.won else "resigned" if r.resigned else "forfeit" if r.forfeited else "",
            _value_of(variant_id, r.cleared, r.score),
            fmt_time(r.time_ms),
            str(r.moves),
            "unrated" if r.rating is None else str(r.rating),  # a casual race
            "" if change is None else f"{change:+d}",
            style="bold" if mine else "",
        )
    return table


# -- notices ----------------------------------------------------------------------------------


def page(text: str) -> Text:
    """Plain text as it is (no markup): the rules of a variant."""
    return Text(text)


def notice(text: str) -> Text:
    """A session notice (reconnecting, rate limited...)."""
    return Text(text, style="dim")


def warning(text: str) -> Text:
    return Text(text, style="yellow")


def welcome(url: str) -> Text:
    return Text(f"Welcome! This is your first game on {url}.")


def practice_intro(seed: int) -> Text:
    return Text(f"Practice game, seed {seed} (offline; nothing is recorded).", style="dim")


def signin_code(code: str, minutes: int) -> Text:
    """The one-time sign-in code to type on the other device (protocol 7)."""
    line = Text("Sign-in code: ")
    line.append(code, style="bold")
    line.append(
        f"\nType it on the other device within {minutes} min (used once): "
        f"'solitaire signin {code}', or 'Sign in with a code' in the browser.",
        style="dim",
    )
    return line


def _utc(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M")


def devices_table(
    devices: Sequence[p.DeviceInfo], trusted_at: int | None, now_ms: int
) -> RenderableType:
    """The player's devices (protocol 9), oldest first: fits 80 columns."""
    table = Table(title="Your devices", title_style="bold", header_style="bold cyan")
    table.add_column("Device", no_wrap=True)
    table.add_column("Name", max_width=14, overflow="ellipsis", no_wrap=True)
    table.add_column("Signed in", no_wrap=True)
    table.add_column("UTC", no_wrap=True)
    table.add_column("", no_wrap=True, min_width=12)
    for d in devices:
        how = "first device" if d.how == "original" else "with a code"
        mark = "this device" if d.current else ("can sign out" if d.can_revoke else "")
        table.add_row(d.device, d.name or "-", how, _utc(d.signed_in_at), mark)
    notes: list[RenderableType] = []
    dashed = next((d.device for d in devices if d.device.startswith("-")), None)
    if dashed is not None:  # an id issued before ids were drawn without a leading dash
        notes.append(Text(f"An id starting with '-' goes after '--': '{_revoke_command(dashed)}'."))
    if trusted_at is not None:
        days = max(1, -(-(trusted_at - now_ms) // 86_400_000))
        notes.append(
            Text(
                f"This device signed in with a code: for {days} more day(s) (until "
                f"{_utc(trusted_at)} UTC) it may sign out only devices newer than itself.",
                style="dim",
            )
        )
    return Group(table, *notes) if notes else table


def _revoke_command(device: str) -> str:
    """The command signing ``device`` out, as argparse reads it (an id issued with a leading
    dash goes after ``--``, which ends the options)."""
    return f"solitaire device-revoke {'-- ' if device.startswith('-') else ''}{device}"


def device_signed_in(name: str, device: str) -> Text:
    """A code signed a new device in as this player (protocol 9 push)."""
    return Text(
        f"A new device signed in as you ({name or 'unnamed'}, {device}). Not yours? "
        f"'{_revoke_command(device)}'.",
        style="bold yellow",
    )


def signin_tries_used(until: int) -> Text:
    """Someone used up this account's named sign-in tries (protocol 9 push)."""
    return Text(
        f"Someone tried sign-in codes with your name until they were used up: your live code "
        f"is void, and until {_utc(until)} UTC a new one works only without your name "
        "('solitaire signin CODE').",
        style="bold yellow",
    )


def signed_in(name: str, url: str, profile: str | None) -> Text:
    where = f" (profile {profile})" if profile else ""
    return Text(f"Signed in as {name} on {url}{where}.", style="bold")


def free_intro(game_id: str) -> Text:
    return Text(f"Free play - unranked (game {game_id}).", style="dim")


def rematch_hint(race_id: str) -> Text:
    return Text(f"Rematch: solitaire rematch {race_id}", style="dim")


def error_text(message: str) -> Text:
    return Text(f"solitaire: {message}", style="bold red")


def interrupted(practice: bool) -> str:
    return "\nInterrupted. " + (
        "Practice games are not saved."
        if practice
        else "Your game is kept on the server; run the same command to resume it."
    )
