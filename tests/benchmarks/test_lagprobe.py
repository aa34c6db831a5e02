"""The machine's own loop lag beside the server's (`benchmarks/load/lagprobe.py`)."""

from __future__ import annotations

import time

from benchmarks.load.lagprobe import LagProbe


def test_the_probe_reports_its_timers_lateness_when_stopped() -> None:
    probe = LagProbe()
    time.sleep(0.5)
    lag = probe.stop()
    assert lag is not None
    assert lag.ticks >= 10, "a 10 ms timer for half a second"
    assert 0.0 <= lag.p99_ms <= lag.max_ms
    assert probe.proc.returncode == 0
