"""`python -m engine verify`: a day's results replayed with the engine alone."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from engine import new_game
from engine.verify import verify_lines

SEED = 7


def played(variant: str, seed: int, n: int) -> dict[str, object]:
    """A result line of a game of ``n`` legal moves (the first legal move each time)."""
    game = new_game(variant, seed)
    moves = []
    for _ in range(n):
        move = next(iter(game.legal_moves()), None)
        if move is None:
            break
        moves.append(str(move))
        game.play(str(move))
    return {
        "variant": variant,
        "date": "2030-06-15",
        "rank": 1,
        "name": "amy",
        "seed": seed,
        "won": game.won,
        "resigned": False,
        "cleared": game.cleared,
        "score": game.score,
        "time_ms": 60_000,
        "hints": 0,
        "finished_at": 0,
        "move_count": game.moves,
        "moves": moves,
        "times_ms": [1000] * len(moves),
    }


def lines(*rows: dict[str, object]) -> list[str]:
    return [json.dumps(r) for r in rows]


def test_honest_lines_reproduce() -> None:
    a = played("fourteen-out", SEED, 3)
    b = {**played("triple-triangle", SEED, 5)}
    count, failures = verify_lines(iter(lines(a, b)))
    assert count == 2 and failures == []


def test_a_doctored_result_an_illegal_move_and_a_bad_order_are_reported() -> None:
    honest = played("fourteen-out", SEED, 3)
    claimed_win = {**honest, "won": True}
    illegal = {**played("triple-triangle", SEED, 3), "moves": ["zz"]}
    fewer_moves = {**played("triple-triangle", SEED, 4), "rank": 2, "cleared": 99}
    out_of_order = {**honest, "rank": 2, "time_ms": 1}  # faster, yet ranked below
    count, failures = verify_lines(
        iter(lines(claimed_win, illegal, fewer_moves, honest, out_of_order))
    )
    assert count == 5
    by_line = {f.line: f.reason for f in failures}
    assert set(by_line) == {1, 2, 3, 5}, failures
    assert "won True recorded, False replayed" in by_line[1]
    assert "move 1 ('zz') is illegal" in by_line[2]
    assert "cleared 99 recorded" in by_line[3]
    assert "ranked below a worse result" in by_line[5]


def test_the_command_reads_gzip_and_exits_1_on_a_mismatch(tmp_path: Path) -> None:
    good = played("fourteen-out", SEED, 2)
    path = tmp_path / "results.ndjson.gz"
    path.write_bytes(gzip.compress(("\n".join(lines(good)) + "\n").encode()))
    run = [sys.executable, "-m", "engine", "verify", str(path)]
    ok = subprocess.run(run, capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stderr
    assert "1 results, 1 reproduce, 0 do not" in ok.stderr
    path.write_bytes(gzip.compress("\n".join(lines(good, {**good, "score": 1})).encode()))
    bad = subprocess.run(run, capture_output=True, text=True, check=False)
    assert bad.returncode == 1
    assert ":line 2: fourteen-out 2030-06-15 #1 amy: score 1 recorded" in bad.stdout
    (tmp_path / "junk").write_bytes(b"\x1f\x8bnot gzip")
    junk = subprocess.run([*run[:-1], str(tmp_path / "junk")], capture_output=True, check=False)
    assert junk.returncode == 2
