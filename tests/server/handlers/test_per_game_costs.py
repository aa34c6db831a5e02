"""The per-game costs of a connection (issue #30, Fourteen Out's 17-move games): the client's
address is worked out once per distinct peer, with the same answers and limits. Real server,
real Redis, real WebSockets."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import redis.asyncio
import websockets

from server.app import _who_kept
from tests.support.app import serve, unthrottled_config


async def hello(url: str, name: str, forwarded_for: str) -> dict[str, Any]:
    headers = {"X-Forwarded-For": forwarded_for}
    async with websockets.connect(url, additional_headers=headers) as ws:
        await ws.send(msgpack.packb({"type": "hello", "id": 1, "versions": [10], "name": name}))
        reply: dict[str, Any] = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 10))
        return reply


async def test_a_peers_address_is_worked_out_once_and_still_limited(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    del redis_client  # flushed: no account of any address yet
    config = unthrottled_config(
        redis_url,
        tmp_path,
        b"per-game",
        accounts_per_address_hour=2,
        trusted_proxies=("127.0.0.0/8",),
    )
    async with serve(config) as app:
        _who_kept.cache_clear()  # the same addresses may be remembered from other tests
        before = _who_kept.cache_info()
        for n in range(2):
            assert (await hello(app.url, f"kept{n}", "198.51.100.7"))["type"] == "welcome"
        after = _who_kept.cache_info()
        assert after.misses - before.misses == 1 and after.hits - before.hits == 1
        # The remembered answer is the address's: its third account is refused.
        third = await hello(app.url, "kept2", "10.1.1.1, 198.51.100.7")
        assert third["code"] == "limit_reached", third
        # A long X-Forwarded-For (client-written hops in front) is worked out, not kept.
        long = ", ".join(f"10.0.{i // 250}.{i % 250}" for i in range(40)) + ", 198.51.100.8"
        assert len(long) > 256
        kept = _who_kept.cache_info().currsize
        for n in range(2):
            assert (await hello(app.url, f"long{n}", long))["type"] == "welcome"
        assert (await hello(app.url, "long2", "198.51.100.8"))["code"] == "limit_reached"
        assert _who_kept.cache_info().currsize == kept + 1  # the short header only
