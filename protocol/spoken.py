"""A race message as a client of an older protocol version knows it.

The server builds race messages in the newest version's shape; before one goes to a session
that negotiated an older version, `as_spoken` takes out what that version never had, so an
older client gets byte for byte what it got before. Version 10 added ``resigned`` (a racer
gave their game up) to a racer's ``progress`` event, their row in a race's ``racers`` and their
line of the ``finished`` event's ``results``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final, TypeVar, cast

from protocol.events import ServerMessage
from protocol.races import RaceEvent, RaceInfo, Racer, RaceRoom, RaceUpdate
from protocol.social import RaceListReply, RaceWatching
from protocol.version import RESIGNED

M = TypeVar("M", bound=ServerMessage)

_RESIGNED: Final = "resigned"


def _racers(racers: tuple[Racer, ...]) -> tuple[Racer, ...]:
    return tuple(dataclasses.replace(r, resigned=None) for r in racers)


def _info(info: RaceInfo) -> RaceInfo:
    return dataclasses.replace(info, racers=_racers(info.racers))


def event_map(event: Mapping[str, object], version: int | None) -> dict[str, object]:
    """A race event's wire map (``race.event``'s ``event``, or an entry of ``race.room``'s
    ``events``) as ``version`` knows it: without ``resigned`` before version 10."""
    if version is not None and version >= RESIGNED:
        return dict(event)
    out = {k: v for k, v in event.items() if k != _RESIGNED}
    results = out.get("results")
    if isinstance(results, list):
        out["results"] = [
            {k: v for k, v in entry.items() if k != _RESIGNED}
            if isinstance(entry, Mapping)
            else entry
            for entry in results
        ]
    return out


def as_spoken(message: M, version: int | None) -> M:
    """``message`` as a session speaking ``version`` may get it (None: not negotiated yet,
    which gets the oldest shape). Messages that carry no race are returned as they are."""
    if version is not None and version >= RESIGNED:
        return message
    out: ServerMessage
    if isinstance(message, RaceEvent):
        out = dataclasses.replace(message, event=event_map(message.event, version))
    elif isinstance(message, RaceUpdate):
        out = dataclasses.replace(message, race=_info(message.race))
    elif isinstance(message, RaceRoom):
        out = dataclasses.replace(
            message,
            race=_info(message.race),
            events=tuple(event_map(e, version) for e in message.events),
        )
    elif isinstance(message, RaceWatching):
        out = dataclasses.replace(message, race=_info(message.race))
    elif isinstance(message, RaceListReply):
        out = dataclasses.replace(
            message,
            races=tuple(
                dataclasses.replace(item, racers=_racers(item.racers)) for item in message.races
            ),
        )
    else:
        return message
    return cast(M, out)  # `dataclasses.replace` keeps the class of `message`
