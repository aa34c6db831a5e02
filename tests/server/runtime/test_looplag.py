"""Runtime probes: the loop-lag monitor's life cycle and the GC timer's hook."""

from __future__ import annotations

import asyncio
import gc
import time

import pytest
from aiohttp import web

from server.runtime.looplag import GcTimer, LoopLagMonitor, LoopPacer, runtime_probes
from server.runtime.metrics import GcStats, Metrics


def lag_count(metrics: Metrics) -> float:
    for fam in metrics.registry.collect():
        for s in fam.samples:
            if s.name == "solitaire_loop_lag_seconds_count":
                return s.value
    raise AssertionError("no loop-lag histogram")


def test_interval_must_be_positive() -> None:
    for bad in (0, -0.01):
        with pytest.raises(ValueError):
            LoopLagMonitor(lambda s: None, bad)


async def test_an_idle_loop_shows_small_lag_and_stop_stops() -> None:
    seen: list[float] = []
    monitor = LoopLagMonitor(seen.append, 0.002)
    monitor.start()
    await asyncio.sleep(0.05)
    monitor.stop()
    n = len(seen)
    assert n >= 5 and all(s >= 0 for s in seen)
    assert sorted(seen)[n // 2] < 0.02, "an idle loop runs its timer nearly on time"
    await asyncio.sleep(0.02)
    assert len(seen) == n, "no observation after stop"
    monitor.stop()  # stopping twice is harmless


def test_gc_timer_installs_once_and_counts_only_while_installed() -> None:
    stats = GcStats()
    timer = GcTimer(stats)
    timer.install()
    timer.install()
    try:
        assert gc.callbacks.count(timer) == 1
        gc.collect()
        gc.collect()
    finally:
        timer.remove()
    assert timer not in gc.callbacks
    assert stats.collections >= 2 and stats.seconds > 0
    counted = stats.collections
    gc.collect()
    assert stats.collections == counted
    timer.remove()  # removing twice is harmless


def test_gc_timer_counts_the_objects_collections_free() -> None:
    stats = GcStats()
    timer = GcTimer(stats)
    gc.collect()
    timer.install()
    try:
        for _ in range(5):  # five two-object cycles, freed only by a collection
            a: list[object] = []
            b: list[object] = [a]
            a.append(b)
        del a, b
        gc.collect()
    finally:
        timer.remove()
    assert stats.collected >= 10


async def test_runtime_probes_run_with_the_app_and_clean_up() -> None:
    metrics = Metrics()
    ctx = runtime_probes(metrics, interval_ms=2)(web.Application())
    callbacks = len(gc.callbacks)
    await ctx.__anext__()
    assert len(gc.callbacks) == callbacks + 1
    await asyncio.sleep(0.03)
    gc.collect()
    with pytest.raises(StopAsyncIteration):
        await ctx.__anext__()
    assert len(gc.callbacks) == callbacks, "the GC hook is removed at cleanup"
    assert metrics.gc.collections >= 1
    observed = lag_count(metrics)
    assert observed >= 5, "the monitor fed the histogram while the app ran"
    await asyncio.sleep(0.02)
    assert lag_count(metrics) == observed, "and stopped at cleanup"


async def test_interval_zero_turns_the_monitor_off() -> None:
    metrics = Metrics()
    ctx = runtime_probes(metrics, interval_ms=0)(web.Application())
    await ctx.__anext__()
    await asyncio.sleep(0.02)
    with pytest.raises(StopAsyncIteration):
        await ctx.__anext__()
    assert lag_count(metrics) == 0


def test_a_pacer_without_a_probe_never_holds_anything_back() -> None:
    assert not LoopPacer().behind()


async def test_the_pacer_yields_until_overdue_timers_have_run() -> None:
    seen: list[float] = []
    pacer = LoopPacer(budget_s=0.001)
    monitor = LoopLagMonitor(seen.append, 0.002, pacer)
    monitor.start()
    try:
        assert not pacer.behind()
        time.sleep(0.01)  # a callback hogging the loop: the probe's timer is now overdue
        assert pacer.behind()
        ticks = len(seen)
        await pacer.catch_up()
        assert len(seen) == ticks + 1, "the overdue timer ran before the caller went on"
        assert pacer.yields >= 1 and not pacer.behind()
    finally:
        monitor.stop()
    assert not pacer.behind(), "a stopped probe leaves nothing to wait for"


async def test_paced_work_lets_timers_run_between_requests() -> None:
    """Many ready 'requests' of 1 ms each: with the pacer the probe's timer runs among them,
    not after all of them (the order of events, not a duration, is asserted)."""
    order: list[str] = []
    pacer = LoopPacer(budget_s=0.002)
    monitor = LoopLagMonitor(lambda s: order.append("tick"), 0.002, pacer)

    async def request(paced: bool) -> None:
        if paced and pacer.behind():
            await pacer.catch_up()
        time.sleep(0.001)
        order.append("request")

    monitor.start()
    try:
        await asyncio.sleep(0)
        await asyncio.gather(*(request(paced=True) for _ in range(60)))
    finally:
        monitor.stop()
    first, last = order.index("request"), len(order) - 1 - order[::-1].index("request")
    assert "tick" in order[first:last], "timers ran while requests were still waiting"
