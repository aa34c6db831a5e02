"""Protocol versions 2 and 4: `moved` carries seq and events, not the view, unless version 4 asks
for it (`with_view`); version 1 keeps it."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import redis.asyncio

from engine import VARIANT_IDS, Game, Reveal, from_view, parse_card
from server.config import Config
from tests.support.app import App, serve


@pytest_asyncio.fixture
async def app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    config = replace(
        Config(),
        redis_url=redis_url,
        data_dir=tmp_path,
        daily_secret=b"lean",
        rate_limit=1000.0,
        rate_burst=1000,
    )
    async with serve(config) as running:
        yield running


def reveals(events: list[dict[str, Any]]) -> list[Reveal]:
    return [Reveal(parse_card(e["card"]), e["at"]) for e in events if e["type"] == "reveal"]


@pytest.mark.parametrize("variant", VARIANT_IDS)
async def test_a_version_2_client_follows_the_events_to_the_servers_view(
    app: App, variant: str
) -> None:
    c = await app.client("lean", versions=(1, 2))
    g = await c.request("daily.start", variant=variant)
    copy: Game = from_view(g["view"])
    seq, rng = g["seq"], random.Random(variant)
    for _ in range(60):
        moves = [str(m) for m in copy.legal_moves()]
        if not moves:
            break
        text = "undo" if copy.can_undo() and rng.random() < 0.15 else rng.choice(moves)
        if text == "undo":
            r = await c.request("undo", game_id=g["game_id"], expected_seq=seq)
        else:
            r = await c.request("move", game_id=g["game_id"], expected_seq=seq, move=text)
        assert r["type"] == "moved", r
        assert "view" not in r
        assert r["seq"] == seq + 1
        copy.follow(r["move"], reveals(r["events"]), over=r["finished"])
        seq = r["seq"]
        if r["finished"]:
            break
    state = await c.request("game.get", game_id=g["game_id"])
    assert state["seq"] == seq
    assert copy.view() == state["view"]


async def test_version_1_clients_still_get_the_view(app: App) -> None:
    old = await app.client("old", versions=(1,))
    new = await app.client("new", versions=(1, 2))
    for c, has_view in ((old, True), (new, False)):
        g = await c.request("daily.start", variant="triple-triangle")
        r = await c.request("move", game_id=g["game_id"], move="d", expected_seq=0)
        assert ("view" in r) is has_view
        if has_view:
            again = await c.request("game.get", game_id=g["game_id"])
            assert r["view"] == again["view"]


async def test_welcome_names_the_negotiated_version(app: App) -> None:
    c = await app.client("ver", versions=(2, 1))
    hello_again = await c.request("ping")
    assert hello_again["type"] == "pong"
    from tests.support.wsclient import Client

    fresh = await Client.connect(app.url)
    assert (await fresh.hello(name="ver2", versions=(1, 2)))["version"] == 2
    fresh1 = await Client.connect(app.url)
    assert (await fresh1.hello(name="ver1", versions=(1,)))["version"] == 1


async def test_version_4_asks_for_the_view_with_a_move_and_version_3_may_not(app: App) -> None:
    c = await app.client("viewer", versions=(3, 4))
    g = await c.request("daily.start", variant="triple-easthaven")
    gid = g["game_id"]
    r = await c.request("move", game_id=gid, move="d", expected_seq=0, with_view=True)
    assert r["type"] == "moved" and r["seq"] == 1, r
    assert r["view"] == (await c.request("game.get", game_id=gid))["view"]
    assert r["view"]["stock"] == 108 and all(p["down"] == 2 for p in r["view"]["piles"])
    lean = await c.request("move", game_id=gid, move="d", expected_seq=1)
    assert "view" not in lean and lean["seq"] == 2
    back = await c.request("undo", game_id=gid, expected_seq=2, with_view=True)
    assert back["type"] == "error" and back["code"] == "illegal_move", back  # a deal reveals
    old = await app.client("viewer3", versions=(1, 2, 3))
    g3 = await old.request("daily.start", variant="fourteen-out")
    move = str(next(iter(from_view(g3["view"]).legal_moves())))
    refused = await old.request(
        "move", game_id=g3["game_id"], move=move, expected_seq=0, with_view=True
    )
    assert refused["type"] == "error" and refused["code"] == "bad_request", refused
    assert "version 4" in refused["message"]
    state = await old.request("game.get", game_id=g3["game_id"])
    assert state["seq"] == 0, "nothing was applied"
    played = await old.request("move", game_id=g3["game_id"], move=move, expected_seq=0)
    assert played["type"] == "moved" and "view" not in played
