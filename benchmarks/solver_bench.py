"""Solver benchmark: how many deals each solver decides, and how fast, next to the old solvers.

For every variant it solves a run of consecutive seeds with a per-deal budget and prints the
share proven winnable, proven impossible and unknown (budget spent), with the median, 95th
percentile and maximum time per deal; for the variants whose solver issue #17 replaced
(Fourteen Out, Triple Fourteens, Triple Easthaven) the old solver (`benchmarks/legacy`) runs
on the first seeds of the same run, one row each. Then, for a sample of Triple Easthaven
deals, how long the lines are against the shortest known (the shortest of the old line, the
new one and the new one shortened further with a large budget). Last, the daily
certification of a run of dates per variant, done as the server does it (`server.games.deals`),
with the worst day's time and any day that fell back to an uncertified seed.

    .venv/bin/python benchmarks/solver_bench.py            # the full run (about 40 min)
    .venv/bin/python benchmarks/solver_bench.py --quick    # a smoke run

Budgets count the solving process's CPU time (`--wall` for wall time): the machine is shared,
and "10 s on one core" is CPU time. Certification uses the server's own (wall-time) budgets.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.legacy import LEGACY_VARIANTS, legacy_solve
from engine import VARIANT_IDS, new_game, variant
from engine.easthaven import TripleEasthaven
from engine.solvers import WINNABLE, SolveResult, solve
from engine.solvers.base import Budget
from engine.state import full_state

#: Per-deal budget in seconds: the issue's aims (1 s, 1 s, 10 s, 10 s) and the server's
#: per-candidate budget for the Triple Deck games.
BUDGETS = {
    "fourteen-out": 1.0,
    "triple-triangle": 1.0,
    "triple-fourteens": 10.0,
    "triple-deck": 10.0,
    "triple-deck-kings": 10.0,
    "triple-easthaven": 10.0,
}
#: Seeds per variant for the new solvers, and of those, the first ones the old solver gets.
SEEDS = {
    "fourteen-out": 300,
    "triple-triangle": 300,
    "triple-fourteens": 10_000,
    "triple-deck": 200,
    "triple-deck-kings": 200,
    "triple-easthaven": 200,
}
OLD_SEEDS = {"fourteen-out": 300, "triple-fourteens": 1_000, "triple-easthaven": 100}
#: Triple Easthaven deals whose line lengths are compared with the shortest known.
PAR_SAMPLE = 12
#: Nodes for shortening a line further to find the shortest known (5x the solver's cap).
BEST_KNOWN_NODES = 1_000_000


@dataclass(frozen=True, slots=True)
class Solved:
    """One deal's outcome: verdict, seconds, nodes and the line's length."""

    verdict: str
    seconds: float
    nodes: int
    length: int


def solve_one(args: tuple[str, int, float, bool, bool]) -> Solved:
    variant_id, seed, budget, old, cpu = args
    game = new_game(variant_id, seed)
    clock = time.process_time if cpu else time.perf_counter
    start = clock()
    result: SolveResult
    if old:
        result = legacy_solve(game, max_seconds=budget, cpu_time=cpu)
    else:
        result = solve(game, max_seconds=budget, cpu_time=cpu)
    return Solved(result.verdict, clock() - start, result.stats.nodes, len(result.solution))


def par_one(args: tuple[int, float, bool]) -> tuple[int, int, int]:
    """(old line, new line, shortest known) for one Triple Easthaven deal; 0: none found."""
    from engine.solvers.easthaven.lines import parse_line, shorten
    from engine.solvers.easthaven.search import EasthavenSearch

    seed, budget, cpu = args
    game = new_game("triple-easthaven", seed)
    assert isinstance(game, TripleEasthaven)
    old = legacy_solve(game, max_seconds=budget, cpu_time=cpu)
    new = solve(game, max_seconds=budget, cpu_time=cpu)
    lines = [r.solution for r in (old, new) if r.verdict == WINNABLE]
    best = min((len(x) for x in lines), default=0)
    search = EasthavenSearch(full_state(game), game.total_cards, Budget(None, None))
    for line in lines:
        shorter = shorten(search, parse_line(line), Budget(BEST_KNOWN_NODES, None))
        best = min(best, len(shorter))
    return (
        len(old.solution) if old.verdict == WINNABLE else 0,
        len(new.solution) if new.verdict == WINNABLE else 0,
        best,
    )


def certify(args: tuple[str, str]) -> tuple[float, int, int | None, bool]:
    """Certify one day's deal as the server does: (seconds, candidate index, par, certified)."""
    from server.games.deals import CERTIFY_BUDGETS, MAX_CANDIDATES, _certify, candidate_seed

    variant_id, date = args
    secret = b"solver-bench"
    day = dt.date.fromisoformat(date)
    budget = BUDGETS["triple-easthaven"]
    start = time.perf_counter()
    if variant(variant_id).scored:
        _, best = _certify(variant_id, candidate_seed(secret, variant_id, day, 0), budget)
        return time.perf_counter() - start, 0, best, True
    for index in range(MAX_CANDIDATES):
        if time.perf_counter() - start > budget * CERTIFY_BUDGETS:
            break
        seed = candidate_seed(secret, variant_id, day, index)
        verdict, par = _certify(variant_id, seed, budget)
        if verdict == WINNABLE:
            return time.perf_counter() - start, index, par, True
    return time.perf_counter() - start, -1, None, False


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def row(label: str, rows: list[Solved], budget: float) -> str:
    n = len(rows)
    times = [r.seconds for r in rows]
    share = {
        v: 100 * sum(1 for r in rows if r.verdict == v) / n
        for v in ("winnable", "impossible", "unknown")
    }
    lines = [r.length for r in rows if r.verdict == WINNABLE]
    span = f"{min(lines)}..{max(lines)}" if lines else "-"
    return (
        f"{label:<22}{n:>6}{budget:>7.0f}s{share['winnable']:>9.2f}%"
        f"{share['impossible']:>10.2f}%{share['unknown']:>8.2f}%"
        f"{statistics.median(times):>8.3f}s{pct(times, 0.95):>8.3f}s{max(times):>8.2f}s"
        f"{100 - share['unknown']:>9.2f}%{span:>10}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few seeds and days per variant")
    ap.add_argument("--start", type=int, default=1_000_000, help="first seed")
    ap.add_argument("--days", type=int, default=365, help="dates to certify per variant")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--wall", action="store_true", help="budgets in wall time, not CPU time")
    ap.add_argument("--variants", nargs="*", default=list(VARIANT_IDS))
    ap.add_argument(
        "--skip",
        nargs="*",
        default=[],
        choices=["deals", "par", "certify"],
        help="sections to leave out",
    )
    args = ap.parse_args()
    scale = 0.05 if args.quick else 1.0
    days = 3 if args.quick else args.days
    cpu = not args.wall

    print(
        f"solver benchmark: {args.workers} worker processes, seeds from {args.start}, "
        f"budgets in {'CPU' if cpu else 'wall'} time"
    )
    with ProcessPoolExecutor(args.workers) as pool:
        if "deals" not in args.skip:
            print(
                f"{'variant':<22}{'deals':>6}{'budget':>8}{'winnable':>10}{'impossible':>11}"
                f"{'unknown':>9}{'median':>9}{'p95':>9}{'max':>9}{'decided':>10}"
                f"{'line':>10}"
            )
            for vid in args.variants:
                budget = BUDGETS[vid]
                n = max(5, int(SEEDS[vid] * scale))
                tasks = [(vid, args.start + i, budget, False, cpu) for i in range(n)]
                new = list(pool.map(solve_one, tasks, chunksize=8))
                print(row(vid, new, budget), flush=True)
                if vid in LEGACY_VARIANTS:
                    m = max(5, int(OLD_SEEDS[vid] * scale))
                    old_tasks = [(vid, args.start + i, budget, True, cpu) for i in range(m)]
                    old = list(pool.map(solve_one, old_tasks, chunksize=4))
                    print(row("  old solver", old, budget), flush=True)
                    print(row("  new, same seeds", new[:m], budget), flush=True)
        if "par" not in args.skip and "triple-easthaven" in args.variants:
            k = max(3, int(PAR_SAMPLE * scale))
            print()
            print(f"triple-easthaven line lengths, {k} deals, against the shortest known")
            pars = list(
                pool.map(
                    par_one, [(args.start + i, BUDGETS["triple-easthaven"], cpu) for i in range(k)]
                )
            )
            for label, col in (("old solver", 0), ("new solver", 1)):
                gaps = [p[col] / p[2] - 1 for p in pars if p[col] and p[2]]
                found = [p[col] for p in pars if p[col]]
                if gaps:
                    print(
                        f"  {label:<12} {len(found)}/{k} lines, median {statistics.median(found)}"
                        f" moves, over the shortest known: median "
                        f"{100 * statistics.median(gaps):.1f} %, max {100 * max(gaps):.1f} %"
                    )
        if "certify" not in args.skip:
            print()
            print(
                f"daily certification, {days} dates per variant from 2027-01-01 "
                "(server.games.deals: candidates of 10 s, at most 60 s in all)"
            )
            print(
                f"{'variant':<18}{'certified':>10}{'median':>9}{'worst day':>11}"
                f"{'candidates':>12}{'par':>14}"
            )
            dates = [(dt.date(2027, 1, 1) + dt.timedelta(days=d)).isoformat() for d in range(days)]
            for vid in args.variants:
                cert = list(pool.map(certify, [(vid, d) for d in dates]))
                secs = [r[0] for r in cert]
                ok = sum(1 for r in cert if r[3])
                pars2 = [r[2] for r in cert if r[2] is not None]
                tried = [r[1] + 1 for r in cert if r[3]]
                worst = dates[secs.index(max(secs))]
                print(
                    f"{vid:<18}{ok:>6}/{len(cert):<3}{statistics.median(secs):>8.2f}s"
                    f"{max(secs):>10.2f}s{max(tried, default=0):>12}"
                    f"{(f'{min(pars2)}..{max(pars2)}' if pars2 else '-'):>14}"
                    f"  (worst: {worst})",
                    flush=True,
                )


if __name__ == "__main__":
    main()
