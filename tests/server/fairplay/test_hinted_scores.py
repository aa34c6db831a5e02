"""The cheat on a scored board: follow the solver's hints for points. A Triple Deck board
ranks by points before time, so a hint's time penalty decided only between equal scores: a
helper following 343 hints scored 886 of 936 and ranked first. A result not won that took a
hint now ranks after every result not won that took none (`server.boards.leaderboard`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from engine import from_view
from engine.solvers import solve
from server.runtime.clock import ManualClock
from tests.support.app import T0_MS, App, serve
from tests.support.races import race_config
from tests.support.wsclient import Client

VARIANT = "triple-deck"
V = (4,)  # `finish`, `with_view`


async def play_alone(c: Client, moves: int) -> dict[str, Any]:
    """Today's Triple Deck, ``moves`` of its first legal moves, finished: the result."""
    g = await c.request("daily.start", variant=VARIANT)
    assert g["type"] == "game", g
    for _ in range(moves):
        move = str(next(iter(from_view(g["view"]).legal_moves())))
        g = await c.request(
            "move", game_id=g["game_id"], move=move, expected_seq=g["seq"], with_view=True
        )
        assert g["type"] == "moved", g
    done = await c.request("finish", game_id=g["game_id"])
    assert done["type"] == "finished", done
    return dict(done["result"])


async def test_points_bought_with_hints_rank_after_points_played_alone(race_app: App) -> None:
    honest = await race_app.client("alone", versions=V)
    mine = await play_alone(honest, 3)
    cheat = await race_app.client("hinted", versions=V)
    g = await cheat.request("daily.start", variant=VARIANT)
    seq = g["seq"]
    score = 0
    for _ in range(60):  # follow the solver until its points pass the honest player's
        h = await cheat.request("hint", game_id=g["game_id"], timeout=30)
        assert h["type"] == "hint" and h["move"], h
        moved = await cheat.request(
            "move", game_id=g["game_id"], move=h["move"], expected_seq=seq, with_view=True
        )
        assert moved["type"] == "moved", moved
        seq, score = moved["seq"], from_view(moved["view"]).score
        if score > mine["score"]:
            break
    done = await cheat.request("finish", game_id=g["game_id"])
    hinted = done["result"]
    assert not hinted["won"] and hinted["hints"] >= 1 and hinted["score"] > mine["score"]

    board = await honest.request("leaderboard.top", variant=VARIANT)
    ranked = [(e["name"], e["score"], e["hints"]) for e in board["entries"]]
    assert ranked == [
        ("alone", mine["score"], 0),
        ("hinted", hinted["score"], hinted["hints"]),
    ], "more points bought with hints rank after fewer played alone"
    assert (mine["rank"], hinted["rank"]) == (1, 2)
    # ...and the hinted player's own answers say so: a late honest player with fewer points
    # still goes above it.
    late = await play_alone(await race_app.client("late", versions=V), 1)
    assert late["score"] < hinted["score"] and late["rank"] <= 2
    after = await cheat.request("leaderboard.around", variant=VARIANT)
    names = [e["name"] for e in after["entries"]]
    assert names[-1] == "hinted" and len(names) == 3, names


async def test_a_held_result_keeps_the_hints_counted_on_another_process(
    redis_url: str, tmp_path: Path
) -> None:
    """The same cheat's other face: hints asked through one process, the line played at
    machine speed through another, whose finish the screen holds. The held result went to
    the review desk with its hints at 0 (the finishing process's cached count); it keeps
    the stored count now, and so does the entry a reviewer would release."""
    config = replace(race_config(redis_url, tmp_path), fair_play_screen=True)
    async with serve(config, ManualClock(T0_MS)) as a, serve(config, ManualClock(T0_MS)) as b:
        mover = await Client.connect(b.url)
        await mover.hello(name="mover", versions=(5,))
        g = await mover.request("daily.start", variant="fourteen-out")
        hinter = await Client.connect(a.url)
        await hinter.hello(token=mover.token, versions=(5,))
        for n in (1, 2):
            h = await hinter.request("hint", game_id=g["game_id"], timeout=30)
            assert h["type"] == "hint" and h["hints"] == n, h
        line = list(solve(from_view(g["view"]), max_nodes=1_000_000).solution)
        reply: dict[str, Any] = {}
        for seq, move in enumerate(line):
            b.clock.advance(12)
            reply = await mover.request("move", game_id=g["game_id"], move=move, expected_seq=seq)
            assert reply["type"] == "moved", reply
        result = reply["result"]
        assert result["won"] and result.get("status") == "flagged", result
        assert result["hints"] == 2 and result["time_ms"] >= 2 * 30_000, result
