"""A real Redis Cluster for tests: three masters from the project's own redis-server binary.

A pytest plugin: a test module that runs on the cluster says
``pytest_plugins = ["tests.support.cluster"]``, so every module shares one session cluster.

Fixtures:
    redis_cluster   (session)  the running `LocalCluster` (AOF ``appendfsync always``, so a
                               SIGKILLed master loses nothing it acknowledged)
    cluster_url     (session)  its ``redis+cluster://`` URL
    cluster_client  (function) a cluster client (`server.redis.connect.connect`) on emptied nodes
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
import redis.asyncio

from server.redis.connect import connect
from tests.support.localcluster import LocalCluster

MASTERS = 3


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        tmp_path_factory.mktemp("cluster"), MASTERS, appendfsync="always", node_timeout_ms=1000
    )
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def cluster_url(redis_cluster: LocalCluster) -> str:
    return redis_cluster.url


@pytest_asyncio.fixture
async def cluster_client(redis_cluster: LocalCluster) -> AsyncIterator[redis.asyncio.Redis]:
    redis_cluster.wait_ok()  # a test that restarted a master leaves it rejoining
    redis_cluster.flushall()  # tests run serially; each starts from empty nodes
    client = connect(redis_cluster.url)
    try:
        yield client
    finally:
        await client.aclose()
