"""What a newcomer found wrong in the CLI: `daily --show` starts the ranked game (and says
so), `me` tells the games in progress, the calendar's legend keeps each variant's name on
one line at 80 columns and its footer suggests only a catch-up the server would take.
Against a real server subprocess (its clock pinned to 2030-06-15 12:00 UTC)."""

from __future__ import annotations

import io

from rich.console import Console

import protocol as p
from clients.cli.calendar import calendar_view
from engine import VARIANT_IDS
from tests.support.cliplayer import MakePlayer
from tests.support.procs import ServerProcess

TIERS = ("easy", "medium", "hard", "expert")


def test_help_says_show_starts_the_ranked_game(make_player: MakePlayer) -> None:
    run = make_player(None).run("daily", "--help")
    assert run.code == 0, run.err
    said = " ".join(run.out.split())
    assert "--show start today's ranked game if not started (its clock then runs" in said
    assert "print the current game and exit" not in said


def test_show_then_me_tells_the_games_in_progress(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    player = make_player(server.url)
    shown = player.run("--name", "nora", "daily", "fourteen-out", "--show")
    assert shown.code == 0, shown.err
    assert "Started: this ranked game's clock is running." in shown.out, shown.out
    assert "Resume it with: solitaire daily fourteen-out" in " ".join(shown.out.split())
    hard = player.run("daily", "triple-triangle", "--tier", "hard", "--show")
    assert hard.code == 0, hard.err
    me = player.run("me")
    assert me.code == 0, me.err
    assert "No daily games yet." not in me.out, me.out
    assert "No daily game finished yet; in progress" in me.out, me.out
    assert "Fourteen Out medium: solitaire daily fourteen-out\n" in me.out, me.out
    assert "Tri Peaks hard: solitaire daily triple-triangle --tier hard\n" in me.out, me.out
    doc = player.run("--json", "me").json()
    assert sorted((g["variant"], g["tier"]) for g in doc["in_progress"]) == [
        ("fourteen-out", "medium"),
        ("triple-triangle", "hard"),
    ]
    assert all(g["date"] == "2030-06-15" and not g["finished"] for g in doc["in_progress"])
    done = player.run("daily", "fourteen-out", "--moves", "-", stdin="resign\n")
    assert done.code == 0, done.err + done.out
    after = player.run("me").out
    assert "In progress (on the boards once finished):" in after, after
    assert "Fourteen Out medium:" not in after and "Tri Peaks hard:" in after, after


def test_calendar_of_a_player_who_joined_today_at_80_columns(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    player = make_player(server.url)
    run = player.run("--name", "olga", "calendar")
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert all(len(line) <= 80 for line in lines), [ln for ln in lines if len(ln) > 80]
    legend = [line for line in lines if line.startswith("1 Fourteen Out")]
    assert legend, lines
    names = "  ".join(lines[lines.index(legend[0]) : lines.index(legend[0]) + 2])
    assert "5 Triple Deck with Kings" in names, names
    assert "--date" not in run.out, "no day before she joined is offered"
    assert "Nothing to catch up on yet" in run.out, run.out


def month(days: dict[str, tuple[bool, tuple[str, ...]]]) -> p.Calendar:
    """A June 2030 calendar on the 15th: per date, catchup_open and fourteen-out's states."""
    return p.Calendar(
        id=1,
        month="2030-06",
        today="2030-06-15",
        crowns=0,
        days=tuple(
            p.CalendarDay(
                date=date,
                catchup_open=open_,
                variants=(
                    p.VariantDay(
                        variant="fourteen-out",
                        tiers=tuple(
                            p.TierCell(tier=t, state=s) for t, s in zip(TIERS, states, strict=True)
                        ),
                    ),
                ),
            )
            for date, (open_, states) in days.items()
        ),
    )


def shown(cal: p.Calendar, width: int = 80) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(calendar_view(cal, width))
    return console.export_text()


def test_the_footer_suggests_a_day_and_tier_that_can_be_played() -> None:
    cal = month(
        {
            "2030-06-12": (False, ("not_played",) * 4),  # before she joined
            "2030-06-13": (True, ("won", "not_played", "lost", "absent")),
            "2030-06-14": (True, ("won", "lost", "won", "not_played")),
            "2030-06-15": (False, ("not_played",) * 4),
        }
    )
    out = shown(cal)
    assert "+ a day to catch up on (2030-06-13 to 2030-06-14), e.g.:" in out, out
    assert "solitaire daily fourteen-out --tier expert --date 2030-06-14" in out, out
    assert "2030-06-12" not in out
    played = month(
        {
            "2030-06-13": (True, ("won", "lost", "lost", "absent")),
            "2030-06-14": (False, ("not_played",) * 4),
        }
    )
    out = shown(played)
    assert "--date" not in out and "Nothing to catch up on: every tier" in out, out


def test_the_legend_never_cuts_a_variant_name() -> None:
    cal = p.Calendar(
        id=1,
        month="2030-06",
        today="2030-06-15",
        crowns=0,
        days=(
            p.CalendarDay(
                date="2030-06-15",
                catchup_open=False,
                variants=tuple(
                    p.VariantDay(variant=v, tiers=(p.TierCell(tier="easy", state="won"),))
                    for v in VARIANT_IDS
                ),
            ),
        ),
    )
    for width, legend in (
        (
            80,
            [
                "1 Fourteen Out  2 Triple Fourteens  3 Tri Peaks  4 Triple Deck",
                "5 Triple Deck with Kings  6 Triple Easthaven",
            ],
        ),
        (
            60,
            [
                "1 Fourteen Out  2 Triple Fourteens  3 Tri Peaks",
                "4 Triple Deck  5 Triple Deck with Kings  6 Triple Easthaven",
            ],
        ),
    ):
        lines = [line.rstrip() for line in shown(cal, width).splitlines()]
        at = lines.index(legend[0])
        assert lines[at : at + 2] == legend, (width, lines)
        assert all(len(line) <= width for line in lines)
