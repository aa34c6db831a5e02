"""Game backends the play loops drive: a daily game on the server, or an offline engine game.

Both expose the same small surface (`view`, `move`, `undo`, `resign`, `hint`,
`legal_moves`, ...). A server game sends every move (the server decides) and keeps an engine
copy current by following each `moved` reply's events (protocol 2); that copy lists the
legal moves and draws the board.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import protocol as p
from engine import (
    UNDO,
    EngineError,
    Game,
    IllegalMove,
    Reveal,
    from_view,
    new_game,
    parse_card,
    variant,
)
from engine.views import Event, View, as_events, as_view
from protocol.messages import Finish

from .session import RequestFailed, ServerSession

# Error codes meaning "the server does not offer this request".
UNSUPPORTED = frozenset({p.ErrorCode.UNKNOWN_TYPE})
#: What a player is told when a daily game's UTC day is over (`day_over`, protocol 5).
DAY_OVER_TEXT = (
    "this game's day is over (00:00 UTC): it was closed as it stood and takes no more moves;"
    " start today's game"
)


@dataclass
class Outcome:
    """What became of one move, undo or resign."""

    move: str
    ok: bool
    reason: str | None = None
    code: str | None = None
    events: list[Event] = field(default_factory=list)

    def to_json(self, view: View) -> dict[str, object]:
        """This outcome as ``--json`` lists it (with the game's counts after it)."""
        out: dict[str, object] = {"move": self.move, "ok": self.ok}
        if self.ok:
            out.update(
                seq=view.get("moves"),
                cleared=view.get("cleared"),
                score=view.get("score"),
                over=view.get("over"),
            )
        else:
            out.update(reason=self.reason, code=self.code)
        return out


class GameBackend(Protocol):
    variant: str
    view: View
    finished: bool
    result: p.GameResult | None

    def elapsed_ms(self) -> int: ...
    def legal_moves(self) -> list[str]: ...
    async def move(self, text: str) -> Outcome: ...
    async def undo(self) -> Outcome: ...
    async def resign(self) -> Outcome: ...
    async def hint(self) -> str: ...
    async def rank_line(self) -> str | None: ...


def local_copy(view: View) -> Game:
    """The player's engine copy of a view (follows the moves, lists the legal ones)."""
    return from_view(view)


def reveals_of(events: Sequence[Event]) -> list[Reveal]:
    """The cards a move turned face up, from its events."""
    return [
        Reveal(parse_card(e["card"]), e["at"])
        for e in events
        if e["type"] == "reveal" and e["card"] is not None
    ]


class ServerGame:
    """A daily (or race) game on the server."""

    def __init__(self, session: ServerSession, state: p.GameState) -> None:
        self.session = session
        self.game_id = state.game_id
        self.variant = state.variant
        self.date: str | None = state.date
        self.par = state.par
        self.hints = state.hints
        self._apply_state(state)
        session.on_resume.append(self.resync)

    #: The game's moves as the server stored them (protocol 3; None before).
    log: list[str] | None = None

    def _apply_state(self, state: p.GameState) -> None:
        self.view = as_view(dict(state.view))
        self.copy = local_copy(self.view)
        self.seq = state.seq
        self.finished = state.finished
        self.result = state.result
        self._elapsed_at = (state.elapsed_ms, time.monotonic())
        self.log = list(state.log) if state.log is not None else None

    async def _apply_moved(self, reply: p.Moved) -> None:
        """Bring the board up to date: from the reply's view (protocol 1), else by following
        the move's events on the engine copy; a gap in `seq` or a copy that cannot follow
        (an undo it has no snapshot for) resyncs with `game.get`."""
        if reply.view is not None:
            self.view = as_view(dict(reply.view))
            self.copy = local_copy(self.view)
        elif reply.seq != self.seq + 1:
            await self.resync()
            return
        else:
            try:
                self.copy.follow(
                    reply.move, reveals_of(as_events(reply.events)), over=reply.finished
                )
            except (EngineError, ValueError, KeyError):
                await self.resync()
                return
            self.view = self.copy.view()
        if self.log is not None:
            if reply.seq == self.seq + 1:
                self.log.append(reply.move)
            else:  # protocol 1 after a gap: the log is unknown until the next resync
                self.log = None
        self.seq = reply.seq
        self.finished = reply.finished
        if reply.result is not None:
            self.result = reply.result
        self._elapsed_at = (reply.elapsed_ms, time.monotonic())

    def elapsed_ms(self) -> int:
        base, at = self._elapsed_at
        if self.finished:
            return self.result.time_ms if self.result else base
        return base + int((time.monotonic() - at) * 1000)

    async def resync(self) -> None:
        """Fetch the game again (after a reconnect or a conflict)."""
        state = await self.session.request(
            lambda rid: p.GameGet(id=rid, game_id=self.game_id), p.GameState, resend=True
        )
        self._apply_state(state)

    def legal_moves(self) -> list[str]:
        return [] if self.finished else [str(m) for m in self.copy.legal_moves()]

    async def _play(self, text: str, undo: bool) -> Outcome:
        expected = self.seq
        gid = self.game_id
        try:
            if undo:
                reply = await self.session.request(
                    lambda rid: p.Undo(id=rid, game_id=gid, expected_seq=expected), p.Moved
                )
            else:
                reply = await self.session.request(
                    lambda rid: p.Move(id=rid, game_id=gid, move=text, expected_seq=expected),
                    p.Moved,
                )
        except p.EncodeError:
            return Outcome(
                text, False, "not a move: 1 to 32 printable ASCII characters", "bad_request"
            )
        except RequestFailed as exc:
            if exc.code == p.ErrorCode.CONFLICT:
                sent = UNDO if undo else self._canonical(text)  # on the copy, before resync
                await self.resync()
                # Our move was applied, its reply lost (a reconnect resent it): the log says
                # so. One move made elsewhere (another window) is not ours, nor is any move
                # when the server keeps no log for us (protocol < 3): the board is refreshed.
                if self.seq == expected + 1 and self.log is not None and self.log[expected] == sent:
                    return Outcome(text, True)
                return Outcome(
                    text, False, "the game changed elsewhere; the board is refreshed", exc.code
                )
            if exc.code in (p.ErrorCode.GAME_OVER, p.ErrorCode.DAY_OVER):
                await self.resync()
            return Outcome(text, False, _words(exc), exc.code)
        await self._apply_moved(reply)
        return Outcome(reply.move, True, events=as_events(dict(e) for e in reply.events))

    def _canonical(self, text: str) -> str:
        """The move as the server will store it (`parse_move` of the copy), else the text."""
        try:
            return str(self.copy.parse_move(text))
        except IllegalMove:
            return text

    async def move(self, text: str) -> Outcome:
        return await self._play(text, undo=False)

    async def undo(self) -> Outcome:
        return await self._play("undo", undo=True)

    def end_from(self, push: p.GameFinished) -> bool:
        """Take the server's word that this game ended after its last move (`game.finished`);
        False when the push is about another game."""
        if push.game_id != self.game_id:
            return False
        self.finished = True
        self.seq = push.seq
        self.result = push.result
        self.copy.settle_over(True)
        self.view = self.copy.view()
        return True

    async def resign(self) -> Outcome:
        """End the game now. A Triple Deck game is finished (`finish`: its score counts, it is
        not recorded as resigned) when the server speaks protocol 3; any other is resigned."""
        gid = self.game_id
        welcome = self.session.welcome
        finish = variant(self.variant).scored and welcome is not None and welcome.version >= 3
        make = (
            (lambda rid: Finish(id=rid, game_id=gid))
            if finish
            else (lambda rid: p.Resign(id=rid, game_id=gid))
        )
        try:
            reply = await self.session.request(make, p.Finished)
        except RequestFailed as exc:
            if exc.code in (p.ErrorCode.GAME_OVER, p.ErrorCode.DAY_OVER):
                await self.resync()
            return Outcome("resign", False, _words(exc), exc.code)
        self.finished = True
        self.result = reply.result
        view = self.view.copy()
        view["over"] = True
        self.view = view
        return Outcome("resign", True)

    async def hint(self) -> str:
        gid = self.game_id
        try:
            reply = await self.session.request(lambda rid: p.Hint(id=rid, game_id=gid), p.HintReply)
        except RequestFailed as exc:
            if exc.code in UNSUPPORTED:
                return "hints are not available on this server"
            return f"no hint: {_words(exc)}"
        counted, self.hints = reply.hints > self.hints, reply.hints
        if reply.move is None and counted:  # the search proved it: worth a hint (protocol.md)
            return (
                "no line wins from here (the solver sees every card): counted as a hint "
                f"(hints used: {reply.hints}, time penalty {reply.penalty_ms // 1000} s)"
            )
        if reply.move is None:
            return "the solver found no move in time (no hint counted)"
        return (
            f"hint: {reply.move}   (hints used: {reply.hints}, "
            f"time penalty {reply.penalty_ms // 1000} s)"
        )

    async def rank_line(self) -> str | None:
        rank = self.result.rank if self.result else None
        total = None
        if self.date is not None:
            try:
                reply = await self.session.request(
                    lambda rid: p.LeaderboardRank(id=rid, variant=self.variant, date=self.date),
                    p.PlayerRank,
                )
            except RequestFailed:
                reply = None
            if reply is not None:
                total = reply.total
                if reply.entry is not None:
                    rank = reply.entry.rank
        if rank is None:
            return None
        if self.result is not None:
            self.result = replace(self.result, rank=rank)
        return f"rank {rank}" + (f" of {total}" if total else "")


class LocalGame:
    """An offline practice game with the shared engine (no server)."""

    def __init__(self, variant_id: str, seed: int) -> None:
        self.variant = variant_id
        self.seed = seed
        self.game = new_game(variant_id, seed)
        self.view = self.game.view()
        self.finished = False
        self.result: p.GameResult | None = None
        self._start = time.monotonic()
        self._resigned = False
        self._ended = False  # ended by the player (resigned, or a Triple Deck game finished)

    def elapsed_ms(self) -> int:
        if self.result is not None:
            return self.result.time_ms
        return int((time.monotonic() - self._start) * 1000)

    def _after(self) -> None:
        self.view = self.game.view()
        if self.game.over or self._ended:
            self.finished = True
            ended = self.game.result()
            self.result = p.GameResult(
                won=ended["won"],
                over=True,
                cleared=ended["cleared"],
                score=ended["score"],
                time_ms=self.elapsed_ms(),
                moves=ended["moves"],
                resigned=self._resigned,
            )

    def legal_moves(self) -> list[str]:
        return [str(m) for m in self.game.legal_moves()]

    async def move(self, text: str) -> Outcome:
        try:
            res = self.game.apply(text)
        except IllegalMove as exc:
            return Outcome(text, False, str(exc), "illegal_move")
        self._after()
        return Outcome(res.move, True, events=res.events())

    async def undo(self) -> Outcome:
        try:
            self.game.undo()
        except IllegalMove as exc:
            return Outcome("undo", False, str(exc), "illegal_move")
        self._after()
        return Outcome("undo", True)

    async def resign(self) -> Outcome:
        if self.finished:
            return Outcome("resign", False, "the game is over", "game_over")
        self._ended = True
        self._resigned = not variant(self.variant).scored  # Triple Deck games are finished
        self._after()
        return Outcome("resign", True)

    async def hint(self) -> str:
        return "hints need the server; practice games have none"

    async def rank_line(self) -> str | None:
        return None


def _words(exc: RequestFailed) -> str:
    """The server's refusal as the player reads it."""
    return DAY_OVER_TEXT if exc.code == p.ErrorCode.DAY_OVER else exc.message
