"""Pile moves with undo, shared by the solvers of the games with Klondike-style piles.

`PileSearch` is the base of those searches: it keeps each pile as a list of ints (bottom first)
and the count of its face-down cards in `down`; its methods change both in place and report
what their counterpart needs to restore them.
"""

from __future__ import annotations


class PileSearch:
    """Piles of int cards with face-down counts; subclasses add the rest of their position."""

    __slots__ = ("down", "piles")

    def __init__(self, piles: list[list[int]], down: list[int]) -> None:
        self.piles = piles
        self.down = down

    def move_run(self, src: int, dst: int, count: int) -> bool:
        """Move the top `count` cards of pile `src` onto pile `dst`, turning what they uncover
        (the result, for `unmove_run`)."""
        pile = self.piles[src]
        self.piles[dst].extend(pile[-count:])
        del pile[-count:]
        if pile and self.down[src] == len(pile):  # the card beneath turns face up
            self.down[src] -= 1
            return True
        return False

    def unmove_run(self, src: int, dst: int, count: int, turned: bool) -> None:
        """Undo `move_run(src, dst, count)`, which returned `turned`."""
        piles = self.piles
        if turned:
            self.down[src] += 1
        piles[src].extend(piles[dst][-count:])
        del piles[dst][-count:]

    def take_top(self, src: int) -> tuple[int, bool]:
        """Take pile `src`'s top card off, turning what it uncovers: the card, and whether a
        card turned (for `put_back`)."""
        pile = self.piles[src]
        card = pile.pop()
        if pile and self.down[src] == len(pile):  # the card beneath turns face up
            self.down[src] -= 1
            return card, True
        return card, False

    def put_back(self, src: int, card: int, turned: bool) -> None:
        """Undo `take_top(src)`."""
        if turned:
            self.down[src] += 1
        self.piles[src].append(card)
