"""Triple Easthaven's game-over check (`engine.easthaven.over.ProgressSearch`) on positions
from play.

Seeded deals are played at random by two policies until the stock is empty, then for up to
`--after` more moves; every position with an empty stock is checked afresh (key built from the
game, search run to a verdict or to `--cap` expansions) and timed. Prints the time per check
(median, mean, p90, p99, max), the expansions per check and the undecided count. Fixed seeds,
so two runs check the same positions as long as their verdicts agree (a game stops when over;
an undecided check counts as "not over"). Run from the repo root:
``python benchmarks/over_bench.py [--quick] [--seeds N] [--after N] [--cap N] [--save F]``
(`--keys F` times the positions of a `--save` file instead of playing).
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
from engine.easthaven import TripleEasthaven
from engine.easthaven.over import ProgressSearch

#: (name, probability of a foundation play when one exists, probability of dealing)
POLICIES = (("greedy", 0.9, 0.15), ("uniform", 0.5, 0.05))


Row = tuple[float, int, bool | None]


def check(key: bytes, cap: int) -> Row:
    """Time one fresh check: (seconds, expansions, over or None when undecided at `cap`)."""
    t0 = time.perf_counter()
    search = ProgressSearch(key)
    progress = search.step(cap)
    dt = time.perf_counter() - t0
    return dt, search.expanded, None if progress is None else not progress


def play(
    seed: int,
    policy: tuple[str, float, float],
    after: int,
    cap: int,
    rows: list[Row],
    keys: list[bytes],
) -> None:
    """Play one deal, timing the over-check of every position with an empty stock."""
    name, p_up, p_deal = policy
    rng = random.Random(f"{name}:{seed}")
    game = new_game("triple-easthaven", seed)
    assert isinstance(game, TripleEasthaven)
    played = 0
    while True:
        if not game._stock:
            key = game._over_key()
            row = check(key, cap)
            rows.append(row)
            keys.append(key)
            over = row[2]
            game.settle_over(over is True or game.won)
            if game.over or played >= after:
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


def report(name: str, rows: list[Row], cap: int) -> None:
    times = [r[0] * 1e3 for r in rows]
    exp = [float(r[1]) for r in rows]
    over = sum(1 for r in rows if r[2] is True)
    undecided = sum(1 for r in rows if r[2] is None)
    print(
        f"{name}: {len(rows)} checks, {over} over, {undecided} undecided at {cap:,} "
        f"expansions, {sum(1 for e in exp if e > 20_000)} over 20k expansions, "
        f"{sum(1 for t in times if t < 1.0) / len(times):.1%} under 1 ms"
    )
    print(f"  {'':10} {'median':>9} {'mean':>9} {'p90':>9} {'p99':>9} {'max':>9}")
    print(
        f"  {'time (ms)':10} {statistics.median(times):>9.3f} {statistics.fmean(times):>9.3f} "
        f"{pct(times, 0.9):>9.3f} {pct(times, 0.99):>9.3f} {max(times):>9.3f}"
    )
    print(
        f"  {'expansions':10} {statistics.median(exp):>9.0f} {statistics.fmean(exp):>9.1f} "
        f"{pct(exp, 0.9):>9.0f} {pct(exp, 0.99):>9.0f} {max(exp):>9.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 seeds instead of 32")
    parser.add_argument("--seeds", type=int, default=None, help="number of seeds (default 32)")
    parser.add_argument("--after", type=int, default=150, help="moves after the stock ran out")
    parser.add_argument("--cap", type=int, default=20_000, help="expansions per check at most")
    parser.add_argument("--save", type=Path, default=None, help="write the checked keys (hex)")
    parser.add_argument(
        "--keys", type=Path, default=None, help="time the keys of a --save file instead of playing"
    )
    args = parser.parse_args()
    seeds = args.seeds if args.seeds is not None else (8 if args.quick else 32)
    start = time.perf_counter()
    if args.keys:
        keys = [bytes.fromhex(line) for line in args.keys.read_text().split()]
        report(f"{args.keys}", [check(k, args.cap) for k in keys], args.cap)
    else:
        keys = []
        every: list[Row] = []
        for policy in POLICIES:
            rows: list[Row] = []
            for seed in range(seeds):
                play(seed, policy, args.after, args.cap, rows, keys)
            report(
                f"{policy[0]} ({seeds} seeds, up to {args.after} moves after the stock)",
                rows,
                args.cap,
            )
            every += rows
        report("all", every, args.cap)
    print(f"{time.perf_counter() - start:.1f} s in all")
    if args.save:
        args.save.write_text("".join(k.hex() + "\n" for k in keys))


if __name__ == "__main__":
    main()
