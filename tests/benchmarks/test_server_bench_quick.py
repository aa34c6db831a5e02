"""The CPU benchmark's server-side probes and options, on a real server with real Redis.

* ``--clock-offset-ms`` pins the server's date, so the daily deal is the one the benchmark
  precomputes from ``--daily-secret`` and ``--date`` (benchmarks/load/scripts.py);
* the event-loop lag monitor and the GC timer (server/runtime/looplag.py) export their figures on
  /metrics, the lag max being reset by each scrape;
* a tiny run of ``benchmarks/server_bench.py`` writes the JSON keys the issue asks for.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import gc
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import msgpack  # type: ignore[import-untyped]
import pytest

from benchmarks import server_bench
from benchmarks.load import cpubench, cpumeter, procs, scripts
from server.config import Config
from server.runtime.looplag import GcTimer, LoopLagMonitor
from server.runtime.metrics import GcStats, Metrics

DATE = dt.date(2026, 1, 15)
SECRET = "bench-test"


def test_clock_offset_option_and_env(tmp_path: Path) -> None:
    c = Config.from_args(
        ["--clock-offset-ms", "-5000", "--daily-secret", "x", "--data-dir", str(tmp_path)], env={}
    )
    assert c.clock_offset_ms == -5000
    c = Config.from_args(
        ["--daily-secret", "x", "--data-dir", str(tmp_path)],
        env={"SOLITAIRE_CLOCK_OFFSET_MS": "86400000"},
    )
    assert c.clock_offset_ms == 86_400_000
    assert (
        Config.from_args(
            ["--daily-secret", "x", "--data-dir", str(tmp_path)], env={}
        ).clock_offset_ms
        == 0
    )


def test_loop_lag_monitor_sees_a_blocked_loop() -> None:
    seen: list[float] = []

    async def run() -> None:
        monitor = LoopLagMonitor(seen.append, 0.005)
        monitor.start()
        await asyncio.sleep(0.03)
        time.sleep(0.06)  # hog the loop
        await asyncio.sleep(0.03)
        monitor.stop()

    asyncio.run(run())
    assert len(seen) >= 3
    assert max(seen) >= 0.05


def test_gc_timer_and_scrape_reset_of_the_lag_max() -> None:
    stats = GcStats()
    timer = GcTimer(stats)
    timer.install()
    try:
        gc.collect()
    finally:
        timer.remove()
    assert stats.collections >= 1 and stats.seconds > 0
    m = Metrics()
    m.observe_loop_lag(0.004)
    m.observe_loop_lag(0.002)
    first = m.render().decode()
    assert "solitaire_loop_lag_max_seconds 0.004" in first
    assert "solitaire_loop_lag_seconds_count 2.0" in first
    assert "solitaire_loop_lag_max_seconds 0.0" in m.render().decode()


async def _session(port: int, secret: str, variant: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as s, s.ws_connect(f"ws://127.0.0.1:{port}/ws") as ws:
        rid = 0

        async def ask(**msg: object) -> dict[str, Any]:
            nonlocal rid
            rid += 1
            await ws.send_bytes(msgpack.packb({**msg, "id": rid}))
            reply: dict[str, Any] = msgpack.unpackb((await ws.receive(10)).data)
            assert reply.get("id") == rid, reply
            return reply

        welcome = await ask(type="hello", versions=[1], name="clocktest")
        game = await ask(type="daily.start", variant=variant)
        script = scripts.build(secret.encode(), DATE, [variant], per_variant=1, max_moves=3)[
            variant
        ][0]
        moved = [
            await ask(type="move", game_id=game["game_id"], move=m, expected_seq=i)
            for i, m in enumerate(script.moves)
        ]
        return {"welcome": welcome, "game": game, "moved": moved}


def test_offset_clock_serves_the_precomputed_deal_and_metrics_expose_the_probes(
    tmp_path: Path,
) -> None:
    variant = "fourteen-out"
    before_ms = time.time_ns() // 1_000_000
    offset = scripts.clock_offset_ms(DATE, before_ms)
    flags = (
        "--no-certify",
        "--daily-secret",
        SECRET,
        "--log-level",
        "WARNING",
        "--clock-offset-ms",
        str(offset),
        "--leaderboard-retention-days",
        "36500",
        "--loop-lag-interval-ms",
        "5",
    )
    srv = procs.start_server(
        procs.free_port(), tmp_path / "data", flags=flags, log=tmp_path / "server.log"
    )
    try:
        redis_pid = cpumeter.child_named(srv.pid, "redis-server")
        assert redis_pid is not None and cpumeter.cpu_seconds(redis_pid) >= 0
        first = cpumeter.scrape(srv.port)
        out = asyncio.run(_session(srv.port, SECRET, variant))
        time.sleep(0.1)
        second = cpumeter.scrape(srv.port)
    finally:
        srv.stop()
    server_time = out["welcome"]["server_time"]
    noon = scripts.clock_offset_ms(DATE, 0)  # noon of DATE in epoch ms
    assert abs(server_time - noon) < 120_000
    assert out["game"]["date"] == DATE.isoformat()
    want = msgpack.unpackb(msgpack.packb(scripts.initial_view(SECRET.encode(), variant, DATE)))
    assert out["game"]["view"] == want
    assert [m["type"] for m in out["moved"]] == ["moved"] * len(out["moved"])
    assert [m["seq"] for m in out["moved"]] == list(range(1, len(out["moved"]) + 1))
    count = ("solitaire_loop_lag_seconds_count", ())
    assert second[count] > first[count] > 0
    assert ("solitaire_loop_lag_max_seconds", ()) in second
    assert ("solitaire_gc_seconds_total", ()) in second
    assert cpumeter.total(second, "solitaire_moves_total") == len(out["moved"])
    lag = cpumeter.histogram_delta(first, second, "solitaire_loop_lag_seconds")
    assert cpumeter.histogram_quantile(lag, 0.99) is not None


@pytest.mark.slow
def test_tiny_bench_run_writes_the_json_keys(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    server_bench.main(
        [
            "--json",
            str(out),
            "--players",
            "4",
            "--generator-processes",
            "1",
            "--games",
            "1",
            "--variant-moves",
            "50",
            "--variants",
            "fourteen-out",
            "--rounds",
            "2",
        ]
    )
    figures = json.loads(out.read_text())
    assert len(figures["rounds"]) == 2
    assert all(set(r["shares"]) == {"fourteen-out"} for r in figures["rounds"])
    assert figures["ratio"] in {r["ratio"] for r in figures["rounds"]}
    assert [g["goal"][:10] for g in figures["goals"]] == [
        "echo CPU p",
        "no variant",
        "redis-serv",
        "loop lag m",
    ]
    for key in (
        "server_cpu_us_per_move",
        "redis_cpu_us_per_move",
        "echo_cpu_us_per_request",
        "ratio",
        "loop_lag_p99_ms",
        "loop_lag_max_ms",
        "engine_share",
        "per_variant",
        "generator_utilisation",
    ):
        assert key in figures, key
    assert figures["server_cpu_us_per_move"] > 0
    assert set(figures["per_variant"]) == {"fourteen-out"}
    assert not any(figures["errors"].values()), figures["errors"]
    # Every game finished is on its board: none held by the fair-play screen (the bench's
    # server runs without it; it used to hold every result, and the boards stayed empty).
    assert figures["games_finished"] > 0 and figures["results_held"] == 0
    assert figures["results_written"] == figures["games_finished"]


def test_the_goals_are_judged_on_the_rounds_medians_and_the_lag_in_every_round() -> None:
    def round_(ratio: float, redis: float, share: float, lag: float) -> cpubench.KeyFigures:
        return cpubench.KeyFigures(
            ratio=ratio,
            server_us=100.0,
            redis_us=redis,
            shares={"fourteen-out": share, "triple-deck": 0.9},
            lag_max_ms=lag,
            machine_lag_max_ms=1.0,
        )

    goals = cpubench.judge(
        [round_(0.28, 16.0, 1.6, 2.0), round_(0.31, 14.0, 1.4, 3.0), round_(0.33, 15.0, 1.45, 6.0)]
    )
    assert [g["reached"] for g in goals] == [True, True, True, False]
    assert "median of 3 rounds 0.310 (0.280, 0.310, 0.330)" in goals[0]["value"]
    assert goals[1]["value"].startswith("worst fourteen-out 1.45x")
    assert goals[3]["value"].startswith("worst 6.0 ms")
    goals = cpubench.judge([round_(0.29, 15.5, 1.51, 5.0)])
    assert [g["reached"] for g in goals] == [False, False, False, True]


def test_churn_bench_prints_its_figures() -> None:
    cmd = [sys.executable, "benchmarks/churn_bench.py", "--connections", "100"]
    out = subprocess.run(
        cmd, cwd=procs.ROOT, capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert "100 connections of each kind" in out
    assert out.count("objects per connection") == 2 and "RATIO vanished / close frame" in out
