"""Triple Easthaven's game-over check (`engine.deadlock.ProgressSearch`) on positions from play.

Seeded deals are played at random by two policies until the stock is empty, then for up to
`--after` more moves; every position with an empty stock is checked afresh (key built from the
game, search run to a verdict or to `--cap` expansions) and timed. Prints the time per check
(median, mean, p90, p99, max), the expansions per check and the undecided count. Fixed seeds,
so two runs check the same positions as long as their verdicts agree (a game stops when over;
an undecided check counts as "not over"). Run from the repo root:
``python benchmarks/over_bench.py [--quick] [--seeds N] [--after N] [--cap N] [--dump FILE]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import new_game
from engine.deadlock import ProgressSearch
from engine.easthaven import TripleEasthaven

#: (name, probability of a foundation play when one exists, probability of dealing)
POLICIES = (("greedy", 0.9, 0.15), ("uniform", 0.5, 0.05))


def play(seed: int, policy: tuple[str, float, float], after: int, cap: int,
         rows: list[tuple[float, int, bool | None]], dump: list[bytes] | None) -> None:
    """Play one deal, timing the over-check of every position with an empty stock."""
    name, p_up, p_deal = policy
    rng = random.Random(f"{name}:{seed}")
    game = new_game("triple-easthaven", seed)
    assert isinstance(game, TripleEasthaven)
    played = 0
    clock = time.perf_counter
    while True:
        if not game._stock:
            t0 = clock()
            search = ProgressSearch(game._over_key())
            progress = search.step(cap)
            dt = clock() - t0
            over = None if progress is None else not progress
            rows.append((dt, search.expanded, over))
            if dump is not None and (dt > 0.005 or over is None):
                dump.append(game._over_key())
            game._over = over is True or game.won
            if game._over or played >= after:
                return
            played += 1
        moves = list(game.legal_moves())
        if not moves:
            return
        ups = [m for m in moves if m.dst == "f"]
        if ups and rng.random() < p_up:
            game.apply(rng.choice(ups))
        elif game._stock and rng.random() < p_deal:
            game.apply("d")
        else:
            game.apply(rng.choice([m for m in moves if m.src != "d"] or moves))


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 seeds instead of 32")
    parser.add_argument("--seeds", type=int, default=None, help="number of seeds (default 32)")
    parser.add_argument("--after", type=int, default=150, help="moves after the stock ran out")
    parser.add_argument("--cap", type=int, default=200_000, help="expansions per check at most")
    parser.add_argument("--dump", type=Path, default=None, help="write slow keys (hex) here")
    args = parser.parse_args()
    seeds = args.seeds if args.seeds is not None else (8 if args.quick else 32)
    rows: list[tuple[float, int, bool | None]] = []
    dump: list[bytes] | None = [] if args.dump else None
    start = time.perf_counter()
    for seed in range(seeds):
        for policy in POLICIES:
            play(seed, policy, args.after, args.cap, rows, dump)
    total = time.perf_counter() - start
    times = [r[0] * 1e3 for r in rows]
    exp = [float(r[1]) for r in rows]
    over = sum(1 for r in rows if r[2] is True)
    undecided = sum(1 for r in rows if r[2] is None)
    print(f"{len(rows)} checks ({seeds} seeds x {len(POLICIES)} policies, up to {args.after} "
          f"moves after the stock), {over} over, {undecided} undecided at {args.cap:,} "
          f"expansions; {total:.1f} s in all")
    print(f"{'':12} {'median':>9} {'mean':>9} {'p90':>9} {'p99':>9} {'max':>9}")
    print(f"{'time (ms)':12} {statistics.median(times):>9.3f} {statistics.fmean(times):>9.3f} "
          f"{pct(times, 0.9):>9.3f} {pct(times, 0.99):>9.3f} {max(times):>9.3f}")
    print(f"{'expansions':12} {statistics.median(exp):>9.0f} {statistics.fmean(exp):>9.1f} "
          f"{pct(exp, 0.9):>9.0f} {pct(exp, 0.99):>9.0f} {max(exp):>9.0f}")
    under = sum(1 for t in times if t < 1.0) / len(times)
    print(f"under 1 ms: {under:.1%}; checks over 20k expansions: "
          f"{sum(1 for e in exp if e > 20_000)}")
    if args.dump and dump is not None:
        args.dump.write_text("".join(k.hex() + "\n" for k in dump))


if __name__ == "__main__":
    main()
