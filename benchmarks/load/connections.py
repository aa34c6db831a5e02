"""Many idle authenticated WebSockets held on one server process: memory and idle CPU.

Client processes open the connections (each says ``hello``: a new player on our server, an
echoed frame on the bare one) and hold them; the server's RSS is read before (after one warm-up
connection) and once all are open, then its CPU time over `IDLE_S` seconds of them idle (its
timers: heartbeats, the session and connection sweeps). Connections per process are limited
by RLIMIT_NOFILE, which the benchmark raises to its hard limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.synchronize import Event

import aiohttp
import msgpack  # type: ignore[import-untyped]

from .cpumeter import cpu_seconds
from .procs import raise_fd_limit, rss_bytes

#: How long the held connections stay idle while the server's CPU time is read.
IDLE_S = 10.0


@dataclass
class HoldResult:
    connections: int
    rss_before: int
    rss_after: int
    seconds_to_open: float
    failed: int
    error: str = ""
    #: The server's CPU time (utime+stime) per second of `IDLE_S` with every connection
    #: open and idle: its timers (heartbeats, sweeps) over that many connections.
    idle_cpu_ms_per_s: float = 0.0

    @property
    def per_connection(self) -> float:
        return (self.rss_after - self.rss_before) / max(1, self.connections)


async def _hold_async(
    url: str, count: int, tag: str, ready: Event, done: Event, out: dict[str, object]
) -> None:
    raise_fd_limit(count + 512)
    sem = asyncio.Semaphore(100)
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
    sockets: list[aiohttp.ClientWebSocketResponse] = []
    failed = 0

    async def one(i: int) -> None:
        nonlocal failed
        async with sem:
            try:
                ws = await session.ws_connect(url, autoping=True, compress=0, heartbeat=None)
                await ws.send_bytes(
                    msgpack.packb(
                        {"type": "hello", "id": 1, "versions": [1], "name": f"C{tag}{i:x}"}
                    )
                )
                msg = await ws.receive(timeout=60)
                reply = msgpack.unpackb(msg.data) if msg.type == aiohttp.WSMsgType.BINARY else {}
                if reply.get("type") not in ("welcome", "echo"):
                    raise RuntimeError(f"hello refused: {reply}")
                sockets.append(ws)
            except Exception as exc:
                failed += 1
                if "error" not in out:
                    out["error"] = repr(exc)[:300]

    await asyncio.gather(*(one(i) for i in range(count)))
    out["open"], out["failed"] = len(sockets), failed
    ready.set()
    while not done.is_set():
        await asyncio.sleep(0.2)
    for ws in sockets:
        with contextlib.suppress(Exception):
            await ws.close()
    await session.close()


def _hold(
    url: str, count: int, tag: str, ready: Event, done: Event, out: dict[str, object]
) -> None:
    asyncio.run(_hold_async(url, count, tag, ready, done, out))


def hold_connections(
    url: str,
    server_pid: int,
    total: int,
    processes: int = 2,
    warmup: Callable[[], None] | None = None,
) -> HoldResult:
    """Open ``total`` authenticated connections to ``url`` and measure the server's RSS."""
    if warmup is not None:
        warmup()
    time.sleep(0.5)
    before = rss_bytes(server_pid)
    ctx = multiprocessing.get_context("spawn")
    manager = ctx.Manager()
    tag = secrets.token_hex(2)
    done = ctx.Event()
    parts = []
    t0 = time.perf_counter()
    for i in range(processes):
        ready, out = ctx.Event(), manager.dict()
        n = total // processes + (1 if i < total % processes else 0)
        proc = ctx.Process(target=_hold, args=(url, n, f"{tag}{i}", ready, done, out))
        proc.start()
        parts.append((proc, ready, out))
    try:
        for _, ready, _ in parts:
            if not ready.wait(600):
                raise TimeoutError("connections did not open in time")
        opened = time.perf_counter() - t0
        time.sleep(2.0)  # let the server settle (allocations of the last handshakes)
        after = rss_bytes(server_pid)
        cpu_before = cpu_seconds(server_pid)
        time.sleep(IDLE_S)
        idle_ms = (cpu_seconds(server_pid) - cpu_before) * 1000 / IDLE_S
        n_open = sum(int(out["open"]) for _, _, out in parts)
        failed = sum(int(out["failed"]) for _, _, out in parts)
        error = next((str(out["error"]) for _, _, out in parts if "error" in out), "")
    finally:
        done.set()
        for proc, _, _ in parts:
            proc.join(60)
            if proc.is_alive():
                proc.kill()
        manager.shutdown()
    return HoldResult(n_open, before, after, opened, failed, error, idle_ms)


def warm_up(url: str) -> Callable[[], None]:
    """One connection and hello, so lazily allocated server state is not counted."""

    def run() -> None:
        async def go() -> None:
            async with aiohttp.ClientSession() as s, s.ws_connect(url) as ws:
                await ws.send_bytes(
                    msgpack.packb(
                        {
                            "type": "hello",
                            "id": 1,
                            "versions": [1],
                            "name": f"W{secrets.token_hex(4)}",
                        }
                    )
                )
                await ws.receive(timeout=30)

        asyncio.run(go())

    return run
