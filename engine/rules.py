"""Short rule summaries and move notation per variant: the text every client shows (the terminal
client prints it, the server serves it to the browser as ``/rules.json``)."""

from __future__ import annotations

from typing import Final

_PAIRING_NOTATION: Final = """\
Moves
  3 7      remove the top cards of piles 3 and 7 (their values must sum to 14)"""

_TABLEAU_NOTATION: Final = """\
  3 5      move as many cards from pile 3 onto pile 5 as make the move legal
  3 5 2    move the top 2 cards of pile 3 onto pile 5
  3 f      play pile 3's top card to a foundation"""

RULES: Final[dict[str, str]] = {
    "fourteen-out": """\
Fourteen Out - one deck, 52 cards.
All cards are dealt face up into 12 piles (piles 1-4 hold 5 cards, piles 5-12 hold 4).
Only the top card of each pile is available. Remove two top cards from different piles
whose values add up to 14 (A=1, J=11, Q=12, K=13; so A+K, 2+Q, 3+J, 4+10, 5+9, 6+8, 7+7).
Nothing is built or moved, and an empty pile stays empty.
You win when all 52 cards are gone; the game ends when no two top cards make 14.""",
    "triple-fourteens": """\
Triple Fourteens - three decks, 156 cards.
Fourteen Out on a bigger table: 24 face-up piles (piles 1-12 hold 7 cards, 13-24 hold 6).
Remove pairs of top cards from different piles that add up to 14 (A=1 ... K=13).
Empty piles stay empty. You win when every card is removed; the game ends when no two top
cards make 14.""",
    "triple-triangle": """\
Triple Triangle (Tri Peaks) - one deck.
28 cards form three overlapping peaks in rows of 3, 6, 9 and 10 (positions 1-28, row by
row from the apexes); only the 10-card bottom row starts face up. A card turns face up as
soon as nothing covers it. One card starts the foundation; the other 23 are the stock.
Play any uncovered card that is one rank above or below the foundation's top card
(suits never matter, King and Ace are neighbours). You may draw the next stock card onto
the foundation at any time; there is one pass through the stock and no redeal.
You win by clearing all 28 peak cards; the game ends when the stock is empty and no card
plays.""",
    "triple-deck": """\
Triple Deck (Alan Gilfoy) - three decks without Kings, 144 cards.
A Klondike deal: 7 piles of 1 to 7 cards with the top card face up; the rest is the stock.
Drawing turns 3 cards onto the waste (only the waste's top card plays); an empty stock is
refilled from the waste in the same order, as often as you like.
12 foundations each start with any Ace and build up to the Queen regardless of suit.
Piles build down by one rank regardless of suit and colour; a descending run (or any part
of it) moves as a unit. Only a Queen, or a run headed by one, fills an empty pile.
Score: a foundation built up to rank n is worth 1+2+...+n points (Queen = 78, max 936).
The game ends when you finish it (resign) or when nothing but drawing can ever help again.""",
    "triple-deck-kings": """\
Triple Deck with Kings - three full decks, 156 cards.
As Triple Deck, but the Kings stay in: foundations build from Ace to King (King = 91
points, max 1092) and only a King, or a run headed by one, fills an empty pile.""",
    "triple-easthaven": """\
Triple Easthaven - three decks, 156 cards.
12 piles of 3 cards, two face down and the top one face up; the other 120 are the stock.
Dealing puts one card face up on every pile (empty ones too), and is allowed at any time;
near the end the first piles get the last cards.
Piles build down in alternating colours; such a run moves as a unit, and any card or run
may fill an empty pile. Face-down cards turn up when exposed.
12 foundations, three per suit (1-3 clubs, 4-6 diamonds, 7-9 hearts, 10-12 spades), build
up by suit from Ace to King. A foundation's top card may come back down onto a pile.
You win when all 156 cards are on the foundations; the game ends when the stock is empty
and only back-and-forth moves remain. You may finish (resign) at any time.""",
}

NOTATION: Final[dict[str, str]] = {
    "fourteen-out": _PAIRING_NOTATION,
    "triple-fourteens": _PAIRING_NOTATION,
    "triple-triangle": """\
Moves
  19       play the card at position 19 to the foundation (positions 1-28, apexes first)
  d        draw the next stock card onto the foundation""",
    "triple-deck": f"""\
Moves
{_TABLEAU_NOTATION}
  w 5      play the waste's top card onto pile 5  (w f: onto a foundation)
  d        draw three cards; with the stock empty, turn the waste back over""",
    "triple-easthaven": f"""\
Moves
{_TABLEAU_NOTATION}
  f8H 5    move the 8H from the top of a foundation back onto pile 5
  f 5      the same, when only one foundation card fits pile 5
  d        deal one card onto every pile""",
}
NOTATION["triple-deck-kings"] = NOTATION["triple-deck"]


def rules_text(variant_id: str) -> str:
    """The rule summary and move notation of a variant."""
    return f"{RULES[variant_id]}\n\n{NOTATION[variant_id]}\n  undo     take back the last move"
