"""A client's session as handlers see it: the player, the protocol version, a way to send.

Handlers get a `Session`, never the socket: the connection (`server.transport.connection`)
owns the socket, its send queue and its closing state, and hands each request to its handler
with the session. A session without a socket (`Session(services, send)`) runs any handler,
which is how a handler is tested on its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import protocol as p
from server.players.registry import Player
from server.transport.address import address_group

if TYPE_CHECKING:
    from server.services import Services

__all__ = ["NotAuthenticated", "Send", "Session"]

#: Queue one message to the client (a push, from any task); never blocks.
Send = Callable[[p.ServerMessage], None]


class NotAuthenticated(p.ProtocolError):
    def __init__(self) -> None:
        super().__init__("say hello first", code=p.ErrorCode.NOT_AUTHENTICATED)


def _dropped(message: p.ServerMessage) -> None:
    """The send of a session whose connection is gone: nothing reaches anyone."""


class Session:
    """One client's session: who (``player``, after `hello`), which protocol ``version``,
    where from (``address``), the app's ``services``, and `send` for pushes."""

    __slots__ = (
        "_send",
        "address",
        "after_reply",
        "device",
        "features",
        "group",
        "player",
        "services",
        "version",
    )

    def __init__(
        self, services: Services, send: Send, address: str = "", group: str | None = None
    ) -> None:
        self.services = services
        self._send = send
        self.player: Player | None = None
        self.version: int | None = None
        #: The `hello.features` the server took up (`protocol.fields.RULES_FREE`).
        self.features: frozenset[str] = frozenset()
        #: The client's address (`server.transport.address.client_address`: the peer, or what
        #: a trusted proxy forwarded); "" when unknown.
        self.address = address
        #: Its `address_group` (what the per-address limits count): given by the connection,
        #: which works it out once per peer (`server.app`), else worked out here.
        self.group = address_group(address) if group is None else group
        #: The id of this session's device when it signed in by a code on this connection
        #: (`signin.redeem`), else "" (`server.players.devices`).
        self.device = ""
        #: Steps a handler asks to run once its reply is on its way (e.g. the pushes that
        #: must follow `welcome`, never precede it); the connection runs and clears them.
        self.after_reply: list[Callable[[], Awaitable[None]]] = []

    def send(self, message: p.ServerMessage) -> None:
        """Queue a message to the client (dropped once its connection is gone)."""
        self._send(message)

    def require_player(self) -> Player:
        if self.player is None:
            raise NotAuthenticated()
        return self.player

    def speaks(self, version: int) -> bool:
        """True when the session's protocol version is ``version`` or newer."""
        return self.version is not None and self.version >= version

    def detach(self) -> None:
        """The connection is gone: later sends are dropped (and the session no longer refers
        to the connection, which is then freed by reference counting)."""
        self._send = _dropped
