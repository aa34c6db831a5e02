"""Group commit of moves: the appends of one event-loop iteration go to Redis in one pipeline.

Each append is the game store's append script (`EVALSHA`), so each stays atomic and checked
against its own game's `seq`; batching only shares the round trip and the client's per-command
cost. A caller awaits its own append's result: it is acknowledged only once Redis has run
that script, and a failed script fails only that append. A connection failure fails every
append of the batch (none of them can be known to be stored), exactly as separate calls would.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, cast

import redis.asyncio
import redis.exceptions
from hiredis import pack_command  # C packing; hiredis comes with redis[hiredis]

from .errors import StoreUnavailable, is_outage

__all__ = ["Append", "MoveLog"]


def _pack(args: tuple[str | int, ...]) -> bytes:
    return bytes(pack_command(cast(Any, args)))


@dataclass(frozen=True, slots=True)
class Append:
    """One move to append: the game's record and log keys, the seq it was played at."""

    game_key: str
    log_key: str
    expected_seq: int
    move: str
    now_ms: int
    max_moves: int


class MoveLog:
    """Runs the append script for many games in one pipeline per event-loop iteration."""

    def __init__(self, client: redis.asyncio.Redis, script: str) -> None:
        self._r = client
        self._script = client.register_script(script)
        self._pending: list[tuple[Append, asyncio.Future[list[int]]]] = []
        self._tasks: set[asyncio.Task[None]] = set()
        #: Pipelines sent and appends written (for tests and the benchmark).
        self.batches = 0
        self.appends = 0

    def append(self, item: Append) -> asyncio.Future[list[int]]:
        """Queue one append; the future holds the script's reply ``[code, seq]``."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[list[int]] = loop.create_future()
        if not self._pending:
            loop.call_soon(self._flush)
        self._pending.append((item, fut))
        return fut

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        task = asyncio.get_running_loop().create_task(self._write(batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _write(self, batch: list[tuple[Append, asyncio.Future[list[int]]]]) -> None:
        self.batches += 1
        self.appends += len(batch)
        try:
            replies = await self._run([a for a, _ in batch])
        except BaseException as exc:
            failure = (StoreUnavailable(f"redis unavailable: {exc}")
                       if is_outage(exc) else exc)
            for _, fut in batch:
                if not fut.done():
                    fut.set_exception(failure)
            if isinstance(exc, asyncio.CancelledError):
                raise
            return
        for (_, fut), reply in zip(batch, replies, strict=True):
            if fut.done():  # the caller went away; the write stands regardless
                continue
            if isinstance(reply, BaseException):
                fut.set_exception(StoreUnavailable(f"redis unavailable: {reply}")
                                  if is_outage(reply) else reply)
            else:
                code, seq = cast(list[int], reply)
                fut.set_result([int(code), int(seq)])

    async def _run(self, items: list[Append]) -> list[object]:
        replies = await self._pipeline(items)
        missing = [i for i, r in enumerate(replies)
                   if isinstance(r, redis.exceptions.NoScriptError)]
        if missing:  # first use on this Redis, or its script cache was flushed: load, retry
            await self._r.script_load(self._script.script)
            again = await self._pipeline([items[i] for i in missing])
            for i, reply in zip(missing, again, strict=True):
                replies[i] = reply
        return replies

    async def _pipeline(self, items: list[Append]) -> list[object]:
        """Send every EVALSHA in one write on one pooled connection, then read the replies.

        Below redis-py's Pipeline on purpose: that one packs in Python, wraps the batch in
        retries and per-command callbacks, and costs more than the commands themselves on
        this path; the connection, its parser (hiredis) and its timeouts are redis-py's.
        An error reply is that command's result; a connection failure fails the batch.
        """
        sha = self._script.sha
        packed = [_pack(("EVALSHA", sha, 2, a.game_key, a.log_key, a.expected_seq, a.move,
                         a.now_ms, a.max_moves)) for a in items]
        pool = self._r.connection_pool
        conn = await pool.get_connection()  # type: ignore[no-untyped-call]
        try:
            await conn.send_packed_command(packed, check_health=False)
            replies: list[object] = []
            for _ in items:
                try:
                    replies.append(await conn.read_response())
                except redis.exceptions.ResponseError as exc:
                    replies.append(exc)
        except BaseException:
            await conn.disconnect()  # replies may be left unread: never reuse it
            raise
        finally:
            await pool.release(conn)
        return replies

    async def aclose(self) -> None:
        """Wait for the writes already sent (shutdown)."""
        if self._pending:
            self._flush()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
