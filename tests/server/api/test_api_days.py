"""The public API's days and boards (issue #29) through the real server, real Redis and real
WebSockets: the same rows as `leaderboard.top` (a held result and a marked account absent),
paging edges, ETags and 304s, cache policies, CORS and errors in one shape. Every answer is
checked against the OpenAPI document (`tests.support.apiclient`)."""

from __future__ import annotations

import io
import random
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
import redis.asyncio

from engine import from_view
from engine.solvers import WINNABLE, solve
from server.config import Config
from server.fairplay.admin import run
from tests.support.apiclient import ApiClient, openapi
from tests.support.app import App, serve
from tests.support.wsclient import Client

V5 = (1, 2, 3, 4, 5)
TODAY = "2030-06-15"
BOARD = f"/api/v1/days/{TODAY}/boards/fourteen-out"


@pytest_asyncio.fixture
async def app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    config = replace(
        Config(),
        redis_url=redis_url,
        data_dir=tmp_path,
        daily_secret=b"open data",
        rate_limit=1000.0,
        rate_burst=1000,
        certify_deals=True,
        solver_budget_s=5.0,
        fair_play_screen=True,
    )
    async with serve(config) as running:
        yield running


@pytest_asyncio.fixture
async def client(app: App, session: aiohttp.ClientSession) -> ApiClient:
    return ApiClient(app.http, session)


async def solved(c: Client, variant: str) -> tuple[str, list[str]]:
    g = await c.request("daily.start", variant=variant, timeout=60)
    assert g["type"] == "game", g
    result = solve(from_view(g["view"]), max_nodes=1_000_000)
    assert result.verdict == WINNABLE
    return g["game_id"], list(result.solution)


async def win(
    app: App, c: Client, variant: str, gaps_ms: list[int] | None = None
) -> dict[str, Any]:
    """Win today's deal; at a human pace unless ``gaps_ms`` says otherwise."""
    game_id, line = await solved(c, variant)
    rng = random.Random(len(line))
    gaps = gaps_ms or [rng.randint(1_500, 6_000) for _ in line]
    reply: dict[str, Any] = {}
    for seq, (move, gap) in enumerate(zip(line, gaps, strict=False)):
        app.clock.advance(gap)
        reply = await c.request("move", game_id=game_id, move=move, expected_seq=seq)
        assert reply["type"] == "moved", reply
    assert reply["finished"], reply
    return reply


async def lose(app: App, c: Client, variant: str, after_ms: int = 1_000) -> None:
    """Start today's deal and resign it ``after_ms`` later (a loss, ranked by that time)."""
    g = await c.request("daily.start", variant=variant, timeout=60)
    app.clock.advance(after_ms)
    assert (await c.request("resign", game_id=g["game_id"]))["type"] == "finished"


async def mark(redis_url: str, player_id: str) -> None:
    out = io.StringIO()
    code = await run(
        ["--redis-url", redis_url, "--reviewer", "rita", "mark", player_id], env={}, out=out
    )
    assert code == 0, out.getvalue()


async def test_a_board_is_leaderboard_top_held_and_marked_absent_paged_to_its_edges(
    app: App, client: ApiClient, redis_url: str
) -> None:
    amy = await app.client("amy", versions=V5)
    await win(app, amy, "fourteen-out")
    bot = await app.client("bot", versions=V5)
    held = await win(app, bot, "fourteen-out", [2] + [12] * 200)
    assert held["result"]["status"] == "flagged"  # the screen holds it: on no board
    for i, name in enumerate(("carl", "dora", "eve")):
        await lose(app, await app.client(name, versions=V5), "fourteen-out", 1_000 * (i + 1))
    eve_id = (
        await (await app.client("eve_again", versions=V5)).request("profile.get", name="eve")
    )["player_id"]
    await mark(redis_url, eve_id)  # a confirmed cheater: every row of theirs leaves the boards

    top = await amy.request("leaderboard.top", variant="fourteen-out", limit=100)
    got = (await client.get(BOARD + "?limit=100")).json()
    assert [e["name"] for e in got["entries"]] == [e["name"] for e in top["entries"]]
    assert [e["name"] for e in got["entries"]] == ["amy", "carl", "dora"]
    assert got["total"] == top["total"] == 3 and got["closed"] is False
    assert [e["rank"] for e in got["entries"]] == [1, 2, 3]
    assert got["entries"][0]["won"] and got["par"] is not None

    # Paging: a middle page, the last row, past the end, and malformed pages.
    page = (await client.get(BOARD + "?offset=1&limit=1")).json()
    assert [(e["rank"], e["name"]) for e in page["entries"]] == [(2, "carl")]
    assert page["offset"] == 1 and page["limit"] == 1 and page["total"] == 3
    last = (await client.get(BOARD + "?offset=2&limit=100")).json()
    assert [e["name"] for e in last["entries"]] == ["dora"]
    assert (await client.get(BOARD + "?offset=3")).json()["entries"] == []
    assert (await client.get(BOARD + "?offset=100000")).json()["entries"] == []
    for bad in ("limit=0", "limit=101", "offset=-1", "limit=ten", "offset=1.5"):
        answer = await client.get(f"{BOARD}?{bad}")
        assert (answer.status, answer.code) == (400, "bad_request"), bad
    # `today` is today's date, on the server's clock.
    assert (await client.get("/api/v1/days/today/boards/fourteen-out?limit=100")).json() == got


async def test_etags_304_cache_policies_and_cors(app: App, client: ApiClient) -> None:
    amy = await app.client("amy", versions=V5)
    await lose(app, amy, "fourteen-out")
    first = await client.get(BOARD)
    etag = first.headers["ETag"]
    assert first.headers["Cache-Control"] == "public, max-age=5", "today's board is live"
    assert first.headers["Access-Control-Allow-Origin"] == "*"
    again = await client.get(BOARD, {"If-None-Match": etag})
    assert again.status == 304 and again.headers["ETag"] == etag and again.body == b""
    assert (await client.get(BOARD, {"If-None-Match": f'W/{etag}, "other"'})).status == 304
    # A new result changes the board, so its ETag.
    await lose(app, await app.client("bob", versions=V5), "fourteen-out")
    changed = await client.get(BOARD, {"If-None-Match": etag})
    assert changed.status == 200 and changed.headers["ETag"] != etag
    assert changed.json()["total"] == 2
    day = await client.get("/api/v1/days/today")
    assert day.headers["Cache-Control"] == "public, max-age=5"
    spec = await client.get("/api/v1/openapi.json")
    assert spec.json() == openapi() and spec.headers["Cache-Control"] == "public, max-age=300"
    assert (
        await client.get("/api/v1/openapi.json", {"If-None-Match": spec.headers["ETag"]})
    ).status == 304
    async with client.session.head(client.http + BOARD) as r:
        assert r.status == 200 and r.headers["ETag"] == changed.headers["ETag"]
    # A browser's preflight, and a write refused in the error shape.
    async with client.session.options(
        client.http + BOARD,
        headers={"Origin": "https://example.org", "Access-Control-Request-Method": "GET"},
    ) as r:
        assert r.status == 204 and r.headers["Access-Control-Allow-Origin"] == "*"
        assert "GET" in r.headers["Access-Control-Allow-Methods"]
    async with client.session.post(client.http + BOARD, data=b"{}") as r:
        assert r.status == 405
        assert (await r.json()) == {
            "error": {"code": "method_not_allowed", "message": "the API is read-only: GET only"}
        }


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/api/v1/days/2030-13-01", 400, "bad_request"),
        ("/api/v1/days/20300615", 400, "bad_request"),
        ("/api/v1/days/2030-06-16", 404, "not_found"),  # tomorrow has not begun
        (f"/api/v1/days/{TODAY}/boards/klondike", 404, "not_found"),
        ("/api/v1/players/nobody_at_all", 404, "not_found"),
        ("/api/v1/players/amy/history/klondike", 404, "not_found"),
        ("/api/v1/races/not-a-race", 404, "not_found"),
        ("/api/v1/race-boards/fourteen-out/elo", 404, "not_found"),
        (f"/api/v1/days/{TODAY}/results.ndjson.gz", 409, "day_not_closed"),
    ],
)
async def test_errors_come_in_one_shape_with_a_code(
    app: App, client: ApiClient, path: str, status: int, code: str
) -> None:
    await app.client("amy", versions=V5)
    answer = await client.get(path)
    assert (answer.status, answer.code) == (status, code), answer.body
    assert set(answer.json()["error"]) == {"code", "message"} and answer.json()["error"]["message"]
    assert answer.headers["Cache-Control"] == "no-store"


async def test_an_unknown_endpoint_is_a_404_in_the_error_shape(
    app: App, session: aiohttp.ClientSession
) -> None:
    async with session.get(app.http + "/api/v1/nothing/here") as r:
        assert r.status == 404
        assert (await r.json())["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/players/%00",
        "/api/v1/players/" + "x" * 5000,
        "/api/v1/players/%F0%9F%82%A1/history/fourteen-out",
        "/api/v1/players/amy/history/fourteen-out?before=9999-99-99",
        "/api/v1/players/amy/history/fourteen-out?limit=99999999999999999999999",
        "/api/v1/days/0000-01-01",
        "/api/v1/days/2026-W48-3",  # a week date: one spelling per day (one cache key)
        "/api/v1/days/today/boards/fourteen-out?limit=1_0",
        "/api/v1/days/today/boards/fourteen-out?limit=%D9%A1%D9%A2",  # Arabic-Indic 12
        "/api/v1/days/%2e%2e/boards/fourteen-out",
        "/api/v1/days/today/boards/fourteen-out?offset=%00",
        "/api/v1/races/r-%00",
        "/api/v1/races/" + "9" * 300 + "/events",
        "/api/v1/race-boards/fourteen-out/wins?date=tomorrow",
        "/api/v1/live/klondike/board",
        "/api/v1/live/fourteen-out/board?top=-1",
    ],
)
async def test_bad_input_is_a_clear_error_never_a_crash(
    app: App, session: aiohttp.ClientSession, path: str
) -> None:
    async with session.get(app.http + path) as r:
        assert r.status in (400, 404), (path, r.status, await r.text())
        body = await r.json()
        assert set(body) == {"error"} and body["error"]["code"] in ("bad_request", "not_found")
