"""Injectable time source so day-rollover and timeout logic can be tested deterministically."""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "ManualClock", "OffsetClock", "SystemClock", "system_clock"]


@runtime_checkable
class Clock(Protocol):
    """Wall-clock milliseconds (UTC epoch) plus a monotonic seconds counter."""

    def now_ms(self) -> int:
        """Milliseconds since the Unix epoch (wall clock; may jump)."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin; never goes backwards (use for timeouts)."""
        ...


class SystemClock:
    """The real clock."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def monotonic(self) -> float:
        return time.monotonic()


class ManualClock:
    """A clock that only moves when told to (tests)."""

    def __init__(self, start_ms: int = 1_700_000_000_000, monotonic_start: float = 0.0) -> None:
        self._now_ms = start_ms
        self._mono = monotonic_start

    def now_ms(self) -> int:
        return self._now_ms

    def monotonic(self) -> float:
        return self._mono

    def advance(self, ms: int) -> None:
        """Move both clocks forward by ``ms`` milliseconds."""
        if ms < 0:
            raise ValueError("ManualClock.advance() needs ms >= 0; use set() to jump back")
        self._now_ms += ms
        self._mono += ms / 1000.0

    def set(self, ms: int) -> None:
        """Jump the wall clock to ``ms``; the monotonic clock only follows forward jumps."""
        if ms > self._now_ms:
            self._mono += (ms - self._now_ms) / 1000.0
        self._now_ms = ms


class OffsetClock:
    """Another clock's wall time shifted by ``offset_ms`` (``--clock-offset-ms``).

    Benchmarks use it to pin the server to a fixed date, so that the daily deals (and the
    figures measured on them) never depend on the day of the run. The monotonic clock is the
    wrapped one's, unshifted.
    """

    def __init__(self, inner: Clock, offset_ms: int) -> None:
        self.inner = inner
        self.offset_ms = offset_ms

    def now_ms(self) -> int:
        return self.inner.now_ms() + self.offset_ms

    def monotonic(self) -> float:
        return self.inner.monotonic()


def system_clock(offset_ms: int = 0) -> Clock:
    """The real clock, shifted by ``offset_ms`` when that is not 0."""
    return OffsetClock(SystemClock(), offset_ms) if offset_ms else SystemClock()
