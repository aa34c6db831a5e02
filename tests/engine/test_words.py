"""Moves in words, safe foundation moves and view patches (engine/words.py, engine/patches.py)."""

from __future__ import annotations

import random
from typing import cast

import pytest

from engine import UNDO, VARIANT_IDS, Move, from_view, new_game
from engine.cards import parse_card
from engine.patches import apply_patch, view_patch
from engine.views import json_map, tableau_view, triple_deck_view
from engine.words import (
    _CARD_CODE,
    EASTHAVEN_FOUNDATION_SUITS,
    SUIT_SYMBOLS,
    card_words,
    log_words,
    move_text,
    played_text,
    safe_moves,
    symbols,
)


def test_card_codes_become_suit_symbols() -> None:
    assert card_words("10H") == "10♥" and card_words("JD") == "J♦" and card_words("??") == "??"
    assert symbols("3D is not one rank above or below JD") == "3♦ is not one rank above or below J♦"
    assert symbols("illegal move '3 7': pile 3") == "illegal move '3 7': pile 3"


def test_every_card_code_and_nothing_else_is_written_with_its_suit_symbol() -> None:
    """`card_words` looks codes up: the same words as the card-code pattern `symbols` uses
    gives a whole string, for every string of up to three characters a code could be."""
    alphabet = "A123456789JQKTCDHSX?0 h"
    texts = {a + b for a in alphabet for b in alphabet} | {
        a + b + c for a in "1A" for b in "0Q1" for c in "CDHS?h"
    }
    written = set()
    for text in texts:
        m = _CARD_CODE.fullmatch(text)
        assert card_words(text) == (m.group(1) + SUIT_SYMBOLS[m.group(2)] if m else text), text
        if m:
            written.add(text)
    assert len(written) == 52 and {"10H", "AS", "KC", "2D"} <= written


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_a_patch_turns_the_view_before_into_the_view_after(variant: str) -> None:
    """Random play, undos included: the old view plus the patch is the new view, exactly."""
    rng = random.Random(variant)
    for seed in range(3):
        game = new_game(variant, seed=seed)
        for _ in range(120):
            before = json_map(game.view())
            moves = list(game.legal_moves())
            if game.can_undo() and rng.random() < 0.15:
                result = game.undo()
            elif moves:
                result = game.apply(rng.choice(moves))
            else:
                break
            after = game.view()
            patch = view_patch(after, result.events())
            assert apply_patch(before, patch) == json_map(after), (variant, result.move)
            if not result.undo:  # lean: never the whole view for a move
                assert len(str(patch)) < len(str(json_map(after))) or variant.endswith("out")


def test_pairing_moves_are_written_as_the_pair() -> None:
    game = new_game("fourteen-out", seed=3)
    view = game.view()
    assert move_text(view, Move("1", "5")) == "8♣ + 6♣"
    result = game.apply("1 5")
    assert played_text(game.view(), result.events()) == "8♣ + 6♣"
    undone = game.undo()
    assert played_text(game.view(), undone.events()) == "Undo (counts as a move)"


def test_tripeaks_plays_and_draws_in_words() -> None:
    game = new_game("triple-triangle", seed=3)
    assert move_text(game.view(), Move("22")) == "9♦ to the foundation"
    assert played_text(game.view(), game.apply("22").events()) == "9♦ to the foundation"
    assert move_text(game.view(), Move("d")) == "Draw from the stock"  # the card stays hidden
    assert played_text(game.view(), game.apply("d").events()) == "Draw J♠"


def test_tableau_moves_name_the_card_they_go_onto() -> None:
    game = new_game("triple-deck", seed=3)
    view = game.view()
    assert tableau_view(view)["piles"][0]["up"] == ["AC"]
    assert move_text(view, game.parse_move("1 6")) == "A♣ onto 2♣"
    result = game.apply("1 6")
    assert played_text(game.view(), result.events()) == "A♣ onto 2♣"
    assert played_text(game.view(), game.apply("d").events()).startswith("Draw ")


def test_safe_moves_follow_the_rule_of_thumb() -> None:
    # Triple Deck: an Ace is always safe; a 2 only once all twelve foundations hold an Ace.
    offered = 0
    for seed in range(20):
        game = new_game("triple-deck", seed=seed)
        for _ in range(60):
            view = triple_deck_view(game.view())
            for move in safe_moves(game):
                pile = view["waste"] if move.src == "w" else view["piles"][int(move.src) - 1]["up"]
                rank = parse_card(pile[-1]).rank
                assert all(len(f) >= rank - 1 for f in view["foundations"])
                assert game.is_legal(move)
                offered += 1
            moves = list(game.legal_moves())
            if not moves:
                break
            game.apply(moves[-1])
    assert offered > 0
    assert safe_moves(new_game("fourteen-out", seed=1)) == []
    assert safe_moves(new_game("triple-triangle", seed=1)) == []


def test_safe_moves_find_aces_and_withhold_unsafe_cards() -> None:
    found = 0
    for seed in range(60):
        game = new_game("triple-easthaven", seed=seed)
        for _ in range(40):
            safe = safe_moves(game)
            view = tableau_view(game.view())
            for move in safe:
                card = parse_card(view["piles"][int(move.src) - 1]["up"][-1])
                found += card.rank == 1
            unsafe = [m for m in game.legal_moves() if m.dst == "f" and m not in safe]
            for m in unsafe:  # a legal foundation move left out: a card someone may still want
                card = parse_card(view["piles"][int(m.src) - 1]["up"][-1])
                assert card.rank > 2
            moves = list(game.legal_moves())
            if not moves:
                break
            game.apply(moves[0])
    assert found > 0


@pytest.mark.parametrize("variant", ["triple-deck", "triple-deck-kings", "triple-easthaven"])
def test_safe_moves_are_exactly_the_legal_foundation_moves_the_rule_calls_safe(
    variant: str,
) -> None:
    # safe_moves reads the foundations once per call (the browser's every reply): the same
    # answer as the rule applied card by card, in both directions, on random positions.
    def safe(view: dict[str, object], code: str) -> bool:
        card = parse_card(code)
        foundations = cast("list[list[str]]", view["foundations"])
        if variant != "triple-easthaven":
            return all(len(f) >= card.rank - 1 for f in foundations)
        suits = EASTHAVEN_FOUNDATION_SUITS
        others = [f for f, s in zip(foundations, suits, strict=True) if (s in "DH") != card.red]
        return card.rank <= 2 or all(len(f) >= card.rank - 1 for f in others)

    checked = offered = high = 0
    for seed in range(12):
        game = new_game(variant, seed=seed)
        rng = random.Random(seed)
        for _ in range(150):
            view = json_map(game.view())
            if view["over"]:
                break
            piles = cast("list[dict[str, list[str]]]", view["piles"])
            waste = cast("list[str]", view.get("waste") or [])
            want = []
            for move in game.legal_moves():
                if move.dst != "f" or move.src.startswith("f"):
                    continue
                code = waste[-1] if move.src == "w" else piles[int(move.src) - 1]["up"][-1]
                high += parse_card(code).rank > 2
                if safe(view, code):
                    want.append(str(move))
            got = [str(m) for m in safe_moves(game)]
            assert sorted(got) == sorted(want), (seed, got, want)
            checked += 1
            offered += len(got)
            legal = list(game.legal_moves())
            up = [m for m in legal if m.dst == "f" and not m.src.startswith("f")]
            # mostly up: foundations of different heights, where the rule has to tell
            game.apply(rng.choice(up if up and rng.random() < 0.8 else legal))
    assert checked > 500 and offered > 20 and high > 50


def test_easthaven_safety_reads_the_foundations_of_the_other_colour() -> None:
    # Every black foundation holds A-2, the red ones are empty but for one heart A-2: a red 3
    # is safe (no black 2 is left to want it), a black 3 is not (red 2s are still out).
    view = json_map(new_game("triple-easthaven", seed=3).view())
    view["foundations"] = [
        [f"A{s}", f"2{s}"] if s in "CS" or (s == "H" and i % 3 == 0) else []
        for i, s in enumerate(EASTHAVEN_FOUNDATION_SUITS)
    ]
    piles = cast("list[dict[str, object]]", view["piles"])
    piles[0]["up"], piles[1]["up"] = ["3H"], ["3S"]
    game = from_view(view)
    assert game.is_legal(Move("1", "f")) and game.is_legal(Move("2", "f"))
    assert [str(m) for m in safe_moves(game)] == ["1 f"]


def test_a_deal_names_its_cards_once_dealt() -> None:
    game = new_game("triple-easthaven", seed=3)
    assert move_text(game.view(), Move("d")) == "Deal a card onto every pile"
    assert played_text(game.view(), game.apply("d").events()).startswith("Deal 12 cards: 10♥ 4♠")


def test_undo_is_said_to_count_as_a_move() -> None:
    game = new_game("triple-triangle", seed=3)
    game.apply("22")
    assert played_text(game.view(), game.undo().events()) == "Undo (counts as a move)"
    assert UNDO == "undo"


def test_a_stored_log_replays_into_the_words_said_as_it_was_played() -> None:
    game = new_game("triple-deck", seed=7)
    log: list[str] = []
    said: list[str] = []
    for k in range(30):
        if k % 7 == 6 and game.can_undo():
            result = game.undo()
        else:
            moves = list(game.legal_moves())
            result = game.apply(moves[k % len(moves)])
        log.append(result.move if not result.undo else UNDO)
        said.append(played_text(game.view(), result.events()))
    assert log_words("triple-deck", 7, log) == said
    assert "Undo (counts as a move)" in said
