"""A player's token: replace it (``token.rotate``) or revoke every session (``token.revoke_all``).

Version 5 on. Both are answered by ``token``, carrying the player's new token: the old one
stops working at once (a ``hello`` with it is ``not_authenticated``). After ``token.rotate``
the player's other open sessions go on until they reconnect (they must then use the new
token); after ``token.revoke_all`` every other session of the player, on any server process,
is closed with code 4001 ("token revoked") within seconds.
"""

from __future__ import annotations

from protocol.events import Reply
from protocol.fields import PlayerId, Token
from protocol.messages import ClientMessage
from protocol.schema import fields_of, struct


@struct
class TokenRotate(ClientMessage, type="token.rotate"):
    """Replace this session's token with a new one; answered by ``token``."""


@struct
class TokenRevokeAll(ClientMessage, type="token.revoke_all"):
    """Revoke the player's token and close every other session of the player (a stolen
    token); answered by ``token`` with the only token that works from now on."""


@struct
class TokenReply(Reply, type="token"):
    """The player's new token: store it, the old one no longer works."""

    player_id: PlayerId
    token: Token


for _cls in (TokenRotate, TokenRevokeAll, TokenReply):
    fields_of(_cls)
