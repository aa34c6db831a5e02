"""The machine's own loop lag: an asyncio process doing nothing but the server's lag probe.

The server's loop lag (server/runtime/looplag.py: how late a 10 ms timer runs) includes the time
the process waits for a core. On a shared machine that wait is the other processes', not the
server's: this process runs the same timer and nothing else, during a benchmark window, so the
server's figure can be read against the machine's (`cpubench.Window.machine_lag_ms`).

    python -m benchmarks.load.lagprobe   # until its standard input closes; prints JSON
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

INTERVAL_S = 0.01  # the server's default (--loop-lag-interval-ms 10)


@dataclass(frozen=True)
class Lag:
    """How late the probe's timer ran, in milliseconds."""

    p99_ms: float
    max_ms: float
    ticks: int


async def _probe() -> Lag:
    loop = asyncio.get_running_loop()
    lates: list[float] = []
    stop = asyncio.Event()
    loop.add_reader(sys.stdin.fileno(), lambda: stop.set() if not sys.stdin.read(1) else None)
    due = loop.time() + INTERVAL_S

    def tick() -> None:
        nonlocal due
        now = loop.time()
        lates.append(max(0.0, now - due))
        due = now + INTERVAL_S
        loop.call_at(due, tick)

    loop.call_at(due, tick)
    await stop.wait()
    lates.sort()
    if not lates:
        return Lag(0.0, 0.0, 0)
    return Lag(
        lates[min(len(lates) - 1, int(len(lates) * 0.99))] * 1e3, lates[-1] * 1e3, len(lates)
    )


class LagProbe:
    """The probe as a child process: `start`, then `stop` for its figures."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.load.lagprobe"],
            cwd=Path(__file__).resolve().parents[2],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> Lag | None:
        """End the probe; its figures, or None if it failed."""
        try:
            out, _ = self.proc.communicate(timeout=30)
            return Lag(**json.loads(out))
        except (subprocess.TimeoutExpired, ValueError, TypeError):
            self.proc.kill()
            self.proc.wait()
            return None


def main() -> None:
    lag = asyncio.run(_probe())
    print(json.dumps({"p99_ms": lag.p99_ms, "max_ms": lag.max_ms, "ticks": lag.ticks}))


if __name__ == "__main__":
    main()
