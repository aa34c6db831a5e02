"""Commands that need no server: variants, rules, practice."""

from __future__ import annotations

import json
from typing import Any

from engine import VARIANT_IDS, new_game


def test_variants_text_and_json(make_player: Any) -> None:
    player = make_player(None)
    run = player.run("variants")
    assert run.code == 0
    for vid in VARIANT_IDS:
        assert vid in run.out
    doc = player.run("--json", "variants").json()
    assert [v["id"] for v in doc["variants"]] == list(VARIANT_IDS)


def test_rules_include_notation(make_player: Any) -> None:
    player = make_player(None)
    run = player.run("rules", "triple-easthaven")
    assert run.code == 0 and "f8H 5" in run.out and "alternating colours" in run.out
    doc = player.run("rules", "fourteen-out", "--json").json()
    assert doc["variant"] == "fourteen-out" and "14" in doc["text"]


def test_practice_plays_offline_to_the_end(make_player: Any) -> None:
    player = make_player("ws://127.0.0.1:9/ws")  # nothing listens there: no server needed
    game = new_game("fourteen-out", 11)
    moves = []
    while not game.over:
        move = str(next(game.legal_moves()))
        game.apply(move)
        moves.append(move)
    run = player.run("--json", "practice", "fourteen-out", "--seed", "11", "--moves", "-",
                     stdin="\n".join(moves) + "\n")
    assert run.code == 0, run.err
    doc = run.json()
    assert doc["finished"] and doc["result"]["cleared"] == game.cleared
    assert all(m["ok"] for m in doc["moves"])
    text = player.run("practice", "fourteen-out", "--seed", "11", "--moves", "-",
                      stdin="undo\n")
    assert text.code == 1 and "there is no move to undo" in text.out


def test_practice_show_json(make_player: Any) -> None:
    run = make_player(None).run("--json", "practice", "triple-deck", "--seed", "5", "--show")
    doc = json.loads(run.out)
    assert doc["view"]["variant"] == "triple-deck" and "d" in doc["legal_moves"]
