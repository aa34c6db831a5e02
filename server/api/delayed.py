"""A race as a spectator may know it now: its state as of the spectator delay ago.

Spectators (`server.races.spectate`) get a race's public events `Spectators.delay_ms` (3 s)
after they happen, so what they learn cannot help a racer. The API's race JSON
(`/races/{id}`, `/races/live`, `/races/finished`) and the first line of the race stream were
built from the stored state, whose counts are live: a poller learned each racer's moves,
score and end 3 s before the stream said them. `delayed_race` rolls the stored state back over
the events the stream has not sent yet: those of the race's event log (``sol:{r:<id>}:events``,
whose ids are Redis's clock, the clock of the delay too) newer than the delay. A racer's
progress is its latest ``progress`` event at least that old (none: no move yet shown), a
forfeit or the race's end that recent is not shown yet. The result goes through the stream's
own filter, `server.races.spectate.spectator_info`, as every spectator's race does.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Final, cast

import protocol.races as pr
from server.races.model import Progress, RaceState, RaceStatus
from server.redis import keys
from server.services import Services

__all__ = ["delayed_race"]

#: Events read back per step while looking for a racer's last shown progress.
PAGE: Final = 200

Entry = tuple[str, dict[str, str]]


def _event(entry: Entry) -> pr.RaceEventBody:
    return pr.load_race_event(json.loads(entry[1]["e"]))


async def delayed_race(s: Services, state: RaceState) -> RaceState:
    """``state`` as the spectators know it now: nothing newer than the spectator delay."""
    if state.status is RaceStatus.OPEN:
        return state  # nothing played yet: joins and leaves show at once in any case
    r = s.redis
    events_key = keys.race_events(state.race_id)
    secs, micros = await r.time()
    cutoff = int(secs) * 1000 + int(micros) // 1000 - s.spectators.delay_ms
    unseen = cast(Sequence[Entry], await r.xrange(events_key, f"{cutoff + 1}-0", "+"))
    if not unseen:
        return state
    recent = [_event(e) for e in unseen]
    moved = {e.player_id for e in recent if isinstance(e, pr.RacerProgress)}
    progress = dict(state.progress)
    for pid in moved:
        progress[pid] = Progress()
    todo = set(moved)
    upper = f"{cutoff}-18446744073709551615"
    while todo:
        page = cast(Sequence[Entry], await r.xrevrange(events_key, upper, "-", count=PAGE))
        for entry in page:
            event = _event(entry)
            if isinstance(event, pr.RacerProgress) and event.player_id in todo:
                todo.discard(event.player_id)
                progress[event.player_id] = Progress(
                    cleared=event.cleared,
                    score=event.score,
                    moves=event.moves,
                    finished=event.finished,
                    won=event.won,
                    stuck=event.stuck,
                    resigned=event.resigned,
                )
        if len(page) < PAGE:
            break
        upper = f"({page[-1][0]}"
    forfeits = {e.player_id for e in recent if isinstance(e, pr.RacerForfeited)}
    out = dataclasses.replace(state, progress=progress, forfeited=state.forfeited - forfeits)
    if any(isinstance(e, pr.RaceEnded) for e in recent):  # its end is not shown yet
        out = dataclasses.replace(
            out,
            status=RaceStatus.RUNNING,
            results=None,
            finished_at=None,
            closed=False,
            reason=None,
        )
    return out
