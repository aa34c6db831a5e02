"""The variant descriptors of ``welcome`` (protocol 6), built once from the engine's variant
classes and rules text: the one source of the titles, goals and scoring clients show."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Final

import protocol as p
from engine import VARIANT_IDS, VARIANTS, Game
from engine.pairing import PairingGame
from engine.rules import NOTATION, RULES
from engine.tripeaks import TABLEAU, TriPeaks
from engine.views import EASTHAVEN_VARIANTS
from engine.words import EASTHAVEN_FOUNDATION_SUITS

#: Every move of every variant counts, ``undo`` included (RULINGS.md, "Undo").
UNDO_COUNTS: Final = True
_SUITS: Final = 4


def _family(cls: type[Game]) -> p.Family:
    if issubclass(cls, PairingGame):
        return p.Family.PAIRING
    if issubclass(cls, TriPeaks):
        return p.Family.TRIPEAKS
    return p.Family.TABLEAU


def _name(title: str) -> str:
    """``Triple Triangle (Tri Peaks)`` -> ``Tri Peaks``; a title without brackets as is."""
    m = re.fullmatch(r".*\((.+)\)", title)
    return m.group(1) if m else title


def _goal(variant_id: str, max_score: int | None) -> str:
    """The rules text's "You win ..." clause; for the scored games, what a point is."""
    text = " ".join(RULES[variant_id].split())
    if max_score is not None:
        return (
            "Score as many points as you can: a foundation built up to rank n is worth "
            f"1+2+...+n points (max {max_score})."
        )
    m = re.search(r"You win ([^;.]+)", text)
    return f"You win {m.group(1)}." if m else RULES[variant_id].splitlines()[0]


def _stock(variant_id: str) -> str | None:
    """What ``d`` does, from the variant's move notation (None without a stock)."""
    m = re.search(r"^\s*d\s{2,}(.+)$", NOTATION[variant_id], re.M)
    return m.group(1).strip() if m else None


def _foundation_back(variant_id: str) -> bool:
    """Whether the rules let a foundation's top card come back down onto a pile."""
    return "foundation's top card may come back" in " ".join(RULES[variant_id].split())


def describe(cls: type[Game]) -> p.VariantInfo:
    """The descriptor of one variant class."""
    cards = cls.decks * _SUITS * len(cls.ranks)
    top = max(cls.ranks)
    max_score = cls.decks * _SUITS * top * (top + 1) // 2 if cls.scored else None
    return p.VariantInfo(
        id=cls.id,
        title=cls.title,
        name=_name(cls.title),
        family=_family(cls).value,
        decks=cls.decks,
        cards=cards,
        clear=TABLEAU if issubclass(cls, TriPeaks) else cards,
        goal=_goal(cls.id, max_score),
        scored=cls.scored,
        may_finish=cls.may_finish,
        finish=cls.scored,  # the Triple Deck games take `finish` (protocol 3)
        undo_counts=UNDO_COUNTS,
        foundation_back=_foundation_back(cls.id),
        max_score=max_score,
        stock=_stock(cls.id),
    )


VARIANT_INFO: Final[tuple[p.VariantInfo, ...]] = tuple(describe(c) for c in VARIANTS.values())
"""One descriptor per variant, in the order of ``engine.VARIANT_IDS``."""

VARIANT_INFO_RULES_FREE: Final[tuple[p.VariantInfo, ...]] = tuple(
    replace(info, foundation_suits=EASTHAVEN_FOUNDATION_SUITS)
    if info.id in EASTHAVEN_VARIANTS
    else info
    for info in VARIANT_INFO
)
"""The descriptors for a client that said ``hello.features: ["rules_free"]`` (the web
page): with the suit of each foundation where it has one."""

# Every `welcome` carries one of them: their wire form is made once (`protocol.keep_plain`).
p.keep_plain(VARIANT_INFO, pinned=True)
p.keep_plain(VARIANT_IDS, pinned=True)
p.keep_plain(VARIANT_INFO_RULES_FREE, pinned=True)
