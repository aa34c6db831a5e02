"""Solver benchmark: how many deals each solver decides, and how fast.

For every variant it solves a run of seeds with a per-deal time budget and prints the share
proven winnable, proven impossible and unknown (budget spent), with the median, 95th
percentile and maximum time per deal. It then certifies the daily deal of a few dates the
way the server does (first winnable seed of the day's HMAC sequence, 10 s per candidate,
at most 60 s) and prints how long each certification took.

    .venv/bin/python benchmarks/solver_bench.py            # the full run (about 15 min)
    .venv/bin/python benchmarks/solver_bench.py --quick    # a smoke run

The baseline column is the same deals' plain engine cost: playing the solver's line back
through the engine (move validation included), so the search cost reads as a ratio of it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import VARIANT_IDS, new_game, variant
from engine.solvers import WINNABLE, solve

#: Per-deal budget in seconds: the issue's aims (1 s, 1 s, 10 s) and the server's per-candidate
#: budget for the others.
BUDGETS = {"fourteen-out": 1.0, "triple-triangle": 1.0, "triple-fourteens": 10.0,
           "triple-deck": 10.0, "triple-deck-kings": 10.0, "triple-easthaven": 10.0}
SEEDS = {"fourteen-out": 300, "triple-triangle": 300, "triple-fourteens": 200,
         "triple-deck": 200, "triple-deck-kings": 200, "triple-easthaven": 100}
CANDIDATE_BUDGET = 10.0
CERTIFY_LIMIT = 60.0


def solve_one(args: tuple[str, int, float]) -> tuple[str, float, int, int, float]:
    """(verdict, seconds, nodes, line length, seconds to replay the line) for one deal."""
    variant_id, seed, budget = args
    game = new_game(variant_id, seed)
    start = time.perf_counter()
    result = solve(game, max_seconds=budget)
    elapsed = time.perf_counter() - start
    start = time.perf_counter()
    for move in result.solution:
        game.play(move)
    replay = time.perf_counter() - start
    return result.verdict, elapsed, result.stats.nodes, len(result.solution), replay


def certify(args: tuple[str, str]) -> tuple[float, int, int | None, bool]:
    """Certify one day's deal as the server does: (seconds, candidate index, par, certified)."""
    from server.deals import CERTIFY_BUDGETS, MAX_CANDIDATES, _certify, candidate_seed

    variant_id, date = args
    secret = b"solver-bench"
    day = dt.date.fromisoformat(date)
    start = time.perf_counter()
    if variant(variant_id).scored:
        _, best = _certify(variant_id, candidate_seed(secret, variant_id, day, 0),
                           CANDIDATE_BUDGET)
        return time.perf_counter() - start, 0, best, True
    for index in range(MAX_CANDIDATES):
        if time.perf_counter() - start > CANDIDATE_BUDGET * CERTIFY_BUDGETS:
            break
        seed = candidate_seed(secret, variant_id, day, index)
        verdict, par = _certify(variant_id, seed, CANDIDATE_BUDGET)
        if verdict == WINNABLE:
            return time.perf_counter() - start, index, par, True
    return time.perf_counter() - start, -1, None, False


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few seeds per variant")
    ap.add_argument("--start", type=int, default=1_000_000, help="first seed")
    ap.add_argument("--days", type=int, default=5, help="dates to certify per variant")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--variants", nargs="*", default=list(VARIANT_IDS))
    args = ap.parse_args()
    scale = 0.1 if args.quick else 1.0
    days = 2 if args.quick else args.days

    print(f"solver benchmark: {args.workers} worker processes, seeds from {args.start}")
    head = (f"{'variant':<18}{'deals':>6}{'budget':>8}{'winnable':>10}{'impossible':>11}"
            f"{'unknown':>9}{'median':>9}{'p95':>9}{'max':>9}{'<budget':>9}{'vs replay':>11}")
    print(head)
    with ProcessPoolExecutor(args.workers) as pool:
        for vid in args.variants:
            n = max(5, int(SEEDS[vid] * scale))
            budget = BUDGETS[vid]
            tasks = [(vid, args.start + i, budget) for i in range(n)]
            rows = list(pool.map(solve_one, tasks, chunksize=4))
            times = [r[1] for r in rows]
            counts = {v: sum(1 for r in rows if r[0] == v)
                      for v in ("winnable", "impossible", "unknown")}
            decided = sum(1 for r in rows if r[0] != "unknown")
            solved = [r for r in rows if r[0] == WINNABLE and r[4] > 0]
            ratio = (statistics.median(r[1] / r[4] for r in solved) if solved else float("nan"))
            print(f"{vid:<18}{n:>6}{budget:>7.0f}s"
                  f"{100 * counts['winnable'] / n:>9.1f}%{100 * counts['impossible'] / n:>10.1f}%"
                  f"{100 * counts['unknown'] / n:>8.1f}%"
                  f"{statistics.median(times):>8.3f}s{pct(times, 0.95):>8.3f}s"
                  f"{max(times):>8.3f}s{100 * decided / n:>8.1f}%{ratio:>10.0f}x",
                  flush=True)
        print()
        print(f"daily certification ({days} dates per variant, {CANDIDATE_BUDGET:g} s a "
              f"candidate, at most {CERTIFY_LIMIT:g} s)")
        print(f"{'variant':<18}{'certified':>10}{'median':>9}{'max':>9}{'candidates':>12}"
              f"{'par':>14}")
        dates = [(dt.date(2026, 12, 1) + dt.timedelta(days=d)).isoformat() for d in range(days)]
        for vid in args.variants:
            rows2 = list(pool.map(certify, [(vid, d) for d in dates]))
            secs = [r[0] for r in rows2]
            ok = sum(1 for r in rows2 if r[3])
            pars = [r[2] for r in rows2 if r[2] is not None]
            tried = [r[1] + 1 for r in rows2 if r[3]]
            print(f"{vid:<18}{ok:>6}/{len(rows2):<3}{statistics.median(secs):>8.2f}s"
                  f"{max(secs):>8.2f}s{max(tried, default=0):>12}"
                  f"{(f'{min(pars)}..{max(pars)}' if pars else '-'):>14}", flush=True)


if __name__ == "__main__":
    main()
