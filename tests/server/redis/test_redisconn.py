"""The Redis client the app runs on (`server.redis.connect`): cluster URLs, a single Redis or a
cluster behind one client, the embedded Redis's lifetime, scripts on a cluster."""

from __future__ import annotations

import asyncio
import gc
from dataclasses import replace
from pathlib import Path

import pytest
import redis.asyncio
import redis.exceptions
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import Connection
from redis.crc import key_slot

from server.config import ClusterUrl, Config, parse_cluster_url
from server.redis.batch import Batcher
from server.redis.connect import _OneTimerSend, cluster_of, connect, connected
from tests.support.localcluster import LocalCluster

pytest_plugins = ["tests.support.cluster"]


def test_cluster_urls_are_parsed() -> None:
    assert parse_cluster_url("redis://localhost:6379/0") is None
    assert parse_cluster_url("unix:///tmp/r.sock") is None
    assert parse_cluster_url("redis+cluster://10.0.0.1:7000,10.0.0.2:7001") == ClusterUrl(
        (("10.0.0.1", 7000), ("10.0.0.2", 7001))
    )
    tls = parse_cluster_url("rediss+cluster://me:p%40ss@[::1]:7000/0")
    assert tls == ClusterUrl((("::1", 7000),), "me", "p@ss", tls=True)
    assert "p@ss" not in repr(tls)


@pytest.mark.parametrize(
    "url",
    [
        "redis+cluster://",
        "redis+cluster://host",
        "redis+cluster://host:0",
        "redis+cluster://host:70000",
        "redis+cluster://host:7000,",
        "redis+cluster://:7000",
        "redis+cluster://host:7000/3",
        "redis+cluster://host:7000?timeout=1",
        "redis+cluster://[::1]7000",
    ],
)
def test_malformed_cluster_urls_are_refused_at_startup(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValueError):
        parse_cluster_url(url)
    with pytest.raises(SystemExit):
        Config.from_args(["--redis-url", url, "--daily-secret", "x"], env={})
    assert "--redis-url" in capsys.readouterr().err


def test_config_takes_a_cluster_url() -> None:
    url = "redis+cluster://127.0.0.1:7000,127.0.0.1:7001"
    assert Config.from_args(["--daily-secret", "x"], env={"REDIS_URL": url}).redis_url == url


async def test_a_single_redis_url_gives_a_plain_client(redis_url: str) -> None:
    client = connect(redis_url)
    try:
        assert cluster_of(client) is None and await client.ping()
    finally:
        await client.aclose()


async def test_a_cluster_url_gives_a_cluster_client(
    cluster_url: str, redis_cluster: LocalCluster
) -> None:
    client = connect(cluster_url)
    try:
        cluster = cluster_of(client)
        assert isinstance(cluster, RedisCluster)
        keys = [f"k{i}" for i in range(30)]
        for k in keys:
            await client.set(k, k)
        assert [await client.get(k) for k in keys] == keys  # decoded, routed by slot
        holders = {redis_cluster.node_for_slot(key_slot(k.encode())).port for k in keys}
        assert len(holders) == 3
    finally:
        await client.aclose()


async def test_connected_starts_and_stops_an_embedded_redis(tmp_path: Path) -> None:
    config = replace(Config(), data_dir=tmp_path / "data", redis_url=None)
    async with connected(config) as client:
        await client.set("kept", "1")
        assert cluster_of(client) is None
        assert (tmp_path / "data" / "redis.sock").exists()
    assert not (tmp_path / "data" / "redis.sock").exists()  # SHUTDOWN removes its socket
    async with connected(config) as client:
        assert await client.get("kept") == "1"  # the AOF brought it back


def test_new_connections_do_not_read_package_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    """No driver name and version (CLIENT SETINFO) to send: redis-py would read the package
    metadata for every new connection (milliseconds each, a loop stall)."""
    client = connect("redis://127.0.0.1:1")
    reads: list[str] = []
    import redis.utils

    def read() -> str:
        reads.append("read")
        return "0"

    monkeypatch.setattr(redis.utils, "get_lib_version", read)
    pool = client.connection_pool
    first = pool.make_connection()  # type: ignore[no-untyped-call]
    second = pool.make_connection()  # type: ignore[no-untyped-call]
    assert reads == []
    assert first.driver_info is None and second.driver_info is None


async def test_a_new_connection_leaves_no_garbage_cycle(redis_url: str) -> None:
    """A connection opened inside a request leaves nothing for the garbage collector. With
    CLIENT SETINFO, a Redis before 7.2 (the embedded 6.2) answered an error that redis-py
    swallows in a reference cycle holding the connect's timeout, and so the task that opened
    the connection: a request's, with its WebSocket and socket (a flaky test found it)."""
    client = connect(redis_url)
    batch = Batcher(client)
    try:
        while gc.collect():  # what earlier tests left, finalizers' leftovers included
            pass
        gc.disable()
        try:
            assert await client.ping()  # a redis-py connection, opened in this task
            assert await batch.run("{g}:k", "SET", "{g}:k", "1") == "OK"  # the raw one
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            held = [
                o
                for o in gc.garbage
                if isinstance(o, asyncio.Task | redis.exceptions.RedisError | asyncio.Timeout)
            ]
            assert held == [], "a new connection left a reference cycle"
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
    finally:
        await batch.aclose()
        await client.aclose()


async def test_writes_keep_their_deadline_without_a_task_per_command(redis_url: str) -> None:
    """The pool's connections write under one `asyncio.timeout` (no `wait_for` task), keep
    the URL's transport, and a write to a server that stops reading still times out."""
    client = connect(redis_url)
    try:
        cls = client.connection_pool.connection_class
        assert issubclass(cls, _OneTimerSend)
        await client.set("one-timer", "x")
        assert await client.get("one-timer") == "x"
    finally:
        await client.aclose()

    async def never_read(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)  # accepts, then reads nothing: the socket buffers fill up

    server = await asyncio.start_server(never_read, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    stalled = type("Stalled", (_OneTimerSend, Connection), {})(
        host="127.0.0.1", port=port, socket_timeout=0.2
    )
    try:
        await stalled._connect()  # the bare socket: the server would never answer a handshake
        with pytest.raises(redis.exceptions.TimeoutError, match="writing"):
            await stalled.send_packed_command(
                b"*1\r\n$4\r\nPING\r\n" * 2_000_000, check_health=False
            )
        assert not stalled.is_connected, "a timed-out write drops the connection"
        assert stalled.socket_timeout == 0.2, "the read deadline is back"
    finally:
        server.close()
