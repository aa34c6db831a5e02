"""`python -m engine`, run as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from engine import VARIANT_IDS, new_game

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", *args],
        input=stdin,
        text=True,
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )


def test_variants_lists_ids() -> None:
    out = run("variants")
    assert out.returncode == 0 and out.stdout.split() == list(VARIANT_IDS)


def test_deal_prints_full_state() -> None:
    out = run("deal", "triple-easthaven", "--seed", "1")
    assert out.returncode == 0
    state = json.loads(out.stdout)
    assert state == new_game("triple-easthaven", 1).to_json()
    assert state["piles"][0][0] == {"card": "2C", "up": False}


def test_replay_with_comments_blank_lines_and_undo() -> None:
    log = "# first pair\n1 7\n\nundo\n1 7   # again\n3 10\n"
    out = run("replay", "fourteen-out", "--seed", "1", stdin=log)
    assert out.returncode == 0, out.stderr
    reply: dict[str, object] = json.loads(out.stdout)
    game = new_game("fourteen-out", 1)
    for line in ("1 7", "undo", "1 7", "3 10"):
        game.play(line)
    assert reply == {"state": game.to_json(), "result": game.result()}
    assert reply["result"] == {"won": False, "over": False, "score": 4, "cleared": 4, "moves": 4}


def test_replay_stops_at_first_illegal_move() -> None:
    out = run("replay", "fourteen-out", "--seed", "1", stdin="1 7\n\n1 2\n3 10\n")
    assert out.returncode == 1
    assert "line 3" in out.stderr and "1 2" in out.stderr and "sum to 16" in out.stderr
    error = json.loads(out.stdout)["error"]
    assert error["line"] == 3 and error["move"] == "1 2" and "not 14" in error["reason"]


def test_replay_refuses_undo_of_a_draw() -> None:
    out = run("replay", "triple-triangle", "--seed", "1", stdin="d\nundo\n")
    assert out.returncode == 1 and "line 2" in out.stderr
    assert "hidden" in json.loads(out.stdout)["error"]["reason"]


def test_bad_arguments() -> None:
    assert run("deal", "klondike", "--seed", "1").returncode == 2
    assert run("deal", "fourteen-out", "--seed", "-1").returncode == 2
    assert run("deal", "fourteen-out").returncode == 2
    assert run().returncode == 2


def test_seed_must_be_written_as_docs_deals_says() -> None:
    """docs/deals.md §1: decimal ASCII without sign, spaces, underscores or leading zeros."""
    for bad in ("01", "+1", " 1", "1 ", "1_0", "\u0661", "\uff11", "1.0", "", "0x1", str(2**64)):
        out = run("deal", "fourteen-out", "--seed", bad)
        assert out.returncode == 2, bad
        assert "seed" in out.stderr and "Traceback" not in out.stderr, out.stderr
    for good in ("0", "1", str(2**64 - 1)):
        out = run("deal", "fourteen-out", "--seed", good)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == new_game("fourteen-out", int(good)).to_json()
