"""Processes for benchmarks and fault tests: the server, the echo baseline and redis-server."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from server.redis.embedded import find_redis_server

ROOT = Path(__file__).resolve().parents[2]

#: Every server started here serves many players from 127.0.0.1: the per-address limits (on
#: by default on the command line, docs/fairplay.md) are off unless the flags set them.
NO_ADDRESS_LIMITS = ("--accounts-per-address-hour", "0", "--connections-per-address", "0")

#: Flags that make a benchmark server measure throughput rather than the per-client limits.
BENCH_FLAGS = (
    *NO_ADDRESS_LIMITS,
    # The load generators play at machine speed: screened, every result would be held and
    # skip its board write, and the finish path measured would not be the players' one.
    "--no-fair-play-screen",
    "--no-certify",
    "--daily-secret",
    "bench",
    "--log-level",
    "WARNING",
    "--rate-limit",
    "1000000",
    "--rate-burst",
    "1000000",
    "--address-bytes-rate",
    "0",
    "--idle-timeout",
    "3600",
    "--race-countdown-ms",
    "300",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def raise_fd_limit(wanted: int) -> int:
    """Raise RLIMIT_NOFILE's soft limit towards ``wanted`` (up to the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft


def rss_bytes(pid: int) -> int:
    """Resident set size of a process (from /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def _env(root: Path = ROOT) -> dict[str, str]:
    # This tree first; a caller's own path entries after it (kept: a build under test may
    # need them).
    extra = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": str(root) + (os.pathsep + extra if extra else "")}
    env.pop("PYTHONSTARTUP", None)
    return env


class Proc:
    """A child process that serves HTTP on ``port`` (``/healthz``)."""

    def __init__(
        self, cmd: list[str], port: int, log: Path | None = None, root: Path = ROOT
    ) -> None:
        self.cmd, self.port = cmd, port
        self.log_path = log
        out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
        try:
            self.proc = subprocess.Popen(
                cmd,
                cwd=root,
                env=_env(root),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        finally:
            if log:
                out.close()  # type: ignore[union-attr]

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def wait_ready(self, path: str = "/healthz", timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"{self.cmd[:4]} exited with {self.proc.returncode}{self._tail()}"
                )
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{self.port}{path}", timeout=1.0
                ) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise TimeoutError(f"{self.cmd[:4]} not ready on port {self.port}{self._tail()}")

    def _tail(self) -> str:
        if self.log_path and self.log_path.exists():
            return "\n" + "\n".join(self.log_path.read_text(errors="replace").splitlines()[-20:])
        return ""

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM (graceful), then SIGKILL if it takes too long."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def start_server(
    port: int,
    data_dir: Path,
    *,
    redis_url: str | None = None,
    flags: tuple[str, ...] = BENCH_FLAGS,
    use_uvloop: bool = False,
    log: Path | None = None,
    wait: bool = True,
    wrapper: tuple[str, ...] = (),
    root: Path = ROOT,
    ready_timeout: float = 60.0,
) -> Proc:
    """``python -m server`` on ``port``, on uvloop or on asyncio's own loop. With
    ``SOLITAIRE_BENCH_PROFILE=FILE`` in the environment it runs under cProfile, whose stats
    go to FILE when it stops (how docs/performance.md's profiles of the cpu section are made:
    ``python -m pstats FILE``). ``wrapper``: a command the server runs under (valgrind,
    `benchmarks/instr_bench.py`); ``root``: the source tree it runs (another commit's)."""
    profile = os.environ.get("SOLITAIRE_BENCH_PROFILE")
    cmd = [
        *wrapper,
        sys.executable,
        *(["-m", "cProfile", "-o", profile] if profile else []),
        "-m",
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        *NO_ADDRESS_LIMITS,
        *flags,
    ]
    if use_uvloop:
        cmd.append("--uvloop")
    if redis_url:
        cmd += ["--redis-url", redis_url]
    proc = Proc(cmd, port, log, root)
    if wait:
        proc.wait_ready("/readyz", ready_timeout)
    return proc


def start_echo(
    port: int, *, reply_sizes: str = "", use_uvloop: bool = False, log: Path | None = None
) -> Proc:
    cmd = [sys.executable, "-m", "benchmarks.load.echo_server", "--port", str(port)]
    if reply_sizes:
        cmd += ["--reply-sizes", reply_sizes]
    if use_uvloop:
        cmd.append("--uvloop")
    proc = Proc(cmd, port, log)
    proc.wait_ready()
    return proc


class RedisServer:
    """A standalone redis-server on a unix socket in ``data_dir`` (AOF on), restartable."""

    def __init__(self, data_dir: Path, appendfsync: str = "everysec") -> None:
        self.data_dir = data_dir.resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.socket = self.data_dir / "redis.sock"
        self.appendfsync = appendfsync
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def start(self, timeout: float = 30.0) -> RedisServer:
        conf = self.data_dir / "redis.conf"
        conf.write_text(
            f'port 0\nunixsocket "{self.socket}"\nunixsocketperm 700\ndir "{self.data_dir}"\n'
            f'appendonly yes\nappendfsync {self.appendfsync}\nsave ""\n'
            f'logfile "{self.data_dir / "redis.log"}"\n'
        )
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()
        self.proc = subprocess.Popen(
            [find_redis_server(), str(conf)],
            cwd=self.data_dir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}")
            if self.ping():
                return self
            time.sleep(0.02)
        raise TimeoutError("redis-server did not answer PING")

    def ping(self) -> bool:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(1.0)
                s.connect(str(self.socket))
                s.sendall(b"PING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self, timeout: float = 30.0) -> None:
        """Graceful stop (SIGTERM: the AOF is flushed)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
