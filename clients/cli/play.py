"""The play loops: interactive (a person at a terminal) and scripted (a list of moves).

Both drive a `GameBackend`; neither knows whether it is a server or an offline game. The
interactive loop takes its events from one `EventSource` (typed lines and server pushes)
and its commands from the `PLAY_COMMANDS` table; what it shows is rendered by `render.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

import protocol as p

from . import render
from .events import EventSource, Line, LineReader, Push
from .games import GameBackend, Outcome, ServerGame
from .ingame import PLAY_COMMANDS, CommandTable, Left, Reply, script_command
from .render import JsonDoc, View
from .session import ServerSession

EXIT_ILLEGAL: Final = 1

#: Sees every server push but `shutdown` during play; True ends the loop.
PushHandler = Callable[[p.ServerMessage], Awaitable[bool]]


async def show_end(game: GameBackend, out: View) -> None:
    """The final result and, on a server, the rank."""
    out.show(render.result_line(game.variant, game.result, await game.rank_line()))


async def interactive(
    game: GameBackend,
    out: View,
    reader: LineReader,
    session: ServerSession | None = None,
    resume_hint: str = "",
    on_push: PushHandler | None = None,
    show_result: bool = True,
    commands: CommandTable = PLAY_COMMANDS,
) -> int:
    """Play at the terminal until the game ends, the person quits, or input ends.

    On a `shutdown` push the session reconnects at once; `on_push` sees every other push
    and ends the loop by returning True. `commands`: what the person may type (a daily game's
    by default; practice and races have their own).
    """
    out.board(game)
    if game.finished:
        out.show(render.ALREADY_FINISHED)
        await show_end(game, out)
        return 0
    out.show(render.intro_text(commands.names()))
    with EventSource(session.pushes if session is not None else None, reader) as events:
        while True:
            event = await events.next("move> ")
            if isinstance(event, Push):
                msg = event.message
                if (
                    isinstance(msg, p.GameFinished)
                    and isinstance(game, ServerGame)
                    and game.end_from(msg)
                ):  # the server found the game over later
                    out.board(game)
                    if show_result:
                        await show_end(game, out)
                    return 0
                if await _push(msg, out, session, on_push):
                    return 0
                continue
            reply = await _line(game, reader, event, commands)
            out.reply(game, reply, resume_hint)
            if isinstance(reply, Left):
                return 0
            if game.finished:
                if show_result:
                    await show_end(game, out)
                return 0


async def _push(
    msg: p.ServerMessage, out: View, session: ServerSession | None, on_push: PushHandler | None
) -> bool:
    if isinstance(msg, p.Shutdown) and session is not None:
        await session.ensure_connected()
        out.show(render.RECONNECTED)
        return False
    if isinstance(msg, p.DeviceSignedIn):  # protocol 9: told while playing
        out.show(render.device_signed_in(msg.name, msg.device))
        return False
    return on_push is not None and await on_push(msg)


async def _line(game: GameBackend, reader: LineReader, line: Line, commands: CommandTable) -> Reply:
    if line.text is None:
        return Left(eof=True)
    return await commands.dispatch(game, reader.readline, line.text)


# -- scripts ----------------------------------------------------------------------------------


@dataclass
class ScriptLine:
    number: int
    text: str


def _script_line(number: int, raw: str) -> ScriptLine | None:
    text = raw.split("#", 1)[0].strip()
    return ScriptLine(number, text) if text else None


def script_lines(lines: Iterable[str]) -> list[ScriptLine]:
    """Moves from a file: one a line; blank lines and `#` comments skipped."""
    found = (_script_line(n, raw) for n, raw in enumerate(lines, start=1))
    return [line for line in found if line is not None]


async def stream_lines(reader: LineReader) -> AsyncIterator[ScriptLine]:
    """Moves from stdin, read as they come (a script may react to the game)."""
    number = 0
    while True:
        raw = await reader.readline("")
        if raw is None:
            return
        number += 1
        line = _script_line(number, raw)
        if line is not None:
            yield line


async def _aiter(lines: Iterable[ScriptLine]) -> AsyncIterator[ScriptLine]:
    for line in lines:
        yield line


Script = Iterable[ScriptLine] | AsyncIterator[ScriptLine]


@dataclass(frozen=True)
class ScriptError:
    """Where a moves script stopped: the refused line and why."""

    line: int
    move: str
    reason: str | None
    code: str | None

    def to_json(self) -> JsonDoc:
        return {"line": self.line, "move": self.move, "reason": self.reason, "code": self.code}


@dataclass
class ScriptRun:
    """What a moves script did: every line's outcome, and where it stopped, if refused."""

    outcomes: list[JsonDoc] = field(default_factory=list)
    error: ScriptError | None = None


async def _play_line(game: GameBackend, line: ScriptLine) -> Outcome | None:
    """Play one script line; None for `quit`."""
    command = script_command(line.text)
    if command == "quit":
        return None
    if command == "resign":
        return await game.resign()
    if command == "undo":
        return await game.undo()
    return await game.move(line.text)


async def run_script(game: GameBackend, lines: Script, out: View) -> ScriptRun:
    """Play `lines` in order, stopping at `quit` or the first refused move; in text mode
    every line's outcome is shown as it is played."""
    run = ScriptRun()
    source = lines if isinstance(lines, AsyncIterator) else _aiter(lines)
    async for line in source:
        outcome = await _play_line(game, line)
        if outcome is None:
            break
        run.outcomes.append({"line": line.number, **outcome.to_json(game.view)})
        if not out.json:
            out.show(
                render.script_step(
                    line.number, line.text, outcome, game.variant, game.view, out.ascii
                ),
                soft_wrap=True,
            )
        if not outcome.ok:
            run.error = ScriptError(line.number, line.text, outcome.reason, outcome.code)
            break
    return run


async def scripted(
    game: GameBackend, lines: Script, out: View, info: JsonDoc, report: bool = True
) -> int:
    """Play `lines` in order; stop at the first refused move (exit status 1).

    `info` gains the script's ``outcomes`` and ``error``. With `report`, the final
    board/result (or, with --json, one JSON object) is shown.
    """
    run = await run_script(game, lines, out)
    info["error"] = run.error.to_json() if run.error is not None else None
    info["outcomes"] = run.outcomes
    if report:
        await _report(game, run, out, info)
    return EXIT_ILLEGAL if run.error is not None else 0


async def _report(game: GameBackend, run: ScriptRun, out: View, info: JsonDoc) -> None:
    rank = await game.rank_line() if game.finished else None
    if out.json:
        out.emit(
            {
                **info,
                "moves": run.outcomes,
                "finished": game.finished,
                "result": render.result_json(game.result),
                "view": game.view,
            }
        )
        return
    out.board(game)
    if game.finished:
        out.show(render.result_line(game.variant, game.result, rank))
    if run.error is not None:
        out.show(render.script_stopped(run.error.line, run.error.move, run.error.reason, out.ascii))
