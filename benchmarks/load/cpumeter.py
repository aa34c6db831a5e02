"""CPU time of processes (from /proc) and the server's /metrics, sampled at a window's ends.

CPU time is ``utime + stime`` of ``/proc/<pid>/stat`` (all threads of the process), in
clock ticks (usually 10 ms: negligible over windows of several seconds of CPU).
"""

from __future__ import annotations

import json
import math
import os
import time
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine_cpu() -> dict[str, float]:
    """Seconds of CPU time of the whole machine (all cores) since boot, from /proc/stat:
    ``busy`` (user, nice, system, irq, softirq), ``steal`` (taken by the hypervisor) and
    ``idle`` (idle, iowait)."""
    with open("/proc/stat") as f:
        v = [int(x) / CLK_TCK for x in f.readline().split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = v
    return {"busy": user + nice + system + irq + softirq, "steal": steal, "idle": idle + iowait}


def children(pid: int) -> list[int]:
    """Direct children of a process (every thread's)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def child_named(pid: int, comm: str) -> int | None:
    """The first direct child of ``pid`` whose command name is ``comm``."""
    for child in children(pid):
        try:
            if Path(f"/proc/{child}/comm").read_text().strip() == comm:
                return child
        except OSError:
            continue
    return None


def http_get(port: int, path: str, timeout: float = 5.0) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
        body: bytes = r.read()
    return body.decode()


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(port: int) -> Samples:
    """Every sample of the server's /metrics: (name, sorted labels) -> value."""
    out: Samples = {}
    for family in text_string_to_metric_families(http_get(port, "/metrics")):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = float(s.value)
    return out


def total(samples: Samples, name: str) -> float:
    """Sum of a metric's samples over all label values."""
    return sum(v for (n, _), v in samples.items() if n == name)


def histogram_delta(a: Samples, b: Samples, name: str) -> list[tuple[float, float]]:
    """(upper bound, count in the window) per bucket of a label-less histogram, ascending."""
    rows = []
    for (n, labels), v in b.items():
        if n == f"{name}_bucket":
            le = float(dict(labels)["le"])
            rows.append((le, v - a.get((n, labels), 0.0)))
    rows.sort()
    out, prev = [], 0.0
    for le, cum in rows:
        out.append((le, cum - prev))
        prev = cum
    return out


def histogram_quantile(buckets: list[tuple[float, float]], q: float) -> float | None:
    """The q-quantile (0..1) of bucketed counts, interpolated linearly inside its bucket."""
    n = sum(c for _, c in buckets)
    if n <= 0:
        return None
    rank, seen, lower = q * n, 0.0, 0.0
    for le, c in buckets:
        if c > 0 and seen + c >= rank:
            if math.isinf(le):
                return lower
            return lower + (le - lower) * (rank - seen) / c
        seen += c
        lower = le if not math.isinf(le) else lower
    return lower


@dataclass
class Snapshot:
    """One end of a measured window."""

    wall: float
    cpu: dict[str, float] = field(default_factory=dict)  # role -> CPU seconds
    samples: Samples = field(default_factory=dict)
    echo: dict[str, int] = field(default_factory=dict)
    machine: dict[str, float] = field(default_factory=dict)


def tree_cpu_seconds(pid: int, skip: frozenset[int] = frozenset()) -> float:
    """utime + stime of a process and of its descendants not in `skip` (nor under them): the
    server with its search workers, without its embedded redis-server. A worker started
    within a window counts all its CPU in it (it had none before)."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            total += cpu_seconds(p)
            todo += [c for c in children(p) if c not in skip]
        except OSError:
            continue  # exited meanwhile
    return total


def snapshot(
    pids: Mapping[str, int], *, metrics_port: int | None = None, echo_port: int | None = None
) -> Snapshot:
    """Scrape first (the scrape's own server CPU then falls inside the window it ends), then
    read the CPU times, then the wall clock. A role's CPU is its process's and its
    descendants' that are no other role (the server's search workers count as the server)."""
    samples = scrape(metrics_port) if metrics_port is not None else {}
    echo = json.loads(http_get(echo_port, "/stats")) if echo_port is not None else {}
    roles = frozenset(pids.values())
    cpu = {role: tree_cpu_seconds(pid, roles) for role, pid in pids.items()}
    return Snapshot(time.monotonic(), cpu, samples, echo, machine_cpu())


def cpu_delta(a: Snapshot, b: Snapshot, roles: Iterable[str]) -> float:
    return sum(b.cpu[r] - a.cpu[r] for r in roles)
