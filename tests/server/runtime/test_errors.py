"""The server's exceptions: outage translation and cancellations a library disguised."""

from __future__ import annotations

import asyncio

import pytest
import redis.exceptions

from server.runtime.errors import (
    StoreUnavailable,
    is_outage,
    raise_if_cancelled,
    translate_redis_errors,
)


async def _library_read() -> None:
    """A read that, when cancelled, raises an ordinary error instead (as redis-py can)."""
    try:
        await asyncio.sleep(10)
    except asyncio.CancelledError:
        raise ConnectionError("read cancelled") from None


async def _background_loop(rounds: list[int]) -> None:
    while True:
        try:
            await _library_read()
        except Exception:
            raise_if_cancelled()
            rounds.append(1)
            await asyncio.sleep(0)


async def test_a_loop_stops_when_its_cancellation_comes_back_as_an_error() -> None:
    rounds: list[int] = []
    task = asyncio.create_task(_background_loop(rounds))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 2)
    assert rounds == []  # it never went round again


async def test_an_ordinary_error_is_not_taken_for_a_cancellation() -> None:
    try:
        raise ConnectionError("redis went away")
    except Exception:
        raise_if_cancelled()  # not cancelled: nothing happens


async def test_redis_outages_become_store_unavailable() -> None:
    @translate_redis_errors
    async def read() -> None:
        raise redis.exceptions.ConnectionError("gone")

    with pytest.raises(StoreUnavailable, match="redis unavailable: gone"):
        await read()
    assert is_outage(redis.exceptions.TimeoutError()) and not is_outage(ValueError())
