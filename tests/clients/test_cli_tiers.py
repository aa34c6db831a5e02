"""`solitaire daily VARIANT --tier T [--date D]`, `solitaire calendar` and the tier boards,
against a real server subprocess (its clock pinned to 2030-06-15 12:00 UTC)."""

from __future__ import annotations

import io

from rich.console import Console

import protocol as p
from clients.cli.social import profile_view
from tests.support.cliplayer import MakePlayer
from tests.support.procs import ServerProcess

TODAY, YESTERDAY = "2030-06-15", "2030-06-14"


def test_daily_tiers_catch_up_calendar_and_tier_board(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    player = make_player(server.url)
    shown = player.run(
        "--name", "tina", "--json", "daily", "fourteen-out", "--tier", "hard", "--show"
    )
    assert shown.code == 0, shown.err
    doc = shown.json()
    assert doc["tier"] == "hard" and doc["catchup"] is False and doc["date"] == TODAY
    daily = player.run("--json", "daily", "fourteen-out", "--show").json()
    assert daily["game_id"] != doc["game_id"], "the hard tier is not the daily game"
    run = player.run(
        "--json", "daily", "fourteen-out", "--tier", "hard", "--moves", "-", stdin="resign\n"
    )
    assert run.code == 0, run.err + run.out
    # tina joined today: yesterday is no catch-up of hers (the server's games tests play
    # catch-up games of accounts that joined earlier).
    refused = player.run(
        "--json", "daily", "fourteen-out", "--tier", "easy", "--date", YESTERDAY, "--show"
    )
    assert refused.code != 0, refused.out
    assert "joined (2030-06-15)" in refused.err + refused.out, refused.err + refused.out
    cal = player.run("--json", "calendar", "--variant", "fourteen-out")
    assert cal.code == 0, cal.err
    month = cal.json()
    assert month["command"] == "calendar" and month["month"] == "2030-06"
    days = {d["date"]: d["variants"][0]["tiers"] for d in month["days"]}
    assert [t["state"] for t in days[TODAY]] == ["not_played", "playing", "lost", "not_played"]
    assert days[YESTERDAY][0] == {"tier": "easy", "state": "not_played"}
    assert not any(d["catchup_open"] for d in month["days"]), "no day before she joined"
    text = player.run("calendar")
    assert text.code == 0, text.err
    lines = text.out.splitlines()
    assert all(len(line) <= 80 for line in lines), [ln for ln in lines if len(ln) > 80]
    assert lines[0].startswith("2030-06: 0 crowns")
    today = next(line for line in lines if line.startswith("06-15"))
    assert today.split()[1] == ".PL." and "today" in today
    yesterday = next(line for line in lines if line.startswith("06-14"))
    assert yesterday.split()[1].startswith("....") and "+" not in yesterday
    board = player.run("leaderboard", "fourteen-out", "--tier", "hard")
    assert board.code == 0, board.err
    assert "daily (hard) 2030-06-15" in board.out and "tina" in board.out
    plain = player.run("--json", "leaderboard", "fourteen-out").json()
    assert plain["total"] == 0, "the hard result is not on the daily board"


def test_me_shows_crowns_and_badges_by_month_at_80_columns() -> None:
    profile = p.Profile(
        id=1,
        player_id="p_1",
        name="tina",
        joined=1_907_755_200_000,
        me=True,
        daily=(),
        races=(),
        recent=(),
        months=(
            p.MonthCrowns(month="2030-07", crowns=4),
            p.MonthCrowns(month="2030-06", crowns=64, badge="silver"),
        ),
    )
    console = Console(width=80, record=True, file=io.StringIO(), color_system=None)
    console.print(profile_view(profile))
    lines = console.export_text().splitlines()
    assert any("Crowns by month" in line for line in lines)
    june = next(line for line in lines if line.split()[:1] == ["2030-06"])
    assert june.split() == ["2030-06", "64", "silver"]
    assert next(line for line in lines if "2030-07" in line).split() == ["2030-07", "4", "-"]
