"""Runtime probes of the server process: event-loop lag and garbage-collection time.

* Loop lag: a timer callback re-armed every ``interval`` seconds (``--loop-lag-interval-ms``,
  10 ms by default; 0 turns it off) records how late it runs. A callback that hogs the loop,
  or a backlog of ready callbacks, shows up as lag: the time any request waits before the
  loop gets to it. Exported on /metrics as the histogram ``solitaire_loop_lag_seconds`` and
  the gauge ``solitaire_loop_lag_max_seconds`` (the max since the previous scrape: each
  scrape resets it). A benchmark scrapes at both ends of its window: the bucket deltas give
  the window's percentiles and the second scrape's max is the window's max.
* GC: ``gc.callbacks`` time every collection (``solitaire_gc_seconds_total``,
  ``solitaire_gc_collections_total``). A collection runs on the loop thread without I/O, so
  its wall time is CPU time of the loop.

* Pacing (`LoopPacer`): under load one loop iteration runs every request that became ready
  in it, so with many players at once a due timer (a race clock, a heartbeat, this probe)
  waits for all of them. Each connection asks the pacer before it handles a frame; when the
  probe's timer is overdue by more than ``budget`` the connection yields once more, so the
  timers run within about the budget (plus the one request under way) instead of after the
  whole backlog. Idle or lightly loaded, the timer is never overdue and nothing yields.

Cost: one timer callback and one histogram observation per interval (~100/s), two
``perf_counter`` calls per collection, one clock read per frame.

Started and stopped with the app: ``app.cleanup_ctx.append(runtime_probes(metrics, ms))``.
"""

from __future__ import annotations

import asyncio
import gc
import math
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from aiohttp import web

from server.runtime.metrics import GcStats, Metrics

__all__ = ["GcTimer", "LoopLagMonitor", "LoopPacer", "runtime_probes"]

#: How late the loop's timers may run before connections yield to them (`LoopPacer`).
PACING_BUDGET_S = 0.002


class LoopPacer:
    """Tells request handlers when the loop's timers are overdue (see the module docstring).

    `due` is when the lag probe's timer should run; without a probe it is infinite and
    `behind` is always False."""

    def __init__(self, budget_s: float = PACING_BUDGET_S) -> None:
        self.budget_s = budget_s
        self.due = math.inf
        self._time: Callable[[], float] = time.monotonic
        #: Yields made to let overdue timers run (for tests and the benchmark).
        self.yields = 0

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        self._time = loop.time

    def behind(self) -> bool:
        return self._time() - self.due > self.budget_s

    async def catch_up(self) -> None:
        """Yield until the overdue timers have run (the probe moved `due` on)."""
        due = self.due
        while self.due == due and self.behind():
            self.yields += 1
            await asyncio.sleep(0)


class LoopLagMonitor:
    """Re-arms a timer every ``interval_s`` on the running loop and reports its lateness."""

    def __init__(
        self,
        observe: Callable[[float], None],
        interval_s: float = 0.01,
        pacer: LoopPacer | None = None,
    ) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be > 0")
        self.observe = observe
        self.interval_s = interval_s
        self.pacer = pacer
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._due = 0.0

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._due = loop.time() + self.interval_s
        self._handle = loop.call_at(self._due, self._tick)
        if self.pacer is not None:
            self.pacer.attach(loop)
            self.pacer.due = self._due

    def _tick(self) -> None:
        loop = self._loop
        assert loop is not None
        now = loop.time()
        self.observe(max(0.0, now - self._due))
        self._due = now + self.interval_s
        self._handle = loop.call_at(self._due, self._tick)
        if self.pacer is not None:
            self.pacer.due = self._due

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self.pacer is not None:
            self.pacer.due = math.inf


class GcTimer:
    """Adds the duration of every garbage collection to ``stats`` (a ``gc.callbacks`` hook)."""

    def __init__(self, stats: GcStats) -> None:
        self.stats = stats
        self._t0 = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.stats.seconds += time.perf_counter() - self._t0
            self.stats.collections += 1
            self.stats.collected += info.get("collected", 0)

    def install(self) -> None:
        if self not in gc.callbacks:
            gc.callbacks.append(self)

    def remove(self) -> None:
        if self in gc.callbacks:
            gc.callbacks.remove(self)


def runtime_probes(
    metrics: Metrics, interval_ms: float = 10.0, pacer: LoopPacer | None = None
) -> Callable[[web.Application], AsyncIterator[None]]:
    """A ``cleanup_ctx`` entry running the loop-lag monitor (which keeps `pacer` informed)
    and the GC timer with the app."""

    async def ctx(app: web.Application) -> AsyncIterator[None]:
        monitor = (
            LoopLagMonitor(metrics.observe_loop_lag, interval_ms / 1000, pacer)
            if interval_ms > 0
            else None
        )
        timer = GcTimer(metrics.gc)
        timer.install()
        if monitor is not None:
            monitor.start()
        try:
            yield
        finally:
            if monitor is not None:
                monitor.stop()
            timer.remove()

    return ctx
