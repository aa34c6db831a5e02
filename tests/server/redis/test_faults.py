"""Faults and abuse against real processes: kill -9 of the server, a Redis outage, flooding.

They assert outcomes (what is stored, which error code, which close code), not timings, except
that a request during a Redis outage must be answered well within the client's timeout.
The 1,000-players soak is marked ``slow`` (``make bench`` runs it).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
import pytest_asyncio
import websockets

from benchmarks.load import procs
from benchmarks.load.generator import LoadConfig, count_board_entries, run_load
from engine import from_view
from server.config import Config
from server.runtime.clock import system_clock
from tests.support.app import serve
from tests.support.procs import ServerProcess, pinned_day
from tests.support.wsclient import Client

#: A fixed day and secret: the day's deals are the same in every run (the real day's deal ended
#: within a few first-legal moves on 2026-11-24). The offset is taken at import, hours before
#: midnight of the pinned day.
FLAGS = (
    *pinned_day(dt.datetime(2030, 6, 15, 12, tzinfo=dt.UTC), "faults"),
    "--rate-limit",
    "1000",
    "--rate-burst",
    "1000",
    "--address-bytes-rate",
    "0",
)


def first_move(view: dict[str, Any]) -> str | None:
    moves = list(from_view(view).legal_moves())
    return str(moves[0]) if moves else None


class Player:
    """A client that remembers the last acknowledged state of its game."""

    def __init__(self, client: Client, variant: str) -> None:
        self.c, self.variant = client, variant
        self.game_id, self.seq = "", 0
        self.view: dict[str, Any] = {}

    async def start(self) -> None:
        g = await self.c.request("daily.start", variant=self.variant)
        assert g["type"] == "game", g
        self.game_id, self.seq, self.view = g["game_id"], g["seq"], g["view"]

    async def step(self, timeout: float = 10.0, *, undo: bool = False) -> dict[str, Any]:
        """Play the first legal move (or take the last one back) and remember the result."""
        move = "undo" if undo else first_move(self.view)
        assert move is not None, "the test deal ran out of moves"
        kind, fields = ("undo", {}) if undo else ("move", {"move": move})
        r = await self.c.request(
            kind, timeout=timeout, game_id=self.game_id, expected_seq=self.seq, **fields
        )
        if r["type"] == "moved":
            assert not r["finished"], "the test deal finished too early"
            self.seq, self.view = r["seq"], r["view"]
        return r


async def finished_game(c: Client, variant: str) -> dict[str, Any]:
    """Start a game, play a move, resign: a result that must be on the board."""
    p = Player(c, variant)
    await p.start()
    assert (await p.step())["type"] == "moved"
    fin = await c.request("resign", game_id=p.game_id)
    assert fin["type"] == "finished", fin
    return fin


async def assert_state(c: Client, p: Player, *, in_flight_ok: bool = False) -> None:
    """The stored game is at the last acknowledged move (or one further, for a move that was
    in flight when the fault hit and was stored but never acknowledged)."""
    g = await c.request("game.get", game_id=p.game_id)
    assert g["type"] == "game", g
    if in_flight_ok and g["seq"] == p.seq + 1:
        p.seq, p.view = g["seq"], g["view"]
        return
    assert g["seq"] == p.seq and g["view"] == p.view


async def assert_on_board(c: Client, variant: str) -> None:
    r = await c.request("leaderboard.rank", variant=variant)
    assert r["type"] == "rank" and r["entry"] is not None, r
    assert r["entry"]["player_id"] == c.player_id


def readyz(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return exc.code


# -- kill -9 -------------------------------------------------------------------------------


async def test_kill_9_loses_no_acknowledged_move_or_result(tmp_path: Path) -> None:
    srv = ServerProcess(tmp_path / "data", FLAGS).start()
    try:
        a, b = await Client.connect(srv.url), await Client.connect(srv.url)
        await a.hello(name="kilo-a")
        await b.hello(name="kilo-b")
        await finished_game(a, "triple-deck")
        pa, pb = Player(a, "fourteen-out"), Player(b, "fourteen-out")
        for p in (pa, pb):
            await p.start()
        for _ in range(3):
            assert (await pa.step())["type"] == "moved"

        ten_acknowledged = asyncio.Event()

        async def hammer() -> None:
            """b plays and takes back, back to back, so a write is in flight at the kill."""
            with contextlib.suppress(websockets.ConnectionClosed, TimeoutError, OSError):
                while True:
                    r = await pb.step(timeout=3.0, undo=pb.seq % 2 == 1)
                    assert r["type"] == "moved", r
                    if pb.seq >= 10:
                        ten_acknowledged.set()

        task = asyncio.create_task(hammer())
        await asyncio.wait_for(ten_acknowledged.wait(), 60)  # some writes to lose, if any were
        assert not task.done(), task  # still playing when the server dies
        srv.kill()
        await task
        for c in (a, b):
            with contextlib.suppress(Exception):
                await c.close()

        srv.start()  # same port, same data dir
        a2, b2 = await Client.connect(srv.url), await Client.connect(srv.url)
        await a2.hello(token=a.token)
        await b2.hello(token=b.token)
        pa.c, pb.c = a2, b2
        await assert_state(a2, pa)
        await assert_state(b2, pb, in_flight_ok=True)
        await assert_on_board(a2, "triple-deck")
        again = await a2.request("daily.start", variant="triple-deck")
        assert again["finished"] and again["result"]["resigned"]
        for p in (pa, pb):  # both carry on where they were
            if first_move(p.view) is not None:
                r = await p.step()
                assert r["type"] == "moved", r
        await a2.close()
        await b2.close()
    finally:
        srv.stop()


# -- Redis outage --------------------------------------------------------------------------


async def test_redis_outage_gives_unavailable_then_recovers(tmp_path: Path) -> None:
    redis_server = procs.RedisServer(tmp_path / "redis", appendfsync="always").start()
    srv = ServerProcess(tmp_path / "data", FLAGS, redis_url=redis_server.url).start()
    port = srv.port
    try:
        c = await Client.connect(srv.url)
        await c.hello(name="outage-a")
        await finished_game(c, "triple-triangle")
        p = Player(c, "fourteen-out")
        await p.start()
        for _ in range(3):
            assert (await p.step())["type"] == "moved"

        redis_server.kill()  # SIGKILL; appendfsync always: every acknowledged write is on disk
        assert readyz(port) == 503
        requests: list[tuple[str, dict[str, Any]]] = [
            ("move", {"game_id": p.game_id, "move": first_move(p.view), "expected_seq": p.seq}),
            ("leaderboard.top", {"variant": "fourteen-out"}),
            ("daily.start", {"variant": "triple-deck"}),
        ]
        for kind, fields in requests:
            t0 = time.monotonic()
            r = await c.request(kind, timeout=10.0, **fields)
            assert r["type"] == "error" and r["code"] == "unavailable", (kind, r)
            assert time.monotonic() - t0 < 6.0, f"{kind} took too long to fail"
        fresh = await Client.connect(srv.url)
        r = await fresh.request("hello", versions=[1], name="outage-b")
        assert r["type"] == "error" and r["code"] == "unavailable", r

        redis_server.start()
        deadline = time.monotonic() + 20
        while True:  # the server reconnects by itself
            r = await c.request("leaderboard.rank", variant="triple-triangle")
            if r["type"] == "rank" or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        assert r["type"] == "rank" and r["entry"]["player_id"] == c.player_id, r
        assert readyz(port) == 200
        await assert_state(c, p)  # the move refused during the outage was not applied
        assert (await p.step())["type"] == "moved"
        await fresh.hello(name="outage-b")
        await c.close()
        await fresh.close()
    finally:
        srv.stop()
        redis_server.stop()


# -- flooding ------------------------------------------------------------------------------


@pytest_asyncio.fixture
async def limited_server(redis_url: str, tmp_path: Path) -> AsyncIterator[str]:
    """The app in-process with the default per-connection rate limit."""
    config = replace(Config(), redis_url=redis_url, data_dir=tmp_path, daily_secret=b"f")
    async with serve(config, system_clock(config.clock_offset_ms)) as app:
        yield app.url


async def test_flooding_client_is_limited_then_closed_others_unaffected(
    limited_server: str,
) -> None:
    calm = await Client.connect(limited_server)
    await calm.hello(name=f"calm{time.time_ns() % 10**8}")
    flood = await websockets.connect(limited_server)
    await flood.send(
        msgpack.packb(
            {"type": "hello", "id": 0, "versions": [1], "name": f"flood{time.time_ns() % 10**8}"}
        )
    )

    async def flooder() -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = []
        for i in range(1, 2_001):
            try:
                await flood.send(msgpack.packb({"type": "ping", "id": i}))
            except websockets.ConnectionClosed:
                break
        with contextlib.suppress(websockets.ConnectionClosed):
            async for frame in flood:
                got.append(msgpack.unpackb(frame))
        return got

    async def calm_client() -> int:
        answered = 0
        for _ in range(20):
            r = await calm.request("ping")
            assert r["type"] == "pong", r
            answered += 1
            await asyncio.sleep(0.02)
        return answered

    got, answered = await asyncio.gather(flooder(), calm_client())
    codes = {m.get("code") for m in got if m["type"] == "error"}
    assert "rate_limited" in codes
    assert codes <= {"rate_limited"}
    assert flood.close_code == 1008, flood.close_code
    assert answered == 20
    top = await calm.request("leaderboard.top", variant="fourteen-out")
    assert top["type"] == "leaderboard"
    await calm.close()


# -- soak ----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_1000_players_for_60_seconds(tmp_path: Path) -> None:
    procs.raise_fd_limit(4_096)
    data = tmp_path / "data"
    flags = ("--no-certify", "--daily-secret", "soak", "--log-level", "WARNING")
    srv = ServerProcess(data, flags).start()
    try:
        result = run_load(
            [srv.url],
            LoadConfig(
                players=1_000, processes=2, duration_s=60, ramp_s=10, think_s=2.0, max_moves=60
            ),
        )
        written = count_board_entries(f"unix://{data.resolve() / 'redis.sock'}")
    finally:
        srv.stop()
    print(f"\nsoak: {result.summary()}; {written} results written")
    assert result.error_count == 0, (result.errors, result.error_examples)
    assert result.players >= 1_000  # every player connected and said hello
    assert result.games_finished > 0 and result.moves > 0
    assert written == result.games_finished
