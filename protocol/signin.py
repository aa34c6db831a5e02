"""Signing in on another device with a one-time code (version 7).

A signed-in client asks ``signin.code`` and shows the code it gets (``ABCD-EFGH``: eight
characters of `SIGNIN_ALPHABET`, single use, five minutes). The other client, not signed in,
sends ``signin.redeem`` with the code as its first request instead of ``hello``; the server
answers ``welcome`` with a ``token`` of its own for the same player, as registration does.
A wrong, used or expired code is ``invalid_code``; attempts are limited per client address
(``limit_reached``).
"""

from __future__ import annotations

from typing import Annotated, Final

from protocol.devices import DeviceLabel
from protocol.events import Reply
from protocol.fields import DisplayName, Features, Millis, Str, Versions
from protocol.messages import ClientMessage
from protocol.schema import fields_of, struct

#: The characters of a sign-in code: digits and capitals without the look-alikes 0 O 1 I L.
SIGNIN_ALPHABET: Final = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
#: Characters in a code (shown in two groups of four: ``ABCD-EFGH``).
SIGNIN_CODE_LENGTH: Final = 8

#: A code as shown (``ABCD-EFGH``).
ShownCode = Annotated[str, Str(9, 9, r"[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}", "a sign-in code")]
#: A code as typed: any case, spaces and dashes ignored (checked by the server, where a
#: malformed code is as wrong as any other: ``invalid_code``).
TypedCode = Annotated[str, Str(1, 32)]


def normalize_code(typed: str) -> str | None:
    """The code's eight characters (upper case, no dash or space), or None when ``typed``
    cannot be a code."""
    text = "".join(typed.split()).replace("-", "").upper()
    if len(text) != SIGNIN_CODE_LENGTH or any(c not in SIGNIN_ALPHABET for c in text):
        return None
    return text


def show_code(code: str) -> str:
    """``ABCDEFGH`` as shown: ``ABCD-EFGH``."""
    return f"{code[:4]}-{code[4:]}"


@struct
class SigninCode(ClientMessage, type="signin.code"):
    """Ask for a one-time code that signs another device in as this player; answered by
    ``signin.code``. A new code replaces the player's previous one."""


@struct
class SigninCodeReply(Reply, type="signin.code"):
    """The code to show (``ABCD-EFGH``) and when it dies (server milliseconds)."""

    code: ShownCode
    expires_at: Millis


@struct
class SigninRedeem(ClientMessage, type="signin.redeem"):
    """Sign in with a code instead of ``hello`` (the connection's first request):
    ``versions`` as in ``hello`` (7 or newer must be among them), ``code`` as typed.
    Answered by ``welcome`` with this device's own ``token``."""

    versions: Versions
    code: TypedCode
    #: Optional behaviours asked for, as in ``hello`` (``rules_free``).
    features: Features | None = None
    #: Version 9: the account's name. The attempt is then counted against that account
    #: (a few an hour, its live code voided past them) instead of the client's address, and
    #: a code of any other account is ``invalid_code``.
    name: DisplayName | None = None
    #: Version 9: a name for this device, shown in the player's device list.
    device: DeviceLabel | None = None


for _cls in (SigninCode, SigninCodeReply, SigninRedeem):
    fields_of(_cls)
