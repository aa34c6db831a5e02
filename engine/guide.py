"""The rules written for people at a screen: what the game is, how to play it by clicking,
tapping, dragging or keys, and small pictures of legal plays. The browser's Rules page shows it
(the server serves it in ``/rules.json``); the terminal client keeps `engine.rules` and its move
notation. Nothing here is a rule the engine does not already enforce: the sentences say in words
what `engine.rules` says, and tests/engine/test_guide.py checks every picture against the
engine's card values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["GUIDES", "HINT", "UNDO", "Guide", "Picture", "guide"]


@dataclass(frozen=True, slots=True)
class Picture:
    """Cards shown side by side (``row``, with ``sign`` between them: "+", "on", "then") or
    overlapped as a pile (``pile``, the first card at the bottom), with a caption."""

    caption: str
    cards: tuple[str, ...]
    layout: Literal["row", "pile"] = "row"
    sign: str = ""


@dataclass(frozen=True, slots=True)
class Guide:
    """One variant for people: ``about`` (the rules), ``play`` (how, by pointer, touch and
    keys) and ``pictures``."""

    about: tuple[str, ...]
    play: tuple[str, ...]
    pictures: tuple[Picture, ...]


#: RULINGS.md: a move can be undone unless it revealed hidden information; an undo counts.
UNDO: Final = (
    "Undo (the Undo button or the U key) takes back your last move, except a move that turned "
    "up a card or drew from the stock. An undo counts as a move."
)
HINT: Final = (
    "Hint (the Hint button or the H key) shows a move you can make; each hint adds a time "
    "penalty, shown on the button. A game you do not win ranks after every unwon game "
    "played without a hint."
)
_KEYS: Final = (
    "With the keyboard: Tab or the arrow keys move from card to card, Enter or Space picks a "
    "card and then plays it where the focus is, and Escape puts it back."
)
_PAIRING_PLAY: Final = (
    "Click or tap a top card, then another top card: if their values make 14, both are removed.",
    "Or drag one top card onto the other.",
    _KEYS,
)
_PAIRS: Final = (
    Picture("6 and 8 make 14: both go.", ("6H", "8C"), "row", "+"),
    Picture("King (13) and Ace (1) make 14.", ("KS", "AD"), "row", "+"),
    Picture("Two 7s make 14 too.", ("7C", "7H"), "row", "+"),
)
_TABLEAU_PLAY: Final = (
    "Click or tap a face-up card to pick it up (with the cards on top of it, when they form a "
    "run), then click or tap the pile to put it on.",
    "Click or tap a picked-up top card again to play it to a foundation.",
    "Or drag a card, or a run, onto a pile or a foundation.",
)


GUIDES: Final[dict[str, Guide]] = {
    "fourteen-out": Guide(
        about=(
            "One deck, 52 cards, dealt face up into 12 piles: the first 4 piles hold 5 cards, "
            "the other 8 hold 4.",
            "Only the top card of each pile can be played. Remove two top cards from different "
            "piles whose values add up to 14. An Ace counts 1, a Jack 11, a Queen 12 and a King "
            "13, so the pairs are Ace and King, 2 and Queen, 3 and Jack, 4 and 10, 5 and 9, "
            "6 and 8, and 7 and 7.",
            "Nothing is built or moved, and an emptied pile stays empty.",
            "You win when all 52 cards are gone. The game ends when no two top cards make 14.",
        ),
        play=_PAIRING_PLAY,
        pictures=_PAIRS,
    ),
    "triple-fourteens": Guide(
        about=(
            "Fourteen Out on a bigger table: three decks, 156 cards, dealt face up into 24 "
            "piles (the first 12 hold 7 cards, the other 12 hold 6).",
            "Remove two top cards from different piles whose values add up to 14 (an Ace "
            "counts 1, a Jack 11, a Queen 12 and a King 13).",
            "An emptied pile stays empty.",
            "You win when every card is removed. The game ends when no two top cards make 14.",
        ),
        play=_PAIRING_PLAY,
        pictures=_PAIRS,
    ),
    "triple-triangle": Guide(
        about=(
            "One deck. 28 cards form three overlapping peaks; only the bottom row of 10 starts "
            "face up, and a card turns face up as soon as nothing covers it.",
            "One card starts the foundation pile; the other 23 are the stock.",
            "Play any uncovered card that is one rank above or below the foundation's top card. "
            "Suits never matter, and a King and an Ace are neighbours.",
            "You may turn the next stock card onto the foundation at any time. You go through "
            "the stock once.",
            "You win by clearing all 28 peak cards. The game ends when the stock is empty and no "
            "card can be played.",
        ),
        play=(
            "Click or tap an uncovered card to play it onto the foundation.",
            "Click or tap the stock (or press D) to turn its next card onto the foundation.",
            _KEYS,
        ),
        pictures=(
            Picture("On a 9, a 10 plays…", ("9S", "10H"), "row", "on"),
            Picture("…and so does an 8.", ("9S", "8D"), "row", "on"),
            Picture("A King and an Ace are neighbours.", ("KC", "AH"), "row", "on"),
        ),
    ),
    "triple-deck": Guide(
        about=(
            "Three decks without Kings, 144 cards. 7 piles of 1 to 7 cards, the top card of "
            "each face up; the rest is the stock.",
            "Drawing turns 3 cards onto the waste; only the waste's top card can be played. "
            "When the stock is empty, the waste turns back over into the stock, as often as "
            "you like.",
            "12 foundations each start with any Ace and build up to the Queen, whatever the suits.",
            "Piles build down by one rank, whatever the suit and colour. A run going down (or "
            "its top part) moves together. Only a Queen, or a run headed by one, fills an empty "
            "pile.",
            "Score: a foundation built up to rank n is worth 1 + 2 + … + n points (up to the "
            "Queen: 78; at most 936).",
            "The game ends when you press Finish, or when nothing but drawing can ever help again.",
        ),
        play=(
            *_TABLEAU_PLAY,
            "Click or tap the stock (or press D) to draw three cards; when it is empty, the "
            "same turns the waste back over.",
            _KEYS,
        ),
        pictures=(
            Picture("Piles build down, any suit: 9, 8, 7.", ("9H", "8H", "7C"), "pile"),
            Picture("Foundations build up from any Ace.", ("AS", "2D", "3C"), "row", "then"),
        ),
    ),
    "triple-deck-kings": Guide(
        about=(
            "Triple Deck with the Kings in: three full decks, 156 cards.",
            "As Triple Deck, but foundations build from Ace to King (a King's foundation is "
            "worth 91 points; at most 1092), and only a King, or a run headed by one, fills an "
            "empty pile.",
            "Drawing turns 3 cards onto the waste; an empty stock is refilled from the waste as "
            "often as you like. Piles build down by one rank, whatever the suit.",
            "The game ends when you press Finish, or when nothing but drawing can ever help again.",
        ),
        play=(
            *_TABLEAU_PLAY,
            "Click or tap the stock (or press D) to draw three cards; when it is empty, the "
            "same turns the waste back over.",
            _KEYS,
        ),
        pictures=(
            Picture("Piles build down, any suit: King, Queen, Jack.", ("KD", "QS", "JS"), "pile"),
            Picture("Foundations build up from any Ace.", ("AS", "2D", "3C"), "row", "then"),
        ),
    ),
    "triple-easthaven": Guide(
        about=(
            "Three decks, 156 cards. 12 piles of 3 cards, two face down and the top one face "
            "up; the other 120 are the stock.",
            "Dealing puts one card face up on every pile, empty ones too, and is allowed at any "
            "time. Near the end the first piles get the last cards.",
            "Piles build down in alternating colours (red on black, black on red). Such a run "
            "moves together, and any card or run may fill an empty pile. A face-down card turns "
            "up when nothing covers it.",
            "12 foundations, three per suit (clubs, diamonds, hearts, spades), build up by suit "
            "from Ace to King. A foundation's top card may come back down onto a pile.",
            "You win when all 156 cards are on the foundations. The game ends when the stock is "
            "empty and only back-and-forth moves remain; you may press Finish at any time.",
        ),
        play=(
            *_TABLEAU_PLAY,
            "To bring a foundation card back down, click or tap it, then the pile.",
            "Click or tap the stock (or press D) to deal one card onto every pile.",
            _KEYS,
        ),
        pictures=(
            Picture("Piles build down in alternating colours.", ("9S", "8H", "7C"), "pile"),
            Picture("Foundations build up by suit.", ("AH", "2H", "3H"), "row", "then"),
        ),
    ),
}


def guide(variant_id: str) -> Guide:
    """The people's rules of a variant (``KeyError`` for an unknown one)."""
    return GUIDES[variant_id]
