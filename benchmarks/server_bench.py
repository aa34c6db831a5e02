"""Server benchmarks: CPU per move vs a bare echo baseline, load, connections, leaderboards.

    python benchmarks/server_bench.py [--quick] [--json FILE] [--only NAME ... | --only all]
        [--date YYYY-MM-DD] [--daily-secret TEXT] [--protocol N] [--uvloop]
        [--players N] [--generator-processes N] [--external-redis] [--games N]
        [--variant-moves N] [--variants NAME ...] [--rounds N]

Every figure is measured in this run on this machine, and the goals are ratios against
baselines measured in the same run (docs/performance.md):

* cpu          (the default) CPU time per request of each process (utime+stime, /proc), not
               requests/s: on a small shared machine the load generator saturates first and
               makes throughput ratios meaningless. Server and redis-server CPU µs per move,
               the bare aiohttp echo's CPU µs per request on the same event loop and the
               ratio echo/server (higher is better), a row per variant, event-loop lag
               p99/max and GC and engine shares inside the server, and the generator's
               utilisation (benchmarks/load/cpubench.py). Deals are fixed by --date and
               --daily-secret (the server runs with --clock-offset-ms and --no-certify).
* load         (throughput, legacy) simulated players (benchmarks/load/generator.py) against
               our server (embedded Redis, AOF everysec), on asyncio and on uvloop, then the bare
               aiohttp echo server (benchmarks/load/echo_server.py): moves/s ratio, goal >= 50 %.
               Also: results written (entries on the boards == games finished), a race mix.
* scale        two server processes sharing one redis-server, load split between them.
* connections  idle authenticated WebSockets on one process: RSS per connection vs bare aiohttp,
               goal <= 1.2x (issue #30).
* leaderboard  GameStore.finish vs raw ZADD (goal >= 60 %, issue #30), CPU per finish; p99 of
               top / around / rank on a 1,000,000-entry board (goal < 2 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import importlib.util
import json
import os
import platform
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import protocol  # noqa: E402
from benchmarks.load import connections, cpubench, lbbench, procs  # noqa: E402
from benchmarks.load.generator import (  # noqa: E402
    LoadConfig,
    LoadResult,
    count_board_entries,
    run_load,
)
from engine import COMPILED, VARIANT_IDS  # noqa: E402

SECTIONS = ("cpu", "load", "scale", "connections", "leaderboard")
HAVE_UVLOOP = importlib.util.find_spec("uvloop") is not None


def say(text: str = "") -> None:
    print(text, flush=True)


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} cores ({model}), Linux {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def show(label: str, r: LoadResult) -> None:
    say(f"  {label:<34} {r.summary()}")
    if r.errors:
        say(f"    errors: {dict(r.errors)}; e.g. {r.error_examples[:2]}")


class Bench:
    def __init__(
        self, quick: bool, profile: bool, tmp: Path, cpu_options: cpubench.CpuOptions | None = None
    ) -> None:
        self.quick, self.profile, self.tmp = quick, profile, tmp
        self.cpu_options = cpu_options or cpubench.CpuOptions(tmp=tmp, quick=quick)
        self.figures: dict[str, object] = {}
        self.dur = 12.0 if quick else 30.0
        self.players = 100

    def cfg(self, **kw: object) -> LoadConfig:
        base: dict[str, object] = {"players": self.players, "processes": 2, "duration_s": self.dur}
        base.update(kw)
        return LoadConfig(**base)  # type: ignore[arg-type]

    def _dir(self, name: str) -> Path:
        d = self.tmp / f"{name}-{time.monotonic_ns()}"
        d.mkdir(parents=True)
        return d

    def ours(self, label: str, cfg: LoadConfig, *, use_uvloop: bool = False) -> LoadResult:
        d = self._dir("srv")
        srv = procs.start_server(
            procs.free_port(), d / "data", use_uvloop=use_uvloop, log=d / "server.log"
        )
        try:
            r = run_load([srv.url], cfg)
            written = count_board_entries(f"unix://{d / 'data' / 'redis.sock'}")
        finally:
            srv.stop()
        show(label, r)
        say(
            f"    results written: {written} entries on the boards for {r.games_finished} "
            f"games finished{'' if written == r.games_finished else '  <-- MISMATCH'}"
        )
        self.figures[label] = {
            "moves_per_s": r.moves_per_s,
            "requests_per_s": r.requests_per_s,
            "p50": r.move_pct(50),
            "p95": r.move_pct(95),
            "p99": r.move_pct(99),
            "errors": r.error_count,
            "games_finished": r.games_finished,
            "written": written,
            "races_finished": r.races_finished,
        }
        return r

    def cpu(self) -> None:
        # The primary figures: at the top level of the JSON (server_cpu_us_per_move, ratio, ...).
        self.figures.update(cpubench.CpuBench(self.cpu_options).run())

    def load(self) -> None:
        say(
            f"\n== load: {self.players} players in 2 processes, {self.dur:.0f} s each, "
            "closed loop (no think time), msgpack frames"
        )
        ours = self.ours("ours (asyncio)", self.cfg())
        best = ours
        if HAVE_UVLOOP:
            uv = self.ours("ours (uvloop)", self.cfg(), use_uvloop=True)
            best = uv if uv.moves_per_s > ours.moves_per_s else ours
        else:
            say("  uvloop not installed: asyncio only")
        sizes = json.dumps(ours.mean_reply_sizes())
        echo_cfg = self.cfg(echo=True, echo_game_moves=max(1, round(ours.mean_moves_per_game())))
        srv = procs.start_echo(procs.free_port(), reply_sizes=sizes, use_uvloop=HAVE_UVLOOP)
        try:
            echo = run_load([srv.url], echo_cfg)
        finally:
            srv.stop()
        show("bare aiohttp echo (baseline)", echo)
        say(f"    reply sizes echoed (bytes, mean of ours): {sizes}")
        ratio = ours.moves_per_s / echo.moves_per_s
        best_ratio = best.moves_per_s / echo.moves_per_s
        say(
            f"  RATIO ours/echo moves/s: asyncio {ratio:.1%}"
            + (f", best of asyncio/uvloop {best_ratio:.1%}" if HAVE_UVLOOP else "")
            + "  (goal >= 50 %)"
        )
        self.figures["echo"] = {
            "moves_per_s": echo.moves_per_s,
            "p50": echo.move_pct(50),
            "p99": echo.move_pct(99),
        }
        self.figures["load_ratio"] = ratio
        self.figures["load_ratio_best"] = best_ratio
        say("\n  with races (half of the players race in pairs via race.queue instead):")
        self.ours("ours, race mix", self.cfg(race_every=2, duration_s=self.dur))
        if self.profile:
            self.profile_server()

    def profile_server(self) -> None:
        say("\n  profile of our server under the same load (cProfile, top 15 by own time):")
        d = self._dir("prof")
        port = procs.free_port()
        out = d / "server.prof"
        cmd = [
            sys.executable,
            "-m",
            "cProfile",
            "-o",
            str(out),
            "-m",
            "server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--data-dir",
            str(d / "data"),
            *procs.BENCH_FLAGS,
        ]
        srv = procs.Proc(cmd, port, d / "server.log")
        srv.wait_ready("/readyz")
        try:
            run_load([srv.url], self.cfg(duration_s=min(self.dur, 15.0)))
        finally:
            srv.stop()
        stats = pstats.Stats(str(out))
        stats.sort_stats("tottime").print_stats(15)
        stats.sort_stats("cumtime").print_stats("server/|protocol/|engine/", 25)

    def scale(self) -> None:
        say(f"\n== scale out: one redis-server (AOF everysec), {self.players} players")
        d = self._dir("scale")
        rs = procs.RedisServer(d / "redis").start()
        servers: list[procs.Proc] = []
        try:
            one = procs.start_server(
                procs.free_port(), d / "s0", redis_url=rs.url, log=d / "s0.log"
            )
            servers.append(one)
            single = run_load([one.url], self.cfg())
            show("1 server process", single)
            two = procs.start_server(
                procs.free_port(), d / "s1", redis_url=rs.url, log=d / "s1.log"
            )
            servers.append(two)
            both = run_load([one.url, two.url], self.cfg())
            show("2 server processes (total)", both)
            written = count_board_entries(rs.url)
            total = single.games_finished + both.games_finished
            say(
                f"    results written: {written} entries for {total} games finished"
                f"{'' if written == total else '  <-- MISMATCH'}"
            )
            say(
                f"  SCALE 2 processes / 1 process: {both.moves_per_s / single.moves_per_s:.2f}x"
                f" (same 2 cores also run redis and the load generator)"
            )
            self.figures["scale"] = {
                "one": single.moves_per_s,
                "two": both.moves_per_s,
                "errors": single.error_count + both.error_count,
            }
        finally:
            for s in servers:
                s.stop()
            rs.stop()

    def connections(self) -> None:
        want = 2_000 if self.quick else 10_000
        limit = procs.raise_fd_limit(want + 1_000)
        n = min(want, limit - 1_000)
        say(
            f"\n== connections: {n} idle authenticated WebSockets on one process "
            f"(RLIMIT_NOFILE raised to {limit})"
        )
        d = self._dir("conn")
        res = {}
        srv = procs.start_server(procs.free_port(), d / "data", log=d / "server.log")
        try:
            res["ours"] = connections.hold_connections(
                srv.url, srv.pid, n, warmup=connections.warm_up(srv.url)
            )
        finally:
            srv.stop()
        echo = procs.start_echo(procs.free_port())
        try:
            res["bare"] = connections.hold_connections(
                echo.url, echo.pid, n, warmup=connections.warm_up(echo.url)
            )
        finally:
            echo.stop()
        for k, r in res.items():
            say(
                f"  {k:<5} {r.connections} open ({r.failed} failed) in {r.seconds_to_open:.1f} s;"
                f" RSS {r.rss_before / 2**20:.0f} -> {r.rss_after / 2**20:.0f} MiB, "
                f"{r.per_connection / 1024:.1f} KiB per connection; idle CPU "
                f"{r.idle_cpu_ms_per_s:.1f} ms a second"
            )
            if r.error:
                say(f"    first failure: {r.error}")
        ratio = res["ours"].per_connection / res["bare"].per_connection
        say(f"  RATIO memory per connection ours/bare: {ratio:.2f}x  (goal <= 1.2x)")
        self.figures["connections"] = {
            "n": n,
            "ours_kib": res["ours"].per_connection / 1024,
            "bare_kib": res["bare"].per_connection / 1024,
            "ratio": ratio,
            "ours_idle_cpu_ms_per_s": res["ours"].idle_cpu_ms_per_s,
            "bare_idle_cpu_ms_per_s": res["bare"].idle_cpu_ms_per_s,
        }

    def leaderboard(self) -> None:
        size = 1_000_000
        say(f"\n== leaderboards: finish path vs raw ZADD; queries on a {size:,}-entry board")
        d = self._dir("lb")
        rs = procs.RedisServer(d / "redis").start()
        try:
            f = asyncio.run(
                lbbench.run(
                    rs.url,
                    submissions_n=10_000 if self.quick else 30_000,
                    board_size=size,
                    samples=1_000 if self.quick else 3_000,
                )
            )
        finally:
            rs.stop()
        say(
            f"  GameStore.finish {f.finish_per_s:,.0f}/s vs ZADD {f.zadd_per_s:,.0f}/s "
            f"({f.submissions:,} each, {f.concurrency} concurrent): RATIO {f.ratio:.1%} "
            "(goal >= 60 %)"
        )
        say(
            f"  CPU of this process per daily finish {f.finish_cpu_us:.0f} us "
            f"({f.finish_batches:.2f} pipelines each), per move appended "
            f"{f.append_cpu_us:.0f} us, per ZADD {f.zadd_cpu_us:.0f} us"
        )
        say(f"  bulk load of {f.board_size:,} entries (pipelined): {f.load_s:.1f} s")
        for kind, q in f.query_ms.items():
            say(
                f"  {kind:<38} p50 {q['p50']:.3f} ms  p99 {q['p99']:.3f} ms  "
                f"max {q['max']:.2f} ms  (goal p99 < 2 ms)"
            )
        self.figures["leaderboard"] = {
            "finish": f.finish_per_s,
            "zadd": f.zadd_per_s,
            "ratio": f.ratio,
            "finish_cpu_us": f.finish_cpu_us,
            "append_cpu_us": f.append_cpu_us,
            "zadd_cpu_us": f.zadd_cpu_us,
            "queries": f.query_ms,
        }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--quick", action="store_true", help="shorter runs (the cpu section: about 2 minutes)"
    )
    ap.add_argument(
        "--profile", action="store_true", help="load section: also profile the server under load"
    )
    ap.add_argument(
        "--only",
        nargs="+",
        choices=(*SECTIONS, "all"),
        default=["cpu"],
        help="sections to run (default: cpu; 'all' for every one)",
    )
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    g = ap.add_argument_group("cpu section")
    g.add_argument(
        "--date",
        type=dt.date.fromisoformat,
        default=cpubench.DEFAULT_DATE,
        help="the day whose daily deals are played (the server's clock is shifted "
        "to noon UTC that day); default %(default)s",
    )
    g.add_argument(
        "--daily-secret",
        default=cpubench.DEFAULT_SECRET,
        help="the server's daily secret (fixes the deals with --date)",
    )
    supported = sorted(protocol.SUPPORTED_VERSIONS)
    g.add_argument(
        "--protocol",
        type=int,
        choices=supported,
        default=supported[-1],
        help="protocol version the players ask for in hello (default: the highest "
        "the server supports)",
    )
    g.add_argument(
        "--uvloop",
        action="store_true",
        help="run the server and the echo on uvloop (default: both on asyncio)",
    )
    g.add_argument("--players", type=int, default=100, help="simulated players (closed loop)")
    g.add_argument("--generator-processes", type=int, default=2)
    g.add_argument(
        "--external-redis",
        action="store_true",
        help="measure a redis-server the benchmark starts instead of the server's embedded one",
    )
    g.add_argument(
        "--games", type=int, help="mixed load: whole games per player (default 3, --quick 1)"
    )
    g.add_argument(
        "--variant-moves",
        type=int,
        help="each variant alone: about this many moves (default 20000, --quick 4000)",
    )
    g.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="the cpu section's measured windows N times, alternated; the goals of issue #30 "
        "judged on the rounds' medians (default 1)",
    )
    g.add_argument(
        "--variants",
        nargs="+",
        choices=VARIANT_IDS,
        default=list(VARIANT_IDS),
        help="variants played (default: all six)",
    )
    a = ap.parse_args(argv)
    sections = list(SECTIONS) if "all" in a.only else a.only
    started = time.monotonic()
    say(
        f"server benchmarks {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
        f"{' (quick)' if a.quick else ''}"
    )
    built = "compiled (mypyc)" if COMPILED and protocol.COMPILED else "pure Python"
    say(
        f"machine: {machine()}; uvloop {'available' if HAVE_UVLOOP else 'not installed'}; "
        f"engine and codec {built}"
    )
    with tempfile.TemporaryDirectory(prefix="solbench-") as tmp:
        opts = cpubench.CpuOptions(
            tmp=Path(tmp),
            quick=a.quick,
            date=a.date,
            daily_secret=a.daily_secret,
            protocol=a.protocol,
            players=a.players,
            gen_processes=a.generator_processes,
            uvloop=a.uvloop and HAVE_UVLOOP,
            external_redis=a.external_redis,
            games=a.games,
            variant_moves=a.variant_moves,
            variants=tuple(a.variants),
            rounds=max(1, a.rounds),
        )
        bench = Bench(a.quick, a.profile, Path(tmp), opts)
        for name in sections:
            getattr(bench, name)()
    say(f"\ndone in {time.monotonic() - started:.0f} s")
    if a.json:
        a.json.write_text(json.dumps(bench.figures, indent=2, default=str))


if __name__ == "__main__":
    main()
