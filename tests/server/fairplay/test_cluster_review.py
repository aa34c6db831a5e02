"""The screen and `solitaire-admin` on a real three-master Redis Cluster: a bot's result is
held, listed, cleared onto its board, and its account marked and unmarked, every script over
one slot (the server and the admin tool connect with the same ``redis+cluster://`` URL)."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import redis.asyncio

from engine import from_view
from engine.solvers import WINNABLE, solve
from server.fairplay.admin import run
from server.redis import keys
from tests.support.app import serve
from tests.support.races import race_config

pytest_plugins = ["tests.support.cluster"]


async def admin(url: str, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = await run(["--redis-url", url, "--reviewer", "ops", *argv], env={}, out=out)
    return code, out.getvalue()


async def test_held_cleared_marked_on_a_cluster(
    cluster_url: str, cluster_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    config = replace(
        race_config(cluster_url, tmp_path),
        certify_deals=True,
        solver_budget_s=5.0,
        fair_play_screen=True,
    )
    async with serve(config) as app:
        bot = await app.client("cl-bot", versions=(5,))
        amy = await app.client("cl-amy", versions=(5,))
        g = await bot.request("daily.start", variant="fourteen-out", timeout=60)
        solved = solve(from_view(g["view"]), max_nodes=1_000_000)
        assert solved.verdict == WINNABLE
        reply = {}
        for seq, move in enumerate(solved.solution):
            app.clock.advance(10)
            reply = await bot.request("move", game_id=g["game_id"], move=move, expected_seq=seq)
        assert reply["result"]["status"] == "flagged"
        assert (await amy.request("leaderboard.top", variant="fourteen-out"))["total"] == 0

        code, out = await admin(cluster_url, "held")
        assert code == 0 and g["game_id"] in out and "machine_pace" in out
        assert (await admin(cluster_url, "clear", g["game_id"]))[0] == 0
        top = await amy.request("leaderboard.top", variant="fourteen-out")
        assert [e["name"] for e in top["entries"]] == ["cl-bot"]

        assert (await admin(cluster_url, "mark", bot.player_id))[0] == 0
        assert (await amy.request("leaderboard.top", variant="fourteen-out"))["total"] == 0
        assert (await admin(cluster_url, "unmark", bot.player_id))[0] == 0
        assert (await amy.request("leaderboard.top", variant="fourteen-out"))["total"] == 1
        assert await cluster_client.llen(keys.fairplay_audit()) == 3
        for c in (bot, amy):
            await c.close()
