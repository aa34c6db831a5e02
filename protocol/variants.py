"""Variant descriptors (version 6): what a client needs to know about a variant to show it.

The server builds one :class:`VariantInfo` per variant from the engine's variant classes and
rules text, and sends them in ``welcome.variant_info``; clients keep no tables of titles,
goals or scoring of their own. Nothing here imports the engine.
"""

from __future__ import annotations

import enum
from typing import Annotated, Final

from protocol.fields import Count, Flag, Int, ListOf, Str, VariantName
from protocol.schema import Nested, Struct, fields_of, struct


class Family(enum.StrEnum):
    """How a variant's table is laid out (and how its moves are written)."""

    PAIRING = "pairing"  # face-up piles; pairs of top cards are removed
    TRIPEAKS = "tripeaks"  # three peaks, a stock and one foundation pile
    TABLEAU = "tableau"  # piles built down, a stock, foundations built up


FAMILY: Final = Str(1, 16, r"pairing|tripeaks|tableau", "a variant family")
TITLE: Final = Str(1, 64)
SENTENCE: Final = Str(1, 400)
DECKS: Final = Int(1, 8)


@struct
class VariantInfo(Struct):
    """One variant as the server describes it (``welcome.variant_info``, version 6)."""

    #: The variant's id (as in ``welcome.variants``, ``daily.start``...).
    id: VariantName
    #: The title in the rules text, e.g. ``Triple Triangle (Tri Peaks)``.
    title: Annotated[str, TITLE]
    #: The name to show in lists and headings, e.g. ``Tri Peaks``.
    name: Annotated[str, TITLE]
    family: Annotated[str, FAMILY]
    decks: Annotated[int, DECKS]
    #: Cards dealt.
    cards: Count
    #: Cards to clear to win (``result.cleared`` of a won game): Tri Peaks' 28 peak cards.
    clear: Count
    #: What the player plays for, in one sentence.
    goal: Annotated[str, SENTENCE]
    #: Ranked by ``score`` (foundation points) rather than by ``cleared``.
    scored: Flag
    #: The player may end the game at any time ("Finish" rather than "Resign").
    may_finish: Flag
    #: The game is ended with ``finish`` (its score recorded), not ``resign``.
    finish: Flag
    #: ``undo`` counts as a move (RULINGS.md): it adds one to ``moves``.
    undo_counts: Flag
    #: A foundation's top card may be moved back onto a pile (``f8H 5``).
    foundation_back: Flag = False
    #: The highest score (``scored`` variants only).
    max_score: Count | None = None
    #: What the move ``d`` does (absent when the variant has no stock).
    stock: Annotated[str, SENTENCE] | None = None
    #: The suit of each foundation, in the view's order (``CCCDDDHHHSSS``), for the variants
    #: whose foundations are built by suit (added without a version).
    foundation_suits: Annotated[str, Str(0, 64, r"[CDHS]*", "suit letters")] | None = None


VariantInfoList = Annotated[tuple[VariantInfo, ...], ListOf(Nested(VariantInfo), 0, 64)]

fields_of(VariantInfo)
