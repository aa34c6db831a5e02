"""The per-connection token bucket (`server.transport.ratelimit`), on an injected time function."""

from __future__ import annotations

import pytest

from server.transport.ratelimit import TokenBucket


class Time:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def takes(bucket: TokenBucket, n: int) -> list[bool]:
    return [bucket.take() for _ in range(n)]


def test_a_full_bucket_allows_a_burst_then_refuses() -> None:
    bucket = TokenBucket(rate=2.0, burst=3, clock=Time())
    assert takes(bucket, 5) == [True, True, True, False, False]


def test_tokens_come_back_at_the_rate() -> None:
    t = Time()
    bucket = TokenBucket(rate=2.0, burst=3, clock=t)
    takes(bucket, 3)
    t.now += 0.25  # half a token
    assert not bucket.take()
    t.now += 0.25  # the half carried over plus another half
    assert takes(bucket, 2) == [True, False]
    t.now += 1.0
    assert takes(bucket, 3) == [True, True, False]


def test_refill_is_capped_at_the_burst() -> None:
    t = Time()
    bucket = TokenBucket(rate=10.0, burst=4, clock=t)
    takes(bucket, 4)
    t.now += 3600.0
    assert takes(bucket, 6) == [True] * 4 + [False] * 2


def test_refused_messages_cost_nothing() -> None:
    t = Time()
    bucket = TokenBucket(rate=1.0, burst=1, clock=t)
    assert bucket.take()
    assert takes(bucket, 100) == [False] * 100  # hammering does not push the refill back
    t.now += 1.0
    assert bucket.take()


@pytest.mark.parametrize(("rate", "seconds", "expected"), [(8.0, 1.0, 8), (0.5, 4.0, 2)])
def test_sustained_rate(rate: float, seconds: float, expected: int) -> None:
    """Taking as fast as possible over a while: the burst, then ``rate`` per second."""
    t = Time()
    bucket = TokenBucket(rate=rate, burst=3, clock=t)
    takes(bucket, 3)
    allowed = 0
    for _ in range(1000):
        t.now += seconds / 1000
        allowed += bucket.take()
    assert allowed == expected
