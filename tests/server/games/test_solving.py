"""Certified daily deals, par and hints over real WebSockets and real Redis."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import pytest
import pytest_asyncio
import redis.asyncio

from engine import new_game
from engine.solvers import WINNABLE, solve
from server.config import Config
from server.games.deals import DailyDeals, SolverPool, candidate_seed, timed_hint
from server.games.free import FREE_SEED_BASE
from server.games.store import GameStore
from server.runtime.clock import ManualClock
from tests.support.app import App, serve
from tests.support.procs import QUIET, ServerProcess
from tests.support.races import start_race
from tests.support.wsclient import Client

R = TypeVar("R")

SECRET = b"solving"
DAY = dt.date(2030, 6, 15)
HINT_PENALTY_MS = 30_000
#: The test's own searches count nodes, not seconds: the same verdict on any machine. (The
#: server certifies with its wall-clock budget, seconds per candidate; these deals take
#: milliseconds.)
NODE_BUDGET = 1_000_000


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
        hint_penalty_ms=HINT_PENALTY_MS,
    )
    async with serve(config) as running:
        yield running


@pytest.mark.parametrize("variant", ["fourteen-out", "triple-triangle", "triple-deck"])
async def test_certified_daily_deal_is_winnable_with_par(
    app: App, redis_client: redis.asyncio.Redis, variant: str
) -> None:
    c = await app.client("cert")
    g = await c.request("daily.start", variant=variant, timeout=60)
    assert g["type"] == "game" and g["par"] is not None
    record, _ = await GameStore(redis_client).load(g["game_id"])
    result = solve(new_game(variant, record.seed), max_nodes=NODE_BUDGET)
    if variant == "triple-deck":  # scoring: the first seed, its best score is par
        assert record.seed == candidate_seed(SECRET, variant, DAY, 0)
        assert g["par"] == result.best_score
        return
    assert result.verdict == WINNABLE and g["par"] == len(result.solution)
    # It is the first seed of the day's sequence that the solver proves winnable.
    index = 0
    while candidate_seed(SECRET, variant, DAY, index) != record.seed:
        assert (
            solve(
                new_game(variant, candidate_seed(SECRET, variant, DAY, index)),
                max_nodes=NODE_BUDGET,
            ).verdict
            != WINNABLE
        )
        index += 1
    board = await c.request("leaderboard.top", variant=variant)
    assert board["par"] == g["par"]


async def test_hints_lead_to_a_win_and_cost_time_on_the_board(app: App) -> None:
    hinted, plain = await app.client("hinted"), await app.client("plain")
    g = await hinted.request("daily.start", variant="fourteen-out", timeout=60)
    seq, count, line = g["seq"], 0, []
    while True:
        h = await hinted.request("hint", game_id=g["game_id"], timeout=30)
        assert h["type"] == "hint" and h["move"], h
        count += 1
        assert h["hints"] == count and h["penalty_ms"] == count * HINT_PENALTY_MS
        app.clock.advance(100)
        r = await hinted.request("move", game_id=g["game_id"], move=h["move"], expected_seq=seq)
        assert r["type"] == "moved", r
        seq = r["seq"]
        line.append(h["move"])
        if r["finished"]:
            break
    assert r["result"]["won"] and r["result"]["hints"] == count
    assert r["result"]["time_ms"] >= count * HINT_PENALTY_MS
    late = await hinted.request("hint", game_id=g["game_id"])
    assert late["code"] == "game_over"
    # The same line without hints, ten times slower by the clock, still ranks first.
    p = await plain.request("daily.start", variant="fourteen-out")
    for seq, move in enumerate(line):
        app.clock.advance(1_000)
        r = await plain.request("move", game_id=p["game_id"], move=move, expected_seq=seq)
    assert r["result"]["won"] and r["result"]["hints"] == 0
    assert r["result"]["time_ms"] < count * HINT_PENALTY_MS
    board = await plain.request("leaderboard.top", variant="fourteen-out")
    assert [(e["name"], e["hints"]) for e in board["entries"]] == [("plain", 0), ("hinted", count)]


async def test_no_hints_in_races(race_app: App) -> None:
    a, b = await race_app.client("racer1"), await race_app.client("racer2")
    await a.request("race.queue", variant="fourteen-out")
    await b.request("race.queue", variant="fourteen-out")
    sa, _ = await start_race(race_app, a, b)
    refused = await a.request("hint", game_id=sa["game_id"])
    assert refused["type"] == "error" and refused["code"] == "conflict"


class CountingPool(SolverPool):
    """Runs the solver in a thread and counts the candidate deals it was asked to certify."""

    def __init__(self) -> None:
        super().__init__(1)
        self.calls: list[tuple[object, ...]] = []

    async def run(self, fn: Callable[..., R], *args: object) -> R:
        self.calls.append(args)
        return await asyncio.to_thread(fn, *args)


async def test_one_process_certifies_the_others_wait(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """Two processes' deal services on one Redis: one searches, both deal the same seed, and
    tomorrow's deals are ready before the day rolls over."""
    pools = [CountingPool(), CountingPool()]
    services = [DailyDeals(redis_client, clock, SECRET, pool, budget_s=1.0) for pool in pools]
    a, b = await asyncio.gather(*(s.get("triple-triangle", DAY) for s in services))
    assert a == b and a.certified and a.par is not None
    assert sorted(len(p.calls) for p in pools) == [0, a.candidate + 1]
    await services[1].prepare_ahead()
    tomorrow = DAY + dt.timedelta(days=1)
    ready = await services[0].peek("fourteen-out", tomorrow)
    assert ready is not None and ready.certified
    assert solve(new_game("fourteen-out", ready.seed)).verdict == WINNABLE
    with pytest.raises(ValueError):
        await services[0].revealed(DAY)  # today's seeds stay secret
    clock.advance(86_400_000)
    assert (await services[0].revealed(DAY))["triple-triangle"] == a.seed


async def test_an_uncertified_daily_deal_is_never_dead_from_the_start(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    """Without certification the day's first candidate is dealt unless it offers no move (a
    game over before it begins, which nobody could finish): then the next one that does."""
    dead_day = dt.date(2027, 10, 14)  # secret "x": Fourteen Out's first candidate is dead
    first = candidate_seed(b"x", "fourteen-out", dead_day, 0)
    assert next(new_game("fourteen-out", first).legal_moves(), None) is None
    deals = DailyDeals(redis_client, clock, b"x", CountingPool(), certify=False)
    deal = await deals.get("fourteen-out", dead_day)
    assert deal.candidate == 1 and not deal.certified
    assert deal.seed == candidate_seed(b"x", "fourteen-out", dead_day, 1)
    assert next(new_game("fourteen-out", deal.seed).legal_moves(), None) is not None
    ordinary = await deals.get("triple-triangle", dead_day)
    assert ordinary.candidate == 0, "a playable first candidate is dealt as before"


def test_a_hint_search_says_the_game_is_lost_only_when_it_proved_it() -> None:
    """The hint handler counts a hint that proved the position lost (the search sees the
    face-down cards: a helper playing the cheater used free "no winning move" answers after
    each undoable move to learn which moves lose), and not one that ran out of time."""
    lost = timed_hint(new_game("fourteen-out", FREE_SEED_BASE + 13), 3.0)
    assert (lost.move, lost.lost) == (None, True)  # moves are left, no line wins
    assert solve(new_game("fourteen-out", FREE_SEED_BASE + 13)).verdict != WINNABLE
    won = timed_hint(new_game("fourteen-out", 1), 3.0)
    assert won.move is not None and not won.lost
    unknown = timed_hint(new_game("triple-easthaven", 5), 0.001)  # a budget far too short
    assert (unknown.move, unknown.lost) == (None, False)
    assert unknown.took_s >= 0.001


def _children(pid: int) -> set[int]:
    """The child processes of ``pid`` (Linux: /proc/<pid>/task/*/children)."""
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            out |= {int(c) for c in (task / "children").read_text().split()}
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_a_killed_servers_solver_workers_do_not_outlive_it(tmp_path: Path) -> None:
    """A server killed outright (SIGKILL, the OOM killer) left its solver's forkserver and
    workers running for good: a worker holds both ends of its executor's queue and waits for
    work forever, and keeps the forkserver alive. Each worker now checks every second that
    the server is there and leaves when it is not; the forkserver follows."""
    with ServerProcess(tmp_path / "data", QUIET) as srv:
        c = await Client.connect(srv.url)
        await c.hello(name="orphan_maker")
        game = await c.request("daily.start", variant="fourteen-out")
        assert (await c.request("hint", game_id=game["game_id"], timeout=60))["type"] == "hint"
        await c.close()
        server_pid = srv.popen.pid
        tree = {server_pid}
        for _ in range(3):  # the server's children, theirs, and so on
            tree |= {k for p in tree for k in _children(p)}
        helpers = tree - {server_pid}
        assert len(helpers) >= 2, "a forkserver and a worker, at least"
        os.kill(server_pid, signal.SIGKILL)
        deadline = time.monotonic() + 15
        while any(_alive(p) for p in helpers) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        left = sorted(p for p in helpers if _alive(p))
        assert not left, f"still running after the server was killed: {left}"
