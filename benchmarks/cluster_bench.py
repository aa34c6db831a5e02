"""Scale-out benchmark: 1, 2 and 4 server processes on one Redis vs a 3-master Redis Cluster.

    python benchmarks/cluster_bench.py [--quick] [--processes 1 2 4] [--masters 3]
        [--players N] [--games N] [--variants V ...] [--backends single cluster] [--json FILE]

For each backend (one redis-server on a unix socket; a `LocalCluster` of ``--masters``
masters on TCP, both AOF everysec) and each number of server processes, the same whole-game
load (benchmarks/load/lightgen.py, precomputed scripts of all six variants' deals of a fixed
day) is split evenly over the processes, each with its own generator process. Figures, as
benchmarks/server_bench.py's cpu section measures them (utime+stime from /proc, moves from
each server's /metrics): server CPU µs per move (all processes), Redis CPU µs per move (all
nodes), moves/s over the window (on a small shared machine a ceiling of the machine, not of
the service), errors, and on the cluster the split per master of keys (DBSIZE) and of
commands and script calls (INFO commandstats) under this load. ``--variants fourteen-out``
plays one variant only: one hot daily board, the case the per-game slots spread.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import secrets
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.load import cpumeter, procs, scripts  # noqa: E402
from benchmarks.load.cpubench import DEFAULT_DATE, DEFAULT_SECRET  # noqa: E402
from benchmarks.load.lightgen import GenConfig, Generator, GenStats, scripts_for  # noqa: E402
from engine import VARIANT_IDS  # noqa: E402
from tests.support.localcluster import LocalCluster  # noqa: E402


def say(text: str = "") -> None:
    print(text, flush=True)


@dataclass
class NodeShare:
    """One master's part of the load: keys held and commands run in the window."""

    address: str
    keys: int
    commands: int
    scripts: int


@dataclass
class Run:
    backend: str
    processes: int
    players: int
    wall_s: float
    moves: int
    moves_per_s: float
    server_us_per_move: float
    redis_us_per_move: float
    errors: int
    nodes: list[NodeShare] = field(default_factory=list)
    error_examples: list[str] = field(default_factory=list)


class Backend:
    """One redis-server, or a cluster: its URL, the pids to meter, its per-node counters."""

    def __init__(self, kind: str, tmp: Path, masters: int) -> None:
        self.kind = kind
        self.single: procs.RedisServer | None = None
        self.cluster: LocalCluster | None = None
        if kind == "single":
            self.single = procs.RedisServer(tmp / "redis").start()
            self.url = self.single.url
        else:
            self.cluster = LocalCluster(tmp / "cluster", masters)
            self.url = self.cluster.start()

    def clients(self) -> list[tuple[str, redis.Redis]]:
        if self.single is not None:
            return [
                (
                    "unix",
                    redis.Redis(unix_socket_path=str(self.single.socket), decode_responses=True),
                )
            ]
        assert self.cluster is not None
        return [(n.address, n.client()) for n in self.cluster.nodes]

    def pids(self) -> dict[str, int]:
        if self.single is not None:
            assert self.single.proc is not None
            return {"redis0": self.single.proc.pid}
        assert self.cluster is not None
        out = {}
        for i, n in enumerate(self.cluster.nodes):
            assert n.proc is not None
            out[f"redis{i}"] = n.proc.pid
        return out

    def reset(self) -> None:
        for _, c in self.clients():
            with c:
                c.flushall()
                c.config_resetstat()

    def shares(self) -> list[NodeShare]:
        out = []
        for address, c in self.clients():
            with c:
                stats = c.info("commandstats")
                calls = {k: int(v["calls"]) for k, v in stats.items() if isinstance(v, dict)}
                out.append(
                    NodeShare(
                        address,
                        int(c.dbsize()),
                        sum(calls.values()),
                        calls.get("cmdstat_evalsha", 0) + calls.get("cmdstat_eval", 0),
                    )
                )
        return out

    def stop(self) -> None:
        if self.single is not None:
            self.single.stop()
        if self.cluster is not None:
            self.cluster.stop()


def server_flags(date: dt.date, secret: str) -> tuple[str, ...]:
    offset = scripts.clock_offset_ms(date, time.time_ns() // 1_000_000)
    retention = max(90, (dt.datetime.now(dt.UTC).date() - date).days + 30)
    return (
        "--no-certify",
        "--daily-secret",
        secret,
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
        "--clock-offset-ms",
        str(offset),
        "--leaderboard-retention-days",
        str(retention),
        "--loop-lag-interval-ms",
        "0",
    )


Plays = dict[str, tuple[tuple[tuple[str, ...], bool], ...]]


def measure(
    backend: Backend,
    n: int,
    players: int,
    games: int,
    plays: Plays,
    date: dt.date,
    secret: str,
    tmp: Path,
) -> Run:
    """``n`` server processes on ``backend``, each driven by its own generator process."""
    backend.reset()
    servers = [
        procs.start_server(
            procs.free_port(),
            tmp / f"{backend.kind}-{n}-s{i}",
            redis_url=backend.url,
            flags=server_flags(date, secret),
            log=tmp / f"{backend.kind}-{n}-s{i}.log",
        )
        for i in range(n)
    ]
    try:
        start_at = time.time() + 1.5
        gens = [
            Generator(
                GenConfig(
                    host="127.0.0.1",
                    port=s.port,
                    scripts=plays,
                    variants=tuple(plays),
                    players=max(1, players // n),
                    processes=1,
                    games=games,
                    start_at=start_at,
                    deadline=start_at + 600.0,
                    tag=secrets.token_hex(2),
                )
            ).start()
            for s in servers
        ]
        try:
            pids = {**{f"server{i}": s.pid for i, s in enumerate(servers)}, **backend.pids()}
            time.sleep(max(0.0, start_at - 0.05 - time.time()))
            moves_a = sum(
                cpumeter.total(cpumeter.scrape(s.port), "solitaire_moves_total") for s in servers
            )
            a = cpumeter.snapshot(pids)
            stats = GenStats()
            for g in gens:
                stats.merge(g.wait())
            b = cpumeter.snapshot(pids)
            moves = round(
                sum(
                    cpumeter.total(cpumeter.scrape(s.port), "solitaire_moves_total")
                    for s in servers
                )
                - moves_a
            )
        finally:
            for g in gens:
                g.release()
        shares = backend.shares()
    finally:
        for s in servers:
            s.stop()
    wall = b.wall - a.wall
    server_cpu = cpumeter.cpu_delta(a, b, [r for r in pids if r.startswith("server")])
    redis_cpu = cpumeter.cpu_delta(a, b, [r for r in pids if r.startswith("redis")])
    per = 1e6 / moves if moves else float("nan")
    return Run(
        backend.kind,
        n,
        max(1, players // n) * n,
        wall,
        moves,
        moves / wall,
        server_cpu * per,
        redis_cpu * per,
        sum(stats.errors.values()),
        shares,
        [f"{k} x{n}" for k, n in stats.errors.items()] + stats.error_examples[:2],
    )


def show(run: Run) -> None:
    say(
        f"  {run.backend:<7} {run.processes} process(es): {run.moves:,} moves in "
        f"{run.wall_s:.1f} s ({run.moves_per_s:,.0f}/s); server {run.server_us_per_move:,.0f} "
        f"µs CPU per move, redis {run.redis_us_per_move:,.0f} µs; errors {run.errors}"
        + (f" {run.error_examples}" if run.errors else "")
    )
    if len(run.nodes) > 1:
        keys = sum(n.keys for n in run.nodes) or 1
        cmds = sum(n.commands for n in run.nodes) or 1
        evals = sum(n.scripts for n in run.nodes) or 1
        for n in run.nodes:
            say(
                f"      {n.address}: keys {n.keys / keys:.0%}, commands {n.commands / cmds:.0%}, "
                f"script calls {n.scripts / evals:.0%}"
            )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="fewer games (about a minute)")
    ap.add_argument("--processes", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--masters", type=int, default=3)
    ap.add_argument("--players", type=int, default=96)
    ap.add_argument("--games", type=int, help="whole games per player (default 2, --quick 1)")
    ap.add_argument(
        "--variants",
        nargs="+",
        choices=VARIANT_IDS,
        default=list(VARIANT_IDS),
        help="the daily boards played (default: all six)",
    )
    ap.add_argument(
        "--backends", nargs="+", choices=("single", "cluster"), default=["single", "cluster"]
    )
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    a = ap.parse_args(argv)
    games = a.games or (1 if a.quick else 2)
    date, secret = DEFAULT_DATE, DEFAULT_SECRET
    say(
        f"cluster benchmark {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC: {a.players} players x "
        f"{games} whole games of {', '.join(a.variants)} (deals of {date}), split over the "
        f"server processes; {' vs '.join(a.backends)} ({a.masters} masters)"
    )
    built: dict[str, Sequence[Any]] = dict(scripts.build(secret.encode(), date, a.variants))
    plays = scripts_for(built)
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="solcluster-") as tmp_s:
        tmp = Path(tmp_s)
        for kind in a.backends:
            backend = Backend(kind, tmp, a.masters)
            try:
                for n in a.processes:
                    runs.append(measure(backend, n, a.players, games, plays, date, secret, tmp))
                    show(runs[-1])
            finally:
                backend.stop()
    if a.json:
        a.json.write_text(json.dumps([asdict(r) for r in runs], indent=2))


if __name__ == "__main__":
    main()
