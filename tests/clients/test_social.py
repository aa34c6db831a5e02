"""`solitaire me / profile / history / share / watch` against a real server subprocess.

The module's server deals a fixed day (`pinned_day`): with its data dir's random secret the
Fourteen Out deal would change every run, and about 1 in 350 has no legal move at all (the
game can then only be resigned, never played to its end), so `finish_daily` failed at random.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import protocol as p
from clients.cli.social import share_text
from engine import from_view
from tests.support.cliplayer import MakePlayer, Player
from tests.support.procs import ServerProcess, pinned_day
from tests.support.wsclient import Client

#: The module server's day: noon UTC, so the day cannot change during the module's tests.
DAY = dt.datetime(2031, 4, 2, 12, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Overrides the package's `server`: the same server on a pinned day and secret."""
    with ServerProcess(tmp_path_factory.mktemp("server") / "data", pinned_day(DAY)) as srv:
        yield srv


def finish_daily(player: Player, name: str | None = None) -> dict[str, Any]:
    """Play the server's Fourteen Out of the day to its end with the CLI (first legal move
    each time). The server must deal a fixed day (`pinned_day`): some deals cannot be played."""
    first = ("--name", name) if name else ()
    shown = player.run(*first, "--json", "daily", "fourteen-out", "--show")
    assert shown.code == 0, shown.err
    game = from_view(shown.json()["view"])
    moves = []
    while (move := next(game.legal_moves(), None)) is not None:
        game.apply(move)
        moves.append(str(move))
    assert moves, f"the deal of {shown.json()['date']} has no legal move: pin another day"
    run = player.run(
        "--json", "daily", "fourteen-out", "--moves", "-", stdin="\n".join(moves) + "\n"
    )
    assert run.code == 0, run.out + run.err  # a refused move is in the JSON on stdout
    result: dict[str, Any] = run.json()
    assert result["finished"], run.out
    return result


def test_me_history_share_and_profile(server: ServerProcess, make_player: MakePlayer) -> None:
    fresh = make_player(server.url)
    empty = fresh.run("--name", "newcomer", "me")
    assert empty.code == 0, empty.err
    assert "No daily games yet" in empty.out

    player = make_player(server.url)
    played = finish_daily(player, "historian")
    me = player.run("--json", "me").json()
    assert me["command"] == "profile" and me["name"] == "historian" and me["me"] is True
    [daily] = me["daily"]
    assert (daily["variant"], daily["played"], daily["streak"]) == ("fourteen-out", 1, 1)
    assert [r["game_id"] for r in me["recent"]] == [played["game_id"]]
    text = player.run("me")
    assert "Fourteen Out" in text.out and "Last 30 days" in text.out

    history = player.run("--json", "history", "fourteen-out").json()
    assert [e["game_id"] for e in history["entries"]] == [played["game_id"]]
    replay = player.run("history", "fourteen-out", "--replay", history["entries"][0]["date"])
    assert replay.code == 2 and "once its day is over" in replay.err

    share = player.run("--ascii", "share")
    assert share.code == 0, share.err
    assert share.out.startswith("Solitaire daily ") and "Fourteen Out" in share.out
    assert "#1 of 1" in share.out  # the only Fourteen Out player on this server today

    other = fresh.run("--json", "profile", "HISTORIAN").json()  # by name, any case
    assert other["player_id"] == me["player_id"] and other["me"] is False
    by_id = fresh.run("--json", "profile", me["player_id"]).json()
    assert by_id["name"] == "historian"
    missing = fresh.run("profile", "nobody-at-all")
    assert missing.code == 1 and "no player" in missing.err


def test_share_text() -> None:
    day = dt.date(2030, 6, 15)
    won = p.DayResult(
        variant="fourteen-out",
        date="2030-06-15",
        game_id="d.x",
        won=True,
        resigned=False,
        cleared=52,
        score=52,
        time_ms=75_000,
        moves=26,
        hints=0,
        finished_at=0,
        replayable=False,
    )
    text = share_text(day, [won], {"fourteen-out": 4}, {"fourteen-out": (3, 41)}, ascii=True)
    assert text.splitlines() == [
        "Solitaire daily 2030-06-15",
        "WON Fourteen Out · cleared 52/52 · 1:15 · 26 moves · #3 of 41 · streak 4 days",
    ]
    assert "no daily game" in share_text(day, [], {}, {}, ascii=True)


async def first_pushes(
    client: Client, types: tuple[str, ...], timeout: float
) -> dict[str, dict[str, Any]]:
    """The first push of each of ``types``, in whatever order they come (`Client.push` drops
    every other push while it waits for one type)."""
    got: dict[str, dict[str, Any]] = {}

    async def collect() -> None:
        while len(got) < len(types):
            msg = await client.pushes.get()
            if msg.get("type") in types:
                got.setdefault(msg["type"], msg)

    await asyncio.wait_for(collect(), timeout)
    return got


async def test_watch_a_race_to_its_end(server: ServerProcess, make_player: MakePlayer) -> None:
    watcher = make_player(server.url)
    listed = watcher.run("--name", "cli_watcher", "watch", "--list")
    assert listed.code == 0 and "No race is running now" in listed.out
    a, b = await Client.connect(server.url), await Client.connect(server.url)
    await a.hello(name="cli_racer_a")
    await b.hello(name="cli_racer_b")
    created = await a.request("race.create", variant="fourteen-out", size=2)
    race_id = created["race"]["race_id"]
    await b.request("race.join", code=created["race"]["code"])
    await a.request("race.start", race_id=race_id)
    proc = watcher.popen("--json", "watch", race_id)
    try:
        # The watcher is counted: both racers hear of it (then the race may end). The CLI
        # may attach before or after the countdown ends: the two pushes come in either order.
        started = {}
        for c in (a, b):
            got = await first_pushes(c, ("race.spectators", "race.started"), timeout=30)
            assert got["race.spectators"]["count"] == 1
            started[c.player_id] = got["race.started"]
        view = started[a.player_id]["view"]
        move = str(next(from_view(view).legal_moves()))  # a race never deals a dead deal
        assert (await a.request("move", game_id=started[a.player_id]["game_id"], move=move))[
            "type"
        ] == "moved"
        for c in (a, b):
            await c.request("resign", game_id=started[c.player_id]["game_id"])
        out, err = await asyncio.to_thread(proc.communicate, timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    result = json.loads(out)
    assert result["command"] == "watch" and result["race"]["status"] == "finished"
    assert {r["name"] for r in result["race"]["racers"]} == {"cli_racer_a", "cli_racer_b"}
    assert "code" not in result["race"] and "game_id" not in result["race"]
    assert {b["player_id"] for b in result["boards"]} == {a.player_id, b.player_id}
    for c in (a, b):
        await c.close()


def test_replay_a_day_that_is_over(make_player: MakePlayer, tmp_path: Path) -> None:
    day = dt.datetime(2031, 4, 1, 12, tzinfo=dt.UTC)
    srv = ServerProcess(tmp_path / "data", pinned_day(day))
    with srv:
        player = make_player(srv.url)
        played = finish_daily(player, "replayer")
        srv.flags = pinned_day(day + dt.timedelta(days=1))
        srv.restart()  # the next day, same port and data
        srv.wait_day_closed("2031-04-01")  # replayable once the restarted process swept it
        run = player.run("--json", "history", "fourteen-out", "--replay", "2031-04-01")
        assert run.code == 0, run.err
        doc = run.json()
        assert doc["command"] == "replay" and doc["game_id"] == played["game_id"]
        assert len(doc["steps"]) == len(doc["moves"]) + 1
        assert doc["steps"][-1]["view"]["cleared"] == played["result"]["cleared"]
        text = player.run("history", "fourteen-out", "--replay", "2031-04-01")
        assert "deal" in text.out and f"move {len(doc['moves'])}:" in text.out
        table = player.run("history", "fourteen-out")
        assert "2031-04-01" in table.out and "1/1" in table.out


def test_history_of_every_variant_and_me_fit_80_columns(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    """`history` needs no variant; each result is one line at 80 columns, its rank the place
    so far while the day runs, its replay column the date `--replay` takes (or when)."""
    player = make_player(server.url)
    finish_daily(player, "wide80")
    run = player.run("history")
    assert run.code == 0, run.err
    row = r"2031-04-02 +Fourteen Out +(won|lost) \d+/52 +\d+:\d\d +\d+ +\d+/\d+ now +tomorrow"
    assert re.search(row, run.out), run.out
    assert all(len(line) <= 80 for line in run.out.splitlines())
    doc = player.run("--json", "history").json()
    assert [e["variant"] for e in doc["entries"]] == ["fourteen-out"]
    me = player.run("me")
    assert me.code == 0, me.err
    daily = r"Fourteen Out +1 +[01] +1/1 +[01]/[01] +\d+:\d\d +\d+ +-"
    assert re.search(daily, me.out), me.out
    assert re.search(row, me.out), me.out  # the last 30 days: the same one-line rows
