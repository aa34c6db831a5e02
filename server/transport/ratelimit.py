"""A token bucket per connection: `rate` messages per second with bursts up to `burst`.

Its time is the app's injected clock (`Clock.monotonic`): a test's `ManualClock` refills it."""

from __future__ import annotations

from collections.abc import Callable


class TokenBucket:
    __slots__ = ("_clock", "_last", "_tokens", "burst", "rate")

    def __init__(self, rate: float, burst: int, clock: Callable[[], float]) -> None:
        self.rate, self.burst, self._clock = rate, burst, clock
        self._tokens = float(burst)
        self._last = clock()

    def take(self) -> bool:
        """Spend one token; False when the bucket is empty (the message is over the limit)."""
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False
