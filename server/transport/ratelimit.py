"""Message rate limits: a token bucket per connection (`rate` messages per second with bursts
up to `burst`), request types that cost more than one token, and a budget per address group
across its connections for those costly requests (docs/fairplay.md, "Limits").

Every message takes one token of its connection's bucket before it is read. A request type in
`REQUEST_COSTS` then takes the rest of its cost from that bucket and its whole cost from its
address group's `AddressBudget` (``--expensive-rate``, ``--expensive-burst``): one connection
cannot flood with it (40 tokens are 4 ``calendar.get``, 20 a second are 2 a second), nor can
64 connections of one address, nor reconnecting for a fresh burst. A refused request is
answered ``rate_limited`` with its id, as any message over the limit.

Every frame's bytes are taken from a second `AddressBudget` too, before the frame is read
(``--address-bytes-rate``, ``--address-bytes-burst``): what a frame costs to parse grows with
its size (a 64 KiB frame of 65,000 empty arrays or maps: 10-20 ms, 3,000 pings' worth), and the
frame count alone let one address's connections stall every player with such frames.

Time is the app's injected clock (`Clock.monotonic`): a test's `ManualClock` refills them."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final

__all__ = ["ADDRESSES_KEPT", "REQUEST_COSTS", "AddressBudget", "TokenBucket"]

#: Tokens a request type costs (any other message: 1). ``calendar.get`` reads a month of the
#: player's games and answers ~40 KB: about 10 pings' worth of server time after the month
#: index (docs/performance.md, "The month calendar"; it cost 50-70 pings before).
REQUEST_COSTS: Final[Mapping[str, float]] = MappingProxyType({"calendar.get": 10.0})

#: Address groups whose budgets a process keeps (the least recently used one is dropped
#: beyond: it starts again with a full budget, as a new address would).
ADDRESSES_KEPT: Final = 10_000


class TokenBucket:
    __slots__ = ("_clock", "_last", "_tokens", "burst", "rate")

    def __init__(self, rate: float, burst: int, clock: Callable[[], float]) -> None:
        self.rate, self.burst, self._clock = rate, burst, clock
        self._tokens = float(burst)
        self._last = clock()

    def take(self, cost: float = 1.0) -> bool:
        """Spend ``cost`` tokens; False (nothing spent) when the bucket holds fewer (the
        message is over the limit)."""
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now
        if self._tokens >= cost:
            self._tokens -= cost
            return True
        return False


class AddressBudget:
    """The tokens of costly requests per address group, across its connections in this
    process: a bucket each (``rate`` tokens a second, up to ``burst``), the `ADDRESSES_KEPT`
    most recently used kept."""

    __slots__ = ("_buckets", "_clock", "burst", "kept", "rate")

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float], kept: int = ADDRESSES_KEPT
    ) -> None:
        self.rate, self.burst, self._clock, self.kept = rate, burst, clock, kept
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def take(self, group: str, cost: float) -> bool:
        """Spend ``cost`` of the group's tokens; False (nothing spent) when it has fewer.
        A rate of 0 turns the budget off."""
        bucket = self.bucket(group)
        return bucket is None or bucket.take(cost)

    def bucket(self, group: str) -> TokenBucket | None:
        """The group's bucket (made full for a group not kept), marked most recently used;
        None when the budget is off (a rate of 0). A connection may keep its group's bucket
        for its life: should the group be dropped meanwhile, its next connection starts a
        new bucket, as a new address would."""
        if self.rate <= 0:
            return None
        bucket = self._buckets.get(group)
        if bucket is None:
            bucket = self._buckets[group] = TokenBucket(self.rate, self.burst, self._clock)
            if len(self._buckets) > self.kept:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(group)
        return bucket

    def __len__(self) -> int:
        return len(self._buckets)
