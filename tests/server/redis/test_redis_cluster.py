"""`LocalCluster`: masters from the project's redis-server, slots assigned, restartable."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from redis.crc import key_slot

from tests.support.localcluster import (
    BUS_OFFSET,
    CLUSTER_SLOTS,
    LocalCluster,
    free_cluster_port,
    slot_ranges,
)

pytest_plugins = ["tests.support.cluster"]

ROOT = Path(__file__).resolve().parents[3]


def test_slot_ranges_cover_every_slot_once() -> None:
    for masters in (1, 2, 3, 5):
        ranges = slot_ranges(masters)
        assert [s for r in ranges for s in r] == list(range(CLUSTER_SLOTS))
        assert max(map(len, ranges)) - min(map(len, ranges)) <= 1
    with pytest.raises(ValueError):
        slot_ranges(0)


def test_free_cluster_port_leaves_its_bus_port_free() -> None:
    port = free_cluster_port()
    for p in (port, port + BUS_OFFSET):
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))


def test_the_session_cluster_is_ready(redis_cluster: LocalCluster) -> None:
    assert len(redis_cluster.nodes) == 3
    assert redis_cluster.url.startswith("redis+cluster://127.0.0.1:")
    for node, slots in zip(redis_cluster.nodes, slot_ranges(3), strict=True):
        info = node.info()
        assert info["cluster_state"] == "ok" and info["cluster_known_nodes"] == "3"
        assert redis_cluster.node_for_slot(slots.start) is node
        with node.client() as c:
            assert c.config_get("appendonly")["appendonly"] == "yes"


def test_a_cluster_restarts_from_its_directory(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path / "c", 2, node_timeout_ms=500)
    with cluster:
        key = "{k}x"
        home = cluster.node_for_slot(key_slot(key.encode()))
        with home.client() as c:
            c.set(key, "v")
    ports = [n.port for n in cluster.nodes]
    again = LocalCluster(tmp_path / "c", 2, node_timeout_ms=500)
    assert [n.port for n in again.nodes] == ports  # the same ports: nodes.conf still fits
    with again, again.node_for_slot(key_slot(key.encode())).client() as c:
        assert c.get(key) == "v"


def test_the_command_line_runs_a_cluster_until_sigterm(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.support.localcluster",
            "--dir",
            str(tmp_path / "c"),
            "--masters",
            "1",
            "--node-timeout-ms",
            "500",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("REDIS_URL=redis+cluster://127.0.0.1:"), line
        address = line.split("//", 1)[1].split(",")[0]
        host, port = address.split(":")
        with redis.Redis(host=host, port=int(port), decode_responses=True) as c:
            assert c.execute_command("CLUSTER INFO")["cluster_state"] == "ok"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        with (
            pytest.raises(redis.exceptions.ConnectionError),
            redis.Redis(host=host, port=int(port)) as c,
        ):
            c.ping()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
