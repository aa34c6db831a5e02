"""Triple Easthaven: 12x3 deal, alternating-colour runs, dealing across, suit foundations with
cards coming back, and the shuttle-aware end of the game."""

from __future__ import annotations

import pytest

from engine import IllegalMove, Move, new_game, shuffled_cards
from engine.cards import RANK_TEXT
from engine.easthaven import TripleEasthaven
from engine.game import Game
from engine.views import tableau_view

from .helpers import cards, deck, easthaven_state, fresh_as, state_cards

FILLER = ("5C", "KD")  # a face-down 5C under a KD: no move, no foundation play


def eh(
    piles: list[tuple[str, str]],
    stock: str = "",
    foundations: list[str] | None = None,
    fill: bool = True,
) -> TripleEasthaven:
    """A position: piles as (face-down, face-up) texts bottom first (the rest filled with dead
    K piles unless `fill` is False), stock next-to-deal first, foundations 1-3 clubs, 4-6
    diamonds, 7-9 hearts, 10-12 spades."""
    extra = [FILLER if fill else ("", "")] * (12 - len(piles))
    piles = piles + extra
    founds = (foundations or []) + [""] * (12 - len(foundations or []))
    return fresh_as(
        TripleEasthaven,
        "triple-easthaven",
        _piles=[cards(d) + cards(u) for d, u in piles],
        _down=[len(d.split()) for d, _ in piles],
        _stock=list(reversed(cards(stock))),
        _foundations=[cards(f) for f in founds],
    )


def moves(game: Game) -> set[str]:
    return {str(m) for m in game.legal_moves()}


def pile(game: Game, i: int) -> list[str]:
    return [e["card"] for e in easthaven_state(game.to_json())["piles"][i - 1]]


@pytest.mark.parametrize("seed", [0, 1, 31337])
def test_deal_layout(seed: int) -> None:
    game = new_game("triple-easthaven", seed)
    state = easthaven_state(game.to_json())
    order = [c.text for c in shuffled_cards("triple-easthaven", seed, 3, range(1, 14))]
    assert len(state["piles"]) == 12
    for i, p in enumerate(state["piles"]):
        assert [e["up"] for e in p] == [False, False, True]
        assert [e["card"] for e in p] == order[3 * i : 3 * i + 3]
    assert state["stock"] == order[36:] and len(state["stock"]) == 120
    assert state["foundations"] == [[]] * 12
    assert state_cards(state) == deck(type(game))
    assert [p["down"] for p in tableau_view(game.view())["piles"]] == [2] * 12


@pytest.mark.parametrize(
    ("lower", "upper", "ok"),
    [
        ("8H", "9S", True),
        ("8D", "9C", True),
        ("8S", "9H", True),
        ("8D", "9H", False),
        ("8S", "9C", False),
        ("7H", "9S", False),
        ("9H", "8S", False),
    ],
)
def test_builds_down_in_alternating_colours(lower: str, upper: str, ok: bool) -> None:
    game = eh([("2C", lower), ("3C", upper)], stock="AD")
    assert ("1 2 1" in moves(game)) == ok
    if ok:
        game.apply("1 2")
        assert pile(game, 2) == ["3C", upper, lower]
    else:
        with pytest.raises(IllegalMove, match=f"{lower} does not build on {upper}"):
            game.apply("1 2 1")


def test_runs_move_as_a_unit_whole_or_partial() -> None:
    game = eh([("4C", "JD 10S 9H 8C"), ("", "QC"), ("", "10C"), ("", "9D")], stock="AD")
    assert {"1 2 4", "1 3 2", "1 4 1"} <= moves(game)
    game.apply("1 3")  # short form: the 9H 8C that fits
    assert pile(game, 3) == ["10C", "9H", "8C"]
    game.apply("1 2 2")
    assert pile(game, 2) == ["QC", "JD", "10S"] and pile(game, 1) == ["4C"]


def test_only_alternating_runs_move_together() -> None:
    game = eh([("", "10D 9S 8S"), ("", "10H")], stock="AD")
    assert "1 2 2" not in moves(game)
    with pytest.raises(IllegalMove, match="only 1 card"):
        game.apply("1 2 2")


def test_any_card_or_run_fills_an_empty_pile() -> None:
    game = eh([("2D", "7H 6S 5D"), ("", "")], stock="AD")
    assert {"1 2 1", "1 2 2", "1 2 3"} <= moves(game)
    assert game.parse_move("1 2") == Move("1", "2", 3)  # the whole run by default
    game.apply("1 2 2")
    assert pile(game, 2) == ["6S", "5D"]


def test_deal_one_card_to_every_pile_including_empty_ones() -> None:
    stock = "AC 2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AD"
    game = eh([("", "")] * 3, stock=stock, fill=True)
    before = [pile(game, i) for i in range(1, 13)]
    assert "d" in moves(game)
    result = game.apply("d")
    for i in range(12):
        assert pile(game, i + 1) == [*before[i], stock.split()[i]]
        assert easthaven_state(game.to_json())["piles"][i][-1]["up"] is True
    assert easthaven_state(game.to_json())["stock"] == ["KC", "AD"]
    assert [e["to"] for e in result.events() if e["type"] == "move"] == [
        str(i) for i in range(1, 13)
    ]
    assert not game.can_undo()  # dealing reveals cards
    game.apply("d")  # the last partial deal goes to the first piles
    assert pile(game, 1)[-1] == "KC" and pile(game, 2)[-1] == "AD"
    assert pile(game, 3) == ["3C"] and len(pile(game, 4)) == len(before[3]) + 1
    assert easthaven_state(game.to_json())["stock"] == []
    assert "d" not in moves(game)


def test_dealing_is_allowed_at_any_time() -> None:
    game = eh([("", "AH"), ("", "9S"), ("", "8D")], stock="2C")
    assert {"1 f", "3 2 1", "d"} <= moves(game)


def test_foundations_by_suit_three_per_suit() -> None:
    game = eh([("", "AH"), ("", "AH"), ("", "AH"), ("", "2H"), ("", "2D")], stock="KS")
    game.apply("1 f")
    game.apply("2 f")
    game.apply("3 f")
    founds = easthaven_state(game.to_json())["foundations"]
    assert founds[6:9] == [["AH"], ["AH"], ["AH"]]  # hearts are foundations 7-9
    with pytest.raises(IllegalMove, match="no foundation takes 2D"):
        game.apply("5 f")
    game.apply("4 f")
    assert easthaven_state(game.to_json())["foundations"][6] == ["AH", "2H"]


def test_foundation_top_card_moves_back() -> None:
    game = eh(
        [("", "9S"), ("", "9H")], stock="AD", foundations=["", "", "", "AD 2D 3D 4D 5D 6D 7D 8D"]
    )
    assert "f8D 1" in moves(game) and "f8D 2" not in moves(game)
    assert game.parse_move("f 1") == Move("f8D", "1")
    with pytest.raises(IllegalMove, match="8D does not build on 9H"):
        game.apply("f8D 2")
    with pytest.raises(IllegalMove, match="7D is not on top of a foundation"):
        game.apply("f7D 1")
    result = game.apply("f8d 1")
    assert (
        pile(game, 1) == ["9S", "8D"]
        and easthaven_state(game.to_json())["foundations"][3][-1] == "7D"
    )
    assert result.events() == [{"type": "move", "cards": ["8D"], "from": "f", "to": "1"}]
    assert game.can_undo()


def test_a_foundation_move_without_its_card_says_why_it_is_none() -> None:
    """`f 2` names no card: played when one foundation card fits pile 2, else the reason is
    what the player can act on (none fits there, or which to name), not "name the card"."""
    game = eh(
        [("", "9S"), ("", "9H"), ("", "")],
        stock="AD",
        foundations=["", "", "", "AD 2D 3D 4D 5D 6D 7D 8D"],
    )
    with pytest.raises(IllegalMove, match="no foundation card builds on 9H"):
        game.apply("f 2")
    with pytest.raises(IllegalMove, match="more than one foundation card fits pile 1"):
        eh([("", "")], stock="AD", foundations=["AC 2C", "", "", "AD 2D 3D"], fill=True).apply(
            "f 1"
        )
    with pytest.raises(IllegalMove, match="the foundations are empty"):
        eh([("", "9S")], stock="AD").apply("f 1")
    with pytest.raises(IllegalMove, match="name the foundation card to move back"):
        game.apply("fZZ 1")


def test_face_down_card_turns_up_when_exposed() -> None:
    game = eh([("4S 6H", "AC"), ("", "")], stock="KH")
    result = game.apply("1 f")
    assert easthaven_state(game.to_json())["piles"][0] == [
        {"card": "4S", "up": False},
        {"card": "6H", "up": True},
    ]
    assert result.events()[-1] == {"type": "reveal", "card": "6H", "at": "1"}
    assert not game.can_undo()


def test_over_when_stock_empty_and_only_shuttles_remain() -> None:
    shuttle = [("2C", "9S 8H"), ("3C", "9C")]  # 8H goes back and forth between the 9s
    game = eh(shuttle)
    assert [str(m) for m in game._generate()] == ["1 2 1"]  # a move exists, but only shuttles
    assert game.over and not game.won and list(game.legal_moves()) == []
    with pytest.raises(IllegalMove, match="over"):
        game.apply("1 2")
    assert not eh(shuttle, stock="KS").over  # a card left to deal


def test_not_over_while_progress_is_possible() -> None:
    # Moving the run 9S 8H onto the 10D turns the 2C: progress.
    assert not eh([("2C", "9S 8H"), ("3C", "9C"), ("", "10D")]).over
    # Two moves away: the 4H must go onto the 5S before the 5C reaches the foundation.
    deep = eh([("6D", "5C 4H"), ("2C", "5S")], foundations=["AC 2C 3C 4C"])
    assert moves(deep) == {"1 2 1"}
    assert not deep.over
    deep.apply("1 2")
    assert "1 f" in moves(deep)
    # Progress through a foundation card coming back: 8D onto the 9S frees the 7C.
    back = eh([("2S", "7C"), ("", "9S")], foundations=["", "", "", "AD 2D 3D 4D 5D 6D 7D 8D"])
    assert not back.over


def test_won_when_all_cards_on_foundations() -> None:
    suit = list(RANK_TEXT[1:])
    founds = [" ".join(r + s for r in suit) for s in "CDHS" for _ in range(3)]
    founds[11] = " ".join(r + "S" for r in suit[:-1])
    game = eh([("", "KS")], foundations=founds, fill=False)
    assert not game.won
    game.apply("1 f")
    assert game.won and game.over and game.cleared == 156 == game.score == game.points
