"""A player's devices: list them, revoke one, hear of a new one (protocol version 9).

``devices`` lists every device signed in as the player (the original one, which registered
or last revoked every session, and each one signed in by a code), answered by ``devices``;
``device.revoke`` signs one device out, answered by ``devices`` too. A device signed in by
a code is on trial for a trust period (7 days by default): until ``trusted_at`` it may
revoke only devices signed in after it, and not ``token.revoke_all`` (error code
``not_trusted_yet``). When a code signs a new device in, the player's other sessions get a
``device.signed_in`` push; when someone uses up the account's named sign-in tries for the
hour, they get a ``signin.tries_used`` push. The server decides everything a client shows
(``can_revoke``).
"""

from __future__ import annotations

from typing import Annotated, Final

from protocol.events import Push, Reply
from protocol.fields import Flag, ListOf, Millis, Str
from protocol.messages import ClientMessage
from protocol.schema import Nested, Struct, fields_of, struct

__all__ = [
    "DEVICE_HOWS",
    "DeviceId",
    "DeviceInfo",
    "DeviceLabel",
    "DeviceRevoke",
    "DeviceSignedIn",
    "DevicesGet",
    "DevicesReply",
    "SigninTriesUsed",
]

#: A device's id: ``original`` or 8 url-safe characters (never a credential).
DEVICE_ID: Final = Str(1, 16, r"[A-Za-z0-9_-]{1,16}", "a device id")
DeviceId = Annotated[str, DEVICE_ID]
#: A device's name as its client gave it (``signin.redeem``'s ``device``): printable ASCII
#: without ``|``; "" when none was given.
DEVICE_LABEL: Final = Str(0, 40, r"[\x20-\x7b\x7d\x7e]{0,40}", "a device name")
DeviceLabel = Annotated[str, DEVICE_LABEL]
#: How a device signed in.
DEVICE_HOWS: Final = ("original", "code")
DeviceHow = Annotated[str, Str(4, 8, r"original|code", "original or code")]


@struct
class DevicesGet(ClientMessage, type="devices"):
    """The player's devices; answered by ``devices``."""


@struct
class DeviceRevoke(ClientMessage, type="device.revoke"):
    """Sign ``device`` out: its token dies and its open sessions close (code 4001).
    Answered by ``devices``; ``not_found`` for no such device, ``bad_request`` for this
    device itself, ``not_trusted_yet`` for an older device while this one is on trial."""

    device: DeviceId


@struct
class DeviceInfo(Struct):
    """One device: ``how`` it signed in (``original`` or ``code``), when
    (``signed_in_at``, server ms), whether it is the asking one (``current``) and whether
    the asking device may revoke it now (``can_revoke``)."""

    device: DeviceId
    name: DeviceLabel
    how: DeviceHow
    signed_in_at: Millis
    current: Flag
    can_revoke: Flag


@struct
class DevicesReply(Reply, type="devices"):
    """The player's devices, oldest first. ``trusted_at``: while the asking device (signed
    in by a code) is on trial, when it may revoke older devices and every session."""

    devices: Annotated[tuple[DeviceInfo, ...], ListOf(Nested(DeviceInfo), 0, 64)]
    trusted_at: Millis | None = None


@struct
class DeviceSignedIn(Push, type="device.signed_in"):
    """A code signed a new device in as this player (told to the player's other sessions
    that speak version 9): revoke it (``device.revoke``) if it is not yours."""

    device: DeviceId
    name: DeviceLabel
    signed_in_at: Millis


@struct
class SigninTriesUsed(Push, type="signin.tries_used"):
    """Someone used up this account's named sign-in tries (``signin.redeem`` with its
    ``name``) for the hour: its live sign-in code died, and until ``until`` (server ms)
    named redemptions are refused. Told to the player's sessions that speak version 9: ask a
    new code and redeem it without the name."""

    until: Millis


for _cls in (DevicesGet, DeviceRevoke, DeviceInfo, DevicesReply, DeviceSignedIn, SigninTriesUsed):
    fields_of(_cls)
