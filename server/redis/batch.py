"""Group commit: the commands of one event-loop iteration go to Redis in one pipeline.

`Batcher` is the one way the stores write per request: the game store's moves (its append
script), starts and finishes, the board's and history's steps, the registry's writes, and every
script of the race store (a racer's progress rides in its move's batch) and of every other
store (hints, enlisting, boards' reads, ratings, spectators, day close, deals, review). Each
command keeps its own atomicity (a script is atomic and checked against its own keys, e.g. a
game's `seq`); batching only shares the round trip and the client's per-command cost. A caller
awaits its own command's result: it is acknowledged only once Redis has run it, and an error
reply fails only that command. A connection failure fails every command of the batch (none of
them can be known to be stored), exactly as separate calls would.

On a single Redis the batch is written on the batcher's own raw RESP connection
(`server.redis.resp.RespConnection`: an asyncio protocol with a hiredis reader, issue #30):
no task per batch, no pool checkout, no coroutine per reply. Batches follow each other on
that one connection; each command's future is resolved in order as its reply arrives
(RESOLVE_CHUNK callers per loop iteration), a script Redis lacks is loaded and the command
sent again, an error reply fails only its command, and a connection failure or the deadline
(SOCKET_TIMEOUT_S without a byte from Redis while replies are owed) fails every command still
waiting on it. A failed connection is dropped; the next batch connects anew (a Redis restart).
Its settings (host, port or unix socket, TLS, AUTH, db, client name) are the redis-py client's
public `connection_pool.connection_class` and `connection_kwargs`.

On a Redis Cluster the batch is split by the master of each command's slot (its routing key,
`RedisCluster.get_node_from_key`) and the pipelines go out at once, each on the batcher's raw
connection to that master (settings from the node's public `connection_class` and
`connection_kwargs`); a master that is down fails only the commands sent to it, and a lost
master makes redis-py reload its slot map (`_refresh_soon`). A command redirected by MOVED is
sent again through `RedisCluster.execute_command` (which also reloads the slot map); one
redirected by ASK goes once more to the node named, behind ASKING. A cluster's batch still
runs in a task (its masters' replies are gathered to route the redirects).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, cast

import redis.asyncio
import redis.exceptions
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.exceptions import AskError, MovedError, SlotNotCoveredError

from server.redis.connect import SOCKET_TIMEOUT_S, cluster_of
from server.redis.resp import RESOLVE_CHUNK, RespConnection, RespSettings, Waiter, pack
from server.runtime.errors import StoreUnavailable, is_outage

__all__ = ["MANY_MAX", "RESOLVE_CHUNK", "Batcher", "Command", "LuaScript", "as_map"]

#: Least time between two reloads of a cluster's slot map after a master failed.
REFRESH_INTERVAL_S = 1.0


def as_map(reply: object) -> dict[str, str]:
    """An `HGETALL` reply as a dict: RESP3 answers a map, RESP2 a field/value list."""
    if isinstance(reply, dict):
        return cast(dict[str, str], reply)
    flat = cast(list[str], reply)
    return dict(zip(flat[::2], flat[1::2], strict=True))


def _failure(exc: BaseException) -> BaseException:
    """What a caller gets for a command that failed: an outage is `StoreUnavailable`."""
    return StoreUnavailable(f"redis unavailable: {exc}") if is_outage(exc) else exc


_ASKING = pack(("ASKING",))


def _packed_or_failed(command: Command, fut: asyncio.Future[object]) -> bytes | None:
    """The command in RESP; or, for an argument RESP cannot carry (a caller's bug: a bool, a
    float), None and that command's future failed with the `TypeError`: the rest of its
    batch is written and answered as usual, where an error escaping the flush left every
    command of the batch waiting for good."""
    try:
        return pack(command.args)
    except TypeError as exc:
        if not fut.done():
            fut.set_exception(exc)
        return None


#: Most calls of a script run as one call of its `LuaScript.many` (the rest of a longer run
#: go as further ones): a call holds Redis for its whole length.
MANY_MAX = 32


def _run_end(batch: list[tuple[Command, asyncio.Future[object]]], i: int, script: LuaScript) -> int:
    """Where the run of calls of ``script`` (its `LuaScript.many` given) from ``batch[i]``
    ends: the calls of that script with its arity one after the other, at most MANY_MAX."""
    nkeys, nargs = script.arity
    size = 3 + nkeys + nargs
    j, end = i, min(len(batch), i + MANY_MAX)
    while j < end:
        c = batch[j][0]
        if c.script is not script or len(c.args) != size or c.args[2] != nkeys:
            break
        j += 1
    return j


def _many(
    script: LuaScript,
    run: list[tuple[Command, asyncio.Future[object]]],
    packed: list[bytes],
    waiters: list[Waiter],
) -> bool:
    """A run of calls of ``script`` (`_run_end`) as one call of its ``many`` (appended to
    ``packed`` and ``waiters``, its reply split among the run's callers); False when an
    argument of the run is one RESP cannot carry: the caller then sends it call by call."""
    many = script.many
    assert many is not None
    nkeys = script.arity[0]
    keys: list[str | int] = []
    args: list[str | int] = []
    for c, _ in run:
        a = c.args
        keys += a[3 : 3 + nkeys]
        args += a[3 + nkeys :]
    try:
        p = pack(("EVALSHA", many.sha, len(keys), *keys, *args))
    except TypeError:
        return False
    packed.append(p)
    waiters.append(Waiter(None, many.source, p, tuple(f for _, f in run)))
    return True


@dataclass(frozen=True, slots=True)
class LuaScript:
    """A Lua script run by its SHA-1 (`EVALSHA`); its source is loaded when Redis lacks it.

    ``many``: the same script for several calls at once, which the batcher runs in place of
    a run of consecutive calls of this one on a single Redis (issue #30: one script call's
    fixed cost, and one MULTI/EXEC in the AOF, instead of one a call). It takes the calls'
    KEYS one after the other and their ARGV likewise, each call exactly ``arity`` (keys,
    args), and answers one element per call: that call's reply, or an error reply failing
    that call alone. Its calls run in their order and nothing runs between them, which
    consecutive calls on one connection allow too."""

    source: str
    sha: str
    many: LuaScript | None = None
    arity: tuple[int, int] = (0, 0)

    @classmethod
    def of(
        cls, source: str, *, many: str | None = None, arity: tuple[int, int] = (0, 0)
    ) -> LuaScript:
        if many is not None and arity[0] < 1:
            raise ValueError("a script run for several calls needs their arity (keys, args)")
        return cls(
            source,
            hashlib.sha1(source.encode()).hexdigest(),
            None if many is None else cls.of(many),
            arity,
        )


class Command(NamedTuple):
    """One command of a batch: its arguments, the key whose slot routes it on a cluster, and
    the script to load first when it is an `EVALSHA` Redis does not know yet. (A named tuple:
    one is made for every command, and a frozen dataclass's `__init__` costs twice as much.)"""

    args: tuple[str | int, ...]
    key: str
    script: LuaScript | None = None


class Batcher:
    """Runs the commands of each event-loop iteration in one pipeline per Redis master."""

    def __init__(self, client: redis.asyncio.Redis) -> None:
        self._r = client
        self._cluster = cluster_of(client)
        self._pending: list[tuple[Command, asyncio.Future[object]]] = []
        #: The loop of the batch being gathered (`send`); unused while none is.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        #: Pipelines sent, and the commands they carried (for tests and the benchmark).
        self.batches = 0
        self.commands = 0
        self._next_refresh = 0.0
        #: A single Redis: the raw connection the batches go on, and the batches waiting
        #: for it while it connects.
        self._settings: RespSettings | None = None
        self._conn: RespConnection | None = None
        self._backlog: list[list[tuple[Command, asyncio.Future[object]]]] = []
        self._connecting: asyncio.Task[None] | None = None
        #: Connections opened (for tests: a restart makes a new one).
        self.connects = 0
        #: Called with each batch as it is flushed, its commands with their futures (tests
        #: count round trips and read replies).
        self.observe: Callable[[list[tuple[Command, asyncio.Future[object]]]], None] | None = None
        #: A raw connection per cluster master, by node name (opened on first use).
        self._node_conns: dict[str, RespConnection] = {}
        self._node_opening: dict[str, asyncio.Future[RespConnection]] = {}

    @property
    def connection(self) -> RespConnection | None:
        """The single Redis's raw connection while it is usable (None on a cluster)."""
        conn = self._conn
        return conn if conn is not None and conn.usable else None

    def send(self, command: Command) -> asyncio.Future[object]:
        """Queue one command; the future holds its reply (an error reply raises)."""
        if not self._pending:  # once a batch: Python 3.11's get_running_loop() calls getpid()
            self._loop = asyncio.get_running_loop()
            self._loop.call_soon(self._flush)
        loop = self._loop
        assert loop is not None
        fut: asyncio.Future[object] = loop.create_future()
        self._pending.append((command, fut))
        return fut

    async def run(self, key: str, *args: str | int) -> object:
        """One plain command (routed by `key`, which it must name), in this iteration's batch."""
        return await self.send(Command(args, key))

    def run_soon(self, key: str, *args: str | int) -> asyncio.Future[object]:
        """`run` without a coroutine: the command is queued now, its reply is the future's.
        Several of these awaited with `asyncio.gather` cost no task each (the finish path)."""
        return self.send(Command(args, key))

    async def eval(
        self, script: LuaScript, keys: tuple[str, ...], args: tuple[str | int, ...] = ()
    ) -> object:
        """One script call (all keys in one slot), in this iteration's batch."""
        return await self.eval_soon(script, keys, args)

    def eval_soon(
        self, script: LuaScript, keys: tuple[str, ...], args: tuple[str | int, ...] = ()
    ) -> asyncio.Future[object]:
        """`eval` without a coroutine (see `run_soon`)."""
        return self.send(Command(("EVALSHA", script.sha, len(keys), *keys, *args), keys[0], script))

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        if self.observe is not None:
            self.observe(list(batch))
        if self._cluster is not None:
            task = asyncio.get_running_loop().create_task(self._write(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return
        self.batches += 1
        self.commands += len(batch)
        conn = self._conn
        if conn is not None and conn.usable and self._connecting is None:
            self._write_raw(conn, batch)
            return
        self._backlog.append(batch)  # written once connected, in order
        if self._connecting is None:
            self._connecting = asyncio.get_running_loop().create_task(self._connect())

    @staticmethod
    def _write_raw(
        conn: RespConnection, batch: list[tuple[Command, asyncio.Future[object]]]
    ) -> None:
        packed: list[bytes] = []
        waiters: list[Waiter] = []
        i, n = 0, len(batch)
        solo = 0  # calls before this index go one by one (a run that could not be merged)
        while i < n:
            c, fut = batch[i]
            script = c.script
            if i >= solo and script is not None and script.many is not None:
                j = _run_end(batch, i, script)
                if j - i > 1:
                    if _many(script, batch[i:j], packed, waiters):
                        i = j
                        continue
                    solo = j  # an argument RESP cannot carry: it fails alone, below
            p = _packed_or_failed(c, fut)
            if p is not None:
                packed.append(p)
                waiters.append(Waiter(fut, script.source, p) if script else Waiter(fut))
            i += 1
        if packed:
            conn.send_waiters(packed, waiters)

    async def _connect(self) -> None:
        """A new raw connection (the first, or after a failure), then the batches that waited
        for it; if Redis cannot be reached, each of those fails as unavailable."""
        try:
            if self._settings is None:
                self._settings = RespSettings.of_client(self._r)
            old, self._conn = self._conn, None
            if old is not None:
                old.close()
            try:
                conn = await RespConnection.open(self._settings, SOCKET_TIMEOUT_S, _failure)
            except BaseException as exc:
                failure = _failure(exc)
                backlog, self._backlog = self._backlog, []
                for batch in backlog:
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_exception(failure)
                if not isinstance(exc, Exception):
                    raise
                return
            self.connects += 1
            self._conn = conn
            while self._backlog:
                backlog, self._backlog = self._backlog, []
                for batch in backlog:
                    self._write_raw(conn, batch)
        finally:
            self._connecting = None

    async def _write(self, batch: list[tuple[Command, asyncio.Future[object]]]) -> None:
        """A cluster's batch (a task: its masters' pipelines are awaited together)."""
        self.batches += 1
        self.commands += len(batch)
        try:
            replies = await self._run([a for a, _ in batch])
        except BaseException as exc:
            failure = StoreUnavailable(f"redis unavailable: {exc}") if is_outage(exc) else exc
            for _, fut in batch:
                if not fut.done():
                    fut.set_exception(failure)
            if isinstance(exc, asyncio.CancelledError):
                raise
            return
        for n, ((_, fut), reply) in enumerate(zip(batch, replies, strict=True)):
            if n and not n % RESOLVE_CHUNK:
                # Each resolved append wakes a request that then builds and sends its reply:
                # a chunk per loop iteration keeps timers and other connections waiting at
                # most a chunk's worth of replies, not a whole batch's (event-loop lag).
                await asyncio.sleep(0)
            if fut.done():  # the caller went away; the write stands regardless
                continue
            if isinstance(reply, BaseException):
                fut.set_exception(
                    StoreUnavailable(f"redis unavailable: {reply}") if is_outage(reply) else reply
                )
            else:
                fut.set_result(reply)

    async def _run(self, items: list[Command]) -> list[object]:
        """Each command's reply, or the exception that stands for it (a cluster's batch)."""
        assert self._cluster is not None
        return await self._run_on_cluster(self._cluster, items)

    async def _run_on_cluster(self, cluster: RedisCluster, items: list[Command]) -> list[object]:
        """One pipeline per master, all at once: each command goes to the master of its key's
        slot. A master that fails fails only the commands it was sent; a MOVED or ASK reply
        (a slot that moved) sends that command once more, where the reply points."""
        try:
            await cluster.initialize()  # the slot map (a no-op once loaded)
        except Exception as exc:  # no node reachable at all
            raise StoreUnavailable(f"redis cluster unavailable: {exc}") from exc
        replies: list[object] = [None] * len(items)
        await self._send_by_slot(cluster, items, range(len(items)), replies)
        for i, r in enumerate(replies):
            if isinstance(r, MovedError):  # rare: through redis-py, which reloads its map
                replies[i] = await self._redirected(cluster, items[i])
        asked = [
            i
            for i, r in enumerate(replies)
            if isinstance(r, AskError) and not isinstance(r, MovedError)
        ]
        for i in asked:  # a slot being migrated: rare, one at a time
            err = cast(AskError, replies[i])
            node = cluster.get_node(host=err.host, port=err.port)
            replies[i] = (await self._on_node(node, [items[i]], asking=True))[0] if node else err
        # Still redirected after one retry: the slot is moving again; the caller may retry.
        return [
            StoreUnavailable(f"redis cluster slot moving: {r}") if isinstance(r, AskError) else r
            for r in replies
        ]

    async def _redirected(self, cluster: RedisCluster, item: Command) -> object:
        """One command sent again through redis-py's cluster client (MOVED: its slot map is
        reloaded on the way); a script it does not know yet is loaded there first."""
        try:
            try:
                return await cluster.execute_command(*item.args)
            except redis.exceptions.NoScriptError:
                if item.script is None:
                    raise
                node = cluster.get_node_from_key(item.key)
                await cluster.execute_command(
                    "SCRIPT", "LOAD", item.script.source, target_nodes=node
                )
                return await cluster.execute_command(*item.args)
        except redis.exceptions.ResponseError as exc:
            return exc
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
            return exc

    async def _send_by_slot(
        self,
        cluster: RedisCluster,
        items: list[Command],
        which: Sequence[int],
        replies: list[object],
    ) -> None:
        groups: dict[str, tuple[ClusterNode, list[int]]] = {}
        for i in which:
            try:
                node = cluster.get_node_from_key(items[i].key)
            except SlotNotCoveredError as exc:
                replies[i] = exc
                continue
            if node is None:
                replies[i] = SlotNotCoveredError(f"no master for {items[i].key!r}")
                continue
            groups.setdefault(node.name, (node, []))[1].append(i)
        done = await asyncio.gather(
            *(self._on_node(node, [items[i] for i in idx]) for node, idx in groups.values()),
            return_exceptions=True,
        )
        for (_, idx), result in zip(groups.values(), done, strict=True):
            if isinstance(result, BaseException):
                if isinstance(result, redis.exceptions.ConnectionError):
                    self._refresh_soon(cluster, items[idx[0]].key)
                for i in idx:
                    replies[i] = result
            else:
                for i, reply in zip(idx, result, strict=True):
                    replies[i] = reply
                if any(isinstance(r, redis.exceptions.ConnectionError) for r in result):
                    self._refresh_soon(cluster, items[idx[0]].key)  # the master was lost

    def _refresh_soon(self, cluster: RedisCluster, key: str) -> None:
        """After a master failed (at most once a second): a command on one of its keys sent
        through redis-py's own client, whose failure handling reloads the slot map (a replica
        may have taken over the slots), in the background."""
        loop = asyncio.get_running_loop()
        if loop.time() < self._next_refresh:
            return
        self._next_refresh = loop.time() + REFRESH_INTERVAL_S

        async def refresh() -> None:
            with contextlib.suppress(Exception):  # every node down: the next failure retries
                await cluster.execute_command("EXISTS", key)

        task = loop.create_task(refresh())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _node_connection(self, node: ClusterNode) -> RespConnection:
        """This batcher's raw connection to a cluster master (the node's own settings),
        opened on first use and again after it failed; one opening at a time per master."""
        conn = self._node_conns.get(node.name)
        if conn is not None and conn.usable:
            return conn
        opening = self._node_opening.get(node.name)
        if opening is None:
            opening = asyncio.ensure_future(self._open_node(node))
            self._node_opening[node.name] = opening
        return await asyncio.shield(opening)

    async def _open_node(self, node: ClusterNode) -> RespConnection:
        settings = RespSettings.of(node.connection_class, node.connection_kwargs)
        try:
            conn = await RespConnection.open(settings, SOCKET_TIMEOUT_S)
        finally:
            del self._node_opening[node.name]
        if (old := self._node_conns.get(node.name)) is not None:
            old.close()
        self._node_conns[node.name] = conn
        self.connects += 1
        return conn

    async def _on_node(
        self, node: ClusterNode, items: list[Command], *, asking: bool = False
    ) -> list[object]:
        """The commands' replies from one master, in one write on its raw connection (an
        error reply, or the connection's failure, stands for its command); ASK's retry
        prefixes each command with ASKING, whose own reply is dropped. A script the master
        lacks is loaded and the command written again by the connection."""
        conn = await self._node_connection(node)
        loop = asyncio.get_running_loop()
        packed: list[bytes] = []
        waiters: list[Waiter] = []
        futures: list[asyncio.Future[object]] = []
        for c in items:
            fut: asyncio.Future[object] = loop.create_future()
            futures.append(fut)
            p = _packed_or_failed(c, fut)
            if p is None:
                continue
            if asking:
                packed.append(_ASKING)
                waiters.append(Waiter(None))
            packed.append(p)
            waiters.append(Waiter(fut, c.script.source, p) if c.script else Waiter(fut))
        conn.send_waiters(packed, waiters)
        return list(await asyncio.gather(*futures, return_exceptions=True))

    async def aclose(self) -> None:
        """Wait for the writes already sent (shutdown): their replies, then close."""
        if self._pending:
            self._flush()
        if self._connecting is not None:
            await asyncio.gather(self._connecting, return_exceptions=True)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.wait_idle()
            conn.close()
        conns, self._node_conns = list(self._node_conns.values()), {}
        for c in conns:
            await c.wait_idle()
            c.close()
