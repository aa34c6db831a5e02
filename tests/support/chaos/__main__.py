"""``python -m tests.support.chaos --seed N --duration S``: one chaos run and its table."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from tests.support.chaos.run import ChaosConfig, run, summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.support.chaos", description=__doc__)
    p.add_argument("--seed", type=int, action="append", help="seed (repeat for several runs)")
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--players", type=int, default=8)
    p.add_argument("--racers", type=int, default=6)
    p.add_argument("--rooms", type=int, default=1, help="pairs racing in private rooms")
    p.add_argument("--spectators", type=int, default=3)
    p.add_argument("--keep", type=Path, help="directory for logs and histories (kept)")
    p.add_argument("--cluster", action="store_true", help="on a local 3-master Redis Cluster")
    a = p.parse_args(argv)
    failed = 0
    for seed in a.seed or [1]:
        cfg = ChaosConfig(
            seed,
            a.duration,
            a.players,
            a.racers,
            room_pairs=a.rooms,
            spectators=a.spectators,
            settle=8.0,
            race_wait=40.0,
            cluster=a.cluster,
        )
        with tempfile.TemporaryDirectory(prefix="chaos-") as tmp:
            workdir = a.keep / f"seed-{seed}" if a.keep else Path(tmp)
            if a.keep:
                shutil.rmtree(workdir, ignore_errors=True)  # a fresh Redis for every run
            workdir.mkdir(parents=True, exist_ok=True)
            result = asyncio.run(run(cfg, workdir, say=lambda line: print(line, flush=True)))
            print(summary(result), flush=True)
            if result.report.violations:
                failed += 1
                result.history.dump(workdir / "history.json")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
