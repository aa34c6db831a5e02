"""GameService: a game whose end takes a long search is finished after its move's reply."""

from __future__ import annotations

import asyncio
import datetime as dt
import random
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
import redis.asyncio

from engine import Game, OverState, OverStepper, OverTask, from_view, new_game
from engine.easthaven import TripleEasthaven
from server.config import Config
from server.games import service as games
from server.games.daily import daily_seed
from tests.support.app import App, serve
from tests.support.wsclient import Client

SECRET = b"over"
DAY = dt.date(2030, 6, 15)  # the day of `serve`'s clock


def dead_line() -> list[str]:
    """Random moves on the day's Triple Easthaven deal up to a dead end (no progress left)."""
    game = new_game("triple-easthaven", daily_seed(SECRET, "triple-easthaven", DAY))
    rng, line = random.Random(1), []
    while not game.over:
        move = rng.choice(list(game.legal_moves()))
        game.apply(move)
        line.append(str(move))
    assert 0 < len(line) < 200 and not game.won
    return line


class Patient:
    """The engine's own game-over search, answering only from its fourth slice on: as a long
    search does, whatever the position."""

    def __init__(self, search: OverStepper) -> None:
        self.search, self.slices = search, 0

    def step(self, max_nodes: int) -> bool | None:
        self.slices += 1
        return None if self.slices < 4 else self.search.step(max_nodes)

    def task(self) -> OverTask:
        return self.search.task()


def easthaven_searches(app: App, wrap: Callable[[OverStepper], OverStepper]) -> None:
    """Triple Easthaven's game-over searches in `app` become ``wrap(the engine's search)``
    (the other variants' stay): through the service's hook, since the compiled engine's
    method cannot be replaced on its class for the compiled service."""

    def search(game: Game) -> OverStepper:
        real = game.over_search()
        return wrap(real) if isinstance(game, TripleEasthaven) else real

    app.services.games.over_search = search


@pytest_asyncio.fixture
async def app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    async with serve(app_config(redis_url, tmp_path)) as running:
        easthaven_searches(running, Patient)
        yield running


def app_config(redis_url: str, data_dir: Path) -> Config:
    return replace(
        Config(),
        redis_url=redis_url,
        data_dir=data_dir,
        daily_secret=SECRET,
        rate_limit=1000.0,
        rate_burst=1000,
    )


async def test_a_dead_end_found_after_the_reply_finishes_the_game(app: App) -> None:
    line = dead_line()
    c = await app.client("slow", versions=(1, 2))
    g = await c.request("daily.start", variant="triple-easthaven")
    finished_in_reply = False
    for seq, move in enumerate(line):
        app.clock.advance(1_000)
        r = await c.request("move", game_id=g["game_id"], move=move, expected_seq=seq)
        assert r["type"] == "moved", r
        finished_in_reply = r["finished"]
    assert not finished_in_reply, "the last move's search should outlast its reply"
    push = await c.push("game.finished", timeout=30)
    assert push["game_id"] == g["game_id"] and push["seq"] == len(line)
    result = push["result"]
    assert result["over"] and not result["resigned"] and result["moves"] == len(line)
    assert result["time_ms"] == len(line) * 1_000, "the last move's time, not the search's"
    state = await c.request("game.get", game_id=g["game_id"])
    assert state["finished"] and state["result"] == result
    late = await c.request("move", game_id=g["game_id"], move="1 2", expected_seq=len(line))
    assert late["code"] == "game_over"
    rank = await c.request("leaderboard.rank", variant="triple-easthaven")
    assert rank["entry"]["rank"] == 1 and rank["entry"]["moves"] == len(line)


async def test_a_game_found_over_late_is_pushed_to_the_players_windows_on_every_process(
    app: App, redis_url: str, tmp_path: Path
) -> None:
    """Issue #25: `game.finished` reached only the connections on the process that decided
    it; the player's window on another process learnt it on its next request."""
    config = app_config(redis_url, tmp_path / "other")
    async with serve(config, clock=app.clock) as other:
        line = dead_line()
        c = await app.client("twowin", versions=(2,))
        g = await c.request("daily.start", variant="triple-easthaven")
        tab = await Client.connect(other.url)  # the same player, in a window on process two
        await tab.hello(token=c.token, versions=(5,))
        old = await Client.connect(other.url)  # and one of version 1: learns it on request
        await old.hello(token=c.token, versions=(1,))
        for seq, move in enumerate(line):
            app.clock.advance(1_000)
            r = await c.request("move", game_id=g["game_id"], move=move, expected_seq=seq)
            assert r["type"] == "moved", r
        here = await c.push("game.finished", timeout=30)
        there = await tab.push("game.finished", timeout=30)
        assert there["game_id"] == g["game_id"] and there["seq"] == len(line)
        assert there["result"] == here["result"]
        await asyncio.sleep(0.3)
        assert not [m for m in old.seen if m.get("type") == "game.finished"]
        for cl in (c, tab, old):
            await cl.close()


async def test_a_dead_end_reached_while_an_earlier_search_runs_is_still_found(app: App) -> None:
    """The last two moves arrive together: the search of the position before the last one
    ends after the last move, says "not over", and the current position is searched next."""
    line = dead_line()
    c = await app.client("quick", versions=(1, 2))
    g = await c.request("daily.start", variant="triple-easthaven")
    for seq, move in enumerate(line[:-2]):
        r = await c.request("move", game_id=g["game_id"], move=move, expected_seq=seq)
        assert r["type"] == "moved", r
    n = len(line)
    replies = await asyncio.gather(
        *(
            c.request("move", game_id=g["game_id"], move=line[k], expected_seq=k)
            for k in (n - 2, n - 1)
        )
    )
    assert [r["seq"] for r in replies] == [n - 1, n]
    push = await c.push("game.finished", timeout=30)
    assert push["seq"] == n and push["result"]["over"]


class Endless:
    """A search that never decides on the event loop, as the hardest positions do within the
    loop's budget; what is left runs in a worker (`task`)."""

    def __init__(self, task: OverTask) -> None:
        self.slices = 0
        self.nodes: list[int] = []
        self._task = task

    def step(self, max_nodes: int) -> bool | None:
        self.slices += 1
        self.nodes.append(max_nodes)
        return None

    def task(self) -> OverTask:
        return self._task


@dataclass(frozen=True)
class Greedy:
    """A game-over check that wants more memory than a search worker may take."""

    def run(self) -> bool:
        hog = bytearray(4 << 30)  # above `server.games.deals.OVER_MEMORY_BYTES`
        return bool(hog)


async def play_into_a_long_search(app: App, line: list[str], name: str) -> tuple[Client, str]:
    """A player's Triple Easthaven game after `line`, every move acknowledged unfinished."""
    c = await app.client(name, versions=(1, 2))
    g = await c.request("daily.start", variant="triple-easthaven")
    for seq, move in enumerate(line):
        app.clock.advance(1_000)
        r = await c.request("move", game_id=g["game_id"], move=move, expected_seq=seq)
        assert r["type"] == "moved" and not r["finished"], r
    return c, g["game_id"]


async def test_a_search_too_long_for_the_loop_is_finished_by_a_worker(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    searches: list[Endless] = []

    def endless(real: OverStepper) -> Endless:
        searches.append(Endless(real.task()))  # the worker runs the engine's own check
        return searches[-1]

    config = replace(
        Config(),
        redis_url=redis_url,
        data_dir=tmp_path,
        daily_secret=SECRET,
        rate_limit=1000.0,
        rate_burst=1000,
    )
    line = dead_line()
    async with serve(config) as app:
        easthaven_searches(app, endless)
        app.services.games.over_loop_nodes = 200
        deals = app.services.deals.pool
        # Certifications and hints keep every worker of their own pool busy meanwhile.
        busy = [asyncio.create_task(deals.run(time.sleep, 60)) for _ in range(deals.workers)]
        with caplog.at_level("INFO", logger="server.games.service"):
            c, game_id = await play_into_a_long_search(app, line, "patient")
            push = await c.push("game.finished", timeout=30)
        assert not any(t.done() for t in busy)
        for t in busy:
            t.cancel()
        assert push["game_id"] == game_id and push["seq"] == len(line)
        assert push["result"]["over"] and not push["result"]["resigned"]
        assert "handed to a worker after 200 positions" in caplog.text
        assert searches[0].slices == 200 // games.OVER_SLICE_NODES + 1  # the inline one too
        assert searches[0].nodes[0] == games.OVER_INLINE_NODES, "the move's own slice is small"
        async with aiohttp.ClientSession() as http, http.get(app.http + "/metrics") as resp:
            metrics = await resp.text()
        assert 'solitaire_engine_cpu_seconds_total{variant="triple-easthaven"}' in metrics


async def test_a_worker_out_of_memory_leaves_the_game_open(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = replace(Config(), redis_url=redis_url, data_dir=tmp_path, daily_secret=SECRET)
    async with serve(config) as app:
        easthaven_searches(app, lambda real: Endless(Greedy()))
        app.services.games.over_loop_nodes = 40
        with caplog.at_level("INFO", logger="server.games.service"):
            c, game_id = await play_into_a_long_search(app, ["d"], "stuck")
            for _ in range(600):  # the worker starts, then fails
                if "MemoryError" in caplog.text:
                    break
                await asyncio.sleep(0.05)
        assert "game-over search of" in caplog.text and "MemoryError" in caplog.text
        state = await c.request("game.get", game_id=game_id)
        assert state["type"] == "game" and not state["finished"], "the game stays open"
        again = await c.request("move", game_id=game_id, move="d", expected_seq=1)
        assert again["type"] == "moved" and again["seq"] == 2, "and goes on"


async def test_a_finished_game_stays_cached_without_its_undo_snapshots(app: App) -> None:
    c = await app.client("sealed", versions=(1, 2, 3, 4))
    g = await c.request("daily.start", variant="fourteen-out")
    view, seq = g["view"], 0
    for _ in range(2):
        move = str(next(iter(from_view(view).legal_moves())))
        r = await c.request(
            "move", game_id=g["game_id"], move=move, expected_seq=seq, with_view=True
        )
        assert r["type"] == "moved", r
        view, seq = r["view"], r["seq"]
    assert view["can_undo"] is True
    live = await app.services.games.get(g["game_id"], c.player_id)
    assert len(live.game._history) == 2
    assert (await c.request("resign", game_id=g["game_id"]))["type"] == "finished"
    again = await app.services.games.get(g["game_id"], c.player_id)
    assert again is live and live.game._history == [], "cached, snapshots dropped"
    state = await c.request("game.get", game_id=g["game_id"])
    assert state["finished"] and state["view"]["can_undo"] is False
    assert state["view"]["piles"] == view["piles"]


class Gated:
    """The engine's own game-over search, held undecided until the test opens it."""

    def __init__(self, search: OverStepper, gate: list[bool]) -> None:
        self.search, self.gate = search, gate

    def step(self, max_nodes: int) -> bool | None:
        return self.search.step(max_nodes) if self.gate else None

    def task(self) -> OverTask:
        return self.search.task()


async def test_a_game_get_before_the_late_finish_is_written_says_not_over_yet(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`view.over` is never true while `finished` is false (docs/protocol.md, `game.get`). The
    search decides "over" after the last move's reply and settles the engine's verdict at
    once; the game is finished only once its result is in Redis. A `game.get` in between
    used to answer `view.over: true` with `finished: false`. The window is held open by
    taking the game's lock (as a slow Redis write would keep `_finish_over` from running)."""
    gate: list[bool] = []
    line = dead_line()
    async with serve(app_config(redis_url, tmp_path)) as app:
        easthaven_searches(app, lambda real: Gated(real, gate))
        app.services.games.over_loop_nodes = 10**9  # no worker: decided on the loop
        c = await app.client("early", versions=(8,), features=("rules_free",))
        g = await c.request("daily.start", variant="triple-easthaven")
        game_id = g["game_id"]
        gate.append(True)  # the searches before the last move decide as they would
        for seq, move in enumerate(line[:-1]):
            r = await c.request("move", game_id=game_id, move=move, expected_seq=seq)
            assert r["type"] == "moved" and not r["finished"], r
        live = await app.services.games.get(game_id, c.player_id)
        while live.judging is not None:
            await asyncio.sleep(0.01)
        gate.clear()
        last = len(line) - 1
        r = await c.request("move", game_id=game_id, move=line[last], expected_seq=last)
        assert r["type"] == "moved" and not r["finished"], r
        assert not r["changes"].get("over"), "a move's reply never says over unfinished"
        async with live.lock:  # the late finish waits for this lock
            gate.append(True)
            for _ in range(500):
                if live.game.over_state is OverState.OVER:
                    break
                await asyncio.sleep(0.01)
            assert live.game.over_state is OverState.OVER, "the search has decided"
            assert live.judging is not None and not live.record.finished
            early = await c.request("game.get", game_id=game_id)
            assert early["type"] == "game" and early["finished"] is False
            assert early["view"]["over"] is False, "over only once the result is written"
            assert early.get("result") is None, "no result before the finish"
        push = await c.push("game.finished", timeout=30)
        assert push["game_id"] == game_id and push["result"]["over"]
        done = await c.request("game.get", game_id=game_id)
        assert done["finished"] is True and done["view"]["over"] is True
        assert done["result"] == push["result"] and "safe" not in done
        await c.close()
