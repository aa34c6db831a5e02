"""The app's one Redis client: a single Redis (external or embedded) or a Redis Cluster.

``--redis-url redis+cluster://host:port[,host:port...]`` makes every store, script and
subscription run on redis-py's asyncio `RedisCluster`; any other URL (or none: an embedded
redis-server) on a plain `redis.asyncio.Redis`. Both come with bounded timeouts, so an outage
turns into prompt `unavailable` replies rather than hangs.

The stores are typed against `redis.asyncio.Redis`; a `RedisCluster` is handed to them under
that type (`connect`). They use only commands both clients implement: single-slot scripts
(`tests/server/test_cluster_slots.py` proves every script call is), single-slot MULTI
pipelines, plain pipelines of keyed commands (a cluster pipeline refuses PUBLISH and EVALSHA)
and PUBLISH/SUBSCRIBE (cluster-wide in Redis Cluster). On a cluster, scripts new to a master
are loaded there by SCRIPT LOAD (`Batcher`) and pub/sub moves to another master when its own
fails (`FailoverPubSub`). The one place below redis-py's command layer, `Batcher`, asks
`cluster_of`, routes by slot itself and speaks RESP on its own connections
(`server.redis.resp`), configured from the clients' public connection settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterable
from typing import Any, cast

import redis.asyncio
import redis.exceptions
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff, NoBackoff

from server.config import Config, parse_cluster_url
from server.redis.embedded import EmbeddedRedis

__all__ = [
    "REDIS_POOL_SIZE",
    "FailoverPubSub",
    "SolitaireCluster",
    "cluster_of",
    "connect",
    "connected",
]

log = logging.getLogger(__name__)

#: Redis connections per process (per node on a cluster). On a single Redis, requests beyond
#: this wait for a free one, up to 5 s; on a cluster they fail with `unavailable`.
REDIS_POOL_SIZE = 128
#: Bounded timeouts: a Redis outage must turn into prompt `unavailable` replies, not hangs.
SOCKET_TIMEOUT_S = 3.0
CONNECT_TIMEOUT_S = 2.0
#: Cluster commands retried after a connection error or a CLUSTERDOWN, with the slot map
#: reloaded in between (a master that moved, or failed over to its replica). Short: a master
#: that is really down must give `unavailable` within a few seconds.
CLUSTER_RETRIES = 3
CLUSTER_BACKOFF_CAP_S = 0.5


class FailoverPubSub:
    """Pub/sub on a cluster through one master at a time: when that master fails, the
    next read or subscription connects to another one and subscribes there again, so race
    fan-out goes on while a master is down (redis-py's own stays on the failed node).

    Built on redis-py's public API: a plain `redis.asyncio.Redis` on the current master
    (its `ConnectionPool` made from the node's public `connection_kwargs`) and that client's
    own `PubSub`; the channels and patterns are kept here to subscribe again after a switch.
    Classic PUBLISH reaches every node, so any master delivers every channel."""

    def __init__(self, cluster: RedisCluster, **kwargs: bool) -> None:
        self._cluster = cluster
        self._kwargs = kwargs
        self._turn = 0
        self._client: redis.asyncio.Redis | None = None
        self._ps: PubSub | None = None
        self._channels: set[str] = set()
        self._patterns: set[str] = set()

    @property
    def subscribed(self) -> bool:
        return bool(self._channels or self._patterns)

    @property
    def address(self) -> tuple[str, int] | None:
        """(host, port) of the master it reads from, while connected."""
        if self._client is None:
            return None
        kwargs = self._client.connection_pool.connection_kwargs
        return str(kwargs["host"]), int(kwargs["port"])

    async def _current(self) -> PubSub:
        """The pub/sub of the current master, connected (and subscribed again) if need be."""
        if self._ps is not None:
            return self._ps
        await self._cluster.initialize()
        masters = sorted(self._cluster.get_primaries(), key=lambda n: n.name)
        error: Exception = redis.exceptions.ConnectionError("no master known")
        for _ in masters:
            node = masters[self._turn % len(masters)]
            pool = redis.asyncio.ConnectionPool(
                connection_class=node.connection_class,
                max_connections=2,
                # Failures switch masters instead of retrying the failed one.
                **{**node.connection_kwargs, "retry": Retry(NoBackoff(), 0)},
            )
            client = redis.asyncio.Redis(connection_pool=pool)
            ps = client.pubsub(**self._kwargs)
            try:
                if self._channels:
                    await ps.subscribe(*sorted(self._channels))
                if self._patterns:
                    await ps.psubscribe(*sorted(self._patterns))
                if not self.subscribed:
                    await client.ping()
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
                error = exc
                await _closed(client, ps)
                self._turn += 1
                continue
            self._client, self._ps = client, ps
            return ps
        raise error

    async def _drop(self) -> None:
        """The current master failed: the next call uses the next one."""
        client, ps, self._client, self._ps = self._client, self._ps, None, None
        if client is not None and ps is not None:
            await _closed(client, ps)
        self._turn += 1

    async def _call(self, name: str, *args: str) -> None:
        ps = await self._current()
        try:
            await getattr(ps, name)(*args)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
            await self._drop()
            raise

    async def subscribe(self, *channels: str) -> None:
        self._channels.update(channels)
        await self._call("subscribe", *channels)

    async def unsubscribe(self, *channels: str) -> None:
        self._channels.difference_update(channels)
        if self._ps is not None:
            await self._call("unsubscribe", *channels)

    async def psubscribe(self, *patterns: str) -> None:
        self._patterns.update(patterns)
        await self._call("psubscribe", *patterns)

    async def punsubscribe(self, *patterns: str) -> None:
        self._patterns.difference_update(patterns)
        if self._ps is not None:
            await self._call("punsubscribe", *patterns)

    async def get_message(
        self, ignore_subscribe_messages: bool = False, timeout: float | None = 0.0
    ) -> dict[str, Any] | None:
        if not self.subscribed:
            await asyncio.sleep(timeout or 0.0)
            return None
        ps = await self._current()
        try:
            msg = await ps.get_message(ignore_subscribe_messages, timeout)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
            await self._drop()
            raise
        return cast("dict[str, Any] | None", msg)

    async def aclose(self) -> None:
        client, ps, self._client, self._ps = self._client, self._ps, None, None
        if client is not None and ps is not None:
            await _closed(client, ps)


async def _closed(client: redis.asyncio.Redis, ps: PubSub) -> None:
    with contextlib.suppress(Exception):
        await ps.aclose()  # type: ignore[no-untyped-call]
    with contextlib.suppress(Exception):
        await client.aclose()


class SolitaireCluster(RedisCluster):
    """`RedisCluster` whose pub/sub fails over (scripts run through `Batcher`, which loads
    a script new to a master on that master alone)."""

    def pubsub(  # type: ignore[override]
        self,
        node: ClusterNode | None = None,
        host: str | None = None,
        port: int | None = None,
        **kwargs: bool,
    ) -> FailoverPubSub:
        """Duck-typed as redis-py's `PubSub` for the stores (subscribe, get_message, ...)."""
        if node is not None or host is not None or port is not None:
            raise ValueError("the pub/sub of a solitaire cluster picks its own master")
        return FailoverPubSub(self, **kwargs)


class _OneTimerSend(AbstractConnection):
    """A connection whose writes run under `asyncio.timeout` rather than redis-py's
    `asyncio.wait_for`, which wraps every command's write in a task of its own (~2 % of the
    server's CPU per move, issue #11). The same deadline, the same errors: a write that times
    out disconnects and raises redis-py's `TimeoutError`."""

    async def send_packed_command(
        self, command: bytes | str | Iterable[bytes], check_health: bool = True
    ) -> None:
        timeout = self.socket_timeout
        if not timeout:
            await super().send_packed_command(command, check_health)
            return
        try:
            async with asyncio.timeout(timeout):
                # redis-py writes without a timer of its own when it has none; the read of the
                # reply (after this returns) has its timeout back.
                self.socket_timeout = None
                try:
                    await super().send_packed_command(command, check_health)
                finally:
                    self.socket_timeout = timeout
        except TimeoutError:
            await self.disconnect(nowait=True)
            raise redis.exceptions.TimeoutError("Timeout writing to socket") from None


def _one_timer(cls: type[AbstractConnection]) -> type[AbstractConnection]:
    """`cls` (TCP, TLS or unix socket, as the URL chose) with `_OneTimerSend`'s write."""
    return type(f"OneTimer{cls.__name__}", (_OneTimerSend, cls), {})


def connect(
    url: str, *, pool_size: int = REDIS_POOL_SIZE, password: str | None = None
) -> redis.asyncio.Redis:
    """A client for ``url`` with ``decode_responses=True`` (the stores require it);
    ``password`` is for a URL without one (a secret read from a file).

    Its connections send no CLIENT SETINFO (redis-py's driver name and version). A Redis
    before 7.2 (the embedded one is 6.2) refuses it, and redis-py swallows that error in a
    reference cycle (the error, its traceback, the connect's frames and timeout, which holds
    the task that opened the connection): a request that opened one kept its connection's
    objects, socket included, until the garbage collector ran. Without it: no cycle, no two
    commands more per new connection, and no package metadata read for it (0.4-5 ms)."""
    cluster_url = parse_cluster_url(url)
    if cluster_url is None:
        # A blocking pool: a burst of more concurrent requests than pooled connections waits
        # for a free connection instead of failing with "Too many connections".
        pool = redis.asyncio.BlockingConnectionPool.from_url(
            url,
            decode_responses=True,
            max_connections=pool_size,
            timeout=5.0,
            socket_timeout=SOCKET_TIMEOUT_S,
            socket_connect_timeout=CONNECT_TIMEOUT_S,
            health_check_interval=15,
            driver_info=None,
            **({"password": password} if password is not None else {}),
        )
        pool.connection_class = _one_timer(pool.connection_class)
        return redis.asyncio.Redis.from_pool(pool)
    cluster = SolitaireCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in cluster_url.nodes],
        username=cluster_url.username,
        password=password if password is not None else cluster_url.password,
        ssl=cluster_url.tls,
        decode_responses=True,
        max_connections=pool_size,
        driver_info=None,
        socket_timeout=SOCKET_TIMEOUT_S,
        socket_connect_timeout=CONNECT_TIMEOUT_S,
        retry=Retry(ExponentialBackoff(cap=CLUSTER_BACKOFF_CAP_S, base=0.05), CLUSTER_RETRIES),
        # Serve the slots that are up while some are not (a master down, no replica yet).
        require_full_coverage=False,
    )
    # The same command API under the stores' type (see the module docstring).
    return cast(redis.asyncio.Redis, cluster)


def cluster_of(client: redis.asyncio.Redis) -> RedisCluster | None:
    """The `RedisCluster` behind a client made by `connect`, or None for a single Redis."""
    obj: object = client
    return obj if isinstance(obj, RedisCluster) else None


@contextlib.asynccontextmanager
async def connected(config: Config) -> AsyncIterator[redis.asyncio.Redis]:
    """The client for ``config.redis_url``; without one, an embedded redis-server is started
    in ``config.data_dir`` first and stopped (AOF flushed) after the client is closed."""
    embedded: EmbeddedRedis | None = None
    url = config.redis_url
    if url is None:
        embedded = EmbeddedRedis(config.data_dir, config.redis_appendfsync)
        url = await embedded.start()
        log.info("embedded redis-server started at %s", url)
    try:
        client = connect(url, password=config.redis_password)
        try:
            yield client
        finally:
            await client.aclose()
    finally:
        if embedded is not None:
            await embedded.stop()
