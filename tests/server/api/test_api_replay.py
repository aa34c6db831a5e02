"""A finished daily game's replay (`/api/v1/games/{game_id}/replay`, issue #27): the views its
player saw after each move, served only once the game's day is closed, and never a race game."""

from __future__ import annotations

import datetime as dt
import json

from engine import from_view, new_game
from engine.views import json_map
from tests.support.apiclient import ApiClient
from tests.support.app import T0_MS, App
from tests.support.wsclient import Client

DAY_MS = 86_400_000
MIDNIGHT = T0_MS + DAY_MS // 2  # the end of 2030-06-15


async def play_then_resign(c: Client, variant: str, n: int) -> tuple[str, list[str]]:
    """Start today's game, play ``n`` legal moves and an undo, resign; (game id, moves)."""
    g = await c.request("daily.start", variant=variant)
    played: list[str] = []
    for seq in range(n):
        now = await c.request("game.get", game_id=g["game_id"])
        move = str(next(iter(from_view(now["view"]).legal_moves())))
        r = await c.request("move", game_id=g["game_id"], move=move, expected_seq=seq)
        assert r["type"] == "moved", r
        played.append(move)
    r = await c.request("undo", game_id=g["game_id"], expected_seq=n)
    assert r["type"] == "moved", r
    played.append("undo")
    assert (await c.request("resign", game_id=g["game_id"]))["type"] == "finished"
    return str(g["game_id"]), played


async def test_a_closed_days_game_is_replayed_view_by_view(race_app: App, api: ApiClient) -> None:
    amy = await race_app.client("amy", versions=(6,))
    game_id, played = await play_then_resign(amy, "triple-triangle", 3)
    path = f"/api/v1/games/{game_id}/replay"

    # While the day runs (and after it, until every game of it is settled): nothing.
    early = await api.get(path)
    assert (early.status, early.code) == (404, "not_found")
    assert b"steps" not in early.body
    race_app.clock.set(MIDNIGHT + 1_000)
    assert await race_app.services.day_closer.sweep(dt.date(2030, 6, 15))

    got = await api.get(path)  # checked against the OpenAPI document
    assert got.status == 200, got.body
    body = got.json()
    assert got.headers["Cache-Control"] == "public, max-age=86400, immutable"
    assert (body["name"], body["variant"], body["date"]) == ("amy", "triple-triangle", "2030-06-15")
    assert body["resigned"] and not body["won"]
    assert [s["move"] for s in body["steps"]] == [None, *played]
    # Each step is the view the player had: the deal replayed by the engine from the
    # published seed gives the same boards, face-down cards and stock never named.
    seeds = await amy.request("daily.seeds", date="2030-06-15")
    game = new_game("triple-triangle", seeds["seeds"]["triple-triangle"])
    expected = [json_map(game.view())]
    for move in played:
        game.play(move)
        expected.append(json_map(game.view()))
    assert [s["view"] for s in body["steps"]] == json.loads(json.dumps(expected))
    board = [
        {k: v for k, v in s["view"].items() if k not in ("moves", "can_undo")}
        for s in body["steps"]
    ]
    assert board[-1] == board[-3] != board[-2], "the undo took a move back"
    again = await api.get(path, {"If-None-Match": got.headers["ETag"]})
    assert again.status == 304

    # Malformed, unknown and unfinished ids are not_found, never a crash.
    for bad in ("nope", "d.fourteen-out.2030-06-15.p_nobody", "d.x.2030-13-40.p_a"):
        answer = await api.get(f"/api/v1/games/{bad}/replay")
        assert (answer.status, answer.code) == (404, "not_found"), bad


async def test_a_game_of_an_open_day_or_a_race_is_not_replayed(
    race_app: App, api: ApiClient
) -> None:
    bea = await race_app.client("bea", versions=(6,))
    game_id, _ = await play_then_resign(bea, "fourteen-out", 1)
    race_game = "r.20300615-a1b2c3d4e5f6." + game_id.rsplit(".", 1)[1]
    for gid in (game_id, race_game):
        answer = await api.get(f"/api/v1/games/{gid}/replay")
        assert (answer.status, answer.code) == (404, "not_found"), gid
        assert b'"view"' not in answer.body
