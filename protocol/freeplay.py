"""Free play (version 7): ``free.start`` deals an unranked game of any variant on a random
deal (never a daily or race deal), answered by ``game`` with ``free: true``. The game is on no
leaderboard, in no history, streak or rating; it is played like any game (``move``, ``undo``,
``hint``, ``resign``, ``finish``) and resumed by its id (``game.get``).
"""

from __future__ import annotations

from protocol.fields import VariantName
from protocol.messages import ClientMessage
from protocol.schema import fields_of, struct


@struct
class FreeStart(ClientMessage, type="free.start"):
    """Deal a new free game of ``variant``; answered by ``game`` (``free: true``)."""

    variant: VariantName


fields_of(FreeStart)
