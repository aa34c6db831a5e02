"""The commands: each takes the parsed arguments and a `Ctx`, and returns an exit status.

A command fetches and computes; what it shows is rendered by `render.py` (with --json, it
is one JSON object on stdout instead).
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rich.console import Console

import protocol as p
from engine import VARIANTS
from protocol.schema import dump_struct

from . import render
from .config import Identity, TokenStore
from .events import LineReader
from .games import LocalGame, ServerGame
from .ingame import PRACTICE_COMMANDS
from .play import Script, interactive, script_lines, scripted, stream_lines
from .render import JsonDoc, View
from .rules import reflow, rules_text
from .session import EXIT_USAGE, RequestFailed, ServerSession, SessionError

NAME_PROMPT = "Choose a display name (3-20 letters, digits, _ -): "


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
    #: The local profile whose identity the session uses (None: the server's default one).
    profile: str | None = None

    @property
    def url(self) -> str:
        return str(self.args.server)

    @property
    def interactive(self) -> bool:
        return sys.stdin.isatty() and not self.out.json


# -- connecting -------------------------------------------------------------------------------


async def _ask_name(ctx: Ctx) -> str:
    while True:
        answer = await ctx.reader.readline(NAME_PROMPT)
        if answer is None:
            raise UsageError("no display name given")
        try:
            return p.validate_name(answer.strip())
        except p.ProtocolError as exc:
            ctx.err.print(render.warning(exc.message))


async def _first_name(ctx: Ctx, token: str | None) -> str | None:
    """The name of a new player (--name, or asked for); None with a stored token."""
    name: str | None = ctx.args.name
    if token is None and name is None:
        if not ctx.interactive:
            raise UsageError(f"first use of {ctx.url}: choose a display name with --name NAME")
        ctx.err.print(render.welcome(ctx.url))
        name = await _ask_name(ctx)
    if name is not None and token is None:
        try:
            p.validate_name(name)
        except p.ProtocolError as exc:
            raise UsageError(f"invalid --name: {exc.message}") from None
    return name


async def _after_refusal(
    ctx: Ctx, exc: RequestFailed, token: str | None, name: str | None
) -> tuple[str | None, str | None]:
    """The token and name to try next after the server refused the hello, or raise."""
    if exc.code in (p.ErrorCode.NAME_TAKEN, p.ErrorCode.INVALID_NAME):
        if not ctx.interactive:
            raise UsageError(f"{exc.message}: choose another --name") from None
        ctx.err.print(render.warning(f"{exc.message}; choose another name."))
        return token, await _ask_name(ctx)
    if exc.code == p.ErrorCode.NOT_AUTHENTICATED and token is not None:
        if name is not None:
            return None, name  # the server forgot us (data reset): start a new player
        raise SessionError(
            f"{ctx.url} does not know the stored player (its token was revoked "
            "from another session, or the server's data was reset); run again with "
            "--name NAME to create a new player"
        ) from None
    raise exc


async def open_session(ctx: Ctx) -> ServerSession:
    """Connect as the stored player of this server, or create one (asking for a name)."""
    url = ctx.url
    ident, ctx.profile = ctx.store.find(url, ctx.args.profile, ctx.args.name)
    token = ident.token if ident else None
    name = await _first_name(ctx, token)

    def save(welcome: p.Welcome) -> None:
        assert welcome.token is not None
        identity = Identity(welcome.token, welcome.name, welcome.player_id)
        ctx.store.keep(url, identity, ctx.profile, replacing=ident)

    while True:
        session = ServerSession(
            url,
            token=token,
            name=None if token else name,
            on_token=save,
            on_notice=lambda text: ctx.err.print(render.notice(text)),
        )
        try:
            await session.connect()
            return session
        except RequestFailed as exc:
            token, name = await _after_refusal(ctx, exc, token, name)


def _check_variant(session: ServerSession, variant: str) -> None:
    offered = session.welcome.variants if session.welcome else ()
    if offered and variant not in offered:
        raise UsageError(f"this server does not offer {variant}; it offers: " + ", ".join(offered))


# -- daily ------------------------------------------------------------------------------------


def script_source(source: str | None, ctx: Ctx) -> Script | None:
    """The script lines of --moves: a file read now, or stdin streamed line by line."""
    if source is None:
        return None
    if source == "-":
        return stream_lines(ctx.reader)
    try:
        text = Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read moves from {source}: {exc.strerror}") from None
    return script_lines(text.splitlines())


def need_tiers(session: ServerSession, what: str) -> None:
    """UsageError unless the server speaks protocol version 8 (tiers)."""
    welcome = session.welcome
    if welcome is None or welcome.version < p.TIERS:
        spoken = welcome.version if welcome else "?"
        raise UsageError(f"{what} needs protocol version {p.TIERS}; this server speaks {spoken}")


async def cmd_daily(args: argparse.Namespace, ctx: Ctx) -> int:
    """Play today's deal: interactively, from a moves file, or show it (--show: the game is
    started if it was not, its clock running, as no deal is seen without starting it); with
    --tier one of the day's tiers, with --date a past day's as catch-up."""
    moves_source: str | None = args.moves
    if ctx.out.json and moves_source is None and not args.show:
        moves_source = "-"  # --json means scripting: moves come from stdin
    lines = script_source(moves_source, ctx)
    session = await open_session(ctx)
    try:
        _check_variant(session, args.variant)
        tier, date = getattr(args, "tier", None), getattr(args, "date", None)
        if tier is not None or date is not None:
            need_tiers(session, "--tier and --date")
        state = await session.request(
            lambda rid: p.DailyStart(id=rid, variant=args.variant, tier=tier, date=date),
            p.GameState,
        )
        game = ServerGame(session, state)
        info: JsonDoc = {
            "command": "daily",
            "variant": game.variant,
            "date": game.date,
            "game_id": game.game_id,
        }
        if state.tier is not None:
            info["tier"] = state.tier
            info["catchup"] = bool(state.catchup)
        hint = f"Resume it with: solitaire daily {game.variant}"
        if tier is not None:
            hint += f" --tier {tier}"
        if state.catchup:
            hint += f" --date {game.date}"
        if args.show:
            shown = _show(game, ctx, info)
            if not game.finished and not ctx.out.json:
                ctx.out.show(f"Started: this ranked game's clock is running. {hint}")
            return shown
        if lines is not None:
            return await scripted(game, lines, ctx.out, info)
            ctx.out.show(
                f"Catch-up game of {game.date} ({state.tier}): a deal of that tier, not the"
                " day's own; on no board."
            )
        return await interactive(game, ctx.out, ctx.reader, session, resume_hint=hint)
    finally:
        await session.close()


def _show(game: ServerGame, ctx: Ctx, info: JsonDoc) -> int:
    if ctx.out.json:
        ctx.out.emit(
            {
                **info,
                "seq": game.seq,
                "elapsed_ms": game.elapsed_ms(),
                "finished": game.finished,
                "result": render.result_json(game.result),
                "par": game.par,
                "hints": game.hints,
                "view": game.view,
                "legal_moves": game.legal_moves(),
            }
        )
    else:
        ctx.out.board(game)
        if game.finished:
            ctx.out.show(render.result_line(game.variant, game.result))
    return 0


# -- practice ---------------------------------------------------------------------------------


async def cmd_practice(args: argparse.Namespace, ctx: Ctx) -> int:
    """Offline play with the shared engine: no server needed."""
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    game = LocalGame(args.variant, seed)
    info: JsonDoc = {"command": "practice", "variant": args.variant, "seed": seed}
    if args.show:
        if ctx.out.json:
            ctx.out.emit({**info, "view": game.view, "legal_moves": game.legal_moves()})
        else:
            ctx.out.board(game)
        return 0
    moves_source: str | None = args.moves
    if ctx.out.json and moves_source is None:
        moves_source = "-"
    lines = script_source(moves_source, ctx)
    if lines is not None:
        return await scripted(game, lines, ctx.out, info)
    ctx.out.show(render.practice_intro(seed))
    return await interactive(
        game,
        ctx.out,
        ctx.reader,
        resume_hint="Practice games are not saved.",
        commands=PRACTICE_COMMANDS,
    )


# -- leaderboards -----------------------------------------------------------------------------


def _around(limit: int) -> int:
    """How many entries either side of the player's own make about `limit` in all."""
    return max(1, min(50, limit // 2))


@contextlib.contextmanager
def _date_errors(date: str | None) -> Iterator[None]:
    """A refused request with --date given: the date is what was wrong."""
    try:
        yield
    except RequestFailed as exc:
        if exc.code == p.ErrorCode.BAD_REQUEST and date:
            raise UsageError(f"bad --date {date!r}: {exc.message}") from None
        raise


async def cmd_leaderboard(args: argparse.Namespace, ctx: Ctx) -> int:
    """The daily leaderboard of a variant (or, with --race, a race board)."""
    session = await open_session(ctx)
    try:
        _check_variant(session, args.variant)
        with _date_errors(args.date):
            if args.race:
                _show_race_board(args, ctx, await _race_board(args, session))
            else:
                _show_daily_board(args, ctx, *await _daily_board(args, session))
    finally:
        await session.close()
    return 0


async def _daily_board(
    args: argparse.Namespace, session: ServerSession
) -> tuple[p.Leaderboard, p.PlayerRank]:
    variant, date = args.variant, args.date
    tier = getattr(args, "tier", None)
    if tier is not None:
        need_tiers(session, "--tier")
    if args.around_me:
        board = await session.request(
            lambda rid: p.LeaderboardAround(
                id=rid, variant=variant, date=date, k=_around(args.limit), tier=tier
            ),
            p.Leaderboard,
        )
    else:
        board = await session.request(
            lambda rid: p.LeaderboardTop(
                id=rid, variant=variant, date=date, limit=args.limit, tier=tier
            ),
            p.Leaderboard,
        )
    rank = await session.request(
        lambda rid: p.LeaderboardRank(id=rid, variant=variant, date=board.date, tier=tier),
        p.PlayerRank,
    )
    return board, rank


def _show_daily_board(
    args: argparse.Namespace, ctx: Ctx, board: p.Leaderboard, rank: p.PlayerRank
) -> None:
    if ctx.out.json:
        doc = {"command": "leaderboard", **dump_struct(board)}
        doc.pop("id", None)
        doc["me"] = dump_struct(rank.entry) if rank.entry else None
        ctx.out.emit(doc)
    else:
        ctx.out.show(*render.daily_leaderboard(args.variant, board, rank, args.around_me))


async def _race_board(args: argparse.Namespace, session: ServerSession) -> p.RaceBoard:
    variant, name, date = args.variant, args.board, args.date
    try:
        if args.around_me:
            return await session.request(
                lambda rid: p.RaceAround(
                    id=rid, variant=variant, board=name, date=date, k=_around(args.limit)
                ),
                p.RaceBoard,
            )
        return await session.request(
            lambda rid: p.RaceTop(id=rid, variant=variant, board=name, date=date, limit=args.limit),
            p.RaceBoard,
        )
    except RequestFailed as exc:
        if exc.code == p.ErrorCode.UNKNOWN_TYPE:
            raise UsageError("race leaderboards are not available on this server") from None
        raise


def _show_race_board(args: argparse.Namespace, ctx: Ctx, board: p.RaceBoard) -> None:
    if ctx.out.json:
        doc = {"command": "leaderboard", "kind": "race", **dump_struct(board)}
        doc.pop("id", None)
        ctx.out.emit(doc)
    else:
        ctx.out.show(render.race_leaderboard(args.variant, board, args.board))


# -- offline information ----------------------------------------------------------------------


async def cmd_variants(args: argparse.Namespace, ctx: Ctx) -> int:
    """The variants, with titles and card counts."""
    rows = [
        render.VariantRow(vid, cls.title, cls.decks * 4 * len(cls.ranks), cls.scored)
        for vid, cls in VARIANTS.items()
    ]
    if ctx.out.json:
        ctx.out.emit({"command": "variants", "variants": [asdict(r) for r in rows]})
    else:
        ctx.out.show(render.variants_table(rows))
    return 0


async def cmd_rules(args: argparse.Namespace, ctx: Ctx) -> int:
    """A variant's rules (a summary) and move notation."""
    text = rules_text(args.variant)
    if ctx.out.json:
        ctx.out.emit(
            {
                "command": "rules",
                "variant": args.variant,
                "title": render.title_of(args.variant),
                "text": text,
            }
        )
    else:
        ctx.out.show(render.page(reflow(text, ctx.out.console.width)))
    return 0


__all__ = [
    "Ctx",
    "UsageError",
    "cmd_daily",
    "cmd_leaderboard",
    "cmd_practice",
    "cmd_rules",
    "cmd_variants",
    "open_session",
]
