"""Triple Deck and Triple Deck with Kings (Alan Gilfoy's Triple Deck Solitaire).

Klondike deal from three decks; twelve foundations built up from any Ace regardless of suit;
the tableau builds down regardless of suit and colour; draw three; unlimited redeals.
Extra move text: ``w 5`` and ``w f`` play the waste top; ``d`` draws three, or turns the waste
back into the stock when the stock is empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar, Final

from .cards import KING, QUEEN, Card, parse_card
from .game import Game, pile_number
from .moves import Move, MoveResult, Reveal, Transfer
from .snapshots import Snapshot
from .state import TableauState
from .tableau import FOUNDATION, STOCK, TableauGame
from .views import (
    TripleDeckStateBody,
    TripleDeckVariant,
    TripleDeckViewBody,
    View,
    triple_deck_view,
)

WASTE: Final = "w"
DRAW_COUNT: Final = 3


def foundation_score(rank: int) -> int:
    """Points of a foundation built up to `rank`: 1 + 2 + ... + rank."""
    return rank * (rank + 1) // 2


class TripleDeck(TableauGame):
    id: ClassVar[TripleDeckVariant] = "triple-deck"
    title = "Triple Deck"
    decks = 3
    ranks = range(1, 13)
    scored = True
    may_finish = True
    pile_count = 7
    top_rank: ClassVar[int] = QUEEN

    _waste: list[Card]

    def _deal(self, cards: list[Card]) -> None:
        self._piles = [[] for _ in range(self.pile_count)]
        k = 0
        for row in range(self.pile_count):  # Klondike: row by row, pile i gets i+1 cards
            for i in range(row, self.pile_count):
                self._piles[i].append(cards[k])
                k += 1
        self._down = [i for i in range(self.pile_count)]
        self._stock = list(reversed(cards[k:]))
        self._waste = []
        self._foundations = [[] for _ in range(12)]

    def _fit(self, lower: Card) -> int:
        return lower.rank

    def _slot(self, upper: Card) -> int:
        return upper.rank - 1

    def _fills_empty(self, head: Card) -> bool:
        return head.rank == self.top_rank

    def _foundation_for(self, c: Card) -> int | None:
        want = c.rank - 1
        for i, f in enumerate(self._foundations):
            if len(f) == want:  # suits never matter: a foundation's height is its top rank
                return i
        return None

    @property
    def score(self) -> int:
        return sum(foundation_score(len(f)) for f in self._foundations)

    # -- moves --------------------------------------------------------------------------------

    def _waste_moves(self) -> Iterator[Move]:
        if not self._waste:
            return
        top = self._waste[-1]
        if self._foundation_for(top) is not None:
            yield Move(WASTE, FOUNDATION)
        for dst in range(self.pile_count):
            if self._accepts(dst, top):
                yield Move(WASTE, str(dst + 1))

    def _generate(self) -> Iterator[Move]:
        yield from self._tableau_moves()
        yield from self._waste_moves()
        if self._stock or self._waste:
            yield Move(STOCK)

    def _reason(self, move: Move) -> str | None:
        if move.src == STOCK:
            if move.dst or move.count != 1:
                return "'d' takes no destination"
            return None if self._stock or self._waste else "the stock and waste are empty"
        if move.src == WASTE:
            if move.count != 1:
                return "only the waste's top card plays"
            if not self._waste:
                return "the waste is empty"
            top = self._waste[-1]
            if move.dst == FOUNDATION:
                if self._foundation_for(top) is None:
                    return f"no foundation takes {top}"
                return None
            dst = pile_number(move.dst, self.pile_count)
            if dst is None:
                return f"the destination must be a pile from 1 to {self.pile_count} or 'f'"
            if self._accepts(dst, top):
                return None
            if not self._piles[dst]:
                return f"{top} cannot fill an empty pile"
            return f"{top} does not build on {self._top(dst)}"
        if pile_number(move.src, self.pile_count) is None:
            return f"the source must be a pile from 1 to {self.pile_count}, 'w' or 'd'"
        return self._pile_move_reason(move)

    def _do(self, move: Move) -> MoveResult:
        if move.src == STOCK:
            if not self._stock:
                self._stock = list(reversed(self._waste))
                self._waste = []
                return MoveResult(
                    str(move), extra=({"type": "recycle", "cards": len(self._stock)},)
                )
            drawn = [self._stock.pop() for _ in range(min(DRAW_COUNT, len(self._stock)))]
            known = [c for c in drawn if c is not None]
            self._waste.extend(known)
            return MoveResult(
                str(move),
                (Transfer(tuple(known), "s", WASTE),),
                tuple(Reveal(c, WASTE) for c in drawn),
            )
        if move.src == WASTE:
            c = self._waste.pop()
            if move.dst == FOUNDATION:
                target = self._foundation_for(c)
                assert target is not None
                self._foundations[target].append(c)
            else:
                self._piles[int(move.dst) - 1].append(c)
            return MoveResult(str(move), (Transfer((c,), WASTE, move.dst),))
        return self._move_cards(move)

    def _stays_live(self, move: Move, result: MoveResult, was_live: bool) -> bool:
        """Not over, without a check, after a pile-to-pile move that turned nothing and whose
        cards can move straight back: that move back is a legal move other than drawing."""
        if (
            result.revealed_hidden
            or move.dst == FOUNDATION
            or move.src == STOCK
            or move.src == WASTE
        ):
            return False
        # The cards moved as one run and still are one on top of the destination; nothing
        # was turned, so the source shows a face-up top (or is empty): the run goes back when
        # its head builds on that top or fills the empty pile.
        back = self._piles[int(move.src) - 1]
        head = self._piles[int(move.dst) - 1][-move.count]
        if head is None:
            return False
        if not back:
            return head.rank == self.top_rank
        top = back[-1]
        return top is not None and top.rank == head.rank + 1

    def _is_over(self) -> bool:
        """Over when no move but drawing can ever be made again (RULINGS.md).

        The same test as "no tableau move, no waste move and no card the draws reach is
        playable", on ranks directly: a foundation takes rank r when one has r - 1 cards; a
        face-up top of rank t takes a run headed by rank t - 1 (never a run from its own pile,
        whose head ranks at least t); an empty pile takes a run headed by `top_rank`."""
        heights = {len(f) for f in self._foundations}
        wanted: set[int] = set()  # the ranks that pile tops take
        empty = False
        for pile, down in zip(self._piles, self._down, strict=True):
            if len(pile) > down:
                top = pile[-1]
                if top is not None:
                    if top.rank - 1 in heights:
                        return False  # to a foundation
                    wanted.add(top.rank - 1)
            elif not pile:
                empty = True
        top_rank = self.top_rank
        for pile, down in zip(self._piles, self._down, strict=True):
            k = len(pile) - 1
            head = pile[k] if k >= down else None
            while head is not None:  # up the pile's face-up run, each card a run's head
                if head.rank in wanted or (empty and head.rank == top_rank):
                    return False
                k -= 1
                if k < down:
                    break
                lower, head = head, pile[k]
                if head is None or lower.rank != head.rank - 1:
                    break
        # Cards on a pile top or moving between piles cannot move: every card the draws bring
        # to the waste top (now included) must be unplayable too.
        for c in self._cycle_cards() | ({self._waste[-1]} if self._waste else set()):
            if c is None:  # a player's copy cannot see the stock: assume it may play
                return False
            if c.rank - 1 in heights or c.rank in wanted or (empty and c.rank == top_rank):
                return False
        return True

    def _cycle_cards(self) -> set[Card | None]:
        """Every card that can reach the waste top by drawing alone, from here on, forever."""
        order = self._waste + list(reversed(self._stock))  # the cycle in drawing order
        start = len(self._waste)
        reach: set[Card | None] = set()
        # The rest of this pass: after each draw the waste top is the last card drawn.
        pos = start
        while pos < len(order):
            pos = min(pos + DRAW_COUNT, len(order))
            reach.add(order[pos - 1])
        # Every later pass starts from a full stock in the same order, so it is always the same.
        pos = 0
        while pos < len(order):
            pos = min(pos + DRAW_COUNT, len(order))
            reach.add(order[pos - 1])
        return reach

    # -- serialisation ------------------------------------------------------------------------

    def _snapshot(self) -> Snapshot:
        return ("deck", self._full_snapshot(), tuple(self._waste))

    def _undo_snapshot(self, move: Move) -> Snapshot:
        """A draw moves the stock's top cards onto the waste, a recycle turns the waste over
        into the stock (it was empty), a waste move takes the waste's top to a pile or a
        foundation: record the lengths before, and undo takes the cards back from where they
        went (only the last move is undone, so they are still there). Only numbers, as for a
        pile's move (`TableauGame._undo_snapshot`)."""
        if move.src == STOCK:
            if self._stock:
                return ("draw", len(self._stock), len(self._waste))
            return ("recycle", len(self._waste))
        if move.src == WASTE:
            heights = tuple(map(len, self._foundations)) if move.dst == FOUNDATION else None
            dst = pile_number(move.dst, self.pile_count)
            return (
                "waste move",
                len(self._waste),
                dst,
                len(self._piles[dst]) if dst is not None else 0,
                heights,
            )
        return super()._undo_snapshot(move)

    def _restore(self, snapshot: Snapshot) -> None:
        if snapshot[0] == "draw":
            _, stock_len, waste_len = snapshot
            drawn = self._waste[waste_len:]
            del self._waste[waste_len:]
            self._stock.extend(reversed(drawn))
            assert len(self._stock) == stock_len, "undo of a draw that was not the last move"
        elif snapshot[0] == "recycle":
            # the stock is the waste turned over: every card of it was seen
            self._waste = [c for c in reversed(self._stock) if c is not None]
            self._stock = []
            assert len(self._waste) == snapshot[1], "undo of a recycle that was not the last move"
        elif snapshot[0] == "waste move":
            _, waste_len, dst, dst_len, heights = snapshot
            if dst is not None:
                moved = self._piles[dst]
                # face up (it came from the waste): the length check below catches a None
                self._waste.extend(c for c in moved[dst_len:] if c is not None)
                del moved[dst_len:]
            if heights is not None:
                for f, n in zip(self._foundations, heights, strict=True):
                    self._waste.extend(f[n:])
                    del f[n:]
            assert len(self._waste) == waste_len, "undo of a move that was not the last one"
        elif snapshot[0] == "deck":
            _, base, waste = snapshot
            self._restore_full(base)
            self._waste = list(waste)
        else:  # a pile's move
            super()._restore(snapshot)

    def full_state(self) -> TableauState:
        return self._tableau_state(tuple(self._waste))

    def _state_json(self) -> TripleDeckStateBody:
        return {
            "piles": self._piles_state(),
            "stock": [str(c) for c in reversed(self._stock)],
            "waste": [c.text for c in self._waste],
            "foundations": [[c.text for c in f] for f in self._foundations],
        }

    def _view_json(self) -> TripleDeckViewBody:
        return {
            "piles": self._piles_view(),
            "stock": len(self._stock),
            "waste": [c.text for c in self._waste],
            "foundations": [[c.text for c in f] for f in self._foundations],
        }

    def _load_view(self, view: View) -> None:
        self._load_piles(view)
        self._waste = [parse_card(t) for t in triple_deck_view(view)["waste"]]


class TripleDeckKings(TripleDeck):
    id = "triple-deck-kings"
    title = "Triple Deck with Kings"
    ranks = range(1, 14)
    top_rank = KING


__all__ = ["Game", "TripleDeck", "TripleDeckKings", "foundation_score"]
