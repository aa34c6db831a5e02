"""HAProxy from Debian's package, started with the very file deploy/ and compose use.

`Balancer` runs ``haproxy -f deploy/haproxy.cfg`` with the environment the file reads (where to
listen, the three server addresses, the edge limits, the admin socket), so a test exercises
the production configuration in front of real server processes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from tests.support.procs import ROOT, ServerProcess, free_port

CONFIG = ROOT / "deploy" / "haproxy.cfg"
INSTALL = "apt-get install -y haproxy (make test installs it when run as root)"


def haproxy_binary() -> str:
    """The haproxy binary, or a clear error saying how to install it."""
    found = shutil.which("haproxy") or next(
        (p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy") if Path(p).exists()), None
    )
    if found is None:
        raise RuntimeError(f"haproxy is not installed: {INSTALL}")
    return found


@dataclass
class Topology:
    """The balancer and the server processes behind it."""

    lb: Balancer
    servers: list[ServerProcess]


class Balancer:
    """HAProxy on a free port in front of ``servers`` (``host:port`` each, at most three)."""

    def __init__(
        self,
        workdir: Path,
        servers: list[str],
        *,
        max_conn: int = 200,
        conn_rate: int = 300,
    ) -> None:
        if not 1 <= len(servers) <= 3:
            raise ValueError("deploy/haproxy.cfg names three servers")
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.stats_socket = workdir / "haproxy.sock"
        self.log = workdir / "haproxy.log"
        # An address nothing listens on stands in for a server the test does not run.
        padded = [*servers, *["127.0.0.1:1"] * (3 - len(servers))]
        self.env = {
            **os.environ,
            "SOLITAIRE_LB_BIND": f"127.0.0.1:{self.port}",
            "SOLITAIRE_SERVER_1": padded[0],
            "SOLITAIRE_SERVER_2": padded[1],
            "SOLITAIRE_SERVER_3": padded[2],
            "SOLITAIRE_LB_MAX_CONN": str(max_conn),
            "SOLITAIRE_LB_CONN_RATE": str(conn_rate),
            "SOLITAIRE_LB_STATS_SOCKET": str(self.stats_socket),
        }
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def start(self, timeout: float = 10.0) -> Balancer:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [haproxy_binary(), "-db", "-f", str(CONFIG)],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"haproxy exited: {self.log.read_text()[-2000:]}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2),
            ):
                if self.stats_socket.exists():
                    return self
            time.sleep(0.05)
        raise RuntimeError(f"haproxy did not listen: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def command(self, line: str) -> str:
        """One command on HAProxy's admin socket (e.g. ``set server servers/s1 state drain``)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(str(self.stats_socket))
            s.sendall(line.encode() + b"\n")
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def states(self) -> dict[str, str]:
        """Each backend server's status as HAProxy sees it (``UP``, ``DOWN``, ``DRAIN``...)."""
        out: dict[str, str] = {}
        lines = self.command("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",")
        for line in lines[1:]:
            row = dict(zip(header, line.split(","), strict=False))
            if row.get("pxname") == "servers" and row.get("svname", "").startswith("s"):
                out[row["svname"]] = row["status"]
        return out

    def wait_states(self, want: dict[str, str], timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            now = self.states()
            if all(now.get(k, "").startswith(v) for k, v in want.items()):
                return
            time.sleep(0.1)
        raise AssertionError(f"backend states {self.states()} never became {want}")

    def __enter__(self) -> Balancer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
