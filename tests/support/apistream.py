"""The public API's streams read in tests (`/api/v1/races/{id}/events`, NDJSON): a `Stream`
reads its lines in the background, `stream` opens one for a block, and `strings` collects
every string of a message (to look for cards a reader must not get)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp

__all__ = ["Stream", "stream", "strings"]

#: Told of each line as it is read (e.g. to note what a racer had seen by then).
LineHook = Callable[[dict[str, Any]], None]


def strings(value: Any) -> set[str]:
    """Every string in a message (keys aside)."""
    if isinstance(value, dict):
        return {s for v in value.values() for s in strings(v)}
    if isinstance(value, list):
        return {s for v in value for s in strings(v)}
    return {value} if isinstance(value, str) else set()


class Stream:
    """An open API stream, read line by line in the background: ``lines`` (decoded, in
    order, blank keep-alive lines left out), ``raw`` (every byte) and ``closed`` (set when
    the server ends it). ``on_line`` is told of each line as it is read."""

    def __init__(self, response: aiohttp.ClientResponse, on_line: LineHook | None = None) -> None:
        self.response = response
        self.lines: list[dict[str, Any]] = []
        self.raw = bytearray()
        self.closed = asyncio.Event()
        self._on_line = on_line
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for raw in self.response.content:
                self.raw += raw
                if raw.strip():
                    line = json.loads(raw)
                    if self._on_line is not None:
                        self._on_line(line)
                    self.lines.append(line)
        finally:
            self.closed.set()

    async def until(
        self, test: Callable[[dict[str, Any]], bool], timeout: float = 10.0
    ) -> dict[str, Any]:
        """The first line (from the start) that passes ``test``, waiting for it."""

        async def wait() -> dict[str, Any]:
            seen = 0
            while True:
                for line in self.lines[seen:]:
                    if test(line):
                        return line
                seen = len(self.lines)
                if self.closed.is_set():
                    raise AssertionError(f"stream ended: {self.lines[-3:]}")
                await asyncio.sleep(0.02)

        return await asyncio.wait_for(wait(), timeout)

    async def ended(self, timeout: float = 10.0) -> None:
        """Until the server ends the stream."""
        await asyncio.wait_for(self.closed.wait(), timeout)

    async def aclose(self) -> None:
        self.response.close()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError):
            await self._task


@contextlib.asynccontextmanager
async def stream(
    session: aiohttp.ClientSession, url: str, on_line: LineHook | None = None
) -> AsyncIterator[Stream]:
    """The stream at ``url`` (asserts 200), closed at the block's end."""
    response = await session.get(url, timeout=aiohttp.ClientTimeout(total=None))
    assert response.status == 200, await response.text()
    s = Stream(response, on_line)
    try:
        yield s
    finally:
        await s.aclose()
