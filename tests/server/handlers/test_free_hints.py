"""Hints in free games (protocol 7 games): a few an hour per player, and on the solver's spare
capacity only, so a flood of them never holds up the day's certification or daily hints.
Real server, real Redis, real WebSockets, the real solver pool."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import redis.asyncio

from tests.support.app import serve, unthrottled_config
from tests.support.wsclient import Client

V8 = (7, 8)
HOUR_MS = 3_600_000


async def free_player(url: str, name: str) -> tuple[Client, str]:
    c = await Client.connect(url)
    await c.hello(name=name, versions=V8)
    game = await c.request("free.start", variant="fourteen-out")
    assert game["type"] == "game", game
    return c, game["game_id"]


async def test_free_game_hints_are_limited_per_hour_but_daily_hints_are_not(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    config = unthrottled_config(redis_url, tmp_path, b"fhint", free_hints_per_hour=3)
    async with serve(config) as app:
        me, game = await free_player(app.url, "hinter")
        for n in range(3):
            r = await me.request("hint", game_id=game, timeout=30)
            assert r["type"] == "hint", (n, r)
        r = await me.request("hint", game_id=game, timeout=30)
        assert (r["type"], r["code"]) == ("error", "limit_reached"), r
        assert "3 hints an hour" in r["message"]
        # The daily game's hints are not counted against it.
        daily = await me.request("daily.start", variant="fourteen-out")
        r = await me.request("hint", game_id=daily["game_id"], timeout=30)
        assert r["type"] == "hint", r
        app.clock.advance(HOUR_MS)  # a new hour
        r = await me.request("hint", game_id=game, timeout=30)
        assert r["type"] == "hint", r
        await me.close()


async def test_a_flood_of_free_hints_leaves_the_solver_to_certification(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """Free-game hints take at most `spare_slots` workers (all but one): while those are
    busy, six players' free hints are refused at once and a daily hint is still served;
    while certification fills every worker, free hints are refused at once instead of
    queueing ahead of it, and served again once it is done."""
    async with serve(unthrottled_config(redis_url, tmp_path, b"fhint2")) as app:
        pool = app.services.deals.pool
        assert pool.spare_slots() == max(1, pool.workers - 1)
        players = [await free_player(app.url, f"flood{i}") for i in range(6)]
        daily_player = await Client.connect(app.url)
        await daily_player.hello(name="dailyone", versions=V8)
        daily = await daily_player.request("daily.start", variant="fourteen-out")

        # Every worker started (as after the day's first hints).
        await asyncio.gather(*(pool.run(time.sleep, 0.2) for _ in range(pool.workers)))
        # Free hints in flight on every spare worker (long ones: 1.5 s each).
        in_flight = [
            asyncio.ensure_future(pool.run_spare(time.sleep, 1.5))
            for _ in range(pool.spare_slots())
        ]
        await asyncio.sleep(0.2)
        replies = await asyncio.gather(
            *(c.request("hint", game_id=g, timeout=30) for c, g in players)
        )
        assert [r.get("code") for r in replies] == ["unavailable"] * 6, replies
        assert "free-game hints wait" in replies[0]["message"]
        served = await daily_player.request("hint", game_id=daily["game_id"], timeout=30)
        assert served["type"] == "hint", served
        if pool.workers > 1:  # a worker was left free: no wait behind the free hints
            assert not all(f.done() for f in in_flight), "the daily hint did not wait"
        await asyncio.gather(*in_flight)

        # Certification takes every worker (the day's deals at midnight).
        certifying = [asyncio.ensure_future(pool.run(time.sleep, 1.5)) for _ in range(pool.workers)]
        await asyncio.sleep(0.2)
        started = time.monotonic()
        c, g = players[0]
        r = await c.request("hint", game_id=g, timeout=30)
        assert (r["type"], r["code"]) == ("error", "unavailable"), r
        assert time.monotonic() - started < 1.0, "refused at once, not queued"
        await asyncio.gather(*certifying)
        r = await c.request("hint", game_id=g, timeout=30)
        assert r["type"] == "hint", r  # and served once a worker is free
        for c, _ in players:
            await c.close()
        await daily_player.close()
