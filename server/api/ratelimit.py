"""Requests per client address group (`server.transport.address.address_group`): a token
bucket each, in this process. Over the limit: ``429`` with ``Retry-After`` (whole seconds).

The buckets of groups idle for a while are dropped, so memory follows the active addresses.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

__all__ = ["RateLimiter"]


class RateLimiter:
    """``rate`` requests a second on average, bursts of up to ``burst``; ``rate`` 0: no limit."""

    def __init__(self, rate: float, burst: int, now: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = max(1, burst)
        self._now = now
        self._buckets: dict[str, tuple[float, float]] = {}  # group -> (tokens, at)
        self._swept = now()

    def take(self, group: str) -> float:
        """Take one token of ``group``: 0.0 when allowed, else the seconds until one is free."""
        if self.rate <= 0:
            return 0.0
        now = self._now()
        self._sweep(now)
        tokens, at = self._buckets.get(group, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.rate)
        if tokens >= 1.0:
            self._buckets[group] = (tokens - 1.0, now)
            return 0.0
        self._buckets[group] = (tokens, now)
        return (1.0 - tokens) / self.rate

    @staticmethod
    def retry_after(wait_s: float) -> int:
        return max(1, math.ceil(wait_s))

    def _sweep(self, now: float) -> None:
        full_after = self.burst / self.rate
        if now - self._swept < max(10.0, full_after):
            return
        self._swept = now
        for group, (_, at) in list(self._buckets.items()):
            if now - at >= full_after:  # full again: the same as no bucket
                del self._buckets[group]

    def __len__(self) -> int:
        return len(self._buckets)
