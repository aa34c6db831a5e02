"""The terminal client at 80 columns (issue #27): racers' news never written over the
`move> ` prompt, the racers panel whole and current, the loser told who won, refused moves in
the card words the board shows."""

from __future__ import annotations

import io
import re

import pexpect  # type: ignore[import-untyped]
import pytest
from rich.console import Console

from clients.cli import render
from clients.cli.rules import rules_markdown
from protocol import races as pr
from tests.support.cliplayer import MakePlayer
from tests.support.lookahead import move_that_goes_on
from tests.support.procs import ROOT, ServerProcess
from tests.support.wsclient import Client

#: A card code as the engine writes it (``5C``), which the board never shows.
CARD_CODE = re.compile(r"(?<![\w])(10|[2-9AJQK])[CDHS](?![\w])")
#: Colours and text attributes (what rich writes); cursor and erase sequences are kept.
SGR = re.compile(r"\x1b\[[0-9;]*m")
RACE = ("fourteen-out",)


def text_at_80(renderable: object) -> str:
    console = Console(width=80, record=True, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.export_text()


def entry(pid: str, name: str, place: int, cleared: int) -> pr.RaceResultEntry:
    return pr.RaceResultEntry(
        player_id=pid,
        name=name,
        place=place,
        won=cleared == 52,
        cleared=cleared,
        score=cleared,
        time_ms=90_000,
        moves=30,
        forfeited=False,
        rating=1500,
        rating_change=12 if place == 1 else -12,
    )


def test_the_loser_is_told_who_won() -> None:
    results = (entry("w1", "winner_name", 1, 52), entry("me", "loser_name", 2, 12))
    loser = text_at_80(render.race_standings(results, "me", "won", "fourteen-out"))
    assert "Race result (won)" not in loser
    assert "winner_name won the race; you placed 2nd of 2 (a racer cleared the deal)" in loser
    winner = text_at_80(render.race_standings(results, "w1", "won", "fourteen-out"))
    assert "You won the race (a racer cleared the deal)" in winner
    for table in (loser, winner):  # every line fits, every name whole
        assert all(len(line) <= 80 for line in table.splitlines())
        assert "winner_name" in table and "loser_name" in table


def test_the_racers_panel_is_whole_at_80_columns() -> None:
    racers = {
        "me": pr.Racer(player_id="me", name="twenty_chars_name_01", cleared=12, moves=7),
        "o1": pr.Racer(player_id="o1", name="alice_the_opponent", cleared=40, moves=30),
    }
    panel = text_at_80(render.race_panel(racers, "me", "fourteen-out", 2))
    lines = panel.splitlines()
    assert any(re.search(r"▶ twenty_chars_name_01 +12/52 +7m", line) for line in lines), panel
    assert any(re.search(r"  alice_the_opponent +40/52 +30m", line) for line in lines), panel
    assert "…" not in panel


def test_refused_moves_name_cards_as_the_board_does(make_player: MakePlayer) -> None:
    player = make_player(None)
    # Tri Peaks, seed 4: 5♣ at position 19 is no neighbour of the foundation's 3♦.
    run = player.run("practice", "triple-triangle", "--seed", "4", "--moves", "-", stdin="19\n")
    assert run.code == 1
    assert "5♣ is not one rank above or below 3♦" in run.out
    assert CARD_CODE.search(run.out) is None, run.out
    ascii = player.run(
        "--ascii", "practice", "triple-triangle", "--seed", "4", "--moves", "-", stdin="19\n"
    )
    assert "5C is not one rank above or below 3D" in ascii.out  # as the ASCII board writes them


@pytest.mark.asyncio
async def test_a_race_in_a_pty_at_80_columns(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    player = make_player(server.url)
    other = await Client.connect(server.url, binary=False)
    await other.hello(name="opponent_long_name", versions=(6,))
    await other.request("race.queue", variant="fourteen-out", size=2)
    child = player.spawn("--name", "pty_racer_name", "race", *RACE)
    try:
        started = await other.push("race.started", timeout=30)
        first = move_that_goes_on(started["view"])  # a random deal: the CLI plays on after it
        child.expect("move> ")
        # The opponent moves while the prompt waits: the news goes above it, not onto it.
        moved = await other.request("move", game_id=started["game_id"], move=first)
        assert moved["type"] == "moved", moved
        child.expect("opponent_long_name: cleared 2/52, 1 moves")
        before = SGR.sub("", child.before)
        assert not before.rstrip(" ").endswith("move>"), repr(before[-40:])
        child.expect("move> ")  # and the prompt comes back
        child.sendline(first)  # the same deal: the same first move
        # The panel under the board (80 columns): both names whole, one line each, and this
        # player's own line already counts the move just made.
        child.expect(r"▶ pty_racer_name *(?:\x1b\[[0-9;]*m)? *2/52 +1m")
        panel = SGR.sub("", child.before)  # the board and the panel's lines above our own
        assert re.search(r"\n  opponent_long_name +2/52 +1m", panel), panel
        child.expect("move> ")
        child.sendline("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
        await other.close()
    assert child.exitstatus == 0


def test_several_local_players_by_name_or_profile(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    """One config directory (one computer), several players: `--name` keeps each name's
    player, `--profile` (or SOLITAIRE_PROFILE) names where one is kept; no XDG_CONFIG_HOME."""
    player = make_player(server.url)

    def me(*args: str) -> str:
        run = player.run(*args, "--json", "me")
        assert run.code == 0, run.err
        name: str = run.json()["name"]
        return name

    assert me("--name", "local_alice") == "local_alice"  # the first player: also the default
    assert me("--name", "local_bob") == "local_bob"  # a second player, not a rename
    assert me() == "local_alice"
    assert me("--name", "local_bob") == "local_bob"  # resumed, not created again
    assert me("--name", "LOCAL_ALICE") == "local_alice"
    assert me("--profile", "work", "--name", "work_carol") == "work_carol"
    assert me("--profile", "work") == "work_carol"
    run = player.run("--json", "me", env={"SOLITAIRE_PROFILE": "work"})
    assert run.json()["name"] == "work_carol"
    assert me() == "local_alice"
    fresh = player.run("--profile", "home", "me")
    assert fresh.code == 2 and "--name NAME" in fresh.err  # a new profile needs a name


def test_rules_fit_80_columns_and_docs_rules_md_is_current(make_player: MakePlayer) -> None:
    """`solitaire rules` wraps sentences at 80 columns (not the engine's lines re-cut), and
    docs/rules.md, the rules a reader of the repository finds, is the engine's text."""
    player = make_player(None)
    run = player.run("rules", "triple-deck")
    assert run.code == 0
    lines = run.out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert "stock is refilled from the waste" in run.out  # a sentence the engine breaks
    assert "stock is" not in lines and "any part" not in lines  # no fragment of a cut line
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == rules_markdown()
