"""`solitaire race`: wait in the queue or a private room, count down, play with every
opponent's live progress beside the board, then show the standings and rating changes."""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

import protocol as p

from .commands import Ctx, UsageError, _moves, open_session
from .games import ServerGame
from .play import interactive, scripted
from .render import fmt_time, progress_text
from .session import RequestFailed, ServerSession

#: How long to wait for the race's end after one's own game is over, beyond its time limit.
END_GRACE_S = 30.0


class RaceState:
    """What the client knows of one race: racers' progress, and the final standings."""

    def __init__(self, me: str) -> None:
        self.me = me
        self.info: p.RaceInfo | None = None
        self.version = 0
        self.racers: dict[str, dict[str, Any]] = {}
        self.results: list[dict[str, Any]] | None = None
        self.reason = ""

    @property
    def race_id(self) -> str:
        return self.info.race_id if self.info else ""

    def apply_info(self, info: p.RaceInfo) -> None:
        self.info = info
        self.version = max(self.version, info.version)
        for r in info.racers:
            self.racers[r.player_id] = {**self.racers.get(r.player_id, {}),
                                        "name": r.name, "cleared": r.cleared, "score": r.score,
                                        "moves": r.moves, "finished": r.finished,
                                        "stuck": r.stuck, "won": r.won,
                                        "forfeited": r.forfeited, "connected": r.connected,
                                        "place": r.place, "rating": r.rating,
                                        "rating_change": r.rating_change}

    def apply_event(self, version: int, event: dict[str, Any]) -> str | None:
        """Update from a public event; returns a short line worth printing, if any."""
        self.version = max(self.version, version)
        kind = event.get("kind")
        pid = str(event.get("player_id", ""))
        racer = self.racers.setdefault(pid, {"name": pid}) if pid else {}
        if kind == "progress":
            racer.update({k: event[k] for k in ("cleared", "score", "moves", "finished",
                                                "stuck", "won") if k in event})
            return None
        if kind == "joined":
            racer["name"] = event.get("name", pid)
            return f"{racer['name']} joined"
        if kind == "left":
            self.racers.pop(pid, None)
            return f"{racer.get('name', pid)} left"
        if kind == "forfeit":
            racer["forfeited"] = True
            return f"{racer.get('name', pid)} forfeited"
        if kind == "finished":
            self.results = [dict(r) for r in event.get("results", [])]  # type: ignore[union-attr]
            self.reason = str(event.get("reason", ""))
        return None

    def panel(self) -> RenderableType:
        """The racers' progress, one line each (never a card)."""
        variant = self.info.variant if self.info else "fourteen-out"
        grid = Table.grid(padding=(0, 1))
        grid.add_row(Text("Racers", style="bold"))
        for pid, r in self.racers.items():
            state = ("won" if r.get("won") else "forfeit" if r.get("forfeited")
                     else "stuck" if r.get("stuck") else "done" if r.get("finished")
                     else "away" if r.get("connected") is False else "")
            grid.add_row(Text(("▶ " if pid == self.me else "  ") + str(r.get("name", pid)),
                              style="bold" if pid == self.me else ""),
                         Text(progress_text(variant, r).split(" ", 1)[1]),
                         Text(f"{r.get('moves', 0)}m"), Text(state, style="yellow"))
        return grid

    def standings(self) -> Table:
        table = Table(title="Race result" + (f" ({self.reason})" if self.reason else ""),
                      title_style="bold", header_style="bold cyan")
        for col in ("", "place", "name", "won", "cleared/score", "time", "moves", "rating", "±"):
            table.add_column(col)
        variant = self.info.variant if self.info else "fourteen-out"
        for r in self.results or []:
            change = r.get("rating_change")
            table.add_row("▶" if r.get("player_id") == self.me else "", str(r.get("place")),
                          str(r.get("name")), "✓" if r.get("won") else "",
                          progress_text(variant, r).split(" ", 1)[1],
                          fmt_time(int(r.get("time_ms") or 0)), str(r.get("moves", 0)),
                          "" if r.get("rating") is None else str(r["rating"]),
                          "" if change is None else f"{change:+d}",
                          style="bold" if r.get("player_id") == self.me else "")
        return table


class RaceGame(ServerGame):
    """A racer's own game: no daily rank; the race standings come at the end."""

    def __init__(self, session: ServerSession, started: p.RaceStarted, race: RaceState) -> None:
        view = dict(started.view)
        state = p.GameState(id=0, game_id=started.game_id, variant=str(view["variant"]),
                            date="1970-01-01", view=view, seq=int(view.get("moves", 0)),
                            started_at=started.start_at, server_time=started.server_time,
                            elapsed_ms=0, finished=False)
        super().__init__(session, state)
        self.date = None
        self.race = race

    async def hint(self) -> str:
        return "there are no hints in races"

    async def rank_line(self) -> str | None:
        for r in self.race.results or []:
            if r.get("player_id") == self.race.me:
                return f"place {r.get('place')} of {len(self.race.results or [])}"
        return None


async def _start(session: ServerSession, race: RaceState) -> None:
    rid = race.race_id
    room = await session.request(lambda i: p.RaceStart(id=i, race_id=rid), p.RaceRoom)
    race.apply_info(room.race)


async def _wait_start(session: ServerSession, race: RaceState, ctx: Ctx,
                      creator: bool) -> p.RaceStarted:
    """Wait in the queue or room until `race.started`; the creator of a room types `start`."""
    out, reader = ctx.out, ctx.reader
    args = ctx.args
    line_fut: asyncio.Future[str | None] | None = None
    push_task: asyncio.Task[p.ServerMessage] | None = None
    try:
        while True:
            waits: set[asyncio.Future[Any]] = set()
            if push_task is None:
                push_task = asyncio.create_task(session.pushes.get())
            waits.add(push_task)
            if ctx.interactive and line_fut is None:
                line_fut = reader.readline_future("")
            if line_fut is not None:
                waits.add(line_fut)
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if line_fut is not None and line_fut in done:
                line = (line_fut.result() or "quit").strip().lower()
                line_fut = None
                if line == "start" and creator and race.info is not None:
                    try:
                        await _start(session, race)
                    except RequestFailed as exc:
                        out.console.print(f"cannot start: {exc.message}", style="yellow")
                elif line in ("quit", "leave", "q"):
                    await session.request(lambda i: p.RaceLeave(id=i), p.RaceLeft)
                    raise UsageError("left the race before it started")
            if push_task in done:
                msg, push_task = push_task.result(), None
                if isinstance(msg, p.RaceStarted):
                    return msg
                if isinstance(msg, p.RaceUpdate):
                    race.apply_info(msg.race)
                    info = msg.race
                    names = ", ".join(r.name for r in info.racers)
                    if info.status == "countdown" and info.start_at:
                        secs = max(0, info.start_at - session.server_now_ms()) / 1000
                        out.console.print(f"Racers: {names}. Starting in {secs:.0f} s...")
                    elif not out.json:
                        out.console.print(f"Racers ({len(info.racers)}/{info.size}): {names}",
                                          style="dim")
                    if (creator and not ctx.interactive and info.status == "open"
                            and len(info.racers) >= min(args.players, info.size)):
                        await _start(session, race)
                elif isinstance(msg, p.RaceEvent):
                    race.apply_event(msg.version, dict(msg.event))
    finally:
        if push_task is not None:
            push_task.cancel()


async def _wait_end(session: ServerSession, race: RaceState, deadline: float) -> None:
    while race.results is None and time.monotonic() < deadline:
        try:
            msg = await asyncio.wait_for(session.pushes.get(), deadline - time.monotonic())
        except TimeoutError:
            return
        if isinstance(msg, p.RaceEvent):
            race.apply_event(msg.version, dict(msg.event))
        elif isinstance(msg, p.RaceUpdate):
            race.apply_info(msg.race)


async def cmd_race(args: argparse.Namespace, ctx: Ctx) -> int:
    """Race: queue (default), --create a private room or --join one by code."""
    if args.variant is None and args.join is None:
        raise UsageError("name a VARIANT (or --join CODE)")
    if not 2 <= args.players <= 8:
        raise UsageError("--players must be from 2 to 8")
    session = await open_session(ctx)
    out = ctx.out
    me = session.welcome.player_id if session.welcome else ""
    race = RaceState(me)
    try:
        try:
            if args.create:
                room = await session.request(lambda i: p.RaceCreate(
                    id=i, variant=args.variant, size=args.players if args.players > 2 else 8),
                    p.RaceRoom)
                race.apply_info(room.race)
                if not out.json:
                    out.console.print(f"Room code: [bold]{room.race.code}[/]  - share it; "
                                      + ("type 'start' when everyone is in."
                                         if ctx.interactive else
                                         f"starting when {args.players} racers are in."))
            elif args.join:
                room = await session.request(lambda i: p.RaceJoin(id=i, code=args.join.upper()),
                                             p.RaceRoom)
                race.apply_info(room.race)
                if not out.json:
                    out.console.print(f"Joined room {args.join.upper()}; waiting for the start.")
            else:
                queued = await session.request(lambda i: p.RaceQueue(
                    id=i, variant=args.variant, size=args.players), p.RaceQueued)
                if not out.json:
                    out.console.print(f"Waiting for opponents ({queued.waiting} waiting, "
                                      f"{queued.size} needed)... type 'quit' to leave.")
        except RequestFailed as exc:
            if exc.code == p.ErrorCode.UNKNOWN_TYPE:
                raise UsageError("races are not available on this server yet") from None
            raise
        started = await _wait_start(session, race, ctx, creator=bool(args.create))
        game = RaceGame(session, started, race)
        lines = _moves(args.moves, ctx)  # stdin is streamed: a script may see the deal first

        async def resume() -> None:
            rid = race.race_id
            room = await session.request(lambda i: p.RaceGet(id=i, race_id=rid,
                                                             since=race.version), p.RaceRoom)
            race.apply_info(room.race)
            for ev in room.events:
                race.apply_event(race.version, dict(ev))

        session.on_resume.append(resume)
        out.side = race.panel
        info: dict[str, Any] = {"command": "race", "race_id": started.race_id,
                                "variant": game.variant, "game_id": game.game_id}
        deadline = time.monotonic() + (started.ends_at - started.server_time) / 1000 + END_GRACE_S
        if lines is not None:
            status = await scripted(game, lines, out, info, report=False)
        else:
            status = await interactive(game, out, ctx.reader, session,
                                       resume_hint="The race goes on without you; "
                                                   "you forfeit if you stay away.",
                                       on_push=lambda msg: _on_push(msg, race, out),
                                       show_result=False)
        if race.results is None and game.finished:
            if not out.json:
                out.console.print("Waiting for the other racers to finish...", style="dim")
            await _wait_end(session, race, deadline)
        if out.json:
            out.emit({**info, "finished": game.finished, "result": game.result,
                      "standings": race.results, "reason": race.reason})
        elif lines is not None:
            out.board(game)
        elif race.results is not None:
            out.console.print(race.standings())
        return status
    finally:
        await session.close()


async def _on_push(msg: p.ServerMessage, race: RaceState, out: Any) -> bool:
    """Race pushes during play: progress lines; True ends the loop when the race is over."""
    if isinstance(msg, p.RaceEvent):
        note = race.apply_event(msg.version, dict(msg.event))
        if note:
            out.console.print(note, style="dim")
        elif msg.event.get("kind") == "progress":
            r = race.racers.get(str(msg.event.get("player_id")), {})
            if msg.event.get("player_id") != race.me:
                out.console.print(f"  {r.get('name')}: "
                                  f"{progress_text(race.info.variant if race.info else '', r)}"
                                  f", {r.get('moves', 0)} moves", style="dim", highlight=False)
    elif isinstance(msg, p.RaceUpdate):
        race.apply_info(msg.race)
    return race.results is not None
