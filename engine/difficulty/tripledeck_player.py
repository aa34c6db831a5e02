"""The simulated players of Triple Deck and Triple Deck with Kings (`player.play` calls `play`).

The shared player (`player.py`) tries every move and weighs what it leaves; in the Triple
Deck games that makes a poor player (it shuffles runs between piles and walks the stock
with no plan; its greedy line cleared 6 of deals 300 .. 329, this one's 27) and a slow
one. This one plays as a Klondike player does, from the view alone (`Game.view()`: the
face-up cards, the waste, the foundations' heights, the count of face-down cards under
each pile and of the stock; never a face-down card or the stock order). Each turn it rates
the moves it notices:

1. a card to a foundation (any card whose rank follows a foundation's height): first, and
   first of those one that turns a face-down card; but a pile's card of the `HOLD` highest
   ranks stays on its pile while cards remain to draw (a landing place for the waste's
   cards), until a pass through the stock brings nothing else;
2. a move that turns a face-down card: a pile's whole face-up part onto another pile,
   preferring the pile with the most face-down cards (all levels but the novice);
3. the lookahead over visible cards: part of a run moved off a face-up card that then plays
   to a foundation (not the novice);
4. the waste's top card onto a pile (it reaches cards the draw-three order would keep deep);
5. a pile's face-up part moved away from an empty-bottomed pile, when a top-rank card (Queen,
   or King with Kings) waits for the space: on the waste top or over face-down cards;

and draws otherwise (a moved run that gains nothing is never played: no shuffling). It
turns the waste over when the stock is empty, and gives up after `PATIENCE` passes in a row
through the stock with draws only, or after `MAX_MOVES_PER_CARD` moves per card.

Skill is attention: each turn each non-draw move is overlooked with probability `MISS`
(novice 0.30, casual 0.12, skilled 0.03, greedy 0), so a weaker player plays fewer cards per
pass and gives up sooner; the novice also skips the lookahead (3) and takes the first pile
that turns a card. Time is modelled from what the player weighs (`Tally`): Hick's law over
the moves it noticed worth playing (`Skill.think_s` over them and drawing), a glance when
it noticed none (`GLANCE`), and a look over the whole table at a dead end, a pass through
the stock that brought nothing (`DEAD_END_BITS`). Hick's law over every legal move (the
shared player's) counted pile-to-pile moves it never weighs and made every draw a full
decision: a game took the same time won or lost.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from ..cards import Card, parse_card
from ..moves import Move
from ..tableau import FOUNDATION, STOCK
from ..tripledeck import WASTE, TripleDeck
from ..variants import new_game
from ..views import View, triple_deck_view
from .skill import Level, PlayOutcome, Skill, max_points

#: The variants this player plays.
VARIANTS: frozenset[str] = frozenset({"triple-deck", "triple-deck-kings"})
#: Probability that a level overlooks a given non-draw move on a turn.
MISS: dict[Level, float] = {
    Level.GREEDY: 0.0,
    Level.NOVICE: 0.30,
    Level.CASUAL: 0.12,
    Level.SKILLED: 0.03,
}
#: Passes through the stock in a row with no move but draws after which a player gives up.
PATIENCE = 2
#: A pile's cards of the HOLD highest ranks stay off the foundations while the stock or
#: the waste holds cards (unless the move turns a face-down card), as landing places for
#: the waste's cards: taking cards off the waste changes the draw-three order, and a game
#: lost with every pile empty is one whose last cards never came to the waste's top. After
#: a pass with draws only they are released. Greedy wins of 60 deals: 20 % holding none,
#: 70 % holding 4 ranks, 88 % holding 9.
HOLD = 9
#: The move limit, per card of the deal (a pass through the stock is about 50 draws).
MAX_MOVES_PER_CARD = 12
#: A glance (a turn with nothing noticed to play: draw) takes this share of `Skill.base_s`.
GLANCE = 0.25
#: Bits of choice a fruitless pass through the stock costs: the player looks the whole
#: table over for a move it missed.
DEAD_END_BITS = 6.0

# Move values, highest first (a move rated 0 or less is not played).
_TO_FOUNDATION = 1000.0
_TURNS_CARD = 500.0
_EXPOSES_FOUNDATION = 400.0
_WASTE_TO_PILE = 100.0
_MAKES_ROOM = 80.0


@dataclass(frozen=True, slots=True)
class _Pile:
    down: int
    up: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class _Table:
    """The view, read: what the player sees."""

    piles: tuple[_Pile, ...]
    waste: tuple[Card, ...]
    stock: int
    heights: frozenset[int]  # the foundations' heights (the rank each one wants, minus 1)
    top_rank: int

    @classmethod
    def read(cls, view: View, top_rank: int) -> _Table:
        seen = triple_deck_view(view)
        return cls(
            tuple(_Pile(p["down"], tuple(parse_card(t) for t in p["up"])) for p in seen["piles"]),
            tuple(parse_card(t) for t in seen["waste"]),
            seen["stock"],
            frozenset(len(f) for f in seen["foundations"]),
            top_rank,
        )

    def plays_up(self, c: Card) -> bool:
        return c.rank - 1 in self.heights

    def waiting_top_rank(self) -> bool:
        """A top-rank card wants an empty pile: the waste top, or a pile's bottom face-up
        card lying over face-down cards."""
        if self.waste and self.waste[-1].rank == self.top_rank:
            return True
        return any(p.down and p.up and p.up[0].rank == self.top_rank for p in self.piles)


def _value(table: _Table, move: Move, level: Level, hold: int) -> float:
    """How much the player wants `move` (not a draw), from what the view shows."""
    if move.src == WASTE:
        card = table.waste[-1]
        if move.dst == FOUNDATION:
            return _TO_FOUNDATION + card.rank
        return _WASTE_TO_PILE
    pile = table.piles[int(move.src) - 1]
    if move.dst == FOUNDATION:
        turns = len(pile.up) == 1 and pile.down > 0
        if not turns and _held(table, pile.up[-1], hold):
            return 0.0
        return _TO_FOUNDATION + _turn_bonus(turns) + pile.up[-1].rank
    if move.count == len(pile.up):  # the whole face-up part leaves
        if pile.down:
            prefer = pile.down if level is not Level.NOVICE else 0
            return _TURNS_CARD + 10.0 * prefer
        if pile.up[0].rank != table.top_rank and table.waiting_top_rank():
            return _MAKES_ROOM
        return 0.0
    if level is Level.NOVICE:
        return 0.0
    below = pile.up[-move.count - 1]
    return _EXPOSES_FOUNDATION if table.plays_up(below) and not _held(table, below, hold) else 0.0


def _held(table: _Table, card: Card, hold: int) -> bool:
    """Whether a pile's `card` stays off the foundations for now: one of the `hold` highest
    ranks while cards remain to draw (it is a landing place for the waste's cards)."""
    if not hold or not (table.stock or table.waste):
        return False
    return card.rank > table.top_rank - hold


def _turn_bonus(turns: bool) -> float:
    """A foundation move that also turns a face-down card goes first."""
    return 100.0 if turns else 0.0


@dataclass(slots=True)
class Tally:
    """What one game's decisions were, for its modelled time (`seconds`)."""

    #: Turns with no move noticed worth playing: a draw (or the waste turned over) at a
    #: glance.
    glances: int = 0
    #: Turns with at least one move noticed worth playing, and the sum over them of
    #: log2(moves noticed + 2): the plausible moves weighed, and drawing instead.
    decisions: int = 0
    bits: float = 0.0
    #: Passes through the stock that brought nothing to play (dead ends met).
    fruitless: int = 0

    def seconds(self, skill: Skill) -> float:
        """The modelled time: a decision weighs its plausible moves (Hick's law over
        them, `Skill.think_s`), a glance takes `GLANCE` of the base time, and a fruitless
        pass makes the player look the whole table over (`DEAD_END_BITS` bits)."""
        return (
            self.decisions * skill.base_s
            + skill.per_bit_s * (self.bits + DEAD_END_BITS * self.fruitless)
            + GLANCE * skill.base_s * self.glances
        )


def play(
    variant: str, seed: int, level: Level, trial: int = 0, *, max_moves: int | None = None
) -> PlayOutcome:
    """Play one Triple Deck deal as a simulated player; deterministic for (variant, seed,
    level, trial)."""
    return play_tallied(variant, seed, level, trial, max_moves=max_moves)[0]


def play_tallied(
    variant: str, seed: int, level: Level, trial: int = 0, *, max_moves: int | None = None
) -> tuple[PlayOutcome, Tally]:
    """`play`, with the tally of the game's decisions its modelled time comes from."""
    skill = level.skill
    game = new_game(variant, seed)
    assert isinstance(game, TripleDeck)
    miss = MISS[level]
    rng = random.Random(f"{variant}/{seed}/{skill.name}/{trial}")
    limit = max_moves if max_moves is not None else MAX_MOVES_PER_CARD * game.total_cards
    tally = Tally()
    fruitless = 0  # passes through the stock in a row with only draws
    played = True  # some move other than a draw since the last turn of the waste
    draw = Move(STOCK)
    while game.moves < limit and not game.won:
        game.defer_over()
        options = list(game.legal_moves())
        if not options:
            break
        table = _Table.read(game.view(), game.top_rank)
        best: Move | None = None
        best_value = 0.0
        noticed = 0
        for move in options:
            if move.src == STOCK or (miss and rng.random() < miss):
                continue
            value = _value(table, move, level, 0 if fruitless else HOLD)
            if value > 0:
                noticed += 1
            if value > best_value:
                best, best_value = move, value
        if noticed:
            tally.decisions += 1
            tally.bits += math.log2(noticed + 2)
        else:
            tally.glances += 1
        if best is None:
            if not (table.stock or table.waste):
                break
            if not table.stock:  # the draw turns the waste over
                fruitless = 0 if played else fruitless + 1
                tally.fruitless += 0 if played else 1
                if fruitless >= PATIENCE:
                    break
                played = False
            best = draw
        else:
            played = True
        game.apply(best)
    game.defer_over()
    outcome = PlayOutcome(
        game.won, game.moves, round(tally.seconds(skill), 3), game.points, max_points(game)
    )
    return outcome, tally
