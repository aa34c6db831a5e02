"""The rules text every client shows (`engine.rules`)."""

from __future__ import annotations

import pytest

from engine import VARIANT_IDS, variant
from engine.rules import NOTATION, RULES, rules_text


def test_every_variant_has_rules_and_notation() -> None:
    assert set(RULES) == set(NOTATION) == set(VARIANT_IDS)


@pytest.mark.parametrize("vid", VARIANT_IDS)
def test_rules_text_names_the_game_and_its_moves(vid: str) -> None:
    text = rules_text(vid)
    assert text.startswith(variant(vid).title)
    assert NOTATION[vid] in text and text.rstrip().endswith("take back the last move")
    decks = variant(vid).decks
    assert ("one deck" if decks == 1 else "three") in text.splitlines()[0]


def test_unknown_variant_has_no_rules() -> None:
    with pytest.raises(KeyError):
        rules_text("klondike")
