"""An idle authenticated connection holds no send queue and no writer task (issue #30): they
are made when a frame has to wait and dropped once it is sent. Counted on the real app with
real WebSocket clients (the clients run in the same event loop: the server's share is the
tasks running its `Connection` code)."""

from __future__ import annotations

import asyncio
import gc

import protocol as p
from server.transport.connection import Connection
from tests.support.app import App


def writer_tasks() -> int:
    """Tasks running a coroutine of the server's connection module (the writer, a closer),
    as Python (its code's file) or compiled (its coroutine type's module)."""
    return sum(1 for t in asyncio.all_tasks() if _of_connection(t.get_coro()))


def _of_connection(coro: object) -> bool:
    code = getattr(coro, "cr_code", None)
    if code is not None:
        return bool(code.co_filename.endswith("server/transport/connection.py"))
    return type(coro).__module__ == Connection.__module__


def connections() -> list[Connection]:
    return [o for o in gc.get_objects() if isinstance(o, Connection)]


async def test_idle_connections_hold_no_writer_task_and_no_queue(race_app: App) -> None:
    clients = [await race_app.client(f"idle{i}", versions=(6,)) for i in range(20)]
    await asyncio.sleep(0.05)
    assert writer_tasks() == 0
    conns = connections()
    assert len(conns) >= 20
    # Each has said hello and been answered; nothing is queued, no writer is waiting.
    assert all(c.session.player is not None for c in conns)
    assert all(c._frames is None and c._writer is None for c in conns)
    assert not any(hasattr(c, "__dict__") for c in conns)  # slots: no per-object dict
    # A push to each (what a race event or a match is) is still delivered, in order, and
    # the queue and its writer are gone again once it is sent.
    for c in conns:
        for n in range(3):
            c.send(p.Pong(id=900_000 + n, server_time=n))
    assert writer_tasks() == len(conns), "each connection's writer is counted (either build)"
    for cl in clients:
        got = [await cl.push("pong") for _ in range(3)]
        assert [m["server_time"] for m in got] == [0, 1, 2]
    await asyncio.sleep(0.05)
    assert writer_tasks() == 0
    assert all(c._frames is None and c._writer is None for c in conns)
