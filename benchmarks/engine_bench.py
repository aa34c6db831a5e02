"""Engine throughput per variant, as ratios against a baseline measured in the same run.

Plays seeded random games of every variant and times, per step: the over-check (`over` with
its cache cleared), legal-move generation (`list(legal_moves())`) and apply (validation plus
playing the move). The baseline is a trivial Python loop of dict updates; a ratio of 0.01
means an operation costs as much as 100 dict updates. Run from the repo root:
``python benchmarks/engine_bench.py [--seconds S]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import VARIANT_IDS, OverState, new_game

MAX_MOVES = 300  # a game is cut off after this many moves


def baseline(seconds: float) -> float:
    """Dict updates per second of a plain Python loop."""
    d: dict[int, int] = {}
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for i in range(10_000):
            d[i & 255] = i
        n += 10_000
    return n / (time.perf_counter() - start)


def bench_variant(variant: str, seconds: float) -> dict[str, float]:
    """Operations per second for one variant, from random games played for `seconds`."""
    rng = random.Random(variant)
    t_apply = t_gen = t_over = 0.0
    n_apply = n_gen = n_over = games = 0
    clock = time.perf_counter
    deadline = clock() + seconds
    seed = 0
    while clock() < deadline:
        game = new_game(variant, seed)
        seed += 1
        games += 1
        for _ in range(MAX_MOVES):
            game._verdict = OverState.UNJUDGED  # time a fresh over-check
            t0 = clock()
            over = game.over
            t1 = clock()
            t_over += t1 - t0
            n_over += 1
            if over:
                break
            moves = list(game.legal_moves())
            t2 = clock()
            t_gen += t2 - t1
            n_gen += 1
            move = rng.choice(moves)
            t3 = clock()
            game.apply(move)
            t_apply += clock() - t3
            n_apply += 1
    return {
        "apply": n_apply / t_apply,
        "generate": n_gen / t_gen,
        "over": n_over / t_over,
        "games": games,
        "moves": n_apply,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="time per variant")
    args = parser.parse_args()
    base = baseline(1.0)
    print(f"baseline: {base:,.0f} dict updates/s")
    print(
        f"{'variant':<18} {'games':>5} {'moves':>7} {'apply/s':>10} {'ratio':>7} "
        f"{'generate/s':>11} {'ratio':>7} {'over/s':>9} {'ratio':>7}"
    )
    for variant in VARIANT_IDS:
        r = bench_variant(variant, args.seconds)
        print(
            f"{variant:<18} {r['games']:>5.0f} {r['moves']:>7.0f} "
            f"{r['apply']:>10,.0f} {r['apply'] / base:>7.4f} "
            f"{r['generate']:>11,.0f} {r['generate'] / base:>7.4f} "
            f"{r['over']:>9,.0f} {r['over'] / base:>7.4f}"
        )
    print("ratio = operations per second / baseline dict updates per second")


if __name__ == "__main__":
    main()
