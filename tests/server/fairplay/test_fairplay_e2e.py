"""The issue's cheats played as cheating clients play them, through the real server (real
WebSockets, real Redis, a manual clock), and their review with `solitaire-admin`."""

from __future__ import annotations

import io
import random
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest_asyncio
import redis.asyncio

from engine import from_view
from engine.solvers import WINNABLE, solve
from server.config import Config
from server.fairplay.admin import run
from server.fairplay.review import Action, AuditRecord
from server.redis import keys
from tests.support.app import App, serve
from tests.support.wsclient import Client

SECRET = b"fair play"
V5 = (1, 2, 3, 4, 5)
DAY_MS = 86_400_000


@pytest_asyncio.fixture
async def app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    config = replace(
        Config(),
        redis_url=redis_url,
        data_dir=tmp_path,
        daily_secret=SECRET,
        rate_limit=1000.0,
        rate_burst=1000,
        certify_deals=True,
        solver_budget_s=5.0,
        hint_budget_s=10.0,
        fair_play_screen=True,
    )
    async with serve(config) as running:
        yield running


async def admin(redis_url: str, *argv: str, reviewer: str = "rita") -> tuple[int, str]:
    out = io.StringIO()
    code = await run(["--redis-url", redis_url, "--reviewer", reviewer, *argv], env={}, out=out)
    return code, out.getvalue()


async def solve_from_view(c: Client, variant: str) -> tuple[str, list[str]]:
    """What the bot does: start the deal and solve it from its first view (dealt face up)."""
    g = await c.request("daily.start", variant=variant, timeout=60)
    assert g["type"] == "game", g
    result = solve(from_view(g["view"]), max_nodes=1_000_000)
    assert result.verdict == WINNABLE
    return g["game_id"], list(result.solution)


async def play_line(
    app: App, c: Client, game_id: str, line: list[str], gaps_ms: list[int]
) -> dict[str, Any]:
    """Send ``line``, the manual clock advanced by ``gaps_ms`` before each move; the last
    ``moved`` reply."""
    reply: dict[str, Any] = {}
    for seq, (move, gap) in enumerate(zip(line, gaps_ms, strict=True)):
        app.clock.advance(gap)
        reply = await c.request("move", game_id=game_id, move=move, expected_seq=seq)
        assert reply["type"] == "moved", reply
    assert reply["finished"] and reply["result"]["won"]
    return reply


def human_gaps(n: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randint(1_500, 6_000) for _ in range(n)]


async def test_bot_speed_is_held_shown_flagged_to_its_player_only(app: App, redis_url: str) -> None:
    amy = await app.client("amy", versions=V5)
    gid_a, line = await solve_from_view(amy, "fourteen-out")
    done = await play_line(app, amy, gid_a, line, human_gaps(len(line), 1))
    assert done["result"]["rank"] == 1 and "status" not in done["result"]  # human: ranked

    bot = await app.client("bot", versions=V5)
    gid_b, line_b = await solve_from_view(bot, "fourteen-out")
    assert line_b == line  # the same deal, the same line
    # 2 ms to the first move, then the rest 12 ms apart: 26 moves in ~0.3 s.
    done = await play_line(app, bot, gid_b, line_b, [2] + [12] * (len(line_b) - 1))
    result = done["result"]
    assert result["status"] == "flagged" and "rank" not in result and result["won"]
    assert app.services.metrics.results_held.values == {"fourteen-out": 1.0}  # amy's is not

    # Everyone else's leaderboard answers leave it out, totals included.
    top = await amy.request("leaderboard.top", variant="fourteen-out")
    assert [e["name"] for e in top["entries"]] == ["amy"] and top["total"] == 1
    around = await amy.request("leaderboard.around", variant="fourteen-out", k=5)
    assert [e["name"] for e in around["entries"]] == ["amy"] and around["total"] == 1
    rank = await amy.request("leaderboard.rank", variant="fourteen-out")
    assert rank["entry"]["rank"] == 1 and rank["total"] == 1
    # Its own player sees it flagged; an older client sees it without a rank.
    again = await bot.request("game.get", game_id=gid_b)
    assert again["result"]["status"] == "flagged" and "rank" not in again["result"]
    old_bot = await Client.connect(app.url)
    await old_bot.hello(token=bot.token, versions=(1, 2, 3, 4))
    seen = await old_bot.request("game.get", game_id=gid_b)
    assert "status" not in seen["result"] and "rank" not in seen["result"]
    assert (await bot.request("leaderboard.rank", variant="fourteen-out")).get("entry") is None

    # Nor in its profile's results.
    profile = await amy.request("profile.get", player_id=bot.player_id)
    assert profile["type"] == "profile" and profile["recent"] == []

    # The review desk lists it with its evidence.
    code, out = await admin(redis_url, "held")
    assert code == 0 and gid_b in out and gid_a not in out
    assert "machine_pace" in out and "win_time_floor" in out and "2, 12, 12" in out

    # Cleared: it enters the board with the rank it earned (faster than amy's: first).
    code, out = await admin(redis_url, "clear", gid_b, "--note", "streamed on video")
    assert code == 0 and "clear" in out
    top = await amy.request("leaderboard.top", variant="fourteen-out")
    assert [e["name"] for e in top["entries"]] == ["bot", "amy"] and top["total"] == 2
    again = await bot.request("game.get", game_id=gid_b)
    assert again["result"]["rank"] == 1 and "status" not in again["result"]
    profile = await amy.request("profile.get", player_id=bot.player_id)
    assert len(profile["recent"]) == 1  # in its history now that it is cleared
    assert (await admin(redis_url, "held"))[1].startswith("no results held")
    # Reviewed once: a second review is refused.
    assert (await admin(redis_url, "confirm", gid_b))[0] == 1
    for c in (amy, bot, old_bot):
        await c.close()


async def test_scouting_with_an_alt_then_replaying_is_held_and_confirmed(
    app: App, redis_url: str, redis_client: redis.asyncio.Redis
) -> None:
    alt = await app.client("alt", versions=V5)
    g = await alt.request("daily.start", variant="triple-triangle", timeout=60)
    gid_alt, hints = g["game_id"], 0
    learned: list[str] = []
    while True:  # the alt learns the deal from hints, one move at a time
        h = await alt.request("hint", game_id=gid_alt, timeout=30)
        assert h["type"] == "hint" and h["move"], h
        hints += 1
        app.clock.advance(2_000)
        r = await alt.request("move", game_id=gid_alt, move=h["move"], expected_seq=len(learned))
        assert r["type"] == "moved", r
        learned.append(r["move"])
        if r["finished"]:
            break
    assert hints == len(learned) > 10

    main = await app.client("main", versions=V5)
    g = await main.request("daily.start", variant="triple-triangle", timeout=60)
    gaps = [15] + [9] * (len(learned) - 1)
    done = await play_line(app, main, g["game_id"], learned, gaps)
    assert done["result"]["status"] == "flagged" and done["result"]["hints"] == 0

    async def names() -> list[str]:
        top = await alt.request("leaderboard.top", variant="triple-triangle")
        return [e["name"] for e in top["entries"]]

    assert await names() == ["alt"]  # the scout's own hinted game ranks; the replay does not

    code, out = await admin(redis_url, "held")
    assert g["game_id"] in out and "machine_pace" in out
    code, out = await admin(redis_url, "confirm", g["game_id"], "--mark", "--note", "alt scout")
    assert code == 0 and "confirm" in out and f"mark {main.player_id}" in out
    assert await redis_client.hexists(keys.fairplay_marked(), main.player_id)
    assert await names() == ["alt"]
    assert (await admin(redis_url, "held"))[1].startswith("no results held")
    for c in (alt, main):
        await c.close()


async def test_marking_takes_every_result_off_every_board_and_unmark_restores(
    app: App, redis_url: str, redis_client: redis.asyncio.Redis
) -> None:
    cheat = await app.client("cheat", versions=V5)
    amy = await app.client("amy", versions=V5)
    days: list[str] = []
    for day in range(2):  # yesterday's and today's boards: both human-paced, both ranked
        if day:
            app.clock.advance(DAY_MS)
        for c in (cheat, amy):
            gid, line = await solve_from_view(c, "fourteen-out")
            gaps = human_gaps(len(line), day)
            if c is cheat:
                gaps = [g - 300 for g in gaps]  # a little faster: ranked first
            await play_line(app, c, gid, line, gaps)
        days.append(gid.split(".")[2])

    async def names(day: str) -> list[str]:
        top = await amy.request("leaderboard.top", variant="fourteen-out", date=day)
        assert top["total"] == len(top["entries"])
        return [e["name"] for e in top["entries"]]

    assert [await names(d) for d in days] == [["cheat", "amy"]] * 2
    code, out = await admin(redis_url, "mark", cheat.player_id, "--note", "confessed")
    assert code == 0 and "2 daily entries" in out
    assert [await names(d) for d in days] == [["amy"]] * 2
    rank = await amy.request("leaderboard.rank", variant="fourteen-out", date=days[0])
    assert rank["entry"]["rank"] == 1 and rank["total"] == 1

    # While marked, a new result is held at its finish, whatever its pace.
    app.clock.advance(DAY_MS)
    gid, line = await solve_from_view(cheat, "fourteen-out")
    done = await play_line(app, cheat, gid, line, human_gaps(len(line), 99))
    assert done["result"]["status"] == "flagged"
    code, out = await admin(redis_url, "held")
    assert "account_marked" in out

    code, out = await admin(redis_url, "unmark", cheat.player_id, reviewer="sam")
    assert code == 0 and "2 daily entries" in out
    assert [await names(d) for d in days] == [["cheat", "amy"]] * 2
    assert (await admin(redis_url, "unmark", cheat.player_id))[0] == 1  # not marked now

    code, out = await admin(redis_url, "audit")
    assert code == 0
    raw = await redis_client.lrange(keys.fairplay_audit(), 0, -1)
    log = [AuditRecord.loads(str(r)) for r in raw]
    assert [(a.action, a.reviewer, a.target) for a in log] == [
        (Action.MARK, "rita", cheat.player_id),
        (Action.UNMARK, "sam", cheat.player_id),
    ]
    assert log[0].note == "confessed" and log[0].at_ms > 0
    assert "mark" in out and "confessed" in out and "sam" in out
    for c in (cheat, amy):
        await c.close()
