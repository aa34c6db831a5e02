"""Session, daily and leaderboard handlers (`server.handlers.games`) over a real connection: the
refusals and empty cases the end-to-end daily tests (test_e2e_daily) do not reach."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest_asyncio
import redis.asyncio

from engine import from_view
from server.config import Config
from tests.support.app import App, serve
from tests.support.wsclient import Client


@pytest_asyncio.fixture
async def app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    config = replace(
        Config(),
        redis_url=redis_url,
        data_dir=tmp_path,
        daily_secret=b"h",
        rate_limit=1000.0,
        rate_burst=1000,
        certify_deals=False,
    )
    async with serve(config) as running:
        yield running


async def test_a_second_hello_on_a_connection_conflicts(app: App) -> None:
    c = await app.client("hanna")
    again = await c.request("hello", versions=[1], token=c.token)
    assert again["type"] == "error" and again["code"] == "conflict"
    pong = await c.request("ping")  # still the same session
    assert pong["type"] == "pong" and pong["server_time"] == app.clock.now_ms()
    await c.close()


async def test_welcome_gives_a_token_only_to_new_players(app: App) -> None:
    c = await app.client("henry")
    back = await Client.connect(app.url)
    welcome = await back.hello(token=c.token)
    assert welcome["player_id"] == c.player_id and welcome["name"] == "henry"
    assert welcome.get("token") is None
    assert welcome["server_time"] == app.clock.now_ms() and "fourteen-out" in welcome["variants"]
    await c.close()
    await back.close()


async def test_unknown_variants_are_not_found(app: App) -> None:
    c = await app.client("hilda")
    for kind in ("daily.start", "leaderboard.top", "leaderboard.around", "leaderboard.rank"):
        r = await c.request(kind, variant="klondike")
        assert r["type"] == "error" and r["code"] == "not_found", (kind, r)
        assert "fourteen-out" in r["message"]
    await c.close()


async def test_empty_boards_and_a_player_not_on_one(app: App) -> None:
    c = await app.client("hugo")
    top = await c.request("leaderboard.top", variant="triple-deck", date="2030-06-14")
    assert (top["type"], top["date"], top["total"], top["entries"]) == (
        "leaderboard",
        "2030-06-14",
        0,
        [],
    )
    around = await c.request("leaderboard.around", variant="triple-deck", k=3)
    assert around["date"] == "2030-06-15" and around["entries"] == [] and around["offset"] == 0
    rank = await c.request("leaderboard.rank", variant="triple-deck")
    assert rank["type"] == "rank" and rank.get("entry") is None and rank["total"] == 0
    await c.close()


async def test_only_the_resigned_game_counts_once(app: App) -> None:
    c = await app.client("hazel")
    g = await c.request("daily.start", variant="fourteen-out")
    assert g["type"] == "game" and not g["finished"] and g.get("result") is None
    fin = await c.request("resign", game_id=g["game_id"])
    assert fin["type"] == "finished" and fin["result"]["resigned"] and fin["result"]["rank"] == 1
    twice = await c.request("resign", game_id=g["game_id"])
    assert twice["type"] == "error" and twice["code"] == "game_over"
    moved = await c.request("undo", game_id=g["game_id"], expected_seq=0)
    assert moved["type"] == "error" and moved["code"] == "game_over"
    rank = await c.request("leaderboard.rank", variant="fourteen-out")
    assert rank["total"] == 1 and rank["entry"]["me"] and rank["entry"]["name"] == "hazel"
    await c.close()


async def test_welcome_v3_lists_todays_daily_games_and_v1_v2_do_not(app: App) -> None:
    c = await app.client("ivy01", versions=(1, 2, 3))
    first = await c.request("daily.start", variant="fourteen-out")
    second = await c.request("daily.start", variant="triple-deck")
    await c.request("resign", game_id=second["game_id"])
    await c.close()
    back = await Client.connect(app.url)
    welcome = await back.hello(token=c.token, versions=(1, 2, 3))
    assert welcome["version"] == 3
    assert welcome["daily"] == [
        {"variant": "fourteen-out", "game_id": first["game_id"], "finished": False},
        {"variant": "triple-deck", "game_id": second["game_id"], "finished": True},
    ]
    assert "race" not in welcome, "no race: the field is left out"
    for versions in ((1,), (1, 2)):
        old = await Client.connect(app.url)
        w = await old.hello(token=c.token, versions=versions)
        assert w["version"] == max(versions)
        assert "daily" not in w and "race" not in w, "older clients get the welcome they know"
        await old.close()
    await back.close()


async def test_a_new_player_has_no_daily_games_yet(app: App) -> None:
    c = await Client.connect(app.url)
    welcome = await c.hello(name="ivy02", versions=(3,))
    assert welcome["daily"] == [] and "race" not in welcome
    await c.close()


async def test_two_sockets_with_one_token_are_both_live(app: App) -> None:
    """docs/protocol.md §5 `hello`: every connection of a player is a full session."""
    one = await app.client("jade1", versions=(1, 2, 3))
    two = await Client.connect(app.url)
    await two.hello(token=one.token, versions=(1, 2, 3))
    game = await one.request("daily.start", variant="fourteen-out")
    same = await two.request("daily.start", variant="fourteen-out")
    assert same["game_id"] == game["game_id"] and same["seq"] == 0
    move = str(next(iter(from_view(game["view"]).legal_moves())))
    played = await two.request("move", game_id=game["game_id"], move=move, expected_seq=0)
    assert played["type"] == "moved" and played["seq"] == 1
    stale = await one.request("move", game_id=game["game_id"], move=move, expected_seq=0)
    assert stale["type"] == "error" and stale["code"] == "conflict", "one game, two windows"
    seen = await one.request("game.get", game_id=game["game_id"])
    assert seen["seq"] == 1
    await two.close()  # closing one leaves the other as it was
    pong = await one.request("ping")
    assert pong["type"] == "pong"
    await one.close()


async def test_finish_ends_a_triple_deck_game_without_resigning(app: App) -> None:
    c = await app.client("kira1", versions=(1, 2, 3))
    game = await c.request("daily.start", variant="triple-deck")
    app.clock.advance(5_000)
    await c.request("move", game_id=game["game_id"], move="d", expected_seq=0)
    done = await c.request("finish", game_id=game["game_id"])
    assert done["type"] == "finished", done
    result = done["result"]
    assert (result["resigned"], result["won"], result["moves"]) == (False, False, 1)
    assert result["rank"] == 1 and result["time_ms"] == 5_000
    again = await c.request("finish", game_id=game["game_id"])
    assert again["type"] == "error" and again["code"] == "game_over"
    state = await c.request("game.get", game_id=game["game_id"])
    assert state["finished"] and state["result"]["resigned"] is False
    other = await c.request("daily.start", variant="fourteen-out")
    refused = await c.request("finish", game_id=other["game_id"])
    assert refused["type"] == "error" and refused["code"] == "conflict", "resign that one"
    assert not (await c.request("game.get", game_id=other["game_id"]))["finished"]
    missing = await c.request("finish", game_id="d.triple-deck.2030-06-15.nobody")
    assert missing["type"] == "error" and missing["code"] == "not_found"
    await c.close()


async def test_finish_needs_protocol_3(app: App) -> None:
    c = await app.client("kira2", versions=(1, 2))
    game = await c.request("daily.start", variant="triple-deck")
    refused = await c.request("finish", game_id=game["game_id"])
    assert refused["type"] == "error" and refused["code"] == "unknown_type"
    await c.close()


async def test_game_carries_its_move_list_from_version_3(app: App) -> None:
    """`game.log`: the moves as stored, `undo` included, also after the game left the cache."""
    c = await app.client("kim01", versions=(1, 2, 3))
    game = await c.request("daily.start", variant="triple-deck")
    assert game["log"] == []
    played: list[str] = []
    while "undo" not in played:  # moves until one can be taken back, then take it back
        assert len(played) < 40, "no move that can be undone"
        view = (await c.request("game.get", game_id=game["game_id"]))["view"]
        if view["can_undo"]:
            reply = await c.request("undo", game_id=game["game_id"], expected_seq=len(played))
        else:
            move = str(next(iter(from_view(view).legal_moves())))
            reply = await c.request(
                "move", game_id=game["game_id"], move=move, expected_seq=len(played)
            )
        assert reply["type"] == "moved", reply
        played.append(reply["move"])
    assert (await c.request("game.get", game_id=game["game_id"]))["log"] == played
    app.services.games.forget(game["game_id"])  # as another process would: from Redis
    again = await c.request("game.get", game_id=game["game_id"])
    assert again["log"] == played and again["seq"] == len(played)
    old = await Client.connect(app.url)
    await old.hello(token=c.token, versions=(1, 2))
    assert "log" not in await old.request("game.get", game_id=game["game_id"])
    await old.close()
    await c.close()
