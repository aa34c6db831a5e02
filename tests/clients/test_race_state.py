"""What the race client knows (`RaceState`, fed real protocol pushes) and how it is drawn."""

from __future__ import annotations

import io

from rich.console import Console

import protocol as p
from clients.cli import render
from clients.cli.race import RaceState


def text_of(renderable: object) -> str:
    console = Console(width=100, record=True, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.export_text()


def info(*racers: p.Racer, status: str = "open") -> p.RaceInfo:
    return p.RaceInfo(
        race_id="r1",
        variant="fourteen-out",
        status=status,
        size=2,
        racers=racers,
        server_time=0,
        version=1,
    )


def event(version: int, **body: object) -> p.RaceEvent:
    return p.RaceEvent(race_id="r1", version=version, event=dict(body))


def test_news_of_the_other_racers_and_the_standings() -> None:
    race = RaceState("me1")
    assert race.apply(p.RaceUpdate(race=info(p.Racer(player_id="me1", name="alice")))) is None
    assert race.variant == "fourteen-out" and race.version == 1

    joined = race.apply(event(2, kind="joined", player_id="bo2", name="bobby"))
    assert (
        joined is not None
        and str(render.race_news(joined, race.me, race.variant)) == "bobby joined"
    )
    mine = race.apply(event(3, kind="progress", player_id="me1", cleared=2, moves=1))
    assert mine is not None and render.race_news(mine, race.me, race.variant) is None
    theirs = race.apply(event(4, kind="progress", player_id="bo2", cleared=4, moves=2))
    assert theirs is not None
    assert str(render.race_news(theirs, race.me, race.variant)) == "  bobby: cleared 4/52, 2 moves"
    panel = text_of(render.race_panel(race.racers, race.me, race.variant))
    assert "▶ alice" in panel and "4/52" in panel

    results = [
        {
            "player_id": "bo2",
            "name": "bobby",
            "place": 1,
            "cleared": 4,
            "moves": 2,
            "time_ms": 61_000,
            "rating": 1010,
            "rating_change": 10,
        },
        {
            "player_id": "me1",
            "name": "alice",
            "place": 2,
            "cleared": 2,
            "moves": 1,
            "time_ms": 0,
            "rating": 990,
            "rating_change": -10,
        },
    ]
    assert race.apply(event(5, kind="finished", results=results, reason="time")) is None
    assert race.results == results and race.reason == "time" and race.version == 5
    table = text_of(render.race_standings(race.results, race.me, race.reason, race.variant))
    assert "Race result (time)" in table and "+10" in table and "1:01" in table

    left = race.apply(event(6, kind="left", player_id="bo2"))
    assert left is not None and str(render.race_news(left, race.me, race.variant)) == "bobby left"
    assert "bo2" not in race.racers


def test_racers_see_how_many_watch() -> None:
    race = RaceState("me1")
    race.apply(p.RaceUpdate(race=info(p.Racer(player_id="me1", name="alice"))))
    assert "watching" not in text_of(
        render.race_panel(race.racers, race.me, race.variant, race.spectators)
    )
    race.apply(p.RaceSpectators(race_id="r1", count=3))
    race.apply(p.RaceSpectators(race_id="other", count=9))  # another race's count
    assert race.spectators == 3
    assert "3 watching" in text_of(
        render.race_panel(race.racers, race.me, race.variant, race.spectators)
    )
