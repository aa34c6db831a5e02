"""Hints, revealed seeds and move-log export over real WebSockets and real Redis."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from tests.support.app import App, serve
from tests.support.races import race_config, start_race
from tests.support.wsclient import Client

TODAY, YESTERDAY = "2030-06-15", "2030-06-14"
DAY_MS = 86_400_000
PENALTY_MS = 30_000  # the bare Config's hint penalty, as race_config keeps it


async def daily(c: Client, variant: str = "fourteen-out") -> dict[str, Any]:
    g = await c.request("daily.start", variant=variant)
    assert g["type"] == "game", g
    return g


async def test_a_hint_costs_the_penalty_each_time(race_app: App) -> None:
    c = await race_app.client("hinter")
    g = await daily(c)
    for n in (1, 2):
        h = await c.request("hint", game_id=g["game_id"], timeout=30)
        assert h["type"] == "hint" and h["move"], h
        assert (h["hints"], h["penalty_ms"]) == (n, n * PENALTY_MS)
    fin = await c.request("resign", game_id=g["game_id"])
    assert fin["result"]["hints"] == 2
    assert fin["result"]["time_ms"] >= 2 * PENALTY_MS, "hints add to the final time"
    late = await c.request("hint", game_id=g["game_id"])
    assert late["type"] == "error" and late["code"] == "game_over"


async def test_no_hint_on_someone_elses_game(race_app: App) -> None:
    owner, other = await race_app.client("owner"), await race_app.client("snoop")
    g = await daily(owner)
    refused = await other.request("hint", game_id=g["game_id"])
    assert refused["type"] == "error" and refused["code"] == "not_found"
    again = await owner.request("hint", game_id=g["game_id"], timeout=30)
    assert again["hints"] == 1, "the refused hint counted for nobody"


async def test_a_hint_is_of_the_position_the_moves_reached_on_another_process(
    redis_url: str, tmp_path: Path
) -> None:
    """Cheater review 4, L2: a hint on a process whose cached copy was a move behind (the
    player's moves went through another process) named a move of the position left, illegal
    on the board, and was charged. Now it is searched on the stored game."""
    config = race_config(redis_url, tmp_path)
    async with serve(config) as a, serve(config) as b:
        on_b = await Client.connect(b.url)
        await on_b.hello(name="twowindows")
        on_a = await Client.connect(a.url)
        await on_a.hello(token=on_b.token)
        g = await daily(on_b)
        assert (await on_a.request("game.get", game_id=g["game_id"]))["type"] == "game"
        first = await on_a.request("hint", game_id=g["game_id"], timeout=30)
        assert first["type"] == "hint" and first["move"] and first["hints"] == 1, first
        played = await on_b.request(
            "move", game_id=g["game_id"], move=first["move"], expected_seq=0
        )
        assert played["type"] == "moved", played
        second = await on_a.request("hint", game_id=g["game_id"], timeout=30)
        assert second["type"] == "hint" and second["hints"] == 2, second
        if second["move"] is not None:
            legal = await on_b.request(
                "move", game_id=g["game_id"], move=second["move"], expected_seq=1
            )
            assert legal["type"] == "moved", ("the hint is of the board as it is", legal)
        # The hints taken here show in a read on the other process (no seq moved for them).
        seen = await on_b.request("game.get", game_id=g["game_id"])
        assert seen["hints"] == 2, seen
        await on_a.close()
        await on_b.close()


async def test_seeds_are_revealed_only_once_the_day_is_over(race_app: App) -> None:
    c = await race_app.client("seer")
    g = await daily(c)
    for date in (TODAY, "2030-06-16"):
        refused = await c.request("daily.seeds", date=date)
        assert refused["type"] == "error" and refused["code"] == "not_found", date
    race_app.clock.advance(DAY_MS)
    open_game = await c.request("daily.seeds", date=TODAY)
    assert open_game["code"] == "not_found", "not while a game of the day may still change"
    assert await race_app.services.day_closer.sweep(dt.date.fromisoformat(TODAY))
    seeds = await c.request("daily.seeds", date=TODAY)
    assert seeds["type"] == "daily.seeds" and seeds["date"] == TODAY
    assert "fourteen-out" in seeds["seeds"]
    export = await c.request("game.export", game_id=g["game_id"])
    assert export["seed"] == seeds["seeds"]["fourteen-out"]
    empty = await c.request("daily.seeds", date="2030-01-01")
    assert empty["type"] == "daily.seeds" and empty["seeds"] == {}


async def test_export_of_a_finished_day(race_app: App) -> None:
    c = await race_app.client("exporter")
    g = await daily(c)
    moves = []
    for seq in range(3):
        h = await c.request("hint", game_id=g["game_id"], timeout=30)
        r = await c.request("move", game_id=g["game_id"], move=h["move"], expected_seq=seq)
        assert r["type"] == "moved", r
        moves.append(h["move"])
    await c.request("resign", game_id=g["game_id"])
    today = await c.request("game.export", game_id=g["game_id"])
    assert today["type"] == "error" and today["code"] == "not_found", "not while the day runs"
    race_app.clock.advance(DAY_MS)
    assert await race_app.services.day_closer.sweep(dt.date.fromisoformat(TODAY))
    export = await c.request("game.export", game_id=g["game_id"])
    assert export["type"] == "game.export", export
    assert export["variant"] == "fourteen-out" and export["date"] == TODAY
    assert export["moves"] == moves
    other = await race_app.client("reader")
    assert (await other.request("game.export", game_id=g["game_id"]))["moves"] == moves, (
        "anyone may read a finished day's game"
    )


async def test_no_export_of_an_unfinished_game_even_after_its_day(race_app: App) -> None:
    c = await race_app.client("unfinished")
    g = await daily(c)
    race_app.clock.advance(DAY_MS)
    refused = await c.request("game.export", game_id=g["game_id"])
    assert refused["type"] == "error" and refused["code"] == "not_found"


async def test_export_tells_no_one_else_whether_a_player_started_the_days_deal(
    race_app: App,
) -> None:
    """Cheater review 4, L1: another player's game of today answered "published once ..."
    and a game never started "no such game": anyone could poll who had started the deal."""
    owner, snoop = await race_app.client("starter"), await race_app.client("poller")
    g = await daily(owner)
    await owner.request("resign", game_id=g["game_id"])
    never = g["game_id"].replace(owner.player_id, snoop.player_id)
    assert never != g["game_id"]
    started = await snoop.request("game.export", game_id=g["game_id"])
    missing = await snoop.request("game.export", game_id=never)
    assert started["type"] == missing["type"] == "error"
    assert (started["code"], started["message"]) == (missing["code"], missing["message"])
    own = await owner.request("game.export", game_id=g["game_id"])
    assert own["code"] == "not_found" and "published once" in own["message"], own


async def test_race_games_are_exported_once_the_race_is_over(race_app: App) -> None:
    a, b = await race_app.client("racer_a"), await race_app.client("racer_b")
    await a.request("race.queue", variant="fourteen-out")
    await b.request("race.queue", variant="fourteen-out")
    sa, sb = await start_race(race_app, a, b)
    await a.request("resign", game_id=sa["game_id"])
    early = await b.request("game.export", game_id=sa["game_id"])
    assert early["type"] == "error" and early["code"] == "not_found", "the race still runs"
    await b.request("resign", game_id=sb["game_id"])
    ev = await a.push("race.event")
    while ev["event"]["kind"] != "finished":
        ev = await a.push("race.event")
    export = await b.request("game.export", game_id=sa["game_id"])
    assert export["type"] == "game.export" and export["moves"] == [] and export.get("date") is None
    assert export["seed"] == (await a.request("game.export", game_id=sb["game_id"]))["seed"]
