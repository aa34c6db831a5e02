"""The CLI against a real server (and its embedded Redis), run as subprocesses."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path

import pexpect  # type: ignore[import-untyped]
import pytest

from engine import from_view
from tests.support.cliplayer import MakePlayer, resign_race
from tests.support.procs import QUIET, ServerProcess, free_port
from tests.support.wsclient import Client


def solve_greedy(view: Mapping[str, object]) -> list[str]:
    """Moves playing a fully visible pairing game to its end (first legal move each time)."""
    game = from_view(view)
    moves: list[str] = []
    while True:
        move = next(game.legal_moves(), None)
        if move is None:
            return moves
        game.apply(move)
        moves.append(str(move))


def test_daily_scripted_to_the_end_with_rank(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    player = make_player(server.url)
    shown = player.run("--name", "scripter", "--json", "daily", "fourteen-out", "--show")
    assert shown.code == 0, shown.err
    doc = shown.json()
    assert doc["seq"] == 0 and doc["legal_moves"]
    moves = solve_greedy(doc["view"])
    script = "# greedy\n" + "\n".join(moves[:1]) + "\nundo\n" + "\n".join(moves) + "\n"
    run = player.run("--json", "daily", "fourteen-out", "--moves", "-", stdin=script)
    assert run.code == 0, run.err
    result = run.json()
    assert result["finished"] and result["result"]["rank"] >= 1
    assert [m["move"] for m in result["moves"]][:2] == [moves[0], "undo"]
    text = player.run("daily", "fourteen-out", "--show")
    assert "Result:" in text.out and "cleared" in text.out


def test_illegal_move_stops_with_reason(server: ServerProcess, make_player: MakePlayer) -> None:
    player = make_player(server.url)
    doc = player.run("--name", "illegal1", "--json", "daily", "fourteen-out", "--show").json()
    first = doc["legal_moves"][0]
    run = player.run("daily", "fourteen-out", "--moves", "-", stdin=f"{first}\n1 1\n{first}\n")
    assert run.code == 1
    assert "different piles" in run.out and "stopped at line 2" in run.out
    again = player.run("--json", "daily", "fourteen-out", "--show").json()
    assert again["seq"] == 1  # the third line was never sent


def test_leaderboard_text_and_json(server: ServerProcess, make_player: MakePlayer) -> None:
    player = make_player(server.url)
    run = player.run(
        "--name", "boarder", "daily", "triple-triangle", "--moves", "-", stdin="resign\n"
    )
    assert run.code == 0, run.err + run.out
    table = player.run("leaderboard", "triple-triangle")
    assert table.code == 0
    mine = [line for line in table.out.splitlines() if "boarder" in line]
    assert mine and "▶" in mine[0]
    doc = player.run("--json", "leaderboard", "triple-triangle", "--around-me").json()
    assert doc["kind"] == "daily" and any(
        e["me"] and e["name"] == "boarder" for e in doc["entries"]
    )
    assert doc["me"]["name"] == "boarder"
    race = player.run("--json", "leaderboard", "fourteen-out", "--race")
    assert race.code == 0 and race.json()["board"] == "rating"


def test_server_unreachable(make_player: MakePlayer) -> None:
    url = f"ws://127.0.0.1:{free_port()}/ws"
    run = make_player(url).run("--name", "nobody", "daily", "fourteen-out", "--show")
    assert run.code == 3 and url in run.err


def test_resume_after_server_restart(tmp_path: Path, make_player: MakePlayer) -> None:
    srv = ServerProcess(tmp_path / "data")
    srv.start()
    try:
        player = make_player(srv.url)
        assert player.run("--name", "phoenix", "--json", "daily", "triple-deck", "--show").code == 0
        moves = ["d", "d", "d"]  # drawing is legal on every Triple Deck deal
        assert player.run("daily", "triple-deck", "--moves", "-", stdin=moves[0] + "\n").code == 0
        srv.restart()  # between two runs: the game is resumed from the server
        doc = player.run("--json", "daily", "triple-deck", "--show").json()
        assert doc["seq"] == 1
        # During a run: the CLI reconnects with its token and resumes by itself.
        proc = player.popen("--json", "daily", "triple-deck", "--moves", "-")
        assert proc.stdin is not None
        proc.stdin.write(moves[1] + "\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 30  # the running CLI has played moves[1]: restart now
        while player.run("--json", "daily", "triple-deck", "--show").json()["seq"] < 2:
            assert time.monotonic() < deadline, "the CLI never played its first move"
            time.sleep(0.2)
        srv.restart()
        out, err = proc.communicate(moves[2] + "\n", timeout=40)
        assert proc.returncode == 0, err
        result = json.loads(out)
        assert [m["ok"] for m in result["moves"]] == [True, True]
        assert result["view"]["moves"] == 3
    finally:
        srv.stop()


def test_interactive_in_a_pty(server: ServerProcess, make_player: MakePlayer) -> None:
    player = make_player(server.url)
    child = player.spawn("--ascii", "daily", "fourteen-out", timeout=20)
    try:
        child.expect("display name")
        child.sendline("ptyplayer")
        child.expect("move> ")
        child.sendline("moves")
        child.expect(r"legal moves: ([0-9 ,]+)\r?\n")
        legal = [m.strip() for m in child.match.group(1).split(",")]
        child.expect("move> ")
        child.sendline(legal[0])
        child.expect("cleared 2/52")
        child.expect("move> ")
        child.sendline("1 1")
        child.expect("different piles")
        child.expect("move> ")
        child.sendline("hint")
        # The server's solver gives a move (counted, with its time penalty), proves that no
        # line wins (counted too: it sees every card) or runs out of time (not counted);
        # nothing else may come back.
        said = child.expect(
            [
                r"hint: (\d+(?: \d+)?)   \(hints used: 1, time penalty \d+ s\)",
                r"no line wins from here \(the solver sees every card\): counted as a hint "
                r"\(hints used: 1, time penalty \d+ s\)",
                r"the solver found no move in time \(no hint counted\)",
            ]
        )
        hinted = child.match.group(1) if said == 0 else None
        child.expect("move> ")
        if hinted is not None:  # the hint is a legal move: playing it clears two more cards
            child.sendline(hinted)
            child.expect("cleared 4/52")
            child.expect("move> ")
        child.sendline("quit")
        child.expect("Resume it with")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    doc = player.run("--json", "daily", "fourteen-out", "--show").json()
    assert not doc["finished"]
    assert (doc["seq"], doc["hints"]) == [(2, 1), (1, 1), (1, 0)][said]


@pytest.mark.asyncio
async def test_race_against_a_second_client(server: ServerProcess, make_player: MakePlayer) -> None:
    player = make_player(server.url)
    other = await Client.connect(server.url, binary=False)
    await other.hello(name="racer_ws")
    queued = await other.request("race.queue", variant="fourteen-out", size=2)
    assert queued["waiting"] == 1  # alone in the queue: the CLI is matched with this client
    proc = await player.start(
        "--name", "racer_cli", "--json", "race", "fourteen-out", "--moves", "-"
    )
    try:
        out, err = await resign_race(proc, other)
    finally:
        await other.close()
    assert proc.returncode == 0, err
    doc = json.loads(out)
    assert doc["command"] == "race" and doc["finished"]
    names = {r["name"] for r in doc["standings"]}
    assert names == {"racer_cli", "racer_ws"}
    assert all(r["rating_change"] is not None for r in doc["standings"])


def test_rate_limited_requests_are_retried(tmp_path: Path, make_player: MakePlayer) -> None:
    srv = ServerProcess(tmp_path / "data", (*QUIET, "--rate-limit", "8", "--rate-burst", "3"))
    srv.start()
    try:
        player = make_player(srv.url)
        view = player.run("--name", "hasty", "--json", "daily", "fourteen-out", "--show").json()[
            "view"
        ]
        moves = solve_greedy(view)[:8]
        run = player.run(
            "--json", "daily", "fourteen-out", "--moves", "-", stdin="\n".join(moves) + "\n"
        )
        assert run.code == 0, run.err
        assert "rate limited" in run.err
        assert [m["ok"] for m in run.json()["moves"]] == [True] * len(moves)
    finally:
        srv.stop()
