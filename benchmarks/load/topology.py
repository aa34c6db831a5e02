"""The production topology for benchmarks: three server processes behind the real HAProxy.

`start_stack` starts one redis-server (AOF on, a unix socket: `procs.RedisServer`), three
``python -m server`` processes on it and Debian's HAProxy with deploy/haproxy.cfg in front of
them (`tests.support.balancer.Balancer`, the same file and binary the deployment tests and
compose use, with its production edge limits). `Player` is a light WebSocket client that
talks to the balancer from its own loopback source address (127.77.x.y): HAProxy's
per-address limits then see a few players per address, as behind home routers, instead of
thousands from one. `machine` describes the host a figure was measured on.

What the benchmarks on this topology (benchmarks/midnight_rush.py, reconnect_storm.py) share
beside: `crowd` (``count`` new players over ``addresses`` source addresses, player i on the
daily variant `variant_of` i mod 6), `set_up` (each connects, says hello and makes its first
requests, a hundred at a time), the command line (`arguments` and `sizes`: ``--quick``,
``--players``, ``--addresses``, ``--json``, ``--keep``), `run_bench` (the run in its work dir,
then `report`) and `table_text` (the table under a head naming the machine).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import platform
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import websockets
from websockets.asyncio.client import ClientConnection

from benchmarks.load import cpumeter, procs
from engine import VARIANT_IDS
from tests.support.balancer import Balancer

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

#: Replies slower than this count as lost.
REQUEST_TIMEOUT_S = 15.0
#: The browser client's reconnection (clients/web/assets/net.js): the first retry after
#: 500 ms ± 20 %, then doubling up to 15 s.
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 15.0
#: Players with ``--quick``.
QUICK_PLAYERS = 300


@dataclass
class Stack:
    """Redis, the server processes and the balancer in front of them."""

    redis: procs.RedisServer
    servers: list[procs.Proc]
    lb: Balancer
    workdir: Path

    @property
    def url(self) -> str:
        return self.lb.url

    def stop(self) -> None:
        self.lb.stop()
        for s in self.servers:
            s.stop()
        self.redis.stop()


def start_stack(workdir: Path, flags: tuple[str, ...], *, servers: int = 3) -> Stack:
    """Start everything (the servers in parallel) and wait until HAProxy sees them all UP."""
    procs.raise_fd_limit(65_536)  # inherited by the servers and HAProxy
    redis = procs.RedisServer(workdir / "redis").start()
    started: list[procs.Proc] = []
    lb: Balancer | None = None
    try:
        for i in range(servers):
            started.append(
                procs.start_server(
                    procs.free_port(),
                    workdir / f"s{i + 1}",
                    redis_url=redis.url,
                    flags=flags,
                    log=workdir / f"s{i + 1}.log",
                    wait=False,
                )
            )
        for s in started:
            s.wait_ready("/readyz")
        lb = Balancer(workdir / "lb", [f"127.0.0.1:{s.port}" for s in started]).start()
        lb.wait_states({f"s{i + 1}": "UP" for i in range(servers)}, timeout=30)
    except BaseException:
        if lb is not None:
            lb.stop()
        for s in started:
            s.stop()
        redis.stop()
        raise
    return Stack(redis, started, lb, workdir)


def source_address(index: int, addresses: int) -> str:
    """The loopback address player ``index`` connects from (``addresses`` distinct ones)."""
    k = index % addresses
    return f"127.77.{k // 250}.{k % 250 + 1}"


class Lost(Exception):
    """The connection failed or closed, or a reply did not come in time."""


@dataclass(frozen=True)
class Reply:
    """One decoded server message (the fields a benchmark reads, typed on access)."""

    raw: dict[str, object]

    @property
    def type(self) -> str:
        return str(self.raw.get("type", ""))

    @property
    def code(self) -> str:
        return str(self.raw.get("code", ""))

    def text(self, name: str) -> str:
        value = self.raw.get(name)
        return value if isinstance(value, str) else ""

    def number(self, name: str) -> int:
        value = self.raw.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else -1

    def flag(self, name: str) -> bool:
        return self.raw.get(name) is True


class Player:
    """One simulated player: a WebSocket through the balancer, one request at a time."""

    def __init__(self, index: int, url: str, source: str, versions: Sequence[int]) -> None:
        self.index, self.url, self.source = index, url, source
        self.versions = list(versions)
        self.name = f"bp{index}"
        self.token = ""
        self.game_id = ""
        self.seq = 0
        self.ws: ClientConnection | None = None
        self._ids = itertools.count(1)

    async def open(self, timeout: float = 10.0) -> None:
        try:
            self.ws = await websockets.connect(
                self.url,
                local_addr=(self.source, 0),
                ping_interval=None,  # the server pings; answering is automatic
                max_size=2**22,
                open_timeout=timeout,
                compression=None,
            )
        except (OSError, TimeoutError, websockets.WebSocketException) as exc:
            raise Lost(f"connect: {type(exc).__name__}: {exc}") from None

    async def request(self, msg_type: str, **fields: object) -> Reply:
        """Send one request and wait for its reply (pushes in between are skipped)."""
        if self.ws is None:
            raise Lost("not connected")
        rid = next(self._ids)
        try:
            await self.ws.send(json.dumps({"type": msg_type, "id": rid, **fields}))
            async with asyncio.timeout(REQUEST_TIMEOUT_S):
                while True:
                    msg = json.loads(await self.ws.recv())
                    if isinstance(msg, dict) and msg.get("id") == rid:
                        return Reply(msg)
        except (OSError, TimeoutError, websockets.WebSocketException) as exc:
            raise Lost(f"{msg_type}: {type(exc).__name__}") from None

    async def hello(self) -> Reply:
        """``hello`` with the token once there is one (a new player before)."""
        who: dict[str, object] = {"token": self.token} if self.token else {"name": self.name}
        welcome = await self.request("hello", versions=self.versions, **who)
        if welcome.type == "welcome" and not self.token:
            self.token = welcome.text("token")
        return welcome

    async def wait_closed(self) -> None:
        if self.ws is not None:
            await self.ws.wait_closed()

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2):
                    await self.ws.close()
            self.ws = None


@dataclass
class Errors:
    """What went wrong, by kind (a connect failure, an error code, a stale read...)."""

    counts: Counter[str] = field(default_factory=Counter)

    def add(self, kind: str) -> None:
        self.counts[kind] += 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())


async def run_limited(n: int, limit: int, job: Callable[[int], Awaitable[None]]) -> None:
    """``job(0) .. job(n - 1)``, at most ``limit`` at a time."""
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:
            await job(i)

    await asyncio.gather(*(worker() for _ in range(min(n, limit))))


def crowd(url: str, count: int, addresses: int, versions: Sequence[int]) -> list[Player]:
    """``count`` new players of ``url``, player i from `source_address` (i, ``addresses``)."""
    return [Player(i, url, source_address(i, addresses), versions) for i in range(count)]


def variant_of(player: Player) -> str:
    """The daily variant a benchmark's player plays: player i, variant i mod 6."""
    return VARIANT_IDS[player.index % len(VARIANT_IDS)]


async def set_up(
    players: Sequence[Player],
    concurrency: int,
    errors: Errors,
    then: Callable[[Player], Awaitable[str | None]],
) -> tuple[list[Player], float]:
    """Each player connects, says ``hello`` (a new player) and makes its first requests
    (``then``: what went wrong, or None), ``concurrency`` at a time; what fails is counted in
    ``errors`` by kind. The players set up, and how long it took in seconds."""
    ready: list[Player] = []
    t0 = time.monotonic()

    async def one(i: int) -> None:
        p = players[i]
        try:
            await p.open()
            welcome = await p.hello()
            if welcome.type != "welcome":
                errors.add(f"hello: {welcome.code}")
                return
            failed = await then(p)
        except Lost as exc:
            errors.add(str(exc))
            return
        if failed is not None:
            errors.add(failed)
            return
        ready.append(p)

    await run_limited(len(players), concurrency, one)
    return ready, time.monotonic() - t0


def percentile_ms(values: Sequence[float], q: float) -> float:
    """The q-th percentile (nearest rank) of durations in seconds, in milliseconds."""
    if not values:
        return float("nan")
    s = sorted(values)
    return 1000 * s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


def machine() -> dict[str, str | int | float]:
    """The host: cores, CPU model, memory, load average and the busiest other processes."""
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem_gb = 0.0
    with contextlib.suppress(OSError, ValueError, IndexError):
        first = Path("/proc/meminfo").read_text().splitlines()[0]
        mem_gb = round(int(first.split()[1]) / 2**20, 1)
    load = os.getloadavg()
    return {
        "cores": os.cpu_count() or 0,
        "cpu": model or platform.processor(),
        "memory_gb": mem_gb,
        "python": platform.python_version(),
        "load_1m_before": round(load[0], 2),
        "other_busy_processes": busy_processes(),
        "at_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
    }


def busy_processes(window_s: float = 1.0, threshold: float = 0.2) -> int:
    """Processes other than this one using more than ``threshold`` of a core right now."""

    def ticks() -> dict[int, int]:
        out: dict[int, int] = {}
        for d in Path("/proc").iterdir():
            if d.name.isdigit() and int(d.name) != os.getpid():
                with contextlib.suppress(OSError, IndexError, ValueError):
                    fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
                    out[int(d.name)] = int(fields[11]) + int(fields[12])
        return out

    a = ticks()
    time.sleep(window_s)
    b = ticks()
    hz = os.sysconf("SC_CLK_TCK")
    return sum((b[p] - a.get(p, b[p])) / hz / window_s > threshold for p in b)


def cpu_by_role(stack: Stack) -> dict[str, float]:
    """CPU seconds so far: each live server process (``s1``...) and its solver workers
    (``s1 solver``: its descendants), redis-server, HAProxy, this client process, and the
    whole machine (``machine``: every process, ours included)."""
    out: dict[str, float] = {}
    for i, s in enumerate(stack.servers):
        if s.proc.poll() is not None:
            continue
        with contextlib.suppress(OSError):
            own = cpumeter.cpu_seconds(s.pid)
            out[f"s{i + 1}"] = own
            out[f"s{i + 1} solver"] = cpumeter.tree_cpu_seconds(s.pid) - own
    for role, proc in (("redis", stack.redis.proc), ("haproxy", stack.lb.proc)):
        if proc is not None:
            with contextlib.suppress(OSError):
                out[role] = cpumeter.cpu_seconds(proc.pid)
    out["client"] = time.process_time()
    out["machine"] = cpumeter.machine_cpu()["busy"]
    return out


def cpu_share(before: dict[str, float], after: dict[str, float], wall_s: float) -> dict[str, float]:
    """CPU over a window in cores (0.5 = half a core) by role: ``servers`` (those alive at
    both ends), ``solver workers``, ``redis``, ``haproxy``, ``client`` and ``others`` (the
    rest of the machine: other users' work, the kernel's)."""
    delta = {k: after[k] - before[k] for k in after if k in before}
    out = {
        "servers": sum(v for k, v in delta.items() if k[:1] == "s" and " " not in k),
        "solver workers": max(0.0, sum(v for k, v in delta.items() if k.endswith(" solver"))),
        "redis": delta.get("redis", 0.0),
        "haproxy": delta.get("haproxy", 0.0),
        "client": delta.get("client", 0.0),
    }
    out["others"] = max(0.0, delta.get("machine", 0.0) - sum(out.values()))
    return {k: round(v / wall_s, 2) for k, v in out.items()}


def lb_counters(lb: Balancer) -> dict[str, int]:
    """HAProxy's counters over every backend server: connection errors (``econ``), retries
    (``wretr``) and redispatches (``wredis``): connections first sent to a dead server."""
    lines = lb.command("show stat").splitlines()
    header = lines[0].lstrip("# ").split(",")
    out = {"econ": 0, "wretr": 0, "wredis": 0}
    for line in lines[1:]:
        row = dict(zip(header, line.split(","), strict=False))
        if row.get("pxname") == "servers" and row.get("svname", "").startswith("s"):
            for k in out:
                out[k] += int(row.get(k) or 0)
    return out


def loop_lag_max_ms(stack: Stack) -> dict[str, float]:
    """Each live server's longest event-loop lag since the previous call (its /metrics
    ``solitaire_loop_lag_max_seconds``, which a scrape resets), in ms."""
    out: dict[str, float] = {}
    for i, s in enumerate(stack.servers):
        if s.proc.poll() is None:
            with contextlib.suppress(OSError):
                lag = cpumeter.total(cpumeter.scrape(s.port), "solitaire_loop_lag_max_seconds")
                out[f"s{i + 1}"] = round(1000 * lag, 1)
    return out


def lb_log_size(lb: Balancer) -> int:
    return lb.log.stat().st_size if lb.log.exists() else 0


def lb_marked_down(lb: Balancer, since: int) -> list[str]:
    """The servers HAProxy marked DOWN since log offset ``since`` (with the reason)."""
    with lb.log.open("rb") as f:
        f.seek(since)
        lines = f.read().decode(errors="replace").splitlines()
    return [
        line.split("Server servers/", 1)[1].split(". ", 1)[0]
        for line in lines
        if "Server servers/" in line and " is DOWN" in line and not line.startswith("[")
    ]


@contextlib.contextmanager
def work_dir(keep: Path | None, prefix: str) -> Iterator[Path]:
    """The run's directory: ``keep`` (made, and left for a look afterwards) or a temporary one."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)


def report(bench: str, figures: Mapping[str, object], text: str, json_out: Path | None) -> None:
    """Print the table and one JSON line (also written to ``json_out`` when given)."""
    print(text)
    line = json.dumps({"bench": bench, **figures})
    print(line)
    if json_out is not None:
        json_out.write_text(line + "\n")


def table_text(title: str, host: Mapping[str, object], rows: Sequence[tuple[str, str]]) -> str:
    """A benchmark's table: a head naming the machine (`machine`), one aligned row a figure."""
    width = max(len(k) for k, _ in rows)
    head = (
        f"{title}: {host.get('cores')} cores ({host.get('cpu')}), load {host.get('load_1m_before')}"
    )
    return "\n".join([head, *(f"  {k:<{width}}  {v}" for k, v in rows)])


def arguments(doc: str | None, quick: str) -> argparse.ArgumentParser:
    """The command line every benchmark on this topology takes (``quick``: what ``--quick``
    runs); a benchmark adds its own options."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0] if doc else None)
    ap.add_argument("--quick", action="store_true", help=quick)
    ap.add_argument("--players", type=int, default=None)
    ap.add_argument("--addresses", type=int, default=None, help="client source addresses")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--keep", type=Path, default=None, help="work dir kept (logs) instead of tmp")
    return ap


def sizes(a: argparse.Namespace, players: int) -> tuple[int, int]:
    """(players, source addresses) the command line asks for: ``--players``, else
    `QUICK_PLAYERS` with ``--quick``, else ``players``; ``--addresses``, else one per ten."""
    count = int(a.players or (QUICK_PLAYERS if a.quick else players))
    return count, int(a.addresses or max(1, count // 10))


F = TypeVar("F", bound="DataclassInstance")


def run_bench(
    bench: str,
    a: argparse.Namespace,
    run: Callable[[Path], Coroutine[object, object, F]],
    table: Callable[[F], str],
) -> F:
    """``run`` in the work dir ``--keep`` names (else a temporary one), then its table and
    JSON line (`report`, to ``--json`` too): its figures."""
    with work_dir(a.keep, f"{bench}-") as where:
        figures = asyncio.run(run(where))
    report(bench, asdict(figures), table(figures), a.json)
    return figures
