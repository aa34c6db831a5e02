"""GameService: a game whose end takes a long search is finished after its move's reply."""

from __future__ import annotations

import asyncio
import datetime as dt
import random
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio

from engine import OverStepper, new_game
from engine.easthaven import TripleEasthaven
from server import games
from server.config import Config
from server.daily import daily_seed
from tests.support.app import App, serve

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


@pytest_asyncio.fixture
async def app(redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path,
              monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[App]:
    real = TripleEasthaven.over_search
    monkeypatch.setattr(TripleEasthaven, "over_search", lambda game: Patient(real(game)))
    config = replace(Config(), redis_url=redis_url, data_dir=tmp_path, daily_secret=SECRET,
                     rate_limit=1000.0, rate_burst=1000)
    async with serve(config) as running:
        yield running


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


async def test_a_dead_end_reached_while_an_earlier_search_runs_is_still_found(
        app: App) -> None:
    """The last two moves arrive together: the search of the position before the last one
    ends after the last move, says "not over", and the current position is searched next."""
    line = dead_line()
    c = await app.client("quick", versions=(1, 2))
    g = await c.request("daily.start", variant="triple-easthaven")
    for seq, move in enumerate(line[:-2]):
        r = await c.request("move", game_id=g["game_id"], move=move, expected_seq=seq)
        assert r["type"] == "moved", r
    n = len(line)
    replies = await asyncio.gather(*(
        c.request("move", game_id=g["game_id"], move=line[k], expected_seq=k)
        for k in (n - 2, n - 1)))
    assert [r["seq"] for r in replies] == [n - 1, n]
    push = await c.push("game.finished", timeout=30)
    assert push["seq"] == n and push["result"]["over"]


class Endless:
    """A search that never decides, as the hardest positions do within any sane budget."""

    def __init__(self) -> None:
        self.slices = 0
        self.nodes: list[int] = []

    def step(self, max_nodes: int) -> bool | None:
        self.slices += 1
        self.nodes.append(max_nodes)
        return None


async def test_a_search_that_runs_too_long_gives_up_and_leaves_the_game_open(
        redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    searches: list[Endless] = []

    def endless(game: TripleEasthaven) -> Endless:
        searches.append(Endless())
        return searches[-1]

    monkeypatch.setattr(TripleEasthaven, "over_search", endless)
    monkeypatch.setattr(games, "OVER_SEARCH_MAX_NODES", 200)
    config = replace(Config(), redis_url=redis_url, data_dir=tmp_path, daily_secret=SECRET)
    async with serve(config) as running:
        c = await running.client("stuck", versions=(1, 2))
        g = await c.request("daily.start", variant="triple-easthaven")
        with caplog.at_level("INFO", logger="server.games"):
            r = await c.request("move", game_id=g["game_id"], move="d", expected_seq=0)
            assert r["type"] == "moved" and not r["finished"]
            for _ in range(100):  # let the search run out of positions
                if "gave up" in caplog.text:
                    break
                await asyncio.sleep(0.01)
        assert "gave up after 200 positions" in caplog.text
        assert searches[0].slices == 200 // games.OVER_SLICE_NODES + 1  # the inline one too
        assert searches[0].nodes[0] == games.OVER_INLINE_NODES, "the move's own slice is small"
        again = await c.request("move", game_id=g["game_id"], move="d", expected_seq=1)
        assert again["type"] == "moved" and again["seq"] == 2, "the game stays open"
        state = await c.request("game.get", game_id=g["game_id"])
        assert not state["finished"]
