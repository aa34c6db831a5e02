"""The cheat on a scored board: follow the solver's hints for points. A Triple Deck board
ranks by points before time, so a hint's time penalty decided only between equal scores: a
helper following 343 hints scored 886 of 936 and ranked first. A result not won that took a
hint now ranks after every result not won that took none (`server.boards.leaderboard`)."""

from __future__ import annotations

from typing import Any

from engine import from_view
from tests.support.app import App
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
