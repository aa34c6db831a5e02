"""The play loops: interactive (a person at a terminal) and scripted (a list of moves).

Both drive a `GameBackend`; neither knows whether it is a server or an offline game.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

import protocol as p

from .games import GameBackend, Outcome, title_of
from .render import fmt_time, progress_text, render_board
from .rules import COMMANDS, NOTATION
from .session import ServerSession

EXIT_ILLEGAL: Final = 1
QUIT_WORDS: Final = frozenset({"quit", "exit", "q", ":q"})
RESIGN_WORDS: Final = frozenset({"resign", "finish"})


class LineReader:
    """Reads stdin lines on a daemon thread so the event loop (and Ctrl-C) stay responsive.

    `readline(prompt)` returns the line without its newline, or None at end of input.
    """

    def __init__(self) -> None:
        self._wanted = threading.Condition()
        self._prompt: str | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._future: asyncio.Future[str | None] | None = None
        self._eof = False

    def _run(self) -> None:
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  (line editing and history for input())
        while True:
            with self._wanted:
                while self._prompt is None:
                    self._wanted.wait()
                prompt, self._prompt = self._prompt, None
            try:
                line: str | None = input(prompt)
            except (EOFError, OSError):
                line = None
            fut, loop = self._future, self._loop
            if fut is not None and loop is not None:
                loop.call_soon_threadsafe(_set_result, fut, line)
            if line is None:
                return

    def readline_future(self, prompt: str) -> asyncio.Future[str | None]:
        """Ask for one line; the future resolves when the person has typed it."""
        loop = asyncio.get_running_loop()
        if self._future is not None and not self._future.done():
            return self._future
        fut: asyncio.Future[str | None] = loop.create_future()
        if self._eof:
            fut.set_result(None)
            return fut
        self._loop, self._future = loop, fut
        fut.add_done_callback(self._note_eof)
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="stdin", daemon=True)
            self._thread.start()
        with self._wanted:
            self._prompt = prompt
            self._wanted.notify()
        return fut

    def _note_eof(self, fut: asyncio.Future[str | None]) -> None:
        if not fut.cancelled() and fut.result() is None:
            self._eof = True

    async def readline(self, prompt: str) -> str | None:
        return await asyncio.shield(self.readline_future(prompt))


def _set_result(fut: asyncio.Future[str | None], value: str | None) -> None:
    if not fut.done():
        fut.set_result(value)


@dataclass
class View:
    """Output settings shared by the loops."""

    console: Console
    ascii: bool = False
    json: bool = False
    extra: Callable[[], str] = field(default=lambda: "")
    side: Callable[[], RenderableType] | None = None  # drawn beside the board (race progress)

    def emit(self, doc: dict[str, Any]) -> None:
        """Print one machine-readable JSON object (``--json``) on stdout."""
        sys.stdout.write(json.dumps(doc) + "\n")
        sys.stdout.flush()

    def board(self, game: GameBackend) -> None:
        side = self.side() if self.side is not None else None
        width = self.console.width - (26 if side is not None else 0)
        board = render_board(game.view, width=width, ascii=self.ascii,
                             title=title_of(game.variant), elapsed_ms=game.elapsed_ms(),
                             extra=self.extra())
        if side is None:
            self.console.print(board)
            return
        grid = Table.grid(padding=(0, 3))
        grid.add_row(board, side)
        self.console.print(grid)


def result_text(variant_id: str, result: dict[str, Any] | None) -> str:
    if not result:
        return "no result"
    verdict = "WON" if result.get("won") else ("resigned" if result.get("resigned") else "over")
    return (f"{verdict} · {progress_text(variant_id, result)} · "
            f"time {fmt_time(int(result.get('time_ms', 0)))} · moves {result.get('moves', 0)}"
            + (f" · hints {result['hints']}" if result.get("hints") else ""))


async def show_end(game: GameBackend, out: View) -> None:
    """The final result and, on a server, the rank."""
    rank = await game.rank_line()
    line = Text("Result: ", style="bold")
    line.append(result_text(game.variant, game.result),
                style="bold green" if game.result and game.result.get("won") else "bold")
    if rank:
        line.append(f" · {rank}", style="bold cyan")
    out.console.print(line)


def _move_list(moves: list[str]) -> str:
    return ", ".join(moves) if moves else "(none)"


def _help(variant_id: str) -> str:
    return f"{NOTATION[variant_id]}\n{COMMANDS}"


PushHandler = Callable[[p.ServerMessage], Awaitable[bool]]


async def interactive(game: GameBackend, out: View, reader: LineReader,
                      session: ServerSession | None = None, resume_hint: str = "",
                      on_push: PushHandler | None = None, show_result: bool = True) -> int:
    """Play at the terminal until the game ends, the person quits, or input ends.

    `on_push` sees every other server push; when it returns True the loop ends.
    """
    console = out.console
    out.board(game)
    if game.finished:
        console.print("This game is already finished.")
        await show_end(game, out)
        return 0
    console.print("Type a move, or 'help', 'moves', 'undo', 'hint', 'resign', 'quit'.",
                  style="dim")
    push_task: asyncio.Task[p.ServerMessage] | None = None
    try:
        while True:
            line_fut = reader.readline_future("move> ")
            waits: set[asyncio.Future[Any]] = {line_fut}
            if session is not None:
                if push_task is None:
                    push_task = asyncio.create_task(session.pushes.get())
                waits.add(push_task)
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if push_task is not None and push_task in done:
                msg, push_task = push_task.result(), None
                if isinstance(msg, p.Shutdown) and session is not None:
                    await session.ensure_connected()
                    console.print("(reconnected; the game goes on)", style="dim")
                elif on_push is not None and await on_push(msg):
                    return 0
                if line_fut not in done:
                    continue
            line = line_fut.result()
            if line is None:
                console.print(f"\nLeft the game. {resume_hint}".rstrip())
                return 0
            word = line.strip()
            low = word.lower()
            if not word or low in ("board", "show", "b"):
                out.board(game)
            elif low in ("help", "?", "h"):
                console.print(_help(game.variant), highlight=False)
            elif low in ("moves", "m"):
                console.print(f"legal moves: {_move_list(game.legal_moves())}", highlight=False)
            elif low == "hint":
                console.print(await game.hint(), highlight=False)
            elif low in QUIT_WORDS:
                console.print(f"Left the game. {resume_hint}".rstrip())
                return 0
            elif low in RESIGN_WORDS:
                answer = await reader.readline("End the game and record the result? [y/N] ")
                if (answer or "").strip().lower() in ("y", "yes"):
                    outcome = await game.resign()
                    if not outcome.ok:
                        console.print(f"cannot resign: {outcome.reason}", style="yellow")
                else:
                    console.print("not resigned")
            else:
                outcome = await (game.undo() if low == "undo" else game.move(word))
                if outcome.ok:
                    out.board(game)
                else:
                    console.print(Text(f"✗ {outcome.reason}", style="bold yellow"))
            if game.finished:
                if show_result:
                    await show_end(game, out)
                return 0
    finally:
        if push_task is not None:
            push_task.cancel()


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


async def scripted(game: GameBackend, lines: Iterable[ScriptLine] | AsyncIterator[ScriptLine],
                   out: View,
                   info: dict[str, Any], report: bool = True) -> int:
    """Play `lines` in order; stop at the first refused move (exit status 1).

    With `report`, the final board/result (or, with --json, one JSON object) is printed.
    """
    outcomes: list[dict[str, Any]] = []
    error: dict[str, Any] | None = None
    source = lines if isinstance(lines, AsyncIterator) else _aiter(lines)
    async for line in source:
        low = line.text.lower()
        if low in QUIT_WORDS:
            break
        outcome: Outcome
        if low in RESIGN_WORDS:
            outcome = await game.resign()
        elif low == "undo":
            outcome = await game.undo()
        else:
            outcome = await game.move(line.text)
        outcomes.append({"line": line.number, **outcome.to_json(game.view)})
        if not out.json:
            if outcome.ok:
                out.console.print(f"{line.number:>4}  {outcome.move:<10} ok   "
                                  f"{progress_text(game.variant, game.view)}", highlight=False,
                                  soft_wrap=True)
            else:
                out.console.print(f"{line.number:>4}  {line.text:<10} refused: {outcome.reason}",
                                  style="yellow", highlight=False, soft_wrap=True)
        if not outcome.ok:
            error = {"line": line.number, "move": line.text, "reason": outcome.reason,
                     "code": outcome.code}
            break
    info["error"] = error
    info["outcomes"] = outcomes
    if not report:
        return EXIT_ILLEGAL if error is not None else 0
    rank = await game.rank_line() if game.finished else None
    if out.json:
        doc = {**info, "moves": outcomes, "finished": game.finished, "result": game.result,
               "view": game.view}
        if error is not None:
            doc["error"] = error
        out.emit(doc)
    else:
        out.board(game)
        if game.finished:
            out.console.print(f"Result: {result_text(game.variant, game.result)}"
                              + (f" · {rank}" if rank else ""), highlight=False)
        if error is not None:
            out.console.print(f"stopped at line {error['line']} ({error['move']!r}): "
                              f"{error['reason']}", style="bold red", highlight=False)
    return EXIT_ILLEGAL if error is not None else 0
