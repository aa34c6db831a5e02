"""Open data (issue #29): a day's every ranked result, published once the day is closed,
served byte for byte the same by two server processes, dumped to files by the command line
and replayed by `python -m engine verify`; no seed of a day that is not closed anywhere."""

from __future__ import annotations

import asyncio
import datetime as dt
import gzip
import io
import json
import random
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest_asyncio
import redis.asyncio

from engine import VARIANT_IDS, from_view
from engine.solvers import WINNABLE, solve
from engine.verify import verify_lines
from server.api import API
from server.api.dump import run as dump
from server.api.opendata import OpenDataFiles
from server.boards.leaderboard import BoardRef
from server.config import Config
from server.fairplay.admin import run as admin
from server.redis import keys
from server.runtime.clock import ManualClock
from tests.support.apiclient import ApiClient, schema_validate
from tests.support.app import T0_MS, App, serve
from tests.support.wsclient import Client

V5 = (1, 2, 3, 4, 5)
DAY_MS = 86_400_000
MIDNIGHT = T0_MS + DAY_MS // 2  # the end of 2030-06-15
DAY = "2030-06-15"
RESULTS = f"/api/v1/days/{DAY}/results.ndjson.gz"


@pytest_asyncio.fixture
async def two_apps(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[tuple[App, App]]:
    """Two server processes on one Redis, fair play on, deals certified winnable."""
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
    async with (
        serve(config, ManualClock(MIDNIGHT - 3_600_000)) as a,
        serve(config, ManualClock(MIDNIGHT - 3_600_000)) as b,
    ):
        yield a, b


def both(apps: tuple[App, App], ms: int) -> None:
    for app in apps:
        app.clock.set(ms)


async def win(apps: tuple[App, App], c: Client, variant: str, gap_ms: int | None) -> None:
    """Win today's deal with the solver's line: at a human pace, or every ``gap_ms``."""
    g = await c.request("daily.start", variant=variant, timeout=60)
    line = list(solve(from_view(g["view"]), max_nodes=1_000_000).solution)
    assert solve(from_view(g["view"]), max_nodes=1_000_000).verdict == WINNABLE
    rng = random.Random(7)
    reply: dict[str, Any] = {}
    for seq, move in enumerate(line):
        now = apps[0].clock.now_ms() + (gap_ms if gap_ms is not None else rng.randint(1_500, 4_000))
        both(apps, now)
        reply = await c.request("move", game_id=g["game_id"], move=move, expected_seq=seq)
    assert reply["finished"] and reply["result"]["won"], reply


async def some_moves(c: Client, variant: str, n: int) -> str:
    g = await c.request("daily.start", variant=variant, timeout=60)
    for seq in range(n):
        now = await c.request("game.get", game_id=g["game_id"])
        moves = list(from_view(now["view"]).legal_moves())
        if not moves:
            break
        r = await c.request("move", game_id=g["game_id"], move=str(moves[0]), expected_seq=seq)
        assert r["type"] == "moved", r
    return str(g["game_id"])


async def test_a_closed_days_results_are_served_alike_everywhere_and_replay(
    two_apps: tuple[App, App], redis_url: str, tmp_path: Path
) -> None:
    a, b = two_apps
    amy = await a.client("amy", versions=V5)
    await win(two_apps, amy, "fourteen-out", None)
    bot = await b.client("bot", versions=V5)
    await win(two_apps, bot, "fourteen-out", 10)  # held by the screen: on no board, no file
    bea = await b.client("bea", versions=V5)
    resigned = await some_moves(bea, "triple-triangle", 3)
    assert (await bea.request("resign", game_id=resigned))["type"] == "finished"
    night = await a.client("night_owl", versions=V5)
    await some_moves(night, "triple-deck", 2)  # left open over midnight

    async with aiohttp.ClientSession() as session:
        on_a, on_b = ApiClient(a.http, session), ApiClient(b.http, session)
        today = await on_a.get(RESULTS)
        assert (today.status, today.code) == (409, "day_not_closed")
        assert 0 < int(today.headers["Retry-After"]) <= 3_600, "until the day ends, at least"
        both(two_apps, MIDNIGHT + 1_000)
        # Over, but a game of it is still open: not yet, and no seed anywhere.
        assert (await on_b.get(RESULTS)).code == "day_not_closed"
        day = (await on_a.get(f"/api/v1/days/{DAY}")).json()
        assert day["closed"] is False and all(d["seed"] is None for d in day["deals"])
        assert await a.services.day_closer.sweep(dt.date(2030, 6, 15))

        # Several readers at once on each process: one build each, the same bytes for all.
        many = await asyncio.gather(*(x.get(RESULTS) for x in (on_a, on_b) for _ in range(4)))
        assert len({m.body for m in many}) == 1 and {m.status for m in many} == {200}
        got_a, got_b = await on_a.get(RESULTS), await on_b.get(RESULTS)
        assert got_a.status == got_b.status == 200
        assert got_a.body == got_b.body, "two processes serve the same bytes"
        assert got_a.headers["ETag"] == got_b.headers["ETag"]
        assert got_a.headers["Content-Type"] == "application/gzip"
        assert got_a.headers["Cache-Control"] == "public, no-cache", "a review may change it"
        again = await on_b.get(RESULTS, {"If-None-Match": got_a.headers["ETag"]})
        assert again.status == 304

        lines = got_a.lines()
        for line in lines:
            schema_validate(line, "ResultLine")
        names = {(x["variant"], x["name"]) for x in lines}
        assert names == {
            ("fourteen-out", "amy"),
            ("triple-triangle", "bea"),
            ("triple-deck", "night_owl"),
        }, "every ranked result, the held one left out"
        seeds = await amy.request("daily.seeds", date=DAY)
        by = {x["variant"]: x for x in lines}
        for variant, line in by.items():
            assert line["seed"] == seeds["seeds"][variant] and line["rank"] == 1
            assert len(line["times_ms"]) == len(line["moves"]) == line["move_count"]
        assert by["fourteen-out"]["won"] and by["triple-triangle"]["resigned"]
        # The day's seeds are public now, on the day's page too (and it is cached long).
        day_now = await on_b.get(f"/api/v1/days/{DAY}")
        assert {d["variant"]: d["seed"] for d in day_now.json()["deals"]} == {
            v: seeds["seeds"].get(v) for v in VARIANT_IDS
        }
        assert day_now.headers["Cache-Control"] == "public, max-age=86400, immutable"
        board = await on_b.get(f"/api/v1/days/{DAY}/boards/fourteen-out")
        assert board.body == (await on_a.get(f"/api/v1/days/{DAY}/boards/fourteen-out")).body
        assert board.json()["closed"] and [e["name"] for e in board.json()["entries"]] == ["amy"]

    # Anyone replays the whole file with the engine alone.
    count, failures = verify_lines(iter(gzip.decompress(got_a.body).splitlines()))
    assert count == 3 and failures == []
    doctored = [
        json.dumps({**by["fourteen-out"], "time_ms": 1, "moves": by["fourteen-out"]["moves"][:-1]})
    ]
    assert len(verify_lines(iter(doctored))[1]) == 1

    # The command line dumps the same bytes; a day not closed is skipped (exit 1).
    out = tmp_path / "dumps"
    assert await dump(["--from", DAY, "--out", str(out), "--redis-url", redis_url], env={}) == 0
    assert (out / f"results-{DAY}.ndjson.gz").read_bytes() == got_a.body
    status = await dump(
        ["--from", DAY, "--to", "2030-06-16", "--out", str(out), "--redis-url", redis_url], env={}
    )
    assert status == 1 and not (out / "results-2030-06-16.ndjson.gz").exists()


def files(app: App) -> OpenDataFiles:
    """The app's open-data files (their build count; the test shortens a wait)."""
    assert app.web_app is not None
    return app.web_app[API].files


async def mark(redis_url: str, player_id: str) -> None:
    """A reviewer marks the account a cheater (the `solitaire-admin` console)."""
    out = io.StringIO()
    code = await admin(
        ["--redis-url", redis_url, "--reviewer", "rita", "mark", player_id], env={}, out=out
    )
    assert code == 0, out.getvalue()


async def test_a_mark_takes_a_cheaters_results_out_of_every_processs_file_at_once(
    two_apps: tuple[App, App], redis_url: str, redis_client: redis.asyncio.Redis
) -> None:
    """A cheater's win is in the published file; a reviewer marks the account: the very next
    request on either process serves a file without it (not the old file for minutes, as
    `immutable`), and the file is built once for both processes, in Redis."""
    a, b = two_apps
    cheat = await a.client("cheat", versions=V5)
    await win(two_apps, cheat, "fourteen-out", None)
    bea = await b.client("bea", versions=V5)
    resigned = await some_moves(bea, "triple-triangle", 3)
    assert (await bea.request("resign", game_id=resigned))["type"] == "finished"
    both(two_apps, MIDNIGHT + 1_000)
    assert await a.services.day_closer.sweep(dt.date(2030, 6, 15))

    async with aiohttp.ClientSession() as session:
        on_a, on_b = ApiClient(a.http, session), ApiClient(b.http, session)
        many = await asyncio.gather(*(x.get(RESULTS) for x in (on_a, on_b) for _ in range(3)))
        assert {m.status for m in many} == {200} and len({m.body for m in many}) == 1
        assert files(a).builds + files(b).builds == 1, "one build, shared through Redis"
        assert await redis_client.exists(keys.opendata_file(dt.date(2030, 6, 15)))
        before = many[0]
        assert "cheat" in {x["name"] for x in before.lines()}
        assert "immutable" not in before.headers["Cache-Control"]
        board_path = f"/api/v1/days/{DAY}/boards/fourteen-out"
        board = await on_a.get(board_path)
        assert [e["name"] for e in board.json()["entries"]] == ["cheat"]
        assert "immutable" not in board.headers["Cache-Control"]

        cheat_id = (await cheat.request("profile.get"))["player_id"]
        await mark(redis_url, cheat_id)
        for on in (on_a, on_b):  # at once, on every process, and an old copy is not kept
            after = await on.get(RESULTS, {"If-None-Match": before.headers["ETag"]})
            assert after.status == 200, "the old ETag no longer matches"
            assert {x["name"] for x in after.lines()} == {"bea"}
            assert after.headers["ETag"] != before.headers["ETag"]
            gone = await on.get(board_path, {"If-None-Match": board.headers["ETag"]})
            assert gone.status == 200 and gone.json()["entries"] == []
        assert files(a).builds + files(b).builds == 2, "built again once, for both"
        same = await on_b.get(RESULTS, {"If-None-Match": after.headers["ETag"]})
        assert same.status == 304


async def test_days_past_retention_or_never_dealt_are_404_and_builds_are_bounded(
    two_apps: tuple[App, App], redis_client: redis.asyncio.Redis
) -> None:
    """A scraper walking back through the dates gets 404 for every day past the retention
    and every day nothing was dealt: no empty file, nothing built or kept. A build held by
    another process for too long answers 503 with Retry-After, not an unbounded wait."""
    a = two_apps[0]
    amy = await a.client("amy", versions=V5)
    await some_moves(amy, "fourteen-out", 2)
    both(two_apps, MIDNIGHT + 1_000)
    assert await a.services.day_closer.sweep(dt.date(2030, 6, 15))
    async with aiohttp.ClientSession() as session:
        on_a = ApiClient(a.http, session)
        # 2030-06-16 today: the retention (90 days) reaches back to 2030-03-19.
        for day in ("2030-03-18", "2029-01-01", "1970-01-01"):
            past = await on_a.get(f"/api/v1/days/{day}/results.ndjson.gz")
            assert (past.status, past.code) == (404, "not_found"), day
            assert "90 days" in past.json()["error"]["message"]
        for day in ("2030-03-19", "2030-06-01", "2030-06-14"):  # kept, but nothing dealt
            never = await on_a.get(f"/api/v1/days/{day}/results.ndjson.gz")
            assert (never.status, never.code) == (404, "not_found"), day
        assert files(a).builds == 0
        assert await redis_client.keys("sol:{od:*") == []

        # Another process is building the day (its lock held): wait a bounded time, then 503.
        lock = keys.opendata_building(dt.date(2030, 6, 15))
        await redis_client.set(lock, "another process", px=60_000)
        files(a).wait_s = 0.5
        busy = await on_a.get(RESULTS)
        assert (busy.status, busy.code) == (503, "unavailable")
        assert busy.headers["Retry-After"] == "5" and busy.headers["Cache-Control"] == "no-store"
        await redis_client.delete(lock)
        ok = await on_a.get(RESULTS)
        assert ok.status == 200 and [x["name"] for x in ok.lines()] == ["amy"]
        # The kept file expires with the day's boards.
        june_15 = dt.date(2030, 6, 15)
        ttl = await redis_client.ttl(keys.opendata_file(june_15))
        board_ttl = await redis_client.ttl(BoardRef.daily("fourteen-out", june_15).board_key)
        assert ttl > 0 and abs(ttl - board_ttl) <= 2
