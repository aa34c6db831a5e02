"""`solitaire me`, `profile`, `history`, `watch` and `share`: profiles, streaks, replays and
spectating. Each fetches with typed requests and renders with rich (or one JSON object)."""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

import protocol as p
from engine import VARIANT_IDS, VARIANTS, new_game
from engine.views import View as GameView
from engine.views import as_view
from protocol.schema import dump_struct

from . import render
from .commands import Ctx, UsageError, open_session
from .render import JsonDoc
from .session import RequestFailed, ServerSession

__all__ = ["cmd_history", "cmd_me", "cmd_profile", "cmd_share", "cmd_watch", "share_text"]


def _doc(command: str, msg: p.Struct) -> JsonDoc:
    doc = {"command": command, **dump_struct(msg)}
    doc.pop("id", None)
    return doc


def _today(session: ServerSession) -> dt.date:
    ms = session.welcome.server_time if session.welcome else 0
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).date()


# -- profiles ---------------------------------------------------------------------------------


async def _profile(session: ServerSession, who: str | None) -> p.Profile:
    if who is None:
        return await session.request(lambda rid: p.ProfileGet(id=rid), p.Profile)
    try:
        p.validate_name(who)
        named = True
    except p.ProtocolError:
        named = False
    if named:
        try:
            return await session.request(lambda rid: p.ProfileGet(id=rid, name=who), p.Profile)
        except RequestFailed as exc:
            if exc.code != p.ErrorCode.NOT_FOUND:
                raise
    try:
        return await session.request(lambda rid: p.ProfileGet(id=rid, player_id=who), p.Profile)
    except RequestFailed as exc:
        if exc.code in (p.ErrorCode.NOT_FOUND, p.ErrorCode.BAD_REQUEST):
            raise RequestFailed(
                str(p.ErrorCode.NOT_FOUND), f"no player named or with id {who!r}"
            ) from None
        raise


def _pct(value: int | None) -> str:
    return f"{value}%" if value is not None else "-"


def _time(ms: int | None) -> str:
    return render.fmt_time(ms) if ms is not None else "-"


def _table(title: str, *columns: str) -> Table:
    """A compact table (no vertical rules, one space between columns): fits 80 columns."""
    t = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        collapse_padding=True,
        show_edge=False,
    )
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if i == 0 else "right", no_wrap=True)
    return t


@dataclass(frozen=True)
class InProgress:
    """One of the player's unfinished daily games (`welcome.daily`) and its day."""

    game: p.DailyGame
    date: str


def in_progress_lines(playing: Sequence[InProgress]) -> list[str]:
    """The player's unfinished daily games, one line each, with the command that goes on
    with it; none of them is on the profile until it is finished."""
    lines = []
    for one in playing:
        game, tier = one.game, one.game.tier or "medium"
        what = f"{render.name_of(game.variant)} {tier}"
        cmd = f"solitaire daily {game.variant}" + (f" --tier {tier}" if tier != "medium" else "")
        if game.catchup:
            what += f" of {one.date} (catch-up)"
            cmd += f" --date {one.date}"
        lines.append(f"  {what}: {cmd}")
    return lines


def _game_get(game_id: str) -> Callable[[int], p.GameGet]:
    return lambda rid: p.GameGet(id=rid, game_id=game_id)


async def _in_progress(session: ServerSession) -> list[InProgress]:
    """The player's unfinished daily games of today and catch-up games, with their days (a
    catch-up game's from `game.get`: game ids are opaque)."""
    daily = session.welcome.daily if session.welcome else None
    found = []
    for game in daily or ():
        if game.finished:
            continue
        date = _today(session).isoformat()
        if game.catchup:
            date = (await session.request(_game_get(game.game_id), p.GameState)).date
        found.append(InProgress(game, date))
    return found


def profile_view(
    profile: p.Profile,
    live: Mapping[str, tuple[int, int]] | None = None,
    playing: Sequence[InProgress] = (),
) -> RenderableType:
    """A profile at 80 columns; ``playing``: the player's own daily games in progress."""
    joined = dt.datetime.fromtimestamp(profile.joined / 1000, dt.UTC).date().isoformat()
    head = Text(f"{profile.name}", style="bold")
    head.append(f"  ({profile.player_id}) · joined {joined}", style="dim")
    parts: list[RenderableType] = [head]
    if profile.daily:
        t = _table(
            "Daily challenges (streaks: now/best)",
            "variant",
            "played",
            "won",
            "streak",
            "w.streak",
            "best",
            "best pts",
            "pctl",
        )
        for d in profile.daily:
            t.add_row(
                render.name_of(d.variant),
                str(d.played),
                str(d.won),
                f"{d.streak}/{d.longest_streak}",
                f"{d.won_streak}/{d.longest_won_streak}",
                _time(d.best_time_ms),
                str(d.best_score) if d.best_score is not None else "-",
                _pct(d.percentile),
            )
        parts.append(t)
    elif not playing:
        parts.append(Text("No daily games yet.", style="dim"))
    if playing:
        say = "In progress" if profile.daily else "No daily game finished yet; in progress"
        parts.append(Text(f"{say} (on the boards once finished):", style="bold"))
        parts.extend(Text(line) for line in in_progress_lines(playing))
    if profile.races:
        t = _table("Races", "variant", "rating", "wins", "losses", "forfeits", "played")
        for r in profile.races:
            rating = str(r.rating) if r.rating is not None else "unrated"
            t.add_row(
                render.name_of(r.variant),
                rating,
                str(r.wins),
                str(r.losses),
                str(r.forfeits),
                str(r.played),
            )
        parts.append(t)
    if profile.recent:
        parts.append(results_table("Last 30 days", profile.recent, live))
    if profile.months:
        t = _table("Crowns by month (solitaire calendar)", "month", "crowns", "badge")
        for m in profile.months:
            t.add_row(m.month, str(m.crowns), m.badge or "-")
        parts.append(t)
    return Group(*parts)


def results_table(
    title: str, rows: Sequence[p.DayResult], live: Mapping[str, tuple[int, int]] | None = None
) -> Table:
    """Daily results, one line each at 80 columns. ``rank``: the final place once the day is
    over, else the place so far (`live`, by variant, for today's games). ``replay``: the date
    `solitaire history VARIANT --replay DATE` takes, once the day is over."""
    t = _table(title, "date", "variant", "result", "time", "moves", "rank", "replay")
    for r in rows:
        outcome = "won" if r.won else "resigned" if r.resigned else "lost"
        value = render.progress_of(r.variant, r.cleared, r.score).split(" ", 1)[1]
        if r.rank and r.total:
            rank = f"{r.rank}/{r.total}"
        elif r.rank:
            rank = f"#{r.rank}"
        elif live and r.variant in live:
            rank = f"{live[r.variant][0]}/{live[r.variant][1]} now"
        else:
            rank = "-"
        t.add_row(
            r.date,
            render.name_of(r.variant),
            f"{outcome} {value}",
            render.fmt_time(r.time_ms),
            str(r.moves),
            rank,
            r.date if r.replayable else "tomorrow",
        )
    return t


async def cmd_me(args: argparse.Namespace, ctx: Ctx) -> int:
    """Your own profile: daily streaks and bests, race record, the last 30 days."""
    args.who = None
    return await cmd_profile(args, ctx)


async def cmd_profile(args: argparse.Namespace, ctx: Ctx) -> int:
    """A player's profile, by name or id."""
    session = await open_session(ctx)
    try:
        profile = await _profile(session, args.who)
        live = (
            await _ranks_so_far(session, profile.recent, _today(session))
            if profile.me and not ctx.out.json
            else {}
        )
        playing = await _in_progress(session) if profile.me else []
    finally:
        await session.close()
    if ctx.out.json:
        doc = _doc("profile", profile)
        if profile.me:
            doc["in_progress"] = [{**dump_struct(one.game), "date": one.date} for one in playing]
        ctx.out.emit(doc)
    else:
        ctx.out.show(profile_view(profile, live, playing))
    return 0


# -- history and replays ----------------------------------------------------------------------


async def cmd_history(args: argparse.Namespace, ctx: Ctx) -> int:
    """Daily results, newest first: of one variant, or of every variant when none is named
    (yours or --player's), or --replay one day."""
    session = await open_session(ctx)
    try:
        pid = None
        if args.player:
            pid = (await _profile(session, args.player)).player_id
        if args.replay:
            if args.variant is None:
                raise UsageError("name the VARIANT of the game to replay")
            return await _replay(args, ctx, session, pid)
        variants = [args.variant] if args.variant else list(VARIANT_IDS)
        pages = [await _history_page(session, v, pid, args) for v in variants]
        entries = sorted(
            (e for page in pages for e in page.entries),
            key=lambda e: (e.date, -variants.index(e.variant)),
            reverse=True,
        )[: args.limit]
        live = await _ranks_so_far(session, entries, _today(session)) if pid is None else {}
    finally:
        await session.close()
    more = any(page.next_before for page in pages) or len(entries) < sum(
        len(page.entries) for page in pages
    )
    if ctx.out.json:
        doc = _doc("history", pages[0]) if len(pages) == 1 else None
        if doc is None:
            doc = {
                "command": "history",
                "player_id": pages[0].player_id,
                "entries": [dump_struct(e) for e in entries],
            }
        ctx.out.emit(doc)
        return 0
    what = render.name_of(args.variant) if args.variant else "daily"
    if not entries:
        ctx.out.show(Text(f"No {what} games yet.", style="dim"))
        return 0
    ctx.out.show(results_table(f"{what} history".capitalize(), entries, live))
    if more:
        again = f"solitaire history {args.variant or ''}".rstrip()
        ctx.out.show(Text(f"More: {again} --before {entries[-1].date}", style="dim"))
    return 0


async def _history_page(
    session: ServerSession, variant: str, pid: str | None, args: argparse.Namespace
) -> p.HistoryPage:
    return await session.request(
        lambda rid: p.HistoryGet(
            id=rid, variant=variant, player_id=pid, before=args.before, limit=args.limit
        ),
        p.HistoryPage,
    )


async def _ranks_so_far(
    session: ServerSession, entries: Sequence[p.DayResult], today: dt.date
) -> dict[str, tuple[int, int]]:
    """The player's place so far on today's boards (a day's final place comes after it)."""
    ranks: dict[str, tuple[int, int]] = {}
    for e in entries:
        if e.date == today.isoformat() and e.rank is None and e.variant not in ranks:
            mine = await session.request(_rank_request(e.variant, today), p.PlayerRank)
            if mine.entry is not None:
                ranks[e.variant] = (mine.entry.rank, mine.total)
    return ranks


@dataclass(frozen=True)
class ReplayStep:
    """One position of a replay: the move that led to it (None: the deal) and the board."""

    move: str | None
    view: GameView


async def _replay(
    args: argparse.Namespace, ctx: Ctx, session: ServerSession, pid: str | None
) -> int:
    day = dt.date.fromisoformat(args.replay)
    page = await session.request(
        lambda rid: p.HistoryGet(
            id=rid,
            variant=args.variant,
            player_id=pid,
            before=(day + dt.timedelta(days=1)).isoformat(),
            limit=1,
        ),
        p.HistoryPage,
    )
    entry = next((e for e in page.entries if e.date == args.replay), None)
    if entry is None:
        raise UsageError(f"no {args.variant} daily game on {args.replay}")
    if not entry.replayable:
        raise UsageError(f"the game of {args.replay} can be replayed once its day is over")
    export = await session.request(
        lambda rid: p.GameExport(id=rid, game_id=entry.game_id), p.ExportReply
    )
    game = new_game(export.variant, export.seed)
    steps: list[ReplayStep] = [ReplayStep(None, game.view())]
    for move in export.moves:
        game.play(move)
        steps.append(ReplayStep(move, game.view()))
    if ctx.out.json:
        ctx.out.emit(
            {
                "command": "replay",
                "game_id": entry.game_id,
                "variant": export.variant,
                "seed": export.seed,
                "moves": list(export.moves),
                "steps": [{"move": step.move, "view": step.view} for step in steps],
            }
        )
        return 0
    for i, step in enumerate(steps):
        label = "deal" if step.move is None else f"move {i}: {step.move}"
        ctx.out.show(
            Text(label, style="bold cyan"),
            render.render_board(step.view, width=ctx.out.console.width, ascii=ctx.out.ascii),
        )
    return 0


# -- share ------------------------------------------------------------------------------------


def share_text(
    today: dt.date,
    results: Sequence[p.DayResult],
    streaks: dict[str, int],
    ranks: dict[str, tuple[int, int]],
    *,
    ascii: bool,
) -> str:
    """Today's results as a few lines to paste into a chat."""
    lines = [f"Solitaire daily {today.isoformat()}"]
    for r in results:
        mark = ("WON" if ascii else "✅") if r.won else ("--" if ascii else "❌")
        bits = [
            f"{mark} {VARIANTS[r.variant].title}",
            render.progress_text(r.variant, {"cleared": r.cleared, "score": r.score}),
            render.fmt_time(r.time_ms),
            f"{r.moves} moves",
        ]
        if r.variant in ranks:
            rank, total = ranks[r.variant]
            bits.append(f"#{rank} of {total}")
        streak = streaks.get(r.variant, 0)
        if streak > 1:
            bits.append(f"{'streak' if ascii else '🔥'} {streak} days")
        lines.append(" · ".join(bits))
    if not results:
        lines.append("no daily game finished yet today")
    return "\n".join(lines)


def _rank_request(variant: str, day: dt.date) -> Callable[[int], p.ClientMessage]:
    return lambda rid: p.LeaderboardRank(id=rid, variant=variant, date=day.isoformat())


async def cmd_share(args: argparse.Namespace, ctx: Ctx) -> int:
    """A text summary of today's daily results, to paste into a chat."""
    session = await open_session(ctx)
    try:
        today = _today(session)
        profile = await _profile(session, None)
        results = [r for r in profile.recent if r.date == today.isoformat()]
        ranks: dict[str, tuple[int, int]] = {}
        for r in results:
            reply = await session.request(_rank_request(r.variant, today), p.PlayerRank)
            if reply.entry is not None:
                ranks[r.variant] = (reply.entry.rank, reply.total)
    finally:
        await session.close()
    streaks = {d.variant: d.streak for d in profile.daily}
    text = share_text(today, results, streaks, ranks, ascii=ctx.out.ascii)
    if ctx.out.json:
        ctx.out.emit({"command": "share", "date": today.isoformat(), "text": text})
    else:
        ctx.out.console.print(text, markup=False, highlight=False)
    return 0


# -- watch ------------------------------------------------------------------------------------


def listing_table(races: Sequence[p.RaceListing]) -> Table:
    t = Table(title="Races running now", title_justify="left")
    for col in ("race id", "variant", "status", "racers", "spectators"):
        t.add_column(col)
    for r in races:
        t.add_row(
            r.race_id,
            render.title_of(r.variant),
            r.status,
            ", ".join(x.name for x in r.racers),
            str(r.spectators),
        )
    return t


def watch_view(
    info: p.RaceInfo,
    boards: dict[str, p.SpectatorBoard],
    spectators: int,
    delay_ms: int,
    ascii: bool,
    width: int,
) -> RenderableType:
    head = Text(
        f"Race {info.race_id} · {render.title_of(info.variant)} · {info.status}", style="bold"
    )
    head.append(f" · {spectators} watching · {delay_ms / 1000:g} s behind", style="dim")
    parts: list[RenderableType] = [head]
    for racer in info.racers:
        board = boards.get(racer.player_id)
        if board is None or board.view is None:
            parts.append(Text(f"{racer.name}: waiting for the board", style="dim"))
            continue
        parts.append(
            render.render_board(
                as_view(dict(board.view)), width=width, ascii=ascii, title=racer.name
            )
        )
    return Group(*parts)


async def cmd_watch(args: argparse.Namespace, ctx: Ctx) -> int:
    """Watch a race live (a few seconds behind); without RACE_ID, the newest race running."""
    session = await open_session(ctx)
    try:
        race_id = args.race_id
        if race_id is None or args.list:
            listed = await session.request(
                lambda rid: p.RaceList(id=rid, variant=args.variant), p.RaceListReply
            )
            if args.list or not listed.races:
                if ctx.out.json:
                    ctx.out.emit(_doc("watch", listed))
                elif listed.races:
                    ctx.out.show(listing_table(listed.races))
                else:
                    ctx.out.show(Text("No race is running now.", style="dim"))
                return 0
            race_id = listed.races[0].race_id
            others = len(listed.races) - 1
            ctx.err.print(
                render.notice(
                    f"watching race {race_id}"
                    + (f" ({others} more: solitaire watch --list)" if others else "")
                )
            )
        return await _watch(ctx, session, race_id)
    finally:
        await session.close()


async def _watch(ctx: Ctx, session: ServerSession, race_id: str) -> int:
    watching = await session.request(
        lambda rid: p.RaceWatch(id=rid, race_id=race_id), p.RaceWatching
    )
    info, count = watching.race, watching.spectators
    boards = {b.player_id: b for b in watching.boards}
    width = ctx.out.console.width

    def draw() -> None:
        if not ctx.out.json:
            if ctx.out.console.is_terminal:
                ctx.out.console.clear()
            ctx.out.show(watch_view(info, boards, count, watching.delay_ms, ctx.out.ascii, width))

    draw()
    while info.status != "finished":
        msg = await session.pushes.get()
        if isinstance(msg, p.RaceSpectate) and msg.race_id == race_id:
            boards[msg.board.player_id] = msg.board
        elif isinstance(msg, p.RaceUpdate) and msg.race.race_id == race_id:
            info = msg.race
        elif isinstance(msg, p.RaceSpectators) and msg.race_id == race_id:
            count = msg.count
        else:
            continue
        draw()
    if ctx.out.json:
        ctx.out.emit(
            {
                "command": "watch",
                "race": dump_struct(info),
                "boards": [dump_struct(b) for b in boards.values()],
            }
        )
    else:
        places = sorted((r for r in info.racers if r.place), key=lambda r: r.place or 0)
        ctx.out.show(
            Text("Finished: " + ", ".join(f"{r.place}. {r.name}" for r in places), style="bold")
        )
    return 0
