"""The production encoder's `welcome` (`validate_replies` off: the codec's kept wire forms of
the descriptors and of a new player's tier cells, `protocol.keep_plain`) is byte for byte the
validating encoder's, msgpack and JSON, and a new player's kept cells carry nobody's game.
Real server, real Redis, real WebSockets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import redis.asyncio

import protocol as p
from protocol import codec
from tests.support.app import serve, unthrottled_config
from tests.support.wsclient import Client

VERSIONS = tuple(sorted(p.SUPPORTED_VERSIONS))


def welcome_frame(c: Client) -> str | bytes:
    return next(
        f
        for f in c.raw
        if (msgpack.unpackb(f) if isinstance(f, bytes) else p.parse_frame(f, 1 << 20))["type"]
        == "welcome"
    )


def as_checked(frame: str | bytes) -> str | bytes:
    """The frame's message encoded again by the validating encoder."""
    return p.encode(p.decode_server(frame), isinstance(frame, bytes))


def kept_cells() -> list[tuple[Any, ...]]:
    return [
        v
        for v, *_ in codec._KEPT.values()
        if isinstance(v, tuple) and v and isinstance(v[0], p.DayTier)
    ]


async def test_welcomes_are_the_validating_encoders_and_kept_cells_hold_no_game(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    config = unthrottled_config(redis_url, tmp_path, b"welcome-frames", validate_replies=False)
    async with serve(config) as app:
        amy = await Client.connect(app.url)
        await amy.hello(name="amyframes", versions=VERSIONS, features=("rules_free",))
        started = await amy.request("daily.start", variant="fourteen-out", tier="hard")
        assert started["type"] == "game", started
        back = await Client.connect(app.url, binary=False)  # JSON, a returning player
        returning = await back.hello(token=amy.token, versions=VERSIONS)
        assert any(t.get("game_id") for t in returning["tiers"]), "her game is in her cells"
        newcomer = await Client.connect(app.url)
        fresh = await newcomer.hello(name="newframes", versions=VERSIONS)
        newcomer_json = await Client.connect(app.url, binary=False)
        fresh_json = await newcomer_json.hello(name="newframes2", versions=VERSIONS)

        for c in (amy, back, newcomer, newcomer_json):
            frame = welcome_frame(c)
            assert frame == as_checked(frame), c.seen[0]
        for w in (fresh, fresh_json):
            assert len(w["tiers"]) == 24
            assert not any(t.get("game_id") or t.get("catchup") for t in w["tiers"]), w
        kept = kept_cells()
        assert kept, "a new player's cells are kept"
        assert all(not (c.game_id or c.catchup) for cells in kept for c in cells)
        assert [codec._plain(c) for c in kept[-1]] == fresh["tiers"]
        for c in (amy, back, newcomer, newcomer_json):
            await c.close()
