"""Every Redis-touching path answers `unavailable` during an outage (issue 12): deal peeks
(par on leaderboards and games), revealed seeds, and every request type the server knows,
against a real redis-server killed."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import protocol as p
from benchmarks.load import procs
from server.config import Config
from server.games.deals import DailyDeals, SolverPool
from server.redis.embedded import connect
from server.runtime.clock import ManualClock
from server.runtime.errors import StoreUnavailable
from server.transport.router import Router
from server.transport.session import Session
from tests.support.app import T0_MS, serve
from tests.support.protodoc import EXAMPLES, example
from tests.support.wsclient import Client

PAST = dt.date(2030, 6, 10)


async def test_deal_peeks_and_revealed_seeds_are_unavailable(tmp_path: Path) -> None:
    redis_server = procs.RedisServer(tmp_path / "redis").start()
    client = connect(redis_server.url)
    deals = DailyDeals(client, ManualClock(T0_MS), b"s", SolverPool(), certify=False)
    try:
        assert await deals.peek("fourteen-out", PAST) is None
        redis_server.kill()
        for call in (deals.peek("fourteen-out", PAST), deals.revealed(PAST)):
            try:
                await call
            except StoreUnavailable:
                continue
            raise AssertionError("no StoreUnavailable")
    finally:
        await client.aclose()
        redis_server.stop()


async def test_daily_seeds_and_old_leaderboards_answer_unavailable(tmp_path: Path) -> None:
    redis_server = procs.RedisServer(tmp_path / "redis").start()
    config = replace(
        Config(), redis_url=redis_server.url, data_dir=tmp_path / "data", daily_secret=b"outage"
    )
    try:
        async with serve(config) as app:
            c = await app.client("outage")
            redis_server.kill()
            cases: list[tuple[str, dict[str, Any]]] = [
                ("daily.seeds", {"date": PAST.isoformat()}),
                ("leaderboard.top", {"variant": "fourteen-out", "date": PAST.isoformat()}),
            ]
            for kind, fields in cases:
                r = await c.request(kind, **fields)
                assert (r["type"], r["code"]) == ("error", "unavailable"), (kind, r)
            await c.close()
    finally:
        redis_server.stop()


#: Requests that need no Redis on the connection below, and their replies during an outage:
#: a ping, and unwatching a race this connection does not watch.
NO_REDIS = {"ping": "pong", "race.unwatch": "not_found"}


async def test_no_request_answers_internal_during_an_outage(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every request type the server knows, sent while Redis is down (a real redis-server,
    killed), each built from docs/protocol.md's example with ids of real things made before
    the outage: each answers `unavailable` (or, needing no Redis, its usual reply), never
    `internal`, and nothing is logged as an internal error."""
    redis_server = procs.RedisServer(tmp_path / "redis").start()
    config = replace(
        Config(),
        redis_url=redis_server.url,
        data_dir=tmp_path / "data",
        daily_secret=b"outage",
        rate_limit=1000.0,
        rate_burst=1000,
    )
    versions = tuple(sorted(p.SUPPORTED_VERSIONS))
    try:
        async with serve(config) as app:
            c = await app.client("outage_all", versions=versions)
            game = await c.request("daily.start", variant="triple-deck")
            room = await c.request("race.create", variant="fourteen-out")
            assert (game["type"], room["type"]) == ("game", "race.room")
            ids = {"game_id": game["game_id"], "race_id": room["race"]["race_id"]}
            redis_server.kill()
            replies: dict[str, dict[str, Any]] = {}
            for kind in sorted(p.CLIENT_MESSAGES):
                fields = example(kind, **{k: v for k, v in ids.items() if k in EXAMPLES[kind]})
                if kind == "race.join":
                    fields["code"] = room["race"]["code"]
                if kind in ("hello", "signin.redeem"):  # a new connection's first request
                    fresh = await Client.connect(app.url)
                    replies[kind] = await fresh.request(kind, **fields)
                    await fresh.close()
                    continue
                replies[kind] = await c.request(kind, **fields)
            await c.close()
    finally:
        redis_server.stop()
    assert set(replies) == set(p.CLIENT_MESSAGES)
    internal = {k: r for k, r in replies.items() if r.get("code") == "internal"}
    assert internal == {}, "an outage is `unavailable`, never `internal`"
    for kind, reply in replies.items():
        expected = NO_REDIS.get(kind, "unavailable")
        assert expected in (reply["type"], reply.get("code")), (kind, reply)
    assert "internal error" not in caplog.text
    assert "untranslated redis outage" not in caplog.text, (
        "each store translates its own outages; the connection's net is only a net"
    )


async def ping_redis(session: Session, req: p.Ping) -> p.ServerMessage:
    """A handler calling Redis with no store's translation around it."""
    await session.services.redis.ping()
    return p.Pong(id=req.id, server_time=session.services.clock.now_ms())


async def test_a_redis_call_no_store_translates_is_unavailable_too(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The safety net: whatever Redis call a handler makes, an outage is `unavailable`."""
    redis_server = procs.RedisServer(tmp_path / "redis").start()
    config = replace(
        Config(), redis_url=redis_server.url, data_dir=tmp_path / "data", daily_secret=b"outage"
    )
    try:
        async with serve(config, routes=Router().on(p.Ping, ping_redis)) as app:
            c = await app.client("outage_raw")
            assert (await c.request("ping"))["type"] == "pong"
            redis_server.kill()
            reply = await c.request("ping")
            assert (reply["type"], reply["code"], reply["id"]) == ("error", "unavailable", 3)
            await c.close()
    finally:
        redis_server.stop()
    assert "internal error" not in caplog.text
