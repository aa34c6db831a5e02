"""Commands that need no server: variants, rules, practice, usage errors."""

from __future__ import annotations

import json

import pexpect  # type: ignore[import-untyped]

from clients.cli.ingame import PRACTICE_COMMANDS
from engine import VARIANT_IDS, new_game
from tests.support.cliplayer import MakePlayer


def test_variants_text_and_json(make_player: MakePlayer) -> None:
    player = make_player(None)
    run = player.run("variants")
    assert run.code == 0
    for vid in VARIANT_IDS:
        assert vid in run.out
    doc = player.run("--json", "variants").json()
    assert [v["id"] for v in doc["variants"]] == list(VARIANT_IDS)


def test_rules_include_notation(make_player: MakePlayer) -> None:
    player = make_player(None)
    run = player.run("rules", "triple-easthaven")
    assert run.code == 0 and "f8H 5" in run.out and "alternating colours" in run.out
    doc = player.run("rules", "fourteen-out", "--json").json()
    assert doc["variant"] == "fourteen-out" and "14" in doc["text"]


def test_practice_plays_offline_to_the_end(make_player: MakePlayer) -> None:
    player = make_player("ws://127.0.0.1:9/ws")  # nothing listens there: no server needed
    game = new_game("fourteen-out", 11)
    moves = []
    while not game.over:
        move = str(next(game.legal_moves()))
        game.apply(move)
        moves.append(move)
    run = player.run(
        "--json",
        "practice",
        "fourteen-out",
        "--seed",
        "11",
        "--moves",
        "-",
        stdin="\n".join(moves) + "\n",
    )
    assert run.code == 0, run.err
    doc = run.json()
    assert doc["finished"] and doc["result"]["cleared"] == game.cleared
    assert all(m["ok"] for m in doc["moves"])
    text = player.run("practice", "fourteen-out", "--seed", "11", "--moves", "-", stdin="undo\n")
    assert text.code == 1 and "there is no move to undo" in text.out


def test_practice_show_json(make_player: MakePlayer) -> None:
    run = make_player(None).run("--json", "practice", "triple-deck", "--seed", "5", "--show")
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    assert doc["view"] == new_game("triple-deck", 5).view()
    assert doc["view"]["variant"] == "triple-deck" and "d" in doc["legal_moves"]


def test_practice_interactive_in_a_pty(make_player: MakePlayer) -> None:
    """The interactive loop offline: generated help, a refused move, resign asked first."""
    player = make_player(None)
    child = player.spawn("--ascii", "practice", "fourteen-out", "--seed", "3", timeout=20)
    try:
        child.expect("Type a move, or 'help'")
        child.expect("move> ")
        child.sendline("help")
        child.expect("remove the top cards")
        # Only what practice can do (no hint, nothing to resume), each on one line at 80 columns.
        child.expect_exact(
            "\r\n".join(["Commands", *(f"  {c.name:<8} {c.help}" for c in PRACTICE_COMMANDS)])
        )
        assert not {"hint", "hints"} & {c.name for c in PRACTICE_COMMANDS}
        child.expect("move> ")
        child.sendline("1 1")
        child.expect("different piles")
        child.expect("move> ")
        child.sendline("resign")
        child.expect_exact("[y/N]")
        child.sendline("n")
        child.expect("not resigned")
        child.expect("move> ")
        child.sendline("finish")
        child.expect_exact("[y/N]")
        child.sendline("y")
        child.expect("Result: ")
        child.expect("resigned · cleared 0/52")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0


def test_bad_date_and_room_code_are_usage_errors(make_player: MakePlayer) -> None:
    player = make_player("ws://127.0.0.1:9/ws")  # refused before any connection
    run = player.run("leaderboard", "fourteen-out", "--date", "2023-02-29")
    assert run.code == 2 and "not a date YYYY-MM-DD" in run.err
    run = player.run("race", "--join", "ab")
    assert run.code == 2 and "not a room code" in run.err
