"""`solitaire race`: wait in the queue or a private room, count down, play with every
opponent's live progress beside the board, then show the standings and rating changes.

The waiting room and the end of a race read the same `EventSource` as the play loop
(typed lines and pushes); `RaceState` holds what is known of the race, `render.py` draws it.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Mapping
from dataclasses import replace

import protocol as p
from protocol import races as pr

from . import render
from .commands import Ctx, UsageError, open_session, script_source
from .events import EventSource, Line, LineReader, Push
from .games import ServerGame
from .ingame import RACE_COMMANDS
from .play import interactive, scripted
from .render import JsonDoc, RaceNews, View
from .session import RequestFailed, ServerSession

#: How long to wait for the race's end after one's own game is over, beyond its time limit.
END_GRACE_S = 30.0
LEAVE_WORDS = frozenset({"quit", "leave", "q"})
#: How often the waiting room checks that the connection is still up.
WAIT_CHECK_S = 1.0


class RaceState:
    """What the client knows of one race: racers' progress, and the final standings, typed
    as the protocol's race structs and events (`protocol.races`)."""

    def __init__(self, me: str) -> None:
        self.me = me
        self.info: p.RaceInfo | None = None
        self.version = 0
        self.racers: dict[str, p.Racer] = {}
        self.results: tuple[pr.RaceResultEntry, ...] | None = None
        self.reason = ""
        self.spectators = 0  # how many watch the race (`race.spectators`)
        #: A race still running that this player moved on from (their game in it over):
        #: the server may still push its news to this session, none of it about this race.
        self.left: set[str] = set()

    @property
    def race_id(self) -> str:
        return self.info.race_id if self.info else ""

    @property
    def variant(self) -> str:
        return self.info.variant if self.info else "fourteen-out"

    def apply_info(self, info: p.RaceInfo) -> None:
        """The whole race (`race.update`, `race.room`): its racers as the server has them."""
        self.info = info
        self.version = max(self.version, info.version)
        self.racers = {r.player_id: r for r in info.racers}

    def _racer(self, pid: str) -> p.Racer:
        return self.racers.get(pid) or p.Racer(player_id=pid, name=pid)

    def apply_event(self, version: int, event: pr.RaceEventBody) -> RaceNews | None:
        """Update from a public event; returns what happened to a racer, if anything."""
        self.version = max(self.version, version)
        if isinstance(event, pr.RaceEnded):
            self.results, self.reason = event.results, event.reason
            return None
        if isinstance(event, pr.RacerProgress):
            racer = replace(
                self._racer(event.player_id),
                cleared=event.cleared,
                score=event.score,
                moves=event.moves,
                finished=event.finished,
                stuck=event.stuck,
                won=event.won,
                resigned=event.resigned,
            )
        elif isinstance(event, pr.RacerJoined):
            racer = replace(self._racer(event.player_id), name=event.name)
        elif isinstance(event, pr.RacerLeft):
            racer = self._racer(event.player_id)
            self.racers.pop(event.player_id, None)
            return RaceNews(event.kind, event.player_id, racer)
        elif isinstance(event, pr.RacerForfeited):
            racer = replace(self._racer(event.player_id), forfeited=True)
        else:  # the countdown: `race.update` brings it too
            return None
        self.racers[racer.player_id] = racer
        return RaceNews(event.kind, racer.player_id, racer)

    def apply_logged(self, logged: Mapping[str, object]) -> RaceNews | None:
        """An event of `race.room`'s log (``{"v": version, "kind": ...}``); one this client
        does not know (a newer server's) is skipped."""
        body = {k: v for k, v in logged.items() if k != "v"}
        version = logged.get("v")
        try:
            event = pr.load_race_event(body)
        except p.BadRequest:
            return None
        return self.apply_event(version if isinstance(version, int) else self.version, event)

    def about_another(self, race_id: str) -> bool:
        """A push about a race left behind, or about another race than this one once known."""
        return race_id in self.left or (self.info is not None and race_id != self.race_id)

    def apply(self, msg: p.ServerMessage) -> RaceNews | None:
        """Update from a race push (`race.event` or `race.update`) about this race; others
        are ignored."""
        if isinstance(msg, p.RaceEvent | p.RaceSpectators) and self.about_another(msg.race_id):
            return None
        if isinstance(msg, p.RaceUpdate) and msg.race.race_id in self.left:
            return None
        if isinstance(msg, p.RaceEvent):
            try:
                event = pr.load_race_event(msg.event)
            except p.BadRequest:  # a kind this client does not know (a newer server's)
                return None
            return self.apply_event(msg.version, event)
        if isinstance(msg, p.RaceUpdate):
            self.apply_info(msg.race)
        elif isinstance(msg, p.RaceSpectators) and msg.race_id == self.race_id:
            self.spectators = msg.count
        return None

    def with_own(self, view: Mapping[str, object]) -> dict[str, p.Racer]:
        """The racers, this player's line taken from their own game's view: the panel drawn
        with the board is never a move behind (the server's progress event comes later)."""
        own = self.racers.get(self.me)
        if own is None:
            return self.racers

        def number(key: str, known: int) -> int:
            value = view.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else known

        fresh = replace(
            own,
            cleared=number("cleared", own.cleared),
            score=number("score", own.score),
            moves=number("moves", own.moves),
            won=bool(view.get("won")) or own.won,
        )
        return {pid: fresh if pid == self.me else r for pid, r in self.racers.items()}

    def standings_json(self) -> list[JsonDoc] | None:
        """The final standings as ``--json`` prints them (the protocol's field names)."""
        if self.results is None:
            return None
        # As the event carried them: an unrated racer's rating is null, not left out.
        ended = pr.dump_race_event(pr.RaceEnded(reason=self.reason, results=self.results))
        results = ended["results"]
        return (
            [dict(r) for r in results if isinstance(r, dict)] if isinstance(results, list) else []
        )


class RaceGame(ServerGame):
    """A racer's own game: no daily rank; the race standings come at the end."""

    def __init__(
        self,
        session: ServerSession,
        started: p.RaceStarted,
        race: RaceState,
        state: p.GameState | None = None,
    ) -> None:
        """`state`: the game as `game.get` returned it, when rejoining a race under way."""
        view = dict(started.view)
        if state is None:
            state = p.GameState(
                id=0,
                game_id=started.game_id,
                variant=str(view["variant"]),
                date="1970-01-01",
                view=view,
                seq=int(view.get("moves", 0)),
                started_at=started.start_at,
                server_time=started.server_time,
                elapsed_ms=0,
                finished=False,
            )
        super().__init__(session, state)
        self.date = None
        self.race = race

    async def hint(self) -> str:
        return "there are no hints in races"

    async def rank_line(self) -> str | None:
        for r in self.race.results or ():
            if r.player_id == self.race.me:
                return f"place {r.place} of {len(self.race.results or ())}"
        return None


# -- before the start -------------------------------------------------------------------------


async def _enter(
    args: argparse.Namespace, ctx: Ctx, session: ServerSession, race: RaceState
) -> None:
    """Queue, create a room or join one, as the arguments say."""
    out = ctx.out
    try:
        if args.create:
            room = await session.request(
                lambda i: p.RaceCreate(
                    id=i, variant=args.variant, size=args.players if args.players > 2 else 8
                ),
                p.RaceRoom,
            )
            race.apply_info(room.race)
            if not out.json:
                out.show(render.room_created(room.race.code, ctx.interactive, args.players))
        elif args.join:
            code = args.join.upper()
            room = await session.request(lambda i: p.RaceJoin(id=i, code=code), p.RaceRoom)
            race.apply_info(room.race)
            if not out.json:
                out.show(render.room_joined(code))
        else:
            queued = await session.request(
                lambda i: p.RaceQueue(id=i, variant=args.variant, size=args.players), p.RaceQueued
            )
            if not out.json:
                out.show(render.race_queued(queued.waiting, queued.size))
    except RequestFailed as exc:
        if exc.code == p.ErrorCode.UNKNOWN_TYPE:
            raise UsageError("races are not available on this server yet") from None
        raise


async def _rematch(ctx: Ctx, session: ServerSession, race: RaceState, race_id: str) -> bool:
    """Ask for the rematch of a race that is over (protocol 7): its room, made now and
    offered to the other racers, or the one another racer made (joined). True when this
    player made it (and starts it)."""
    try:
        room = await session.request(lambda i: p.RaceRematch(id=i, race_id=race_id), p.RaceRoom)
    except RequestFailed as exc:
        if exc.code == p.ErrorCode.UNKNOWN_TYPE:
            raise UsageError("this server has no rematches (protocol 7)") from None
        raise
    race.apply_info(room.race)
    mine = room.race.creator == race.me
    if not ctx.out.json:
        if mine:
            ctx.out.show(render.room_created(room.race.code, ctx.interactive, room.race.size))
        else:
            ctx.out.show(render.room_joined(str(room.race.code)))
    return mine


async def _start(session: ServerSession, race: RaceState) -> None:
    rid = race.race_id
    room = await session.request(lambda i: p.RaceStart(id=i, race_id=rid), p.RaceRoom)
    race.apply_info(room.race)


class _Waiting:
    """The queue or room until `race.started`; the creator of a room types `start` (or,
    without a terminal, the room starts once `--players` racers are in)."""

    def __init__(self, session: ServerSession, race: RaceState, ctx: Ctx, creator: bool) -> None:
        self.session, self.race, self.ctx, self._creator = session, race, ctx, creator

    @property
    def creator(self) -> bool:
        """This player opened the room (also when rejoining it after a restart)."""
        info = self.race.info
        return self._creator or (info is not None and info.creator == self.race.me)

    async def run(self) -> p.RaceStarted:
        reader = self.ctx.reader if self.ctx.interactive else None
        with EventSource(self.session.pushes, reader) as events:
            while True:
                event = await events.next_within(WAIT_CHECK_S, "")
                if event is None:
                    # Nothing comes while the server is away: reconnect (its `hello`
                    # re-attaches us to the room or queue, whose news then follow).
                    await self.session.ensure_connected()
                elif isinstance(event, Line):
                    await self._line(event)
                elif isinstance(event.message, p.RaceStarted):
                    if event.message.race_id not in self.race.left:
                        return event.message
                elif isinstance(event.message, p.RaceUpdate):
                    if event.message.race.race_id not in self.race.left:
                        await self._update(event.message.race)
                else:
                    self.race.apply(event.message)

    async def _line(self, line: Line) -> None:
        word = (line.text or "quit").strip().lower()
        if word == "start" and self.creator and self.race.info is not None:
            try:
                await _start(self.session, self.race)
            except RequestFailed as exc:
                self.ctx.out.show(render.cannot_start(exc.message))
        elif word in LEAVE_WORDS:
            await self.session.request(lambda i: p.RaceLeave(id=i), p.RaceLeft)
            raise UsageError("left the race before it started")

    async def _update(self, info: p.RaceInfo) -> None:
        self.race.apply_info(info)
        out = self.ctx.out
        out.show(render.race_room(info, self.session.server_now_ms(), out.json))
        if (
            self.creator
            and not self.ctx.interactive
            and info.status == "open"
            and len(info.racers) >= min(self.ctx.args.players, info.size)
        ):
            await _start(self.session, self.race)


# -- during and after the race ----------------------------------------------------------------


async def _on_push(
    msg: p.ServerMessage, race: RaceState, out: View, reader: LineReader | None = None
) -> bool:
    """Race pushes during play: news of the others, printed above the `move> ` prompt (never
    on it); True ends the loop when the race is over."""
    news = race.apply(msg)
    text = render.race_news(news, race.me, race.variant) if news is not None else None
    if text is not None:
        with reader.above_prompt() if reader is not None else contextlib.nullcontext():
            out.show(text)
    return race.results is not None


async def _wait_end(session: ServerSession, race: RaceState, deadline: float) -> None:
    """After one's own game: follow the race until its results come, or the deadline."""
    with EventSource(session.pushes) as events:
        while race.results is None:
            event = await events.next_within(deadline - time.monotonic())
            if event is None:
                return
            if isinstance(event, Push):
                race.apply(event.message)


def _follow_resumes(session: ServerSession, race: RaceState) -> None:
    """After a reconnect, catch up with the race's events missed meanwhile. (The server
    re-attaches the racer on `hello` and pushes the race; `welcome.race` says whether it is
    still under way. The events missed, and the results of a race that ended meanwhile,
    come from `race.get`.)"""

    async def resume() -> None:
        rid = race.race_id
        active = session.active_race
        if active is not None and active.race_id != rid:
            return  # already in another race: this one is long over for us
        room = await session.request(
            lambda i: p.RaceGet(id=i, race_id=rid, since=race.version), p.RaceRoom
        )
        race.apply_info(room.race)
        for ev in room.events:
            race.apply_logged(ev)

    session.on_resume.append(resume)


async def _play(
    args: argparse.Namespace,
    ctx: Ctx,
    session: ServerSession,
    race: RaceState,
    started: p.RaceStarted,
    rejoined: bool = False,
) -> int:
    out = ctx.out
    state = None
    if rejoined:  # moves may have been made before: the game as the server has it
        gid = started.game_id
        state = await session.request(lambda i: p.GameGet(id=i, game_id=gid), p.GameState)
    game = RaceGame(session, started, race, state)
    lines = script_source(args.moves, ctx)  # stdin is streamed: a script may see the deal first
    _follow_resumes(session, race)
    out.side = lambda: render.race_panel(
        race.with_own(game.view), race.me, race.variant, race.spectators
    )
    info: JsonDoc = {
        "command": "race",
        "race_id": started.race_id,
        "variant": game.variant,
        "game_id": game.game_id,
    }
    deadline = time.monotonic() + (started.ends_at - started.server_time) / 1000 + END_GRACE_S
    if lines is not None:
        status = await scripted(game, lines, out, info, report=False)
    else:
        status = await interactive(
            game,
            out,
            ctx.reader,
            session,
            resume_hint="The race goes on without you; you forfeit if you stay away.",
            on_push=lambda msg: _on_push(msg, race, out, ctx.reader),
            show_result=False,
            commands=RACE_COMMANDS,
        )
    if race.results is None and game.finished:
        if not out.json:
            out.show(render.WAITING_FOR_RACERS)
        await _wait_end(session, race, deadline)
    if race.results is not None and not out.json:
        out.show(render.rematch_hint(started.race_id))
    if out.json:
        out.emit(
            {
                **info,
                "finished": game.finished,
                "result": render.result_json(game.result),
                "standings": race.standings_json(),
                "reason": race.reason,
            }
        )
    elif lines is not None:
        out.board(game)
    elif race.results is not None:
        out.show(render.race_standings(race.results, race.me, race.reason, race.variant))
    return status


async def _game_over_in(session: ServerSession, active: p.ActiveRace) -> bool:
    """Whether this player's own game in ``active`` is over (finished, stuck, resigned or
    forfeited), as the server says it now; False when the race cannot be read."""
    rid = active.race_id
    try:
        room = await session.request(lambda i: p.RaceGet(id=i, race_id=rid), p.RaceRoom)
    except RequestFailed:
        return False
    me = session.welcome.player_id if session.welcome else ""
    return any(
        r.player_id == me and (r.finished or r.stuck or r.forfeited) for r in room.race.racers
    )


async def cmd_race(args: argparse.Namespace, ctx: Ctx) -> int:
    """Race: queue (default), --create a private room or --join one by code. A player who is
    already in a race (the client was closed or crashed during it) rejoins that race, unless
    their own game in it is over and a new race is asked: then the new one."""
    if not 2 <= args.players <= 8:
        raise UsageError("--players must be from 2 to 8")
    session = await open_session(ctx)
    race = RaceState(session.welcome.player_id if session.welcome else "")
    try:
        active = session.active_race
        rejoined = active is not None
        if active is not None and (args.variant is not None or args.join is not None):
            # A race still running whose game of ours is over lets us race again (the server
            # says so by taking the new request); one we still play refuses it: rejoined.
            try:
                await _enter(args, ctx, session, race)
            except RequestFailed as exc:
                # Refused for the race we are in (still playing it): rejoined. Refused for
                # the one asked (a room full or started) once the server had let us leave
                # a race whose game of ours was over: said, not a wait for a race left.
                if exc.code != p.ErrorCode.CONFLICT or await _game_over_in(session, active):
                    raise
            else:
                if race.race_id != active.race_id:  # not the room we wait in, joined again
                    rejoined = False
                    race.left.add(active.race_id)
                    ctx.err.print(
                        render.notice(
                            f"your game in race {active.race_id} is over; it goes on without you"
                        )
                    )
        if active is not None and rejoined:
            # The server re-attached us on hello: `race.update` and (once the race has
            # started) `race.started` are on their way.
            ctx.err.print(
                render.notice(
                    f"you are in race {active.race_id} ({active.variant}, {active.status}); "
                    "rejoining it"
                )
            )
        elif active is None:
            if args.variant is None and args.join is None:
                raise UsageError("name a VARIANT (or --join CODE)")
            await _enter(args, ctx, session, race)
        started = await _Waiting(session, race, ctx, creator=bool(args.create)).run()
        return await _play(args, ctx, session, race, started, rejoined=rejoined)
    finally:
        await session.close()


async def cmd_rematch(args: argparse.Namespace, ctx: Ctx) -> int:
    """Race the racers of a race that is over again: a private room offered to them (they
    accept with this same command, or `race --join CODE`; in the browser, by the offer)."""
    session = await open_session(ctx)
    race = RaceState(session.welcome.player_id if session.welcome else "")
    try:
        mine = await _rematch(ctx, session, race, args.race_id)
        if race.info is not None:
            args.players = len(race.info.racers) if not mine else race.info.size
        started = await _Waiting(session, race, ctx, creator=mine).run()
        return await _play(args, ctx, session, race, started)
    finally:
        await session.close()
