"""Idle readers of the public API's live board stream (docs/api.md, issue #29): what a few
thousand of them cost one server process, and how soon a finish reaches them all.

One ``python -m server``; N readers of ``/api/v1/live/fourteen-out/board`` (NDJSON) opened
from this process; then the server's resident memory per reader, its CPU while they all sit
idle for ``--idle`` seconds (the keep-alive lines and the one board poll a feed makes, 4 a
second, whatever the number of readers), and the time from a daily game's finish (``resign``
over the WebSocket) to the last reader's ``entry`` line.

Run from the repo root: ``python benchmarks/api_streams.py [--readers N] [--idle S]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load import cpumeter, procs

FLAGS = (
    *procs.BENCH_FLAGS,
    "--api-rate",
    "0",
    "--api-streams-per-address",
    "0",
)
#: Readers opened at once.
WAVE = 200


async def reader(
    session: aiohttp.ClientSession, url: str, ready: asyncio.Event, got: list[float]
) -> None:
    async with session.get(url, timeout=aiohttp.ClientTimeout(total=None)) as r:
        await r.content.readline()  # the `board` line
        ready.set()
        async for raw in r.content:
            if b'"type":"entry"' in raw:
                got.append(time.monotonic())
                return


async def finish_one(ws_url: str) -> float:
    async with websockets.connect(ws_url) as ws:
        await ws.send(json.dumps({"type": "hello", "id": 1, "versions": [5], "name": "bench_f"}))
        await ws.recv()
        await ws.send(json.dumps({"type": "daily.start", "id": 2, "variant": "fourteen-out"}))
        game = json.loads(await ws.recv())
        t = time.monotonic()
        await ws.send(json.dumps({"type": "resign", "id": 3, "game_id": game["game_id"]}))
        await ws.recv()
        return t


async def run(n: int, idle_s: float) -> None:
    procs.raise_fd_limit(2 * n + 256)
    tmp = Path(tempfile.mkdtemp(prefix="api-streams-"))
    port = procs.free_port()
    srv = procs.start_server(port, tmp / "data", flags=FLAGS, log=tmp / "server.log")
    url = f"http://127.0.0.1:{port}/api/v1/live/fourteen-out/board?top=0"
    try:
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            await asyncio.sleep(1.0)
            rss0 = procs.rss_bytes(srv.pid)
            got: list[float] = []
            tasks = []
            for k in range(0, n, WAVE):
                events = [asyncio.Event() for _ in range(min(WAVE, n - k))]
                tasks += [asyncio.create_task(reader(session, url, e, got)) for e in events]
                await asyncio.gather(*(e.wait() for e in events))
            rss1 = procs.rss_bytes(srv.pid)
            cpu0 = cpumeter.cpu_seconds(srv.pid)
            await asyncio.sleep(idle_s)
            cpu1 = cpumeter.cpu_seconds(srv.pid)
            t = await finish_one(f"ws://127.0.0.1:{port}/ws")
            await asyncio.wait_for(asyncio.gather(*tasks), 30)
            first, last = min(got) - t, max(got) - t
    finally:
        srv.stop()
    print(f"== api streams: {n:,} idle readers of the live board on one server process")
    print(
        f"  memory   {(rss1 - rss0) / n / 1024:6.1f} KiB RSS per reader "
        f"({rss0 / 2**20:.0f} -> {rss1 / 2**20:.0f} MiB)"
    )
    print(f"  idle CPU {100 * (cpu1 - cpu0) / idle_s:6.2f} % of a core over {idle_s:.0f} s")
    print(
        f"  a finish reached the first reader after {1e3 * first:.0f} ms, "
        f"all {len(got):,} after {1e3 * last:.0f} ms"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readers", type=int, default=3000)
    ap.add_argument("--idle", type=float, default=20.0)
    args = ap.parse_args()
    asyncio.run(run(args.readers, args.idle))


if __name__ == "__main__":
    main()
