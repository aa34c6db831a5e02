"""The CLI finishes a Triple Deck game (`finish`: its score counts, not recorded as resigned)
and still resigns the other games: against a real server, and in offline practice (the CLI
run as a subprocess)."""

from __future__ import annotations

from tests.support.cliplayer import MakePlayer
from tests.support.procs import ServerProcess


def test_finish_records_a_triple_deck_game_as_finished_not_resigned(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    player = make_player(server.url)
    for word in ("finish", "resign"):
        run = player.run(
            "--name",
            f"finisher_{word}",
            "--json",
            "daily",
            "triple-deck",
            "--moves",
            "-",
            stdin=f"d\n{word}\n",
        )
        assert run.code == 0, run.err
        doc = run.json()
        assert doc["finished"] and doc["result"]["resigned"] is False, word
        assert doc["result"]["moves"] == 1
        player = make_player(server.url)
    run = player.run(
        "--name", "resigner", "--json", "daily", "fourteen-out", "--moves", "-", stdin="finish\n"
    )
    assert run.code == 0, run.err
    assert run.json()["result"]["resigned"] is True, "games that can be lost are resigned"


def test_a_practice_triple_deck_game_is_finished_too(make_player: MakePlayer) -> None:
    player = make_player(None)
    for variant, resigned in (("triple-deck-kings", False), ("triple-triangle", True)):
        run = player.run(
            "--json", "practice", variant, "--seed", "5", "--moves", "-", stdin="finish\n"
        )
        assert run.code == 0, run.err
        doc = run.json()
        assert doc["finished"] and doc["result"]["resigned"] is resigned, variant
