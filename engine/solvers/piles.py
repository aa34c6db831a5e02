"""Pile moves with undo, shared by the solvers of the games with Klondike-style piles.

A search keeps each pile as a list of ints (bottom first) and the count of its face-down cards
in `down`; these functions change both in place and hand back a closure that restores them.
"""

from __future__ import annotations

from collections.abc import Callable

Undo = Callable[[], None]


def _turn_up(piles: list[list[int]], down: list[int], i: int) -> bool:
    """Turn pile i's exposed face-down card face up; True when there was one."""
    if piles[i] and down[i] == len(piles[i]):
        down[i] -= 1
        return True
    return False


def move_run(piles: list[list[int]], down: list[int], src: int, dst: int, count: int) -> Undo:
    """Move the top `count` cards of pile `src` onto pile `dst` (turning what they uncover)."""
    moving = piles[src][-count:]
    del piles[src][-count:]
    piles[dst].extend(moving)
    turned = _turn_up(piles, down, src)

    def undo() -> None:
        if turned:
            down[src] += 1
        del piles[dst][-count:]
        piles[src].extend(moving)
    return undo


def take_top(piles: list[list[int]], down: list[int], src: int) -> tuple[int, Undo]:
    """Take pile `src`'s top card off (turning what it uncovers): the card and the undo."""
    card = piles[src].pop()
    turned = _turn_up(piles, down, src)

    def undo() -> None:
        if turned:
            down[src] += 1
        piles[src].append(card)
    return card, undo
