"""The rules for people (`engine.guide`): every variant has them, and every picture shows a
play the engine allows, checked with the engine's own card values and colours."""

from __future__ import annotations

from itertools import pairwise

import pytest

from engine import VARIANT_IDS
from engine.cards import parse_card
from engine.guide import GUIDES, UNDO, guide
from engine.rules import RULES


def rank(text: str) -> int:
    return parse_card(text).rank


def red(text: str) -> bool:
    return parse_card(text).red


def test_every_variant_has_a_guide() -> None:
    assert set(GUIDES) == set(VARIANT_IDS) == set(RULES)
    assert "counts as a move" in UNDO
    with pytest.raises(KeyError):
        guide("klondike")


@pytest.mark.parametrize("vid", VARIANT_IDS)
def test_every_picture_is_a_legal_play(vid: str) -> None:
    top = 12 if vid == "triple-deck" else 13
    for picture in guide(vid).pictures:
        cards = picture.cards
        assert all(1 <= rank(c) <= top for c in cards), (vid, cards)
        if vid in ("fourteen-out", "triple-fourteens"):
            a, b = cards
            assert rank(a) + rank(b) == 14 and picture.sign == "+"
        elif vid == "triple-triangle":
            a, b = cards
            assert (rank(a) - rank(b)) % 13 in (1, 12) and picture.sign == "on"
        elif picture.layout == "pile":  # a run that builds down by one rank
            assert all(rank(x) - rank(y) == 1 for x, y in pairwise(cards))
            if vid == "triple-easthaven":
                assert all(red(x) != red(y) for x, y in pairwise(cards))
        else:  # a foundation: up by one from an Ace (by suit in Easthaven)
            assert rank(cards[0]) == 1
            assert all(rank(y) - rank(x) == 1 for x, y in pairwise(cards))
            if vid == "triple-easthaven":
                assert len({c[-1] for c in cards}) == 1
