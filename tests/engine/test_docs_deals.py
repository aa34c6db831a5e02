"""The test vectors in docs/deals.md hold for the code, so the two cannot drift apart."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import pytest

from engine import DealRng, new_game, shuffled_cards, variant

DOC = Path(__file__).resolve().parents[2] / "docs" / "deals.md"
LINE = re.compile(r"^(words|order|first|deal) ([a-z-]+) (\d+)(?: ([\w\[\]]+))?: (.+)$")


def vectors() -> list[tuple[str, str, int, str | None, list[str]]]:
    found = []
    for line in DOC.read_text().splitlines():
        m = LINE.match(line)
        if m:
            kind, var, seed, place, values = m.groups()
            found.append((kind, var, int(seed), place, values.split()))
    return found


def test_doc_has_every_kind_of_vector() -> None:
    kinds = {(v[0], v[1]) for v in vectors()}
    assert ("words", "fourteen-out") in kinds and ("order", "fourteen-out") in kinds
    assert {v for k, v in kinds if k == "first"} == {v for k, v in kinds if k == "deal"}
    assert len({v for k, v in kinds if k == "deal"}) == 6


def _at(state: Mapping[str, object], place: str) -> list[str]:
    key, *index = re.findall(r"\w+", place)
    value = state[key]
    for i in index:
        assert isinstance(value, list), place
        value = value[int(i)]
    items: list[object] = value if isinstance(value, list) else [value]
    texts: list[str] = []
    for x in items:
        text = x["card"] if isinstance(x, dict) else x
        assert isinstance(text, str), place
        texts.append(text)
    return texts


@pytest.mark.parametrize(("kind", "var", "seed", "place", "values"), vectors())
def test_vector(kind: str, var: str, seed: int, place: str | None, values: list[str]) -> None:
    cls = variant(var)
    if kind == "words":
        rng = DealRng(var, seed)
        assert [format(rng.next_word(), "016x") for _ in values] == values
    elif kind in ("order", "first"):
        order = [c.text for c in shuffled_cards(var, seed, cls.decks, cls.ranks)]
        assert (order if kind == "order" else order[: len(values)]) == values
    else:
        assert place is not None
        assert _at(new_game(var, seed).to_json(), place) == values
