"""Rematches (version 7): after a race is over, a racer asks ``race.rematch``; the server opens
a private room (casual, as every private room) with the asker in it and offers it to the
race's other racers by a ``race.rematch_offer`` push. They accept with ``race.join`` and the
offer's ``code``, or decline with ``race.decline`` (the asker is told by
``race.rematch_declined``; once every one of them has declined, the room is closed). An offer
not taken by its ``expires_at`` is over: the room is closed if nobody joined it.
"""

from __future__ import annotations

from protocol.events import Push, Reply
from protocol.fields import DisplayName, Millis, PlayerId, VariantName
from protocol.messages import ClientMessage
from protocol.races import RaceId, RoomCode
from protocol.schema import fields_of, struct


@struct
class RaceRematch(ClientMessage, type="race.rematch"):
    """Ask for a rematch of a race that is over (a racer of it only); answered by
    ``race.room`` with the new room. When another racer already asked, this joins theirs."""

    race_id: RaceId


@struct
class RaceDecline(ClientMessage, type="race.decline"):
    """Decline the rematch offered in room ``race_id``; answered by ``race.declined``."""

    race_id: RaceId


@struct
class RaceDeclined(Reply, type="race.declined"):
    """Reply to ``race.decline``."""

    race_id: RaceId


@struct
class RematchOffer(Push, type="race.rematch_offer"):
    """Push to the other racers of a race that is over: ``name`` (``player_id``) asks for a
    rematch in room ``race_id``; join with ``race.join {code}`` before ``expires_at``."""

    race_id: RaceId
    rematch_of: RaceId
    variant: VariantName
    code: RoomCode
    player_id: PlayerId
    name: DisplayName
    expires_at: Millis


@struct
class RematchDeclined(Push, type="race.rematch_declined"):
    """Push to the racer who asked for the rematch: ``name`` (``player_id``) declined it."""

    race_id: RaceId
    player_id: PlayerId
    name: DisplayName


for _cls in (RaceRematch, RaceDecline, RaceDeclined, RematchOffer, RematchDeclined):
    fields_of(_cls)
