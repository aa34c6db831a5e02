"""The undo snapshots of every variant, as one closed union of tagged tuples.

A snapshot is what `Game._undo_snapshot` records before a move and `Game._restore` takes back.
Each is a tuple tagged by its first item, so mypy narrows `Snapshot` by the tag
(``if snapshot[0] == "pile move": ...``); a class restores its own kinds, hands the others to
its base class, and the base refuses a tag of another family (ValueError). Mostly numbers
(lengths, indexes), so a game's history holds few objects for the garbage collector to walk.

Why a closed union and not `Game` generic over its snapshot type: that was tried, type-checks,
and the mypyc-compiled build (mypy 2.4) then crashes in the garbage collector (generic native
classes); the union keeps every snapshot typed without it.
"""

from __future__ import annotations

from typing import Literal

from .cards import Card

# -- the pairing games (`engine.pairing`) -----------------------------------------------------

#: The piles' heights (a pairing game's cards never change place).
PairingSnapshot = tuple[Literal["heights"], tuple[int, ...]]

# -- Tri Peaks (`engine.tripeaks`) -------------------------------------------------------------

#: Which tableau places hold a card, and the stock's and the foundation's lengths.
TriPeaksSnapshot = tuple[Literal["peaks"], tuple[bool, ...], int, int]

# -- the tableau games (`engine.tableau` and its subclasses) ----------------------------------

#: The whole tableau position (a stock deal): piles, face-down counts, stock, foundations.
FullSnapshot = tuple[
    Literal["full"],
    tuple[tuple[Card | None, ...], ...],
    tuple[int, ...],
    tuple[Card | None, ...],
    tuple[tuple[Card, ...], ...],
]
#: A pile's move (`TableauGame._undo_snapshot`): source, its length and face-down count
#: before; destination pile and its length, or None and the foundations' lengths.
PileMoveSnapshot = tuple[
    Literal["pile move"], int, int, int, int | None, int, tuple[int, ...] | None
]
#: Triple Deck: a draw (stock and waste lengths before), a recycle (waste length before), a
#: waste move (waste length; destination pile and its length, or the foundations' lengths),
#: and the whole position with the waste.
DrawSnapshot = tuple[Literal["draw"], int, int]
RecycleSnapshot = tuple[Literal["recycle"], int]
WasteMoveSnapshot = tuple[Literal["waste move"], int, int | None, int, tuple[int, ...] | None]
DeckSnapshot = tuple[Literal["deck"], FullSnapshot, tuple[Card, ...]]
#: Triple Easthaven: a card back from a foundation (the pile, its length before, the
#: foundations' lengths before).
FromFoundationSnapshot = tuple[Literal["from foundation"], int, int, tuple[int, ...]]

TableauSnapshot = (
    FullSnapshot
    | PileMoveSnapshot
    | DrawSnapshot
    | RecycleSnapshot
    | WasteMoveSnapshot
    | DeckSnapshot
    | FromFoundationSnapshot
)


#: Every variant's snapshot.
Snapshot = PairingSnapshot | TriPeaksSnapshot | TableauSnapshot

__all__ = [
    "DeckSnapshot",
    "DrawSnapshot",
    "FromFoundationSnapshot",
    "FullSnapshot",
    "PairingSnapshot",
    "PileMoveSnapshot",
    "RecycleSnapshot",
    "Snapshot",
    "TableauSnapshot",
    "TriPeaksSnapshot",
    "WasteMoveSnapshot",
]
