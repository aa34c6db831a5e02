"""The injectable clocks (`server.runtime.clock`)."""

from __future__ import annotations

import datetime as dt
import time

import pytest

from server.games.daily import DAY_MS, day_start_ms, ms_until_rollover, utc_date
from server.runtime.clock import Clock, ManualClock, OffsetClock, SystemClock, system_clock

D = dt.date(2030, 6, 15)


def test_manual_clock_day_rollover() -> None:
    clock = ManualClock(day_start_ms(D) + DAY_MS - 1000)
    assert isinstance(clock, Clock)
    assert utc_date(clock.now_ms()) == D
    mono = clock.monotonic()
    clock.advance(ms_until_rollover(clock.now_ms()))
    assert utc_date(clock.now_ms()) == D + dt.timedelta(days=1)
    assert clock.monotonic() == pytest.approx(mono + 1.0)
    clock.set(day_start_ms(D))  # wall clock jumps back; monotonic does not
    assert utc_date(clock.now_ms()) == D and clock.monotonic() == pytest.approx(mono + 1.0)
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_system_clock() -> None:
    c = SystemClock()
    assert isinstance(c, Clock)
    assert abs(c.now_ms() - dt.datetime.now(dt.UTC).timestamp() * 1000) < 5000
    before = time.monotonic()
    mono = c.monotonic()
    assert before <= mono <= time.monotonic()  # the process's monotonic clock


def test_offset_clock_shifts_wall_time_only() -> None:
    inner = ManualClock(1_000_000, monotonic_start=7.0)
    shifted = OffsetClock(inner, -400)
    assert isinstance(shifted, Clock)
    assert (shifted.now_ms(), shifted.monotonic()) == (999_600, 7.0)
    inner.advance(1_000)
    assert (shifted.now_ms(), shifted.monotonic()) == (1_000_600, 8.0)
    assert isinstance(system_clock(), SystemClock)
    assert isinstance(system_clock(5), OffsetClock)
