"""Three server processes on one Redis behind HAProxy started with deploy/haproxy.cfg."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.redis.embedded import EmbeddedRedis
from tests.support.balancer import Balancer, Topology
from tests.support.procs import ServerProcess, pinned_day

#: Noon, far from a rollover; every process deals the same day.
FLAGS = pinned_day(dt.datetime(2030, 6, 15, 12, tzinfo=dt.UTC))


@pytest.fixture(scope="module")
def deploy_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"))
    url = server.start_sync()
    try:
        yield url
    finally:
        server.stop_sync()


@pytest.fixture
def topology(deploy_redis: str, tmp_path: Path) -> Iterator[Topology]:
    servers: list[ServerProcess] = []
    lb: Balancer | None = None
    try:
        for i in range(3):
            servers.append(
                ServerProcess(tmp_path / f"s{i + 1}", FLAGS, redis_url=deploy_redis).start()
            )
        lb = Balancer(tmp_path, [f"127.0.0.1:{s.port}" for s in servers]).start()
        lb.wait_states({"s1": "UP", "s2": "UP", "s3": "UP"})
        yield Topology(lb, servers)
    finally:
        if lb is not None:
            lb.stop()
        for s in servers:
            s.stop()
