"""The commands: each takes the parsed arguments and a `Ctx`, and returns an exit status."""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

import protocol as p
from engine import VARIANTS
from protocol.schema import dump_struct

from .config import Identity, TokenStore
from .games import ServerGame, legal_from_view, title_of
from .play import (
    LineReader,
    View,
    interactive,
    result_text,
    script_lines,
    scripted,
    stream_lines,
)
from .render import fmt_time
from .rules import rules_text
from .session import EXIT_USAGE, RequestFailed, ServerSession, SessionError


class UsageError(SessionError):
    exit_code = EXIT_USAGE


@dataclass
class Ctx:
    """What every command needs: arguments, output, the stdin reader and the token store."""

    args: argparse.Namespace
    out: View
    err: Console
    reader: LineReader = field(default_factory=LineReader)
    store: TokenStore = field(default_factory=TokenStore)

    @property
    def url(self) -> str:
        return str(self.args.server)

    @property
    def interactive(self) -> bool:
        return sys.stdin.isatty() and not self.out.json


# -- connecting -------------------------------------------------------------------------------


async def _ask_name(ctx: Ctx) -> str:
    while True:
        answer = await ctx.reader.readline("Choose a display name (3-20 letters, digits, _ -): ")
        if answer is None:
            raise UsageError("no display name given")
        try:
            return p.validate_name(answer.strip())
        except p.ProtocolError as exc:
            ctx.err.print(f"{exc.message}", style="yellow")


async def open_session(ctx: Ctx) -> ServerSession:
    """Connect as the stored player of this server, or create one (asking for a name)."""
    url = ctx.url
    ident = ctx.store.get(url)
    token = ident.token if ident else None
    name: str | None = ctx.args.name
    if token is None and name is None:
        if not ctx.interactive:
            raise UsageError(f"first use of {url}: choose a display name with --name NAME")
        ctx.err.print(f"Welcome! This is your first game on {url}.")
        name = await _ask_name(ctx)
    if name is not None and token is None:
        try:
            p.validate_name(name)
        except p.ProtocolError as exc:
            raise UsageError(f"invalid --name: {exc.message}") from None

    def save(welcome: p.Welcome) -> None:
        assert welcome.token is not None
        ctx.store.put(url, Identity(welcome.token, welcome.name, welcome.player_id))

    while True:
        session = ServerSession(url, token=token, name=None if token else name, on_token=save,
                                on_notice=lambda text: ctx.err.print(text, style="dim"))
        try:
            await session.connect()
            return session
        except RequestFailed as exc:
            if exc.code in (p.ErrorCode.NAME_TAKEN, p.ErrorCode.INVALID_NAME):
                if not ctx.interactive:
                    raise UsageError(f"{exc.message}: choose another --name") from None
                ctx.err.print(f"{exc.message}; choose another name.", style="yellow")
                name = await _ask_name(ctx)
                continue
            if exc.code == p.ErrorCode.NOT_AUTHENTICATED and token is not None:
                if name is not None:
                    token = None  # the server forgot us (data reset): start a new player
                    continue
                raise SessionError(f"{url} does not know the stored player (was its data "
                                   "reset?); run again with --name NAME to create a new "
                                   "player") from None
            raise


def _check_variant(session: ServerSession, variant: str) -> None:
    offered = session.welcome.variants if session.welcome else ()
    if offered and variant not in offered:
        raise UsageError(f"this server does not offer {variant}; it offers: "
                         + ", ".join(offered))


# -- daily ------------------------------------------------------------------------------------


def _moves(source: str | None, ctx: Ctx) -> Any:
    """The script lines of --moves: a file read now, or stdin streamed line by line."""
    if source is None:
        return None
    if source == "-":
        return stream_lines(ctx.reader)
    return script_lines(_read_moves(source))


def _read_moves(source: str) -> list[str]:
    if source == "-":
        return sys.stdin.read().splitlines()
    try:
        return Path(source).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read moves from {source}: {exc.strerror}") from None


async def cmd_daily(args: argparse.Namespace, ctx: Ctx) -> int:
    """Play today's deal: interactively, from a moves file, or just show it (--show)."""
    moves_source: str | None = args.moves
    if ctx.out.json and moves_source is None and not args.show:
        moves_source = "-"  # --json means scripting: moves come from stdin
    lines = _moves(moves_source, ctx)
    session = await open_session(ctx)
    try:
        _check_variant(session, args.variant)
        state = await session.request(lambda rid: p.DailyStart(id=rid, variant=args.variant),
                                      p.GameState)
        game = ServerGame(session, state)
        info: dict[str, Any] = {"command": "daily", "variant": game.variant,
                                "date": game.date, "game_id": game.game_id}
        if args.show:
            return await _show(game, ctx, info)
        if lines is not None:
            return await scripted(game, lines, ctx.out, info)
        hint = f"Resume it with: solitaire daily {game.variant}"
        return await interactive(game, ctx.out, ctx.reader, session, resume_hint=hint)
    finally:
        await session.close()


async def _show(game: ServerGame, ctx: Ctx, info: dict[str, Any]) -> int:
    if ctx.out.json:
        ctx.out.emit({**info, "seq": game.seq, "elapsed_ms": game.elapsed_ms(),
                      "finished": game.finished, "result": game.result, "par": game.par,
                      "hints": game.hints, "view": game.view,
                      "legal_moves": game.legal_moves()})
    else:
        ctx.out.board(game)
        if game.finished:
            ctx.out.console.print(f"Result: {result_text(game.variant, game.result)}")
    return 0


# -- practice ---------------------------------------------------------------------------------


async def cmd_practice(args: argparse.Namespace, ctx: Ctx) -> int:
    """Offline play with the shared engine: no server needed."""
    from .games import LocalGame

    seed = args.seed if args.seed is not None else random.randrange(2**32)
    game = LocalGame(args.variant, seed)
    info = {"command": "practice", "variant": args.variant, "seed": seed}
    if args.show:
        if ctx.out.json:
            ctx.out.emit({**info, "view": game.view, "legal_moves": game.legal_moves()})
        else:
            ctx.out.board(game)
        return 0
    moves_source: str | None = args.moves
    if ctx.out.json and moves_source is None:
        moves_source = "-"
    if moves_source is not None:
        return await scripted(game, _moves(moves_source, ctx), ctx.out, info)
    ctx.out.console.print(f"Practice game, seed {seed} (offline; nothing is recorded).",
                          style="dim")
    return await interactive(game, ctx.out, ctx.reader,
                             resume_hint="Practice games are not saved.")


# -- leaderboards -----------------------------------------------------------------------------


def _entry_style(me: bool) -> str:
    return "bold reverse" if me else ""


async def cmd_leaderboard(args: argparse.Namespace, ctx: Ctx) -> int:
    """The daily leaderboard of a variant (or, with --race, a race board)."""
    session = await open_session(ctx)
    try:
        _check_variant(session, args.variant)
        if args.race:
            return await _race_board(args, ctx, session)
        k = max(1, min(50, args.limit // 2))
        if args.around_me:
            board = await session.request(lambda rid: p.LeaderboardAround(
                id=rid, variant=args.variant, date=args.date, k=k), p.Leaderboard)
        else:
            board = await session.request(lambda rid: p.LeaderboardTop(
                id=rid, variant=args.variant, date=args.date, limit=args.limit), p.Leaderboard)
        rank = await session.request(lambda rid: p.LeaderboardRank(
            id=rid, variant=args.variant, date=board.date), p.PlayerRank)
    except RequestFailed as exc:
        if exc.code == p.ErrorCode.BAD_REQUEST and args.date:
            raise UsageError(f"bad --date {args.date!r}: {exc.message}") from None
        raise
    finally:
        await session.close()
    if ctx.out.json:
        doc = {"command": "leaderboard", **dump_struct(board)}
        doc.pop("id", None)
        doc["me"] = dump_struct(rank.entry) if rank.entry else None
        ctx.out.emit(doc)
        return 0
    scored = VARIANTS[args.variant].scored
    title = f"{title_of(args.variant)} · daily {board.date} · {board.total} result(s)"
    if board.par is not None:
        title += f" · par {board.par}"
    table = Table(title=title, title_style="bold", header_style="bold cyan")
    table.add_column("", width=1)
    table.add_column("rank", justify="right")
    table.add_column("name")
    table.add_column("won", justify="center")
    table.add_column("score" if scored else "cleared", justify="right")
    table.add_column("time", justify="right")
    table.add_column("moves", justify="right")
    if board.par is not None:
        table.add_column("vs par", justify="right")
    hints = any(e.hints for e in board.entries)
    if hints:
        table.add_column("hints", justify="right")
    for e in board.entries:
        row = ["▶" if e.me else "", str(e.rank), e.name, "✓" if e.won else "",
               str(e.score if scored else e.cleared), fmt_time(e.time_ms), str(e.moves)]
        if board.par is not None:
            row.append(vs_par(board.par, e.score if scored else e.moves, e.won or scored))
        if hints:
            row.append(str(e.hints))
        table.add_row(*row, style=_entry_style(e.me))
    console = ctx.out.console
    if not board.entries:
        console.print(f"{title}\n(no results yet)" if not args.around_me
                      else f"{title}\nYou have no result on {board.date}.")
    else:
        console.print(table)
    if rank.entry is not None and not any(e.me for e in board.entries):
        console.print(Text(f"You: rank {rank.entry.rank} of {rank.total}", style="bold"))
    return 0


def vs_par(par: int, value: int, counts: bool) -> str:
    """A result against par: moves over par for the win games (wins only), points under par
    for the scoring games; "par" when equal."""
    if not counts:
        return ""
    diff = value - par
    return "par" if diff == 0 else f"{diff:+d}"


async def _race_board(args: argparse.Namespace, ctx: Ctx, session: ServerSession) -> int:
    board_name = args.board
    try:
        if args.around_me:
            board = await session.request(lambda rid: p.RaceAround(
                id=rid, variant=args.variant, board=board_name, date=args.date,
                k=max(1, min(50, args.limit // 2))), p.RaceBoard)
        else:
            board = await session.request(lambda rid: p.RaceTop(
                id=rid, variant=args.variant, board=board_name, date=args.date,
                limit=args.limit), p.RaceBoard)
    except RequestFailed as exc:
        if exc.code == p.ErrorCode.UNKNOWN_TYPE:
            raise UsageError("race leaderboards are not available on this server") from None
        raise
    if ctx.out.json:
        doc = {"command": "leaderboard", "kind": "race", **dump_struct(board)}
        doc.pop("id", None)
        ctx.out.emit(doc)
        return 0
    what = "rating" if board_name == "rating" else f"wins {board.date or ''}".strip()
    table = Table(title=f"{title_of(args.variant)} · races · {what} · {board.total} player(s)",
                  title_style="bold", header_style="bold cyan")
    for col, just in (("", "left"), ("rank", "right"), ("name", "left"),
                      ("rating" if board_name == "rating" else "wins today", "right"),
                      ("wins", "right"), ("losses", "right"), ("played", "right")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for e in board.entries:
        table.add_row("▶" if e.me else "", str(e.rank), e.name, str(e.rating), str(e.wins),
                      str(e.losses), str(e.played), style=_entry_style(e.me))
    ctx.out.console.print(table if board.entries else f"{table.title}\n(no races yet)")
    return 0


# -- offline information ----------------------------------------------------------------------


async def cmd_variants(args: argparse.Namespace, ctx: Ctx) -> int:
    """The variants, with titles and card counts."""
    rows = [{"id": vid, "title": cls.title, "cards": cls.decks * 4 * len(cls.ranks),
             "scored": cls.scored} for vid, cls in VARIANTS.items()]
    if ctx.out.json:
        ctx.out.emit({"command": "variants", "variants": rows})
        return 0
    table = Table(header_style="bold cyan")
    table.add_column("variant")
    table.add_column("title")
    table.add_column("cards", justify="right")
    table.add_column("ranked by")
    for r in rows:
        table.add_row(r["id"], r["title"], str(r["cards"]), "score" if r["scored"] else "cleared")
    ctx.out.console.print(table)
    return 0


async def cmd_rules(args: argparse.Namespace, ctx: Ctx) -> int:
    """A variant's rules (a summary) and move notation."""
    text = rules_text(args.variant)
    if ctx.out.json:
        ctx.out.emit({"command": "rules", "variant": args.variant,
                      "title": title_of(args.variant), "text": text})
    else:
        ctx.out.console.print(text, highlight=False, markup=False)
    return 0


__all__ = ["Ctx", "UsageError", "cmd_daily", "cmd_leaderboard", "cmd_practice", "cmd_rules",
           "cmd_variants", "legal_from_view", "open_session"]
