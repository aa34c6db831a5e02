"""Race results are screened for the ratings: a racer at machine speed keeps their place in
the race's standings (everyone saw the race), but is rated as a racer who made no real
attempt (last: a loss; nobody gains from them) and their win is not counted."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest_asyncio
import redis.asyncio

from engine import from_view
from server.fairplay.admin import run
from server.redis import keys
from tests.support.app import App, serve
from tests.support.races import clear_a_card, race_config, start_race
from tests.support.wsclient import Client

VARIANT = "triple-triangle"


@pytest_asyncio.fixture
async def app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    # The product's 10-minute limit: a game played out at a human pace takes minutes.
    config = replace(race_config(redis_url, tmp_path), fair_play_screen=True)
    async with serve(replace(config, race_time_limit_ms=600_000)) as app:
        yield app


async def play_out(
    app: App, c: Client, started: dict[str, Any], gap_ms: int, limit: int = 300
) -> int:
    """The first legal move each time, ``gap_ms`` apart, to the game's end (or ``limit``
    moves); moves played."""
    view, seq = started["view"], 0
    for _ in range(limit):
        moves = list(from_view(view).legal_moves())
        if not moves:
            break
        app.clock.advance(gap_ms)
        reply = await c.request(
            "move",
            game_id=started["game_id"],
            move=str(moves[0]),
            expected_seq=seq,
            with_view=True,
        )
        assert reply["type"] == "moved", reply
        view, seq = reply["view"], reply["seq"]
        if reply["finished"]:
            break
    return seq


async def race_results(
    app: App,
    gap_ms: int,
    a: Client | None = None,
    rival: str = "slowpoke",
    between: Callable[[str], Awaitable[object]] | None = None,
) -> tuple[Client, str, list[dict[str, Any]]]:
    """A two-racer race: a new player ``rival`` makes a real attempt (a card cleared at a
    human pace), speedy (``a``, or a new player) plays out at ``gap_ms`` a move, then
    (after ``between`` of speedy's game id) the rival resigns; speedy's client and game id,
    and the race's results."""
    if a is None:
        a = await app.client("speedy", versions=(5,))
    b = await app.client(rival, versions=(5,))
    await a.request("race.queue", variant=VARIANT)
    await b.request("race.queue", variant=VARIANT)
    sa, sb = await start_race(app, a, b)
    # a racer who resigns without a real attempt (a card cleared) would give nobody points
    # (docs/fairplay.md): slowpoke clears one at a human pace
    assert await clear_a_card(b, sb["game_id"], clock=app.clock, gap_ms=1_500) >= 1
    assert await play_out(app, a, sa, gap_ms) >= 20
    if between is not None:
        await between(sa["game_id"])
    res = await b.request("resign", game_id=sb["game_id"])
    assert res["type"] in ("finished", "error")
    fin = await a.push("race.event", timeout=10)
    while fin["event"]["kind"] != "finished":
        fin = await a.push("race.event", timeout=10)
    await b.close()
    return a, sa["game_id"], list(fin["event"]["results"])


async def test_a_machine_speed_racer_loses_and_moves_nobody(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    a, game_id, results = await race_results(app, gap_ms=5)
    first, second = results
    assert first["name"] == "speedy" and first["place"] == 1  # the standings stand
    assert first["rating_change"] < 0, "rated as last: a held result is no escape from a loss"
    assert second["rating_change"] == 0, "nobody gains from a held racer"
    board = await redis_client.zrange(keys.rating_board(VARIANT), 0, -1)
    assert [b.decode() if isinstance(b, bytes) else b for b in board] == [a.player_id]
    wins = await a.request("race.top", variant=VARIANT, board="wins")
    assert wins["entries"] == []
    game = await a.request("game.get", game_id=game_id)  # its player sees why
    assert game["result"]["status"] == "flagged" and "rank" not in game["result"]
    await a.close()


async def test_a_held_race_result_is_on_the_review_desk(
    app: App, redis_client: redis.asyncio.Redis, redis_url: str
) -> None:
    """A reviewer sees the race results the screen held (the evidence a `mark` rests on),
    with what a review of one does: it records the verdict; the race's rating stands."""
    a, game_id, _ = await race_results(app, gap_ms=5)
    code, listed = await admin(redis_url, "held")
    assert code == 0 and game_id in listed and "(race: " in listed, listed
    assert "held for:" in listed
    rating = await redis_client.hget(keys.rating_stats(VARIANT), a.player_id)
    code, said = await admin(redis_url, "clear", game_id, "--note", "a fast human")
    assert code == 0 and "the race's rating stands" in said, said
    assert (await admin(redis_url, "held"))[1].startswith("no results held")
    assert await redis_client.hget(keys.rating_stats(VARIANT), a.player_id) == rating
    game = await a.request("game.get", game_id=game_id)  # cleared: no longer flagged
    assert game["result"].get("status") != "flagged", game["result"]
    assert (await admin(redis_url, "confirm", game_id))[0] == 1  # reviewed already
    await a.close()


async def test_a_review_before_the_races_end_changes_no_rating(app: App, redis_url: str) -> None:
    """Review F1: a `clear` while the race still ran took the flag off the game, and the
    race's end then rated the racer as if never held (+138 and a win); after the end it
    changed nothing. The end goes by the screen's hold alone now."""

    async def clear(game_id: str) -> None:
        code, said = await admin(redis_url, "clear", game_id, "--note", "looked human")
        assert code == 0, said

    a, _, results = await race_results(app, gap_ms=5, between=clear)
    first, second = results
    assert first["name"] == "speedy" and first["rating_change"] < 0, results
    assert second["rating_change"] == 0, "nobody gains from a held racer, cleared or not"
    assert (await a.request("race.top", variant=VARIANT, board="wins"))["entries"] == []
    await a.close()


async def test_the_desk_lists_one_held_race_result_an_account_and_day(
    app: App, redis_url: str
) -> None:
    """Review C2: every held race result was listed, so two scripted accounts tripping the
    screen and resigning added ~2,200 entries an hour, and a marked account one a race,
    burying the daily results the desk is for. The desk lists a player's first held race
    result of the day (the evidence for a mark: the race rates it as no real attempt
    whatever a review says), and none held only because the account is marked."""
    a, first, _ = await race_results(app, gap_ms=5)
    a, second, _ = await race_results(app, gap_ms=5, a=a, rival="slowpoke2")
    code, listed = await admin(redis_url, "held")
    assert code == 0 and first in listed and second not in listed, listed
    game = await a.request("game.get", game_id=second)  # held all the same
    assert game["result"]["status"] == "flagged"
    # Reviewed, the day's listed result gives its place up to the next one held.
    assert (await admin(redis_url, "clear", first))[0] == 0
    a, third, _ = await race_results(app, gap_ms=5, a=a, rival="slowpoke3")
    code, listed = await admin(redis_url, "held")
    assert third in listed and second not in listed, listed
    assert (await admin(redis_url, "confirm", third, "--mark"))[0] == 0
    _, marked, _ = await race_results(app, gap_ms=1_200, a=a, rival="slowpoke4")
    game = await a.request("game.get", game_id=marked)
    assert game["result"]["status"] == "flagged", "a marked account's result is held"
    assert (await admin(redis_url, "held"))[1].startswith("no results held")
    await a.close()


async def admin(redis_url: str, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = await run(["--redis-url", redis_url, "--reviewer", "rita", *argv], env={}, out=out)
    return code, out.getvalue()


async def test_a_human_paced_racer_is_rated(app: App, redis_client: redis.asyncio.Redis) -> None:
    a, _, results = await race_results(app, gap_ms=1_200)
    first, second = results
    assert first["name"] == "speedy" and first["rating_change"] > 0 > second["rating_change"]
    assert len(await redis_client.zrange(keys.rating_board(VARIANT), 0, -1)) == 2
    await a.close()
