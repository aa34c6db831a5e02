"""The one event source of the loops: a line typed by the person, or a push from the server.

`EventSource.next(prompt)` waits for whichever comes first and returns it typed: a `Line`
(``text`` is None at the end of input) or a `Push`. Whatever is not consumed yet (a push
still awaited when a line came first, a line still being typed when a push came) is kept for
the next call, so neither a line nor a push is ever lost or asked for twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import protocol as p


def _input(prompt: str) -> str:
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (line editing and history for input())
    return input(prompt)


def _show(prompt: str) -> None:
    sys.stdout.write(prompt)
    sys.stdout.flush()


class LineReader:
    """Reads stdin lines on a daemon thread so the event loop (and Ctrl-C) stay responsive.

    `readline(prompt)` returns the line without its newline, or None at end of input.
    `read` (default: `input`) is what the thread calls for one line; it raises EOFError at
    the end of input.
    """

    def __init__(
        self, read: Callable[[str], str] = _input, show: Callable[[str], None] = _show
    ) -> None:
        self._read = read
        self._show = show
        self._wanted = threading.Condition()
        self._prompt: str | None = None
        self._shown = ""  # the prompt of the line being typed
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._future: asyncio.Future[str | None] | None = None
        self._eof = False

    def _run(self) -> None:
        while True:
            with self._wanted:
                while self._prompt is None:
                    self._wanted.wait()
                prompt, self._prompt = self._prompt, None
            try:
                line: str | None = self._read(prompt)
            except (EOFError, OSError):
                line = None
            fut, loop = self._future, self._loop
            if fut is not None and loop is not None:
                with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                    loop.call_soon_threadsafe(_set_result, fut, line)
            if line is None:
                return

    def readline_future(self, prompt: str) -> asyncio.Future[str | None]:
        """Ask for one line; the future resolves when the person has typed it.

        While a line is being typed, asking again returns the same future (the prompt
        already shown stays)."""
        loop = asyncio.get_running_loop()
        if self._future is not None and not self._future.done():
            if prompt and prompt != self._shown:  # e.g. a race started while in its room
                self._shown = prompt
                self._show(prompt)
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
            self._prompt = self._shown = prompt
            self._wanted.notify()
        return fut

    def _note_eof(self, fut: asyncio.Future[str | None]) -> None:
        if not fut.cancelled() and fut.result() is None:
            self._eof = True

    async def readline(self, prompt: str) -> str | None:
        return await asyncio.shield(self.readline_future(prompt))

    @contextlib.contextmanager
    def above_prompt(self) -> Iterator[None]:
        """Print something (a racer's progress) while a line is being typed without writing
        over it: the prompt's line is cleared first (a new line off a terminal), and the prompt
        and what was typed so far are shown again after."""
        typing = bool(self._shown) and self._future is not None and not self._future.done()
        if typing:
            self._show("\r\x1b[K" if _is_tty() else "\n")
        try:
            yield
        finally:
            if typing:
                self._show(self._shown + _typed_so_far())


def _is_tty() -> bool:
    return sys.stdout.isatty()


def _typed_so_far() -> str:
    """What the person has typed on the current line (readline's buffer), if known."""
    readline = sys.modules.get("readline")
    get = getattr(readline, "get_line_buffer", None)
    text = get() if callable(get) else ""
    return text if isinstance(text, str) else ""


def _set_result(fut: asyncio.Future[str | None], value: str | None) -> None:
    if not fut.done():
        fut.set_result(value)


@dataclass(frozen=True)
class Line:
    """A line the person typed (without its newline); None at the end of input."""

    text: str | None

    @property
    def eof(self) -> bool:
        return self.text is None


@dataclass(frozen=True)
class Push:
    """A message the server pushed (not a reply to a request)."""

    message: p.ServerMessage


Event = Line | Push


class EventSource:
    """Lines from `reader` and pushes from `pushes` (either may be None), merged.

    When both are ready at once the push comes first; the line follows on the next call.
    Use it as a context manager (or call `close`) so the pending push wait is cancelled;
    a cancelled wait takes nothing off the queue.
    """

    def __init__(
        self, pushes: asyncio.Queue[p.ServerMessage] | None, reader: LineReader | None = None
    ) -> None:
        if pushes is None and reader is None:
            raise ValueError("an event source needs lines, pushes or both")
        self._pushes = pushes
        self._reader = reader
        self._push: asyncio.Task[p.ServerMessage] | None = None

    async def next(self, prompt: str = "") -> Event:
        """The next line or push; `prompt` is shown when a new line is asked for."""
        event = await self._wait(prompt, None)
        assert event is not None  # no timeout: asyncio.wait returns something done
        return event

    async def next_within(self, timeout: float, prompt: str = "") -> Event | None:
        """As `next`, or None when nothing came within `timeout` seconds."""
        return await self._wait(prompt, max(0.0, timeout))

    async def _wait(self, prompt: str, timeout: float | None) -> Event | None:
        waits: set[asyncio.Future[Any]] = set()
        line: asyncio.Future[str | None] | None = None
        if self._reader is not None:
            line = self._reader.readline_future(prompt)
            waits.add(line)
        if self._pushes is not None:
            if self._push is None:
                self._push = asyncio.create_task(self._pushes.get())
            waits.add(self._push)
        done, _ = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if self._push is not None and self._push in done:
            push, self._push = self._push, None
            return Push(push.result())
        if line is not None and line in done:
            return Line(line.result())
        return None

    def close(self) -> None:
        """Stop waiting for a push. A push already taken off the queue but not yet returned
        goes back onto it, so the next reader of the queue still sees it."""
        task, self._push = self._push, None
        if task is None:
            return
        if task.done() and not task.cancelled() and self._pushes is not None:
            self._pushes.put_nowait(task.result())
        else:
            task.cancel()

    def __enter__(self) -> EventSource:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
