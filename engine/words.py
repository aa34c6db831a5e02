"""Moves written for people, and the foundation moves that are safe to play automatically.

A client without the rules (the browser) shows what these say: ``J♦ to the foundation``,
``7♥ + 7♣``, ``5♣ onto 6♥``, ``Draw 8♦ Q♠ 3♦``, ``Undo (counts as a move)``. A move is
described either after it was played, from its events and the view it left
(`played_text`: the cards it turned up are the player's now), or before, from the view it
starts from (`move_text`, for hints and safe moves: a stock move never names the cards it
would turn, which are hidden).

Safe foundation moves (`safe_moves`) follow the usual rule of thumb: a card goes up when no
card still in play could want to be built on it. Triple Deck builds down regardless of suit,
so a card of rank r is safe once all twelve foundations reached r - 1; Triple Easthaven
builds down in alternating colours, so an Ace or a 2 is always safe and a card of rank r once
the six foundations of the other colour reached r - 1. Fourteen Out and Tri Peaks have no
foundation to build: no move of theirs is played for the player. Compiled (setup.py): it
runs with every lean reply to the browser.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from .cards import RANK_TEXT, SUITS, parse_card
from .game import Game
from .moves import UNDO, Move
from .variants import new_game
from .views import (
    EASTHAVEN_VARIANTS,
    PAIRING_VARIANTS,
    TRIPEAKS_VARIANTS,
    TRIPLE_DECK_VARIANTS,
    Event,
    MoveEvent,
    View,
    pairing_view,
    tableau_view,
    tripeaks_view,
    triple_deck_view,
)

SUIT_SYMBOLS: Final = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
#: A card code in a sentence: ``10H``, ``QS`` (not inside a longer word).
_CARD_CODE: Final = re.compile(r"\b(10|[2-9AJQK])([CDHS])\b")
#: Easthaven's foundations by suit: three per suit, in `SUITS` order.
EASTHAVEN_FOUNDATION_SUITS: Final = "".join(s * 3 for s in SUITS)
UNDO_TEXT: Final = "Undo (counts as a move)"
#: `_safe_floors` of no foundation at all: every card is safe.
_NO_FLOOR: Final = 99


#: Every card code's words: `card_words` looks a code up (a browser's move names a card or
#: three; a match each was ~0.5 µs).
_CARD_WORDS: Final = {
    f"{rank}{suit}": f"{rank}{symbol}"
    for rank in RANK_TEXT[1:]
    for suit, symbol in SUIT_SYMBOLS.items()
}


def card_words(code: str) -> str:
    """``10H`` -> ``10♥`` (a hidden ``??`` or anything else is returned as it is)."""
    return _CARD_WORDS.get(code, code)


def symbols(text: str) -> str:
    """A sentence with its card codes written with suit symbols: ``3D is ...`` -> ``3♦ is ...``."""
    return _CARD_CODE.sub(lambda m: m.group(1) + SUIT_SYMBOLS[m.group(2)], text)


def _cards(cards: list[str]) -> str:
    return " ".join(card_words(c) for c in cards)


def _run(cards: list[str]) -> str:
    """The head of a moved run, and how many cards it has."""
    head = card_words(cards[0])
    return head if len(cards) == 1 else f"{head} (and {len(cards) - 1} more)"


def _onto(below: str | None, pile: str) -> str:
    return f"onto {card_words(below)}" if below else f"to empty pile {pile}"


def played_text(view: View, events: Sequence[Event]) -> str:
    """What a move did, in words, from its events (`MoveResult.events()`) and the view after."""
    moves: list[MoveEvent] = []
    for e in events:
        if e["type"] == "undo":
            return UNDO_TEXT
        if e["type"] == "recycle":
            return "Turn the waste over"
        if e["type"] == "move":
            moves.append(e)
    if not moves:
        return ""
    cards = [c for t in moves for c in t["cards"]]
    if view["variant"] in PAIRING_VARIANTS:
        return " + ".join(card_words(c) for c in cards)
    first = moves[0]
    if first["from"] == "s":
        if view["variant"] in EASTHAVEN_VARIANTS:
            return f"Deal {len(cards)} card{'s' if len(cards) != 1 else ''}: {_cards(cards)}"
        return f"Draw {_cards(cards)}"
    if first["to"] == "f":
        return f"{_run(cards)} to the foundation"
    return _to_pile(view, first["from"], first["to"], cards)


def _to_pile(view: View, src: str, dst: str, cards: list[str]) -> str:
    below: str | None = None
    if view["variant"] in TRIPLE_DECK_VARIANTS or view["variant"] in EASTHAVEN_VARIANTS:
        up = tableau_view(view)["piles"][int(dst) - 1]["up"]
        below = up[-len(cards) - 1] if len(up) > len(cards) else None
    source = " from the foundation" if src == "f" else " from the waste" if src == "w" else ""
    return f"{_run(cards)}{source} {_onto(below, dst)}"


def move_text(view: View, move: Move) -> str:
    """A move not yet played, in words, from the view it starts from (hidden cards unnamed)."""
    variant = view["variant"]
    if variant in PAIRING_VARIANTS:
        piles = pairing_view(view)["piles"]
        tops = [piles[int(p) - 1][-1] for p in (move.src, move.dst) if p and piles[int(p) - 1]]
        return " + ".join(card_words(c) for c in tops)
    if variant in TRIPEAKS_VARIANTS:
        if move.src == "d":
            return "Draw from the stock"
        card = tripeaks_view(view)["tableau"][int(move.src) - 1]
        return f"{card_words(card or '??')} to the foundation"
    if variant in TRIPLE_DECK_VARIANTS or variant in EASTHAVEN_VARIANTS:
        tv = tableau_view(view)
        if move.src == "d":
            if variant in EASTHAVEN_VARIANTS:
                return "Deal a card onto every pile"
            if not tv["stock"]:
                return "Turn the waste over"
            return "Draw from the stock"
        cards: list[str]
        if move.src == "w":
            cards = triple_deck_view(view)["waste"][-1:] if variant in TRIPLE_DECK_VARIANTS else []
        elif move.src.startswith("f"):
            cards = [move.src[1:].upper()]
        else:
            cards = tv["piles"][int(move.src) - 1]["up"][-move.count :]
        if not cards:
            return str(move)
        if move.dst == "f":
            return f"{_run(cards)} to the foundation"
        up = tv["piles"][int(move.dst) - 1]["up"]
        source = (
            " from the foundation"
            if move.src.startswith("f")
            else " from the waste"
            if move.src == "w"
            else ""
        )
        below = up[-1] if up else None
        return f"{_run(cards)}{source} {_onto(below, move.dst)}"
    return str(move)


def log_words(variant: str, seed: int, log: Sequence[str]) -> list[str]:
    """A stored game's moves (``undo`` included) in words, as `played_text` said each when
    it was played: the game is dealt again from its seed and the moves replayed. Raises
    IllegalMove when the log does not replay."""
    game = new_game(variant, seed)
    out: list[str] = []
    for text in log:
        result = game.undo() if text == UNDO else game.apply(text)
        out.append(played_text(game.view(), result.events()))
    return out


def _safe_floors(view: View) -> tuple[int, int]:
    """The least foundation length a black card, and a red one, must find on the foundations
    it could be wanted on (module text): every foundation for Triple Deck, those of the other
    colour for Triple Easthaven. A card of rank r is safe when its floor is at least r - 1."""
    lengths = [len(f) for f in tableau_view(view)["foundations"]]
    if view["variant"] in TRIPLE_DECK_VARIANTS:
        least = min(lengths, default=_NO_FLOOR)
        return least, least
    red = [n for n, suit in zip(lengths, EASTHAVEN_FOUNDATION_SUITS, strict=True) if suit in "DH"]
    black = [n for n, suit in zip(lengths, EASTHAVEN_FOUNDATION_SUITS, strict=True) if suit in "CS"]
    return min(red, default=_NO_FLOOR), min(black, default=_NO_FLOOR)


def _safe_card(view: View, code: str, floors: tuple[int, int]) -> bool:
    """Whether the face-up card `code` is safe to put up (`floors`: `_safe_floors`)."""
    c = parse_card(code)
    if view["variant"] in EASTHAVEN_VARIANTS and c.rank <= 2:
        return True
    return floors[1 if c.red else 0] >= c.rank - 1


def safe_moves(game: Game, view: View | None = None) -> list[Move]:
    """The foundation moves safe to play for the player now (see the module's text), in the
    order piles, then waste; empty for the variants without foundations to build. `view`:
    the game's view, when the caller has it already. Runs with each lean reply to the
    browser: the foundations are read once per call, not once per candidate card."""
    if view is None:
        view = game.view()
    if not (view["variant"] in TRIPLE_DECK_VARIANTS or view["variant"] in EASTHAVEN_VARIANTS):
        return []
    if view["over"]:
        return []
    out: list[Move] = []
    sources: list[tuple[str, str]] = [
        (str(i + 1), p["up"][-1]) for i, p in enumerate(view["piles"]) if p["up"]
    ]
    if view["variant"] in TRIPLE_DECK_VARIANTS and view["waste"]:
        sources.append(("w", view["waste"][-1]))
    floors = _safe_floors(view)
    for src, code in sources:
        if _safe_card(view, code, floors):
            move = Move(src, "f")
            if game.is_legal(move):
                out.append(move)
    return out


__all__ = [
    "EASTHAVEN_FOUNDATION_SUITS",
    "SUIT_SYMBOLS",
    "UNDO_TEXT",
    "card_words",
    "log_words",
    "move_text",
    "played_text",
    "safe_moves",
    "symbols",
]
