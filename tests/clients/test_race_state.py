"""What the race client knows (`RaceState`, fed real protocol pushes) and how it is drawn."""

from __future__ import annotations

import io
from dataclasses import replace

from rich.console import Console

import protocol as p
from clients.cli import render
from clients.cli.race import RaceState
from protocol import races as pr
from protocol.schema import dump_struct as dump


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


def event(version: int, body: pr.RaceEventBody) -> p.RaceEvent:
    """A `race.event` push as the server sends it (the body through the protocol's codec)."""
    push = p.RaceEvent(race_id="r1", version=version, event=pr.dump_race_event(body))
    decoded = p.decode_server(p.encode(push, binary=True))
    assert isinstance(decoded, p.RaceEvent)
    return decoded


def progress(pid: str, cleared: int, moves: int) -> pr.RacerProgress:
    return pr.RacerProgress(
        player_id=pid,
        cleared=cleared,
        score=cleared,
        moves=moves,
        finished=False,
        won=False,
        stuck=False,
    )


def test_news_of_the_other_racers_and_the_standings() -> None:
    race = RaceState("me1")
    assert race.apply(p.RaceUpdate(race=info(p.Racer(player_id="me1", name="alice")))) is None
    assert race.variant == "fourteen-out" and race.version == 1

    joined = race.apply(event(2, pr.RacerJoined(player_id="bo2", name="bobby")))
    assert (
        joined is not None
        and str(render.race_news(joined, race.me, race.variant)) == "bobby joined"
    )
    mine = race.apply(event(3, progress("me1", 2, 1)))
    assert mine is not None and render.race_news(mine, race.me, race.variant) is None
    theirs = race.apply(event(4, progress("bo2", 4, 2)))
    assert theirs is not None
    assert str(render.race_news(theirs, race.me, race.variant)) == "  bobby: cleared 4/52, 2 moves"
    panel = text_of(render.race_panel(race.racers, race.me, race.variant))
    assert "▶ alice" in panel and "4/52" in panel

    results = (
        pr.RaceResultEntry(
            player_id="bo2",
            name="bobby",
            place=1,
            won=False,
            cleared=4,
            score=4,
            time_ms=61_000,
            moves=2,
            forfeited=False,
            rating=1010,
            rating_change=10,
        ),
        pr.RaceResultEntry(
            player_id="me1",
            name="alice",
            place=2,
            won=False,
            cleared=2,
            score=2,
            time_ms=0,
            moves=1,
            forfeited=False,
            rating=990,
            rating_change=-10,
        ),
    )
    assert race.apply(event(5, pr.RaceEnded(results=results, reason="time"))) is None
    assert race.results == results and race.reason == "time" and race.version == 5
    table = text_of(render.race_standings(results, race.me, race.reason, race.variant))
    assert "+10" in table and "1:01" in table
    assert race.standings_json() == [dump(r) for r in results]
    unrated = replace(results[0], rating=None, rating_change=None)
    race.apply(event(7, pr.RaceEnded(results=(unrated,), reason="time")))
    standings = race.standings_json()
    assert standings is not None and standings[0]["rating"] is None  # null, as sent

    left = race.apply(event(6, pr.RacerLeft(player_id="bo2", closed=False)))
    assert left is not None and str(render.race_news(left, race.me, race.variant)) == "bobby left"
    assert "bo2" not in race.racers


def test_an_event_of_an_unknown_kind_is_skipped() -> None:
    race = RaceState("me1")
    race.apply(p.RaceUpdate(race=info(p.Racer(player_id="me1", name="alice"))))
    newer = p.RaceEvent(race_id="r1", version=2, event={"kind": "emote", "player_id": "me1"})
    assert race.apply(newer) is None and race.version == 1
    assert race.apply_logged({"v": 3, "kind": "forfeit", "player_id": "me1"}) is not None
    assert race.racers["me1"].forfeited and race.version == 3


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


def test_a_racer_who_resigned_is_said_to_have_resigned() -> None:
    """Protocol 10's `resigned`: the news, the panel and the standings say "resigned", where a
    game that ran out of moves says "stuck"."""
    race = RaceState("me1")
    race.apply(
        p.RaceUpdate(
            race=info(
                p.Racer(player_id="me1", name="alice"),
                p.Racer(player_id="bo2", name="bobby"),
                p.Racer(player_id="cy3", name="cyril"),
            )
        )
    )
    over = replace(progress("bo2", 4, 9), finished=True, stuck=True, resigned=True)
    news = race.apply(event(2, over))
    assert news is not None
    assert str(render.race_news(news, race.me, race.variant)) == (
        "bobby resigned (cleared 4/52, 9 moves)"
    )
    stuck = race.apply(event(3, replace(progress("cy3", 6, 12), finished=True, stuck=True)))
    assert stuck is not None and "resigned" not in str(
        render.race_news(stuck, race.me, race.variant)
    )
    panel = text_of(render.race_panel(race.racers, race.me, race.variant)).splitlines()
    assert any("bobby" in line and "resigned" in line for line in panel)
    assert any("cyril" in line and "stuck" in line for line in panel)
    line = pr.RaceResultEntry(
        player_id="bo2",
        name="bobby",
        place=2,
        won=False,
        cleared=4,
        score=4,
        time_ms=30_000,
        moves=9,
        forfeited=False,
        resigned=True,
    )
    winner = replace(line, player_id="me1", name="alice", place=1, won=True, resigned=False)
    race.apply(event(4, pr.RaceEnded(results=(winner, line), reason="won")))
    table = text_of(render.race_standings((winner, line), race.me, "won", race.variant))
    assert any("bobby" in row and "resigned" in row for row in table.splitlines())
    assert not any("alice" in row and "resigned" in row for row in table.splitlines())
    standings = race.standings_json()
    assert standings is not None and [r["resigned"] for r in standings] == [False, True]


def test_news_of_a_race_left_behind_or_of_another_race_is_not_this_ones() -> None:
    """The race a racer moved on from (their game in it over) may still push its news to the
    session (the cheater review's F7): none of it changes the race being played."""
    race = RaceState("me1")
    race.left.add("r0")
    old = replace(info(p.Racer(player_id="me1", name="alice"), status="running"), race_id="r0")
    assert race.apply(p.RaceUpdate(race=old)) is None and race.info is None
    race.apply(p.RaceUpdate(race=info(p.Racer(player_id="me1", name="alice"))))
    stray = replace(event(2, pr.RacerJoined(player_id="zz9", name="zed")), race_id="r0")
    assert race.apply(stray) is None and set(race.racers) == {"me1"}
    assert race.apply(p.RaceSpectators(race_id="r0", count=3)) is None and race.spectators == 0
    assert race.apply(event(2, pr.RacerJoined(player_id="bo2", name="bobby"))) is not None
    assert set(race.racers) == {"me1", "bo2"}
