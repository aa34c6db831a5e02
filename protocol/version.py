"""Protocol versions and their negotiation."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from protocol.errors import UnsupportedVersion

PROTOCOL_VERSION: Final = 10
"""The newest protocol version this package implements.

Version 2 (lean moves): a ``moved`` reply carries the move's ``seq`` and ``events`` but no
``view``; the client keeps its copy current from the events (``engine.Game.follow``) and asks
``game.get`` for the full view on a ``seq`` gap. Version 1 replies carry the whole view.

Version 3 (resume): ``welcome`` carries the player's active race (``race``) and today's
daily games (``daily``), so a client that lost them after a reconnect can rejoin; ``game``
carries the game's move list (``log``); Triple Deck games take ``finish``.

Version 4 (views on request): ``move`` and ``undo`` take ``with_view``; when true, the
``moved`` reply carries the whole new ``view`` besides the events, for a client that shows the
board without a rules engine (the browser) and would otherwise ask ``game.get`` after each move.

Version 5 (fair play): new players per client address and hour are limited: error code
``limit_reached`` (older versions get ``rate_limited``); ``token.rotate`` and
``token.revoke_all`` replace a player's token (answered by ``token``); look-alike names
(``AIice`` for ``alice``) are ``name_taken`` and reserved ones ``invalid_name``, in every version.
Also in version 5: a race's cards reach nobody before its ``start_at`` (``game.get`` of a
race game in its countdown answers ``not_started``, in every version); spectator boards show a
racer's game only up to its newest position whose every card turned up so far each racer
still playing has seen (earlier rounds wrote such cards ``"??"``; the shapes are the same);
private rooms are casual (unrated), a pair of accounts is rated against each other once per
UTC day, a racer who resigns or forfeits without a real attempt gives nobody rating points;
the queue keeps accounts of one client address apart while others wait; creating rooms is
limited per account and hour: error code ``limit_reached`` (older versions get
``rate_limited``). And: a game result (``result`` in ``game``, ``moved``, ``finished`` and
``game.finished``) carries ``status: "flagged"`` while the fair-play screen holds it for
review (it is then on no leaderboard; older versions see the result without a ``rank``).
A daily game takes no write (``move``, ``undo``, ``hint``, ``resign``, ``finish``) once its UTC
day is over: error code ``day_over`` (older versions get ``game_over``); an unfinished daily
game is closed as it stands at the day's end; a day's seeds (``daily.seeds``) and exports
(``game.export``) are published once every game of that day is settled (until then
``not_found``, the message saying when to retry).

Version 6 (one source of truth): ``welcome`` carries ``variant_info``, one descriptor per
variant of ``variants`` (:class:`~protocol.variants.VariantInfo`: id, title and short name,
family, decks, cards dealt and cards to clear, goal sentence, scored or not and the highest
score, whether the player may end it at will and with ``finish``, that ``undo`` counts as a
move, what the stock does), built by the server from the engine's variant classes and rules
text; clients keep no tables of their own and treat game ids as opaque. Nothing else changes.

Version 7 (accounts): ``signin.code`` gives a signed-in player a one-time code (``ABCD-EFGH``,
five minutes, single use) and ``signin.redeem`` (instead of ``hello``) signs another device in
with it: ``welcome`` with that device's own token; a wrong, used or expired code is
``invalid_code``, attempts per client address are limited (``limit_reached``). ``free.start``
deals an unranked free game of any variant (a random deal, never a daily or race deal; game
kind ``free``); ``race.rematch`` after a race opens a private room with the same racers, who
are told by a ``race.rematch_offer`` push. Older versions get ``unknown_type`` for all four.

Version 8 (tiers): each variant has four tiers a day, ``easy``, ``medium``, ``hard`` and
``expert``, each its own deal, board, par and result, one ranked attempt each; ``medium`` is
the daily game (the same game, board and history as before). ``daily.start`` takes ``tier``
and, for a past day of the current month, ``date`` (a catch-up game: on no board, its result
``catchup``); ``welcome`` carries ``tiers`` (today's tiers and the player's state in each) and
lists every tier's games in ``daily``; ``game`` carries ``tier`` and ``catchup``; the
leaderboard requests take ``tier``; ``calendar.get`` answers ``calendar`` (the month's days,
tiers and states, crowns and badge); ``profile`` carries ``months`` (crowns and badge per
month). Older versions see exactly one daily game per variant, as before.

Version 9 (devices): ``devices`` lists the player's devices (how and when each signed in) and
``device.revoke`` signs one out (both answered by ``devices``); a ``device.signed_in`` push
tells the player's other sessions when a code signs a new device in, and a
``signin.tries_used`` push when someone used up the account's named sign-in tries for the
hour. A device signed in by a
code is on trial for a trust period: it may not revoke older devices nor every session
(``token.revoke_all``), error code ``not_trusted_yet`` (versions 5 to 8 get
``limit_reached``). ``signin.redeem`` takes ``name`` (the account's name: its attempts are
then counted per account, not per client address) and ``device`` (a name for the device).
Older versions get ``unknown_type`` for the new requests and no push.

Version 10 (resignations): a race tells a resignation from a game that ran out of moves. A
racer's ``progress`` event, their row in the race's ``racers`` (``race.room``,
``race.update``, ``race.watching``, ``race.list``) and their line of the ``finished`` event's
``results`` carry ``resigned``: true when the racer gave their game up (``resign``), false
otherwise; ``stuck`` stays as it was (any game over without a win, a resignation too), and a
racer who forfeited is ``forfeited``, not ``resigned``. Older versions get exactly what they got
before: no ``resigned`` anywhere in a race.
"""

LEAN_MOVES: Final = 2
"""The first version whose ``moved`` replies leave out the view."""

RESUME: Final = 3
"""The first version whose ``welcome`` carries the active race and today's daily games."""

MOVE_VIEWS: Final = 4
"""The first version whose ``move`` and ``undo`` may ask for the view (``with_view``)."""

FAIR_PLAY: Final = 5
"""The first version of fair play: sent ``limit_reached`` and ``day_over``, told a held
result's ``status`` (``flagged``); ``token.rotate`` and ``token.revoke_all``."""

DESCRIPTORS: Final = 6
"""The first version whose ``welcome`` carries the variant descriptors (``variant_info``)."""

ACCOUNTS: Final = 7
"""The first version with sign-in codes (``signin.code``, ``signin.redeem``), free play
(``free.start``) and rematches (``race.rematch``, ``race.rematch_offer``)."""

TIERS: Final = 8
"""The first version with tiers per day, catch-up games, the calendar and badges."""

DEVICES: Final = 9
"""The first version with the device list (``devices``, ``device.revoke``,
``device.signed_in``, ``signin.tries_used``), trust periods (``not_trusted_yet``) and named
``signin.redeem``."""

RESIGNED: Final = 10
"""The first version whose races say who resigned (``resigned`` on a racer's ``progress``
event, row and result line)."""

SUPPORTED_VERSIONS: Final[frozenset[int]] = frozenset({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
"""Every protocol version this package can speak."""


def negotiate(versions: Iterable[int], supported: Iterable[int] = SUPPORTED_VERSIONS) -> int:
    """The highest version in both ``versions`` (the client's) and ``supported``.

    Raises :class:`~protocol.errors.UnsupportedVersion` (``unsupported_version``) when
    there is none.
    """
    offered = set(versions)
    ours = set(supported)
    common = offered & ours
    if not common:
        theirs = ", ".join(str(v) for v in sorted(offered)) or "none"
        spoken = ", ".join(str(v) for v in sorted(ours))
        raise UnsupportedVersion(
            f"no common protocol version: client speaks {theirs}, server speaks {spoken}"
        )
    return max(common)
