"""The messages server processes send each other over Redis pub/sub: a closed set, one codec.

Every payload is one UTF-8 JSON object whose ``"t"`` names the message class:

* `RaceEventPublished` on ``keys.race_channel(race_id)``: one public race event and its
  version, ``{"t":"race.event","race_id":...,"event":{...},"version":N}``. The emit script
  (`racestore`) publishes it in the same step as it appends the event to the race's log, so
  it splices the version it just allocated between the two halves of
  `race_event_frame` — the only payload not encoded by `encode` itself, and byte for byte
  what `encode` produces.
* `PlayerMatched` on ``keys.player_channel(pid)``: the matchmaker put the player in a race.
* `SpectatorsChanged` on ``keys.race_channel(race_id)``: how many spectators watch the race
  now (`server.races.spectate`), ``{"t":"race.spectators","race_id":...,"count":N}``.
* `GameEnded` on ``keys.player_channel(pid)``: a process found the player's game over after
  its last move's reply (``origin``: that process); the others push ``game.finished`` to the
  player's connections they hold, ``{"t":"game.ended","player_id":...,"game_id":...,"origin":...}``.
* `PlayerPush` on ``keys.player_channel(pid)``: a protocol 7 push for every session of the
  player (a rematch offered or declined), ``{"t":"player.push","player_id":...,"push":{...}}``
  with the push as the protocol's JSON.
* `SessionsRevoked` on ``keys.player_channel(pid)``: a token of the player died
  (`device.revoke`, `token.rotate`, `token.revoke_all`); every process runs its session
  sweep at once and closes the dead sessions it holds with 4001,
  ``{"t":"sessions.revoked","player_id":...}``.

`decode` returns one of these classes or raises `PubSubDecodeError`; nothing else gets
through (unknown ``t``, missing or extra fields, wrong types, malformed ids or events).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar, Final

import protocol.devices as pd
import protocol.races as pr
import protocol.rematch as pr7
from protocol.codec import decode_server
from protocol.codec import encode as encode_message
from protocol.errors import ProtocolError
from server.redis import keys
from server.runtime.errors import NotFound

_SEPARATORS: Final = (",", ":")


class PubSubDecodeError(ValueError):
    """A pub/sub payload that is not one of our messages."""


@dataclass(frozen=True, slots=True)
class RaceEventPublished:
    TAG: ClassVar[str] = "race.event"

    race_id: str
    version: int
    event: pr.RaceEventBody


@dataclass(frozen=True, slots=True)
class PlayerMatched:
    TAG: ClassVar[str] = "player.matched"

    player_id: str
    race_id: str


@dataclass(frozen=True, slots=True)
class SpectatorsChanged:
    TAG: ClassVar[str] = "race.spectators"

    race_id: str
    count: int


@dataclass(frozen=True, slots=True)
class GameEnded:
    TAG: ClassVar[str] = "game.ended"

    player_id: str
    game_id: str
    origin: str


#: Pushes one player's sessions get wherever they are (protocol 7 rematches).
PlayerPushBody = pr7.RematchOffer | pr7.RematchDeclined | pd.DeviceSignedIn | pd.SigninTriesUsed


@dataclass(frozen=True, slots=True)
class PlayerPush:
    """A push to every session of ``player_id`` that speaks the version it needs."""

    TAG: ClassVar[str] = "player.push"

    player_id: str
    push: PlayerPushBody


@dataclass(frozen=True, slots=True)
class SessionsRevoked:
    """A token of ``player_id`` died: the processes holding its sessions sweep them now."""

    TAG: ClassVar[str] = "sessions.revoked"

    player_id: str


PubSubMessage = (
    RaceEventPublished
    | PlayerMatched
    | SpectatorsChanged
    | GameEnded
    | PlayerPush
    | SessionsRevoked
)


def race_event_frame(race_id: str, event: pr.RaceEventBody) -> tuple[str, str]:
    """The payload of `RaceEventPublished` split where its version goes: head + N + tail."""
    if not keys.valid_race_id(race_id):
        raise ValueError(f"bad race id: {race_id!r}")
    body = json.dumps(
        {"t": RaceEventPublished.TAG, "race_id": race_id, "event": pr.dump_race_event(event)},
        separators=_SEPARATORS,
    )
    return body[:-1] + ',"version":', "}"


def encode(msg: PubSubMessage) -> bytes:
    if isinstance(msg, RaceEventPublished):
        head, tail = race_event_frame(msg.race_id, msg.event)
        return f"{head}{int(msg.version)}{tail}".encode()
    if isinstance(msg, SpectatorsChanged):
        if not keys.valid_race_id(msg.race_id) or msg.count < 0:
            raise ValueError(f"bad fields in {msg!r}")
        return json.dumps(
            {"t": SpectatorsChanged.TAG, "race_id": msg.race_id, "count": int(msg.count)},
            separators=_SEPARATORS,
        ).encode()
    if isinstance(msg, PlayerPush):
        if not keys.valid_player_id(msg.player_id):
            raise ValueError(f"bad fields in {msg!r}")
        return json.dumps(
            {
                "t": PlayerPush.TAG,
                "player_id": msg.player_id,
                "push": json.loads(encode_message(msg.push, False)),
            },
            separators=_SEPARATORS,
        ).encode()
    if isinstance(msg, SessionsRevoked):
        if not keys.valid_player_id(msg.player_id):
            raise ValueError(f"bad fields in {msg!r}")
        return json.dumps(
            {"t": SessionsRevoked.TAG, "player_id": msg.player_id}, separators=_SEPARATORS
        ).encode()
    if isinstance(msg, GameEnded):
        if not (keys.valid_player_id(msg.player_id) and _game_id_ok(msg.game_id, msg.origin)):
            raise ValueError(f"bad fields in {msg!r}")
        return json.dumps(
            {
                "t": GameEnded.TAG,
                "player_id": msg.player_id,
                "game_id": msg.game_id,
                "origin": msg.origin,
            },
            separators=_SEPARATORS,
        ).encode()
    if not (keys.valid_player_id(msg.player_id) and keys.valid_race_id(msg.race_id)):
        raise ValueError(f"bad ids in {msg!r}")
    return json.dumps(
        {"t": PlayerMatched.TAG, "player_id": msg.player_id, "race_id": msg.race_id},
        separators=_SEPARATORS,
    ).encode()


def _game_id_ok(game_id: str, origin: str) -> bool:
    """A parsable game id and a process name of at most 64 printable characters."""
    try:
        keys.parse_game_id(game_id)
    except NotFound:
        return False
    return 0 < len(origin) <= 64 and origin.isprintable()


def _field(obj: dict[str, object], name: str) -> object:
    if name not in obj:
        raise PubSubDecodeError(f"missing field {name!r}")
    return obj[name]


def _race_id(obj: dict[str, object]) -> str:
    value = _field(obj, "race_id")
    if not isinstance(value, str) or not keys.valid_race_id(value):
        raise PubSubDecodeError("race_id: not a race id")
    return value


def _exact(obj: dict[str, object], names: frozenset[str]) -> None:
    extra = set(obj) - names - {"t"}
    if extra:
        raise PubSubDecodeError(f"unknown fields {sorted(extra)}")


def decode(data: bytes | str) -> PubSubMessage:
    """The message in a payload; `PubSubDecodeError` for anything that is not one."""
    try:
        obj = json.loads(data)
    except (ValueError, TypeError) as exc:  # UnicodeDecodeError is a ValueError
        raise PubSubDecodeError(f"not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise PubSubDecodeError("not a JSON object")
    tag = obj.get("t")
    if tag == RaceEventPublished.TAG:
        _exact(obj, frozenset({"race_id", "event", "version"}))
        version = _field(obj, "version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise PubSubDecodeError("version: expected a positive integer")
        try:
            event = pr.load_race_event(_field(obj, "event"))
        except ProtocolError as exc:
            raise PubSubDecodeError(exc.message) from None
        return RaceEventPublished(race_id=_race_id(obj), version=version, event=event)
    if tag == PlayerMatched.TAG:
        _exact(obj, frozenset({"player_id", "race_id"}))
        pid = _field(obj, "player_id")
        if not isinstance(pid, str) or not keys.valid_player_id(pid):
            raise PubSubDecodeError("player_id: not a player id")
        return PlayerMatched(player_id=pid, race_id=_race_id(obj))
    if tag == SpectatorsChanged.TAG:
        _exact(obj, frozenset({"race_id", "count"}))
        count = _field(obj, "count")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise PubSubDecodeError("count: expected a non-negative integer")
        return SpectatorsChanged(race_id=_race_id(obj), count=count)
    if tag == GameEnded.TAG:
        _exact(obj, frozenset({"player_id", "game_id", "origin"}))
        pid, gid, origin = _field(obj, "player_id"), _field(obj, "game_id"), _field(obj, "origin")
        if not isinstance(pid, str) or not keys.valid_player_id(pid):
            raise PubSubDecodeError("player_id: not a player id")
        if not (isinstance(gid, str) and isinstance(origin, str) and _game_id_ok(gid, origin)):
            raise PubSubDecodeError("game_id or origin: malformed")
        return GameEnded(player_id=pid, game_id=gid, origin=origin)
    if tag == PlayerPush.TAG:
        _exact(obj, frozenset({"player_id", "push"}))
        pid = _field(obj, "player_id")
        if not isinstance(pid, str) or not keys.valid_player_id(pid):
            raise PubSubDecodeError("player_id: not a player id")
        try:
            push = decode_server(json.dumps(_field(obj, "push")))
        except ProtocolError as exc:
            raise PubSubDecodeError(exc.message) from None
        if not isinstance(
            push,
            pr7.RematchOffer | pr7.RematchDeclined | pd.DeviceSignedIn | pd.SigninTriesUsed,
        ):
            raise PubSubDecodeError(f"not a player push: {push.type}")
        return PlayerPush(player_id=pid, push=push)
    if tag == SessionsRevoked.TAG:
        _exact(obj, frozenset({"player_id"}))
        pid = _field(obj, "player_id")
        if not isinstance(pid, str) or not keys.valid_player_id(pid):
            raise PubSubDecodeError("player_id: not a player id")
        return SessionsRevoked(player_id=pid)
    raise PubSubDecodeError(f"unknown message {str(tag)[:32]!r}")
