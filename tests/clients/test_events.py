"""The event source: typed lines (from a real reader thread) merged with queued pushes."""

from __future__ import annotations

import asyncio
import queue

import pytest

import protocol as p
from clients.cli.events import EventSource, Line, LineReader, Push


class Keyboard:
    """What the reader thread reads: lines typed into a thread-safe queue (None: end of
    input); it notes every prompt it was asked to show."""

    def __init__(self) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.prompts: list[str] = []

    def read(self, prompt: str) -> str:
        self.prompts.append(prompt)
        try:
            line = self.lines.get(timeout=5)
        except queue.Empty:
            line = None
        if line is None:
            raise EOFError
        return line


def shutdown(reason: str = "restart") -> p.Shutdown:
    return p.Shutdown(reason=reason, retry_after_ms=0)


async def test_a_push_comes_first_and_the_line_being_typed_is_kept() -> None:
    keys = Keyboard()
    pushes: asyncio.Queue[p.ServerMessage] = asyncio.Queue()
    with EventSource(pushes, LineReader(keys.read)) as events:
        pushes.put_nowait(shutdown())
        first = await asyncio.wait_for(events.next("move> "), 5)
        assert isinstance(first, Push) and isinstance(first.message, p.Shutdown)
        keys.lines.put("3 7")
        second = await asyncio.wait_for(events.next("move> "), 5)
    assert second == Line("3 7")
    assert keys.prompts == ["move> "]  # asked once: the pending line was not asked again


async def test_a_line_comes_first_and_the_push_wait_is_kept() -> None:
    keys = Keyboard()
    pushes: asyncio.Queue[p.ServerMessage] = asyncio.Queue()
    with EventSource(pushes, LineReader(keys.read)) as events:
        keys.lines.put("moves")
        assert await asyncio.wait_for(events.next("> "), 5) == Line("moves")
        pushes.put_nowait(shutdown("one"))
        pushes.put_nowait(shutdown("two"))
        got = [await asyncio.wait_for(events.next("> "), 5) for _ in range(2)]
    assert [
        e.message.reason for e in got if isinstance(e, Push) and isinstance(e.message, p.Shutdown)
    ] == ["one", "two"]
    assert pushes.empty()


async def test_end_of_input_is_a_line_without_text_and_stays_so() -> None:
    keys = Keyboard()
    keys.lines.put(None)
    events = EventSource(None, LineReader(keys.read))
    first = await asyncio.wait_for(events.next(), 5)
    again = await asyncio.wait_for(events.next(), 5)
    assert isinstance(first, Line) and first.eof and again == first
    assert len(keys.prompts) == 1  # the reader thread is not asked again after the end


async def test_pushes_only_with_a_deadline() -> None:
    pushes: asyncio.Queue[p.ServerMessage] = asyncio.Queue()
    with EventSource(pushes) as events:
        assert await events.next_within(0.05) is None
        pushes.put_nowait(shutdown())
        event = await events.next_within(5)
    assert isinstance(event, Push)


async def test_closing_gives_back_a_push_taken_but_not_returned() -> None:
    pushes: asyncio.Queue[p.ServerMessage] = asyncio.Queue()
    events = EventSource(pushes)
    assert await events.next_within(0) is None  # the push wait is now pending
    pushes.put_nowait(shutdown("kept"))
    for _ in range(3):
        await asyncio.sleep(0)  # the pending wait takes it off the queue
    events.close()
    with EventSource(pushes) as later:
        event = await asyncio.wait_for(later.next(), 5)
    assert isinstance(event, Push) and isinstance(event.message, p.Shutdown)
    assert event.message.reason == "kept"


async def test_closing_a_waiting_source_takes_nothing() -> None:
    pushes: asyncio.Queue[p.ServerMessage] = asyncio.Queue()
    events = EventSource(pushes)
    assert await events.next_within(0) is None
    events.close()
    await asyncio.sleep(0)
    pushes.put_nowait(shutdown())
    assert pushes.qsize() == 1


def test_a_source_needs_something_to_read() -> None:
    with pytest.raises(ValueError):
        EventSource(None, None)


async def test_a_new_prompt_is_shown_for_the_line_being_typed() -> None:
    """A race that starts while its room waits for a line: the `move> ` prompt appears,
    and the line typed afterwards answers it."""
    keys = Keyboard()
    shown: list[str] = []
    reader = LineReader(keys.read, shown.append)
    waiting = reader.readline_future("")  # the room's line, with no prompt
    assert reader.readline_future("move> ") is waiting
    assert reader.readline_future("move> ") is waiting  # shown once, not on every ask
    assert shown == ["move> "]
    keys.lines.put("3 5")
    assert await asyncio.wait_for(waiting, 5) == "3 5"
    keys.lines.put(None)
