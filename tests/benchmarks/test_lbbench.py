"""The leaderboard benchmark's submissions alone (issue #30 item 3), on a real redis-server."""

from __future__ import annotations

import re
import subprocess
import sys

from benchmarks.load import procs


def test_submissions_alone_print_the_cpu_figures() -> None:
    """`python -m benchmarks.load.lbbench` runs the finish path against raw ZADD and prints
    the client's CPU per finish (split user/system), the ratio by CPU, pipelines and
    redis-server's CPU per finish."""
    cmd = [sys.executable, "-m", "benchmarks.load.lbbench", "--submissions", "200", "--runs", "2"]
    out = subprocess.run(
        cmd, cwd=procs.ROOT, capture_output=True, text=True, timeout=120, check=True
    ).stdout
    lines = out.strip().splitlines()
    assert len(lines) == 2, out
    for line in lines:
        m = re.search(
            r"client CPU per finish (\d+) us \(user (\d+), sys (\d+)\), per ZADD (\d+) us: "
            r"([\d.]+)% by CPU .* ([\d.]+) pipelines and redis-server (\d+) us per finish",
            line,
        )
        assert m is not None, line
        finish, zadd, pipelines = int(m[1]), int(m[4]), float(m[6])
        assert finish > 0 and zadd > 0 and int(m[7]) > 0
        assert 0 < pipelines <= 2  # two round trips a finish at most, shared in batches
