"""Connection churn: the server's CPU and garbage-collector time per connection that comes and goes.

Each connection says `hello` (a new player), reads `welcome` and leaves, either properly (a
close frame, answered) or by vanishing (the TCP connection aborted, as a phone losing its
network does). Both kinds run against one ``python -m server`` in the same run, so the figure
that matters is their ratio: a vanished client must not cost much more than a polite one (it
used to leave a reference cycle through the traceback aiohttp keeps, freed only by the
collector; see docs/performance.md). The steadiest figure is the number of objects the
collector frees per connection (`solitaire_gc_collected_objects_total`): garbage in cycles.

CPU is utime+stime of the server process (/proc); GC time and the loop lag come from its
/metrics. Run from the repo root: ``python benchmarks/churn_bench.py [--connections N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import websockets

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load import cpumeter, procs

FLAGS = (
    "--no-certify",
    "--daily-secret",
    "churn",
    "--log-level",
    "WARNING",
    "--rate-limit",
    "1000",
    "--rate-burst",
    "1000",
    "--address-bytes-rate",
    "0",
)
#: Connections opened at once.
WAVE = 50


@dataclass(frozen=True)
class Figures:
    cpu_us: float  # server CPU per connection
    cycles: float  # objects the collector freed, per connection (reference cycles)
    gc_ms: float  # collector time in all
    gc_share: float  # of the server's CPU
    lag_max_ms: float  # the server's loop-lag maximum so far


async def visit(url: str, name: str, vanish: bool) -> None:
    ws = await websockets.connect(url)
    await ws.send(json.dumps({"type": "hello", "id": 1, "versions": [4], "name": name}))
    await ws.recv()
    if vanish:
        ws.transport.abort()
    else:
        await ws.close()


async def measure(url: str, port: int, pid: int, n: int, vanish: bool, tag: str) -> Figures:
    a = cpumeter.snapshot({"server": pid}, metrics_port=port)
    for k in range(0, n, WAVE):
        await asyncio.gather(
            *(visit(url, f"{tag}{k + j:05d}", vanish) for j in range(min(WAVE, n - k)))
        )
    await asyncio.sleep(0.5)  # the handlers finish
    b = cpumeter.snapshot({"server": pid}, metrics_port=port)
    cpu = b.cpu["server"] - a.cpu["server"]
    gc_s = cpumeter.total(b.samples, "solitaire_gc_seconds_total") - cpumeter.total(
        a.samples, "solitaire_gc_seconds_total"
    )
    freed = cpumeter.total(b.samples, "solitaire_gc_collected_objects_total") - cpumeter.total(
        a.samples, "solitaire_gc_collected_objects_total"
    )
    lag = cpumeter.total(b.samples, "solitaire_loop_lag_max_seconds")
    return Figures(1e6 * cpu / n, freed / n, 1e3 * gc_s, gc_s / cpu if cpu else 0.0, 1e3 * lag)


async def one_kind(n: int, vanish: bool) -> Figures:
    """`n` connections of one kind against a server of their own (so that the cycles one kind
    leaves are not collected during, and counted for, the other)."""
    tmp = Path(tempfile.mkdtemp(prefix="churn-"))
    port = procs.free_port()
    srv = procs.start_server(port, tmp / "data", flags=FLAGS, log=tmp / "server.log")
    url = f"ws://127.0.0.1:{port}/ws"
    try:
        await measure(url, port, srv.pid, 200, vanish, "w")  # warm-up, not measured
        return await measure(url, port, srv.pid, n, vanish, "v" if vanish else "p")
    finally:
        srv.stop()


async def run(n: int) -> None:
    polite = await one_kind(n, False)
    vanished = await one_kind(n, True)
    print(f"== churn: {n:,} connections of each kind (hello, welcome, gone), {WAVE} at a time")
    for label, f in (("close frame", polite), ("vanished", vanished)):
        print(
            f"  {label:12} server {f.cpu_us:6.0f} µs CPU per connection; the collector freed "
            f"{f.cycles:5.1f} objects per connection, in {f.gc_ms:4.0f} ms "
            f"({100 * f.gc_share:.1f} % of CPU); loop lag max {f.lag_max_ms:.1f} ms"
        )
    ratio = vanished.cycles / polite.cycles if polite.cycles else float("nan")
    print(f"  RATIO vanished / close frame, objects left in cycles per connection: {ratio:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connections", type=int, default=3000)
    asyncio.run(run(ap.parse_args().connections))


if __name__ == "__main__":
    main()
