"""Per-move engine cost on the server's move path: `parse_move` + `apply` + the game-over check.

Plays random legal moves (fixed seeds, fixed RNG; choosing the move is not timed) and times, for
each move, what the server does with it: `game.parse_move(text)`, `game.apply(move)` and
`game.over_search().step(OVER_SLICE_NODES)` (a first slice, as the server runs it). Reports
microseconds per move for each variant. With ``--browser`` it also times what a lean reply to
the browser adds (handlers/games.py ``_follow``, a ``hello.features: ["rules_free"]`` client):
the view after the move, the move in words (`played_text`), the view's changes
(`view_patch`) and the safe foundation moves in words (`safe_moves`, `move_text`).

With ``--ref REV`` the same workload also runs on the engine as committed at REV (extracted with
``git archive`` into a temporary directory, run in a subprocess), so before/after numbers come
from one run; ``--paths`` limits the old files to some (the rest come from the working tree).
Run from the repo root: ``python benchmarks/move_bench.py [--ref HEAD [--paths FILE...]]``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OVER_SLICE_NODES = 4  # the slice a move runs itself (server/games/service.py OVER_INLINE_NODES)
MAX_MOVES = 400  # a game is cut off after this many moves


def bench_variant(
    engine: Any, variant: str, seeds: range, rounds: int, browser: bool = False
) -> dict[str, float]:
    """Best-of-`rounds` microseconds per move, split into parse, apply and over (and, with
    `browser`, the lean reply's additions for the browser)."""
    best: dict[str, float] = {}
    clock = time.perf_counter
    words = importlib.import_module("engine.words") if browser else None
    patches = importlib.import_module("engine.patches") if browser else None
    for _ in range(rounds):
        t_parse = t_apply = t_over = t_browser = 0.0
        moves = 0
        for seed in seeds:
            rng = random.Random(f"{variant}:{seed}")
            game = engine.new_game(variant, seed)
            for _ in range(MAX_MOVES):
                if game.over:
                    break
                text = str(rng.choice(list(game.legal_moves())))
                t0 = clock()
                move = game.parse_move(text)
                t1 = clock()
                result = game.apply(move)
                t2 = clock()
                verdict = game.over_search().step(OVER_SLICE_NODES)
                t3 = clock()
                if verdict is None:  # undecided after a slice: provisionally not over
                    game.settle_over(False)
                if words is not None and patches is not None:
                    t4 = clock()
                    events = result.events()
                    view = game.view()
                    words.played_text(view, events)
                    patches.view_patch(view, events)
                    if not game.over:
                        for m in words.safe_moves(game, view):
                            words.move_text(view, m)
                    t_browser += clock() - t4
                t_parse += t1 - t0
                t_apply += t2 - t1
                t_over += t3 - t2
                moves += 1
        r = {
            "moves": float(moves),
            "parse": 1e6 * t_parse / moves,
            "apply": 1e6 * t_apply / moves,
            "over": 1e6 * t_over / moves,
            "total": 1e6 * (t_parse + t_apply + t_over) / moves,
            "browser": 1e6 * t_browser / moves,
        }
        if not best or r["total"] < best["total"]:
            best = r
    return best


def run(root: Path, seeds: int, rounds: int, browser: bool = False) -> dict[str, dict[str, float]]:
    """Results per variant for the engine package found under `root`."""
    sys.path.insert(0, str(root))
    engine = importlib.import_module("engine")
    return {v: bench_variant(engine, v, range(seeds), rounds, browser) for v in engine.VARIANT_IDS}


def run_sub(root: Path, seeds: int, browser: bool = False) -> dict[str, dict[str, float]]:
    """One round for the engine package under `root`, in a fresh interpreter."""
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--root",
            str(root),
            "--json",
            "--seeds",
            str(seeds),
            "--rounds",
            "1",
            *(["--browser"] if browser else []),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, dict[str, float]] = json.loads(out)
    return result


def best_of(results: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Per variant and per figure, the best (least) of the rounds."""
    return {v: {k: min(r[v][k] for r in results) for k in results[0][v]} for v in results[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40, help="games per variant")
    parser.add_argument("--rounds", type=int, default=5, help="repeats; the best counts")
    parser.add_argument("--ref", help="also run the engine at this git revision (before)")
    parser.add_argument(
        "--paths",
        nargs="+",
        default=["engine"],
        help="with --ref: the files taken at the revision (default: engine/)",
    )
    parser.add_argument(
        "--browser",
        action="store_true",
        help="also time what a lean reply to the browser (rules_free) adds per move",
    )
    parser.add_argument("--root", default=str(ROOT), help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:
        print(json.dumps(run(Path(args.root), args.seeds, args.rounds, args.browser)))
        return
    before: dict[str, dict[str, float]] | None = None
    if args.ref:
        # Rounds alternate between the two engines, each in a fresh process, so that drift in
        # the machine's load hits both alike.
        with tempfile.TemporaryDirectory() as tmp:
            # The working tree's engine with `--paths` as committed at the revision.
            shutil.copytree(
                ROOT / "engine", Path(tmp) / "engine", ignore=shutil.ignore_patterns("__pycache__")
            )
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.ref, *args.paths],
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            runs_b, runs_a = [], []
            for _ in range(args.rounds):
                runs_b.append(run_sub(Path(tmp), args.seeds, args.browser))
                runs_a.append(run_sub(Path(args.root), args.seeds, args.browser))
        before, after = best_of(runs_b), best_of(runs_a)
    else:
        after = run(Path(args.root), args.seeds, args.rounds, args.browser)
    print(
        f"{'variant':<18} {'moves':>6} {'parse':>7} {'apply':>7} {'over':>7} {'total':>7}"
        + (f" {'before':>7} {'speedup':>7}" if before else "")
        + (f" {'browser':>8}" + (f" {'before':>7}" if before else "") if args.browser else "")
        + "   (µs per move)"
    )
    for v, r in after.items():
        line = (
            f"{v:<18} {r['moves']:>6.0f} {r['parse']:>7.2f} {r['apply']:>7.2f} "
            f"{r['over']:>7.2f} {r['total']:>7.2f}"
        )
        if before:
            b = before[v]
            line += f" {b['total']:>7.2f} {b['total'] / r['total']:>6.2f}x"
            if b["moves"] != r["moves"]:
                line += "  (different games!)"
        if args.browser:
            line += f" {r['browser']:>8.2f}" + (f" {before[v]['browser']:>7.2f}" if before else "")
        print(line)


if __name__ == "__main__":
    main()
