"""The raw RESP pipeline under the group commit (server/redis/resp.py), against real Redis
processes: restarts, flushed scripts, error replies, replies split across reads and larger than
one read, the deadline, AUTH/SELECT/CLIENT SETNAME from the redis-py client's settings."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis.asyncio
import redis.exceptions

from benchmarks.load.procs import RedisServer
from server.redis.batch import Batcher, LuaScript
from server.redis.connect import connect
from server.redis.resp import RespConnection, RespSettings, pack, reply_error
from server.runtime.errors import StoreUnavailable, is_outage


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test alone (it is killed, restarted, given a password)."""
    server = RedisServer(tmp_path / "redis", appendfsync="always").start()
    try:
        yield server
    finally:
        server.stop()


def _client(url: str, **kwargs: object) -> redis.asyncio.Redis:
    return redis.asyncio.Redis.from_url(url, decode_responses=True, **kwargs)  # type: ignore[arg-type]


async def test_a_restart_mid_batch_fails_the_batch_and_the_next_batch_reconnects(
    own_redis: RedisServer,
) -> None:
    client = _client(own_redis.url, socket_connect_timeout=0.5)
    batch = Batcher(client)
    try:
        assert await batch.run("{r}:n", "SET", "{r}:n", 1) == "OK"
        # A batch Redis holds (BLPOP blocks its connection; the INCR waits behind it).
        blocked = batch.run_soon("{r}:list", "BLPOP", "{r}:list", 10)
        behind = batch.run_soon("{r}:n", "INCR", "{r}:n")
        await asyncio.sleep(0.2)
        assert not blocked.done() and not behind.done()
        t0 = time.monotonic()
        own_redis.kill()
        results = await asyncio.gather(blocked, behind, return_exceptions=True)
        assert time.monotonic() - t0 < 2.0
        assert all(isinstance(r, StoreUnavailable) for r in results), results
        # While Redis is down each batch fails promptly (a refused connection), not hangs.
        with pytest.raises(StoreUnavailable):
            await batch.run("{r}:n", "INCR", "{r}:n")
        own_redis.start()
        assert await batch.run("{r}:n", "INCR", "{r}:n") == 2  # the INCR above never ran
        assert batch.connects == 2
    finally:
        await batch.aclose()
        await client.aclose()


async def test_scripts_are_loaded_again_after_a_script_flush_on_the_same_connection(
    redis_client: redis.asyncio.Redis,
) -> None:
    batch = Batcher(redis_client)
    incr = LuaScript.of("return redis.call('INCRBY', KEYS[1], ARGV[1]) -- resp test")
    echo = LuaScript.of("return ARGV[1] -- resp test")
    try:
        await redis_client.delete("{s}:n")
        assert await batch.eval(incr, ("{s}:n",), (1,)) == 1
        conn = batch.connection
        assert conn is not None
        await redis_client.script_flush()
        written = conn.written
        results = await asyncio.gather(
            batch.eval(incr, ("{s}:n",), (2,)),
            batch.eval(echo, ("{s}:n",), ("hi",)),
            batch.run("{s}:n", "GET", "{s}:n"),
        )
        # The GET ran before the scripts were loaded and the EVALSHAs sent again.
        assert list(results) == [3, "hi", "1"]
        assert conn.written - written == 3 + 2 * 2  # the batch, then SCRIPT LOAD + EVALSHA each
        assert batch.connection is conn and batch.connects == 1
        assert await redis_client.script_exists(incr.sha, echo.sha) == [True, True]
    finally:
        await batch.aclose()


async def test_an_error_reply_fails_only_its_command(redis_client: redis.asyncio.Redis) -> None:
    batch = Batcher(redis_client)
    fail = LuaScript.of("return redis.error_reply('NOPE not today') -- resp test")
    try:
        await redis_client.set("{e}:str", "x")
        results = await asyncio.gather(
            batch.run("{e}:a", "SET", "{e}:a", "1"),
            batch.run("{e}:str", "HGET", "{e}:str", "f"),  # WRONGTYPE
            batch.eval(fail, ("{e}:a",)),
            batch.run("{e}:a", "NOSUCHCOMMAND"),
            batch.run("{e}:a", "GET", "{e}:a"),
            return_exceptions=True,
        )
        assert results[0] == "OK" and results[4] == "1"
        for r in results[1:4]:
            assert isinstance(r, redis.exceptions.ResponseError) and not is_outage(r), r
        assert str(results[1]).startswith("WRONGTYPE")
        assert str(results[2]) == "NOPE not today"
        assert batch.connection is not None  # the connection is still in step
        assert await batch.run("{e}:a", "INCR", "{e}:a") == 2
    finally:
        await batch.aclose()


def test_error_replies_are_the_exceptions_redis_py_raises() -> None:
    moved = reply_error("MOVED 3999 127.0.0.1:6381")
    assert isinstance(moved, redis.exceptions.MovedError)
    assert (moved.slot_id, moved.host, moved.port) == (3999, "127.0.0.1", 6381)
    ask = reply_error("ASK 12 10.0.0.2:7000")
    assert isinstance(ask, redis.exceptions.AskError) and ask.node_addr == ("10.0.0.2", 7000)
    assert isinstance(reply_error("NOSCRIPT No matching script"), redis.exceptions.NoScriptError)
    loading = reply_error("LOADING Redis is loading the dataset in memory")
    assert isinstance(loading, redis.exceptions.BusyLoadingError) and is_outage(loading)
    assert isinstance(reply_error("READONLY replica"), redis.exceptions.ReadOnlyError)
    err = reply_error("ERR unknown command 'X'")
    assert type(err) is redis.exceptions.ResponseError and str(err) == "unknown command 'X'"
    assert isinstance(reply_error("MOVED garbled"), redis.exceptions.ResponseError)


@contextlib.asynccontextmanager
async def _trickle(target: str, listen: str) -> AsyncIterator[None]:
    """A unix-socket relay to Redis that sends Redis's bytes back 7 at a time, one write per
    loop iteration: every reply reaches the client split across several reads."""

    async def relay(cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        rr, rw = await asyncio.open_unix_connection(target)

        async def up() -> None:
            while data := await cr.read(65536):
                rw.write(data)
            rw.close()

        async def down() -> None:
            while data := await rr.read(65536):
                for i in range(0, len(data), 7):
                    cw.write(data[i : i + 7])
                    await cw.drain()
                    await asyncio.sleep(0.001)
            cw.close()

        with contextlib.suppress(ConnectionError):
            await asyncio.gather(up(), down())

    server = await asyncio.start_unix_server(relay, listen)
    try:
        yield
    finally:
        server.close()


async def test_replies_split_across_reads_and_larger_than_one_read(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    big = "x" * 3_000_000  # the transport reads at most 256 KiB at a time
    await redis_client.set("{b}:big", big)
    await redis_client.delete("{b}:h")
    await redis_client.hset("{b}:h", mapping={"a": "1", "b": "2"})
    batch = Batcher(redis_client)
    try:
        assert await batch.run("{b}:big", "STRLEN", "{b}:big") == len(big)
        conn = batch.connection
        assert conn is not None
        reads = conn.reads
        got = await asyncio.gather(
            batch.run("{b}:big", "GET", "{b}:big"), batch.run("{b}:h", "HGET", "{b}:h", "a")
        )
        assert list(got) == [big, "1"]
        assert conn.reads - reads > 3, "the large reply came in several reads"
    finally:
        await batch.aclose()

    sock = tmp_path / "trickle.sock"
    path = redis_url.removeprefix("unix://")
    async with _trickle(path, str(sock)):
        client = _client(f"unix://{sock}")
        batch = Batcher(client)
        try:
            results = await asyncio.gather(
                batch.run("{b}:h", "HGETALL", "{b}:h"),
                batch.run("{b}:h", "HGET", "{b}:h", "zz"),  # nil
                batch.run("{b}:big", "HGET", "{b}:big", "f"),  # an error reply, in pieces
                batch.run("{b}:h", "HLEN", "{b}:h"),
                batch.run("{b}:h", "ECHO", "déjà vu"),
                return_exceptions=True,
            )
            assert results[0] == ["a", "1", "b", "2"]
            assert results[1] is None
            assert isinstance(results[2], redis.exceptions.ResponseError)
            assert list(results[3:]) == [2, "déjà vu"]
            conn = batch.connection
            assert conn is not None and conn.reads > 2 * conn.replies
        finally:
            await batch.aclose()
            await client.aclose()


async def test_a_stream_that_is_not_resp_fails_its_batch_and_the_next_reconnects(
    redis_url: str, tmp_path: Path
) -> None:
    """A relay that garbles the first bytes Redis sends after the connection's setup: the
    batch waiting for them fails as unavailable, the connection is dropped, and the next
    batch (a new connection, relayed faithfully) lands."""
    garble = [True]

    async def relay(cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        rr, rw = await asyncio.open_unix_connection(redis_url.removeprefix("unix://"))

        async def up() -> None:
            while data := await cr.read(65536):
                rw.write(data)
            rw.close()

        async def down() -> None:
            while data := await rr.read(65536):
                if garble[0] and not data.startswith(b"+OK"):  # not the SELECT's reply
                    garble[0] = False
                    data = b"@not resp\r\n"
                cw.write(data)
            cw.close()

        with contextlib.suppress(ConnectionError):
            await asyncio.gather(up(), down())

    sock = tmp_path / "garble.sock"
    server = await asyncio.start_unix_server(relay, str(sock))
    client = _client(f"unix://{sock}", db=1)  # a SELECT in the setup: its +OK passes
    batch = Batcher(client)
    try:
        with pytest.raises(StoreUnavailable, match="protocol error"):
            await batch.run("{g}:n", "INCR", "{g}:n")
        assert batch.connection is None
        assert isinstance(await batch.run("{g}:n", "INCR", "{g}:n"), int)
        assert batch.connects == 2
    finally:
        await batch.aclose()
        await client.aclose()
        server.close()


async def test_a_batch_redis_does_not_answer_in_time_fails_and_the_connection_is_dropped(
    redis_url: str,
) -> None:
    client = _client(redis_url)
    settings = RespSettings.of_client(client)
    conn = await RespConnection.open(settings, timeout=0.3)
    try:
        (blocked,) = conn.send([pack(("BLPOP", "{t}:none", 0))])
        t0 = time.monotonic()
        with pytest.raises(redis.exceptions.TimeoutError):
            await blocked
        assert 0.25 < time.monotonic() - t0 < 1.5
        assert not conn.usable
        (late,) = conn.send([pack(("PING",))])
        with pytest.raises(redis.exceptions.TimeoutError):
            await late  # never written on a connection out of step
    finally:
        conn.close()
        await client.aclose()


async def test_settings_come_from_the_redis_py_client_auth_db_and_name(
    own_redis: RedisServer,
) -> None:
    admin = _client(own_redis.url)
    await admin.config_set("requirepass", "s3cret")
    await admin.aclose()
    admin = _client(own_redis.url, password="s3cret")
    named = _client(own_redis.url, password="s3cret", db=3, client_name="batcher-test")
    app = connect(f"{own_redis.url}?db=4", password="s3cret")  # the server's own client
    batches = [Batcher(named), Batcher(app)]
    try:
        assert await batches[0].run("{a}:k", "SET", "{a}:k", "3") == "OK"
        assert await batches[1].run("{a}:k", "SET", "{a}:k", "4") == "OK"
        assert await admin.get("{a}:k") is None  # not in db 0
        by_db = {c["db"]: c for c in await admin.client_list() if c["db"] in ("3", "4")}
        assert by_db["3"]["name"] == "batcher-test"
        assert "4" in by_db
        for db in (3, 4):
            other = _client(own_redis.url, password="s3cret", db=db)
            assert await other.get("{a}:k") == str(db)
            await other.aclose()
    finally:
        for b in batches:
            await b.aclose()
        await named.aclose()
        await app.aclose()
    wrong = _client(own_redis.url, password="wrong")
    batch = Batcher(wrong)
    try:
        with pytest.raises(StoreUnavailable, match=r"(?i)pass"):
            await batch.run("{a}:k", "GET", "{a}:k")
        assert batch.connection is None
    finally:
        await batch.aclose()
        await wrong.aclose()
        await admin.aclose()


async def test_aclose_waits_for_the_replies_already_owed(redis_client: redis.asyncio.Redis) -> None:
    batch = Batcher(redis_client)
    await redis_client.delete("{c}:l")
    slow = batch.run_soon("{c}:l", "BLPOP", "{c}:l", "0.3")
    after = batch.run_soon("{c}:n", "INCR", "{c}:n")
    await asyncio.sleep(0)
    await batch.aclose()
    assert slow.done() and slow.result() is None
    assert after.done() and isinstance(after.result(), int)
    assert batch.connection is None
