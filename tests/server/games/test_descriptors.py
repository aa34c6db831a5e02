"""Protocol 6: `welcome.variant_info`, the variant descriptors built from the engine, reach a
version 6 client over a real connection; older versions get the welcome they always had."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio

import protocol as p
from engine import VARIANT_IDS, VARIANTS, new_game
from engine.rules import RULES
from server.config import Config
from server.games.descriptors import VARIANT_INFO
from tests.support.app import App, serve
from tests.support.wsclient import Client


@pytest_asyncio.fixture
async def app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    config = replace(
        Config(), redis_url=redis_url, data_dir=tmp_path, daily_secret=b"v", certify_deals=False
    )
    async with serve(config) as running:
        yield running


async def test_a_version_6_welcome_describes_every_variant(app: App) -> None:
    c = await Client.connect(app.url, binary=False)
    try:
        welcome = await c.hello(name="vera6", versions=(1, 2, 3, 4, 5, 6))
        assert welcome["version"] == 6
        decoded = p.decode_server(p.encode(p.decode_server(str_of(welcome)), binary=False))
        assert isinstance(decoded, p.Welcome)
        assert decoded.variant_info == VARIANT_INFO
        info = {v["id"]: v for v in welcome["variant_info"]}
        assert list(info) == welcome["variants"] == list(VARIANT_IDS)
        assert info["triple-triangle"]["name"] == "Tri Peaks"
        assert info["triple-triangle"]["clear"] == 28
        assert info["triple-deck"]["max_score"] == 936
        assert info["triple-deck-kings"]["max_score"] == 1092
        assert info["triple-deck"]["finish"] and info["triple-deck"]["scored"]
        assert info["triple-easthaven"]["may_finish"] and not info["triple-easthaven"]["finish"]
        assert "stock" not in info["fourteen-out"] and info["fourteen-out"]["family"] == "pairing"
        assert info["triple-easthaven"]["stock"] == "deal one card onto every pile"
        backs = [v for v, d in info.items() if d.get("foundation_back")]
        assert backs == ["triple-easthaven"]
    finally:
        await c.close()


async def test_older_versions_get_no_descriptors(app: App) -> None:
    for n, versions in enumerate(((1,), (1, 2, 3), (1, 2, 3, 4, 5))):
        c = await Client.connect(app.url)
        try:
            welcome = await c.hello(name=f"oleg{n}", versions=versions)
            assert welcome["version"] == max(versions)
            assert "variant_info" not in welcome
        finally:
            await c.close()


def str_of(msg: dict[str, object]) -> str:
    return json.dumps(msg)


@pytest.mark.parametrize("info", VARIANT_INFO, ids=lambda i: i.id)
def test_descriptors_say_what_the_engine_does(info: p.VariantInfo) -> None:
    cls = VARIANTS[info.id]
    assert info.title == cls.title and RULES[info.id].startswith(info.title)
    game = new_game(info.id, 7)
    assert game.view()["variant"] == info.id
    assert info.scored == cls.scored and info.may_finish == cls.may_finish
    # undo counts as a move (RULINGS.md): play a move that can be undone, undo it
    played: list[str] = []
    for _ in range(60):
        for move in game.legal_moves():
            trial = new_game(info.id, 7)
            for m in (*played, str(move)):
                trial.apply(m)
            if trial.can_undo():
                before = trial.moves
                trial.undo()
                assert (trial.moves == before + 1) == info.undo_counts
                return
        played.append(str(next(iter(game.legal_moves()))))
        game.apply(played[-1])
    pytest.fail("no move to undo in 60 moves")
