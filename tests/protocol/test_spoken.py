"""`protocol.spoken`: race messages as a version before 10 knows them (no `resigned`)."""

from __future__ import annotations

import protocol as p
from protocol import races as pr
from protocol.spoken import as_spoken, event_map

RACER = p.Racer(player_id="p1", name="alice", finished=True, stuck=True, resigned=True)
INFO = p.RaceInfo(
    race_id="r1", variant="fourteen-out", status="running", size=2, racers=(RACER,), server_time=0
)
PROGRESS = pr.RacerProgress(
    player_id="p1", cleared=4, score=4, moves=9, finished=True, won=False, stuck=True, resigned=True
)


def test_version_10_gets_the_message_itself() -> None:
    update = p.RaceUpdate(race=INFO)
    assert as_spoken(update, 10) is update
    assert p.encode(update, binary=False).count('"resigned":true') == 1


def test_older_versions_get_no_resigned_anywhere() -> None:
    event = p.RaceEvent(race_id="r1", version=3, event=pr.dump_race_event(PROGRESS))
    room = p.RaceRoom(id=1, race=INFO, events=(pr.logged_event_map(3, PROGRESS),))
    for version in (None, 1, 9):
        for message in (p.RaceUpdate(race=INFO), event, room):
            frame = p.encode(as_spoken(message, version), binary=False)
            assert "resigned" not in frame, (version, frame)
    old = event_map(pr.dump_race_event(PROGRESS), 9)
    v9 = ["kind", "player_id", "cleared", "score", "moves", "finished", "won", "stuck"]
    assert list(old) == v9


def test_other_messages_pass_unchanged() -> None:
    pong = p.Pong(id=1, server_time=5)
    assert as_spoken(pong, 1) is pong
