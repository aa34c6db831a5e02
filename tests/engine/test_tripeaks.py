"""Triple Triangle (Tri Peaks): layout, covering, rank adjacency with wrap, stock, end."""

from __future__ import annotations

import pytest

from engine import IllegalMove, new_game, shuffled_cards
from engine.tripeaks import COVERED_BY, TABLEAU, TriPeaks
from engine.views import tripeaks_view

from .helpers import C, cards, deck, fresh_as, placed, state_cards, tripeaks_state

ROW_SIZES = [3, 6, 9, 10]


def expected_cover() -> dict[int, set[int]]:
    """Covering written straight from RULINGS.md with 0-based positions row by row."""
    row = [0, 3, 9, 18]  # first position of rows 1-4
    cover: dict[int, set[int]] = {p: set() for p in range(28)}
    for k in range(9):
        cover[row[2] + k] = {row[3] + k, row[3] + k + 1}
    for p in range(3):
        for i in range(2):
            cover[row[1] + 2 * p + i] = {row[2] + 3 * p + i, row[2] + 3 * p + i + 1}
        cover[row[0] + p] = {row[1] + 2 * p, row[1] + 2 * p + 1}
    return cover


def peaks(tableau: list[str | None], foundation: str, stock: str = "") -> TriPeaks:
    """A Tri Peaks position: 28 cards or None (gone), the foundation top and the stock
    (next card to draw first)."""
    assert len(tableau) == TABLEAU
    return fresh_as(
        TriPeaks,
        "triple-triangle",
        _cards=[C(t) if t else C("KS") for t in tableau],
        _present=[t is not None for t in tableau],
        _foundation=[C(foundation)],
        _stock=list(reversed(cards(stock))),
    )


def only(positions: dict[int, str], foundation: str, stock: str = "") -> TriPeaks:
    """A position where only the given 1-based positions still hold cards."""
    return peaks([positions.get(p + 1) for p in range(TABLEAU)], foundation, stock)


@pytest.mark.parametrize("seed", [0, 1, 2024])
def test_deal_layout(seed: int) -> None:
    game = new_game("triple-triangle", seed)
    state = tripeaks_state(game.to_json())
    order = [c.text for c in shuffled_cards("triple-triangle", seed, 1, range(1, 14))]
    tableau = placed(state["tableau"])
    assert [e["card"] for e in tableau] == order[:28]
    assert state["foundation"] == [order[28]]
    assert state["stock"] == order[29:] and len(state["stock"]) == 23
    ups = [e["up"] for e in tableau]
    assert ups == [False] * 18 + [True] * 10
    start = 0
    for size in ROW_SIZES:  # rows of 3, 6, 9, 10: only the last is face up
        assert len(set(ups[start : start + size])) == 1
        start += size
    assert state_cards(state) == deck(type(game))
    view = tripeaks_view(game.view())
    assert view["tableau"] == ["??"] * 18 + order[18:28]
    assert view["stock"] == 23 and view["foundation"] == [order[28]]


def test_covering_matches_rulings() -> None:
    cover = expected_cover()
    assert {p: set(c) for p, c in enumerate(COVERED_BY)} == cover
    assert all(len(cover[p]) == 2 for p in range(18))
    assert all(not cover[p] for p in range(18, 28))


@pytest.mark.parametrize("pos", range(18))
def test_card_turns_up_exactly_when_both_coverers_are_gone(pos: int) -> None:
    a, b = sorted(expected_cover()[pos])
    layout: list[str | None] = ["5H"] * TABLEAU
    layout[pos] = "9C"
    game = peaks(layout, "2D")
    # Remove everything below the two coverers' rows so a and b are uncovered themselves.
    for q in range(TABLEAU):
        if q not in (a, b, pos) and q > pos:
            game._present[q] = False
    game._cards[a] = C("4S")
    game._cards[b] = C("3S")
    game._foundation = [C("3D")]
    assert tripeaks_view(game.view())["tableau"][pos] == "??"
    first = game.apply(str(a + 1))  # 4S on 3D: one coverer left
    assert tripeaks_view(game.view())["tableau"][pos] == "??"
    assert all(r.at != str(pos + 1) for r in first.reveals)
    entry = tripeaks_state(game.to_json())["tableau"][pos]
    assert entry is not None and entry["up"] is False
    second = game.apply(str(b + 1))  # 3S on 4S: now uncovered
    assert tripeaks_view(game.view())["tableau"][pos] == "9C"
    entry = tripeaks_state(game.to_json())["tableau"][pos]
    assert entry is not None and entry["up"] is True
    assert {"type": "reveal", "card": "9C", "at": str(pos + 1)} in second.events()


@pytest.mark.parametrize(
    ("card", "top"),
    [
        ("KC", "AD"),
        ("AC", "KD"),
        ("QH", "KH"),
        ("2S", "AS"),
        ("AH", "2C"),
        ("7D", "8D"),
        ("9D", "8C"),
    ],
)
def test_one_rank_up_or_down_with_wrap_any_suit(card: str, top: str) -> None:
    game = only({19: card}, top)
    assert [str(m) for m in game.legal_moves()] == ["19"]  # stock empty: no draw
    game.apply("19")
    assert tripeaks_state(game.to_json())["foundation"] == [top, card]
    assert game.won and game.cleared == 28


@pytest.mark.parametrize(
    ("card", "top"), [("QC", "AD"), ("2C", "KD"), ("7C", "7D"), ("5S", "7S"), ("JH", "KH")]
)
def test_not_adjacent_is_illegal(card: str, top: str) -> None:
    game = only({19: card, 20: "4S"}, top, "6D")
    assert "19" not in {str(m) for m in game.legal_moves()}
    with pytest.raises(IllegalMove, match="not one rank above or below"):
        game.apply("19")


def test_covered_card_is_not_playable() -> None:
    game = only({10: "8C", 19: "QC"}, "9D", "2H")  # position 10 is covered by 19 (and 20)
    assert [str(m) for m in game.legal_moves()] == ["d"]
    with pytest.raises(IllegalMove, match="position 10 is covered"):
        game.apply("10")
    with pytest.raises(IllegalMove, match="position 11 is empty"):
        game.apply("11")


def test_draw_is_allowed_at_any_time_and_one_pass_only() -> None:
    game = only({19: "8C"}, "9D", "2H 7S")
    assert {str(m) for m in game.legal_moves()} == {"19", "d"}
    result = game.apply("d")  # although 8C could play
    assert tripeaks_state(game.to_json())["foundation"] == ["9D", "2H"]
    assert result.events() == [
        {"type": "move", "cards": ["2H"], "from": "s", "to": "f"},
        {"type": "reveal", "card": "2H", "at": "f"},
    ]
    game.apply("d")
    assert (
        tripeaks_state(game.to_json())["stock"] == [] and tripeaks_view(game.view())["stock"] == 0
    )
    assert "d" not in {str(m) for m in game.legal_moves()}
    with pytest.raises(IllegalMove, match="stock is empty"):
        game.apply("d")


def test_draw_takes_stock_in_deal_order() -> None:
    game = new_game("triple-triangle", 3)
    order = [c.text for c in shuffled_cards("triple-triangle", 3, 1, range(1, 14))]
    for k in range(23):
        game.apply("d")
        assert tripeaks_state(game.to_json())["foundation"][-1] == order[29 + k]
    assert game.over == (not any(m for m in game.legal_moves()))


def test_won_with_stock_left() -> None:
    game = only({19: "8C"}, "9D", "2H 3S")
    game.apply("19")
    assert game.won and game.over and game.cleared == 28
    assert tripeaks_state(game.to_json())["stock"] == ["2H", "3S"]
    assert list(game.legal_moves()) == []


def test_over_when_stock_empty_and_no_play() -> None:
    blocked = only({19: "8C", 20: "2S"}, "5D")
    assert blocked.over and not blocked.won
    with_stock = only({19: "8C", 20: "2S"}, "5D", "KH")
    assert not with_stock.over
    with_stock.apply("d")
    assert with_stock.over  # KH on top: neither 8C nor 2S fits


def test_tableau_views_hide_face_down_cards() -> None:
    game = new_game("triple-triangle", 11)
    assert all(t == "??" for t in tripeaks_view(game.view())["tableau"][:18])
    assert tripeaks_view(game.view())["stock"] == 23
