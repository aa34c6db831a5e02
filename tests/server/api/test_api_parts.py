"""Parts of the API on their own: the OpenAPI document against the routes, the per-address
token buckets, the dump command's refusals (usage, no Redis) and a Redis outage (a real
redis-server killed)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import aiohttp

from benchmarks.load import procs
from server.api.dump import run as dump
from server.api.ratelimit import RateLimiter
from server.app import create_app
from server.config import Config
from tests.support.apiclient import ApiClient, openapi
from tests.support.app import serve


class Clock:
    def __init__(self) -> None:
        self.t = 1_000.0

    def __call__(self) -> float:
        return self.t


def test_token_buckets_refill_at_the_rate_and_idle_ones_are_dropped() -> None:
    clock = Clock()
    limiter = RateLimiter(2.0, 3, now=clock)
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a") == 0.5, "half a second until the next token at 2/s"
    assert limiter.take("b") == 0.0, "another address has its own bucket"
    clock.t += 0.5
    assert limiter.take("a") == 0.0
    assert RateLimiter.retry_after(0.01) == 1 and RateLimiter.retry_after(2.2) == 3
    clock.t += 60  # every bucket is full again: forgotten at the next sweep
    limiter.take("c")
    assert len(limiter) == 1
    assert RateLimiter(0, 1).take("x") == 0.0, "0: no limit"


async def test_the_dump_refuses_a_bad_range_and_says_when_redis_is_unreachable(
    tmp_path: Path,
) -> None:
    out = str(tmp_path)
    assert await dump(["--from", "2030-06-15", "--to", "2030-06-14", "--out", out], env={}) == 2
    assert await dump(["--from", "2029-01-01", "--to", "2030-06-14", "--out", out], env={}) == 2
    gone = f"unix://{tmp_path}/no.sock"
    assert await dump(["--from", "2030-06-15", "--out", out, "--redis-url", gone], env={}) == 3


def test_the_openapi_document_is_valid_3_1_and_names_every_route() -> None:
    doc = openapi()  # validated by openapi-spec-validator on load
    assert doc["openapi"] == "3.1.0"
    app = create_app(Config())
    routes = {
        r.canonical
        for r in app.router.resources()
        if r.canonical.startswith("/api/v1/") and "{tail" not in r.canonical
    }
    assert routes == set(doc["paths"]), routes ^ set(doc["paths"])


async def test_a_redis_outage_is_503_unavailable_in_the_error_shape(tmp_path: Path) -> None:
    redis_server = procs.RedisServer(tmp_path / "redis").start()
    config = replace(
        Config(), redis_url=redis_server.url, data_dir=tmp_path / "data", daily_secret=b"out"
    )
    try:
        async with serve(config) as app, aiohttp.ClientSession() as session:
            api = ApiClient(app.http, session)
            assert (await api.get("/api/v1/days/2030-06-14/boards/fourteen-out")).status == 200
            redis_server.kill()
            for path in (
                "/api/v1/days/2030-06-13/boards/fourteen-out",
                "/api/v1/days/2030-06-13/results.ndjson.gz",
                "/api/v1/players/somebody",
            ):
                answer = await api.get(path)
                assert (answer.status, answer.code) == (503, "unavailable"), (path, answer.body)
                assert answer.headers["Retry-After"] == "2"
    finally:
        redis_server.stop()
