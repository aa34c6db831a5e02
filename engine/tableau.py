"""Shared machinery of the games with Klondike-style piles (Triple Deck, Triple Easthaven).

A pile is a list of cards, bottom first; its first `down` cards are face down. A variant says
which card may sit on which (`_builds_on`), what may fill an empty pile (`_fills_empty`) and
which foundation takes a card (`_foundation_for`).

Move text: ``3 5`` moves cards from pile 3 onto pile 5 (``3 5 2``: the top two); a bare
``3 5`` moves as many cards as make the move legal, or the whole movable run onto an empty pile;
so the canonical text of a pile-to-pile move always carries the count (``3 5 1``).
``3 f`` plays pile 3's top card to a foundation; ``d`` turns the stock.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import ClassVar, Final

from .cards import Card, parse_card
from .errors import OutOfSync
from .game import HIDDEN, Game, card_or_hidden, card_text, pile_number
from .moves import Move, MoveResult, Reveal, Transfer, token_count
from .snapshots import FullSnapshot, PileMoveSnapshot, Snapshot
from .state import PileState, TableauState, known_cards
from .views import OrientedCard, PileView, TableauVariant, View, tableau_view

FOUNDATION: Final = "f"
STOCK: Final = "d"


class TableauGame(Game):
    """Piles with face-down cards, a stock and twelve foundations."""

    id: ClassVar[TableauVariant]
    pile_count: ClassVar[int]

    _piles: list[list[Card | None]]
    _down: list[int]
    _stock: list[Card | None]  # the next card to leave the stock is last
    _foundations: list[list[Card]]

    # -- variant hooks ------------------------------------------------------------------------

    def _fit(self, lower: Card) -> Hashable:
        """What `lower` offers when placed on a card; it builds on `upper` when this equals
        `_slot(upper)`. Keys rather than a predicate let move generation look targets up."""
        raise NotImplementedError

    def _slot(self, upper: Card) -> Hashable:
        """What a card must offer to sit directly on `upper`."""
        raise NotImplementedError

    def _builds_on(self, lower: Card, upper: Card) -> bool:
        """May `lower` sit directly on `upper` in a pile (and so in a moving run)?"""
        return self._fit(lower) == self._slot(upper)

    def _fills_empty(self, head: Card) -> bool:
        """May a run headed by `head` move to an empty pile?"""
        raise NotImplementedError

    def _foundation_for(self, c: Card) -> int | None:
        """The foundation that takes `c` now, or None."""
        raise NotImplementedError

    # -- shared rules -------------------------------------------------------------------------

    @property
    def won(self) -> bool:
        return self.cleared == self.total_cards

    @property
    def cleared(self) -> int:
        return sum(map(len, self._foundations))

    def _top(self, i: int) -> Card | None:
        pile = self._piles[i]
        return pile[-1] if len(pile) > self._down[i] else None

    def _run_length(self, i: int) -> int:
        """How many cards at the top of pile i form a face-up run that may move as a unit."""
        pile, down = self._piles[i], self._down[i]
        n = len(pile) - down
        if n <= 0:
            return 0
        k = 1
        while k < n:
            lower, upper = pile[-k], pile[-k - 1]
            if lower is None or upper is None or not self._builds_on(lower, upper):
                break
            k += 1
        return k

    def _accepts(self, dst: int, head: Card) -> bool:
        pile = self._piles[dst]
        if not pile:
            return self._fills_empty(head)
        top = self._top(dst)
        return top is not None and self._builds_on(head, top)

    def _tableau_moves(self) -> Iterator[Move]:
        n = self.pile_count
        targets: dict[Hashable, list[int]] = {}
        empty: list[int] = []
        for dst in range(n):
            top = self._top(dst)
            if top is not None:
                targets.setdefault(self._slot(top), []).append(dst)
            elif not self._piles[dst]:
                empty.append(dst)
        for src in range(n):
            run = self._run_length(src)
            pile = self._piles[src]
            for count in range(1, run + 1):
                head = pile[-count]
                assert head is not None
                dsts = targets.get(self._fit(head), [])
                if empty and self._fills_empty(head):
                    dsts = sorted(dsts + empty)
                for dst in dsts:
                    if dst != src:
                        yield Move(str(src + 1), str(dst + 1), count, counted=True)
            top = self._top(src)
            if top is not None and self._foundation_for(top) is not None:
                yield Move(str(src + 1), FOUNDATION)

    def _pile_move_reason(self, move: Move) -> str | None:
        """Reason a move from a pile is illegal, None when legal; `move.src` is a pile token."""
        src = pile_number(move.src, self.pile_count)
        assert src is not None
        if move.dst == FOUNDATION:
            top = self._top(src)
            if move.count != 1:
                return "only one card at a time goes to a foundation"
            if top is None:
                return f"pile {move.src} has no face-up card"
            if self._foundation_for(top) is None:
                return f"no foundation takes {top}"
            return None
        dst = pile_number(move.dst, self.pile_count)
        if dst is None:
            return f"the destination must be a pile from 1 to {self.pile_count} or 'f'"
        if dst == src:
            return "the source and destination are the same pile"
        run = self._run_length(src)
        if run == 0:
            return f"pile {move.src} has no face-up card"
        if move.count > run:
            return f"pile {move.src} has only {run} card(s) that move together"
        head = self._piles[src][-move.count]
        assert head is not None
        if not self._piles[dst]:
            return None if self._fills_empty(head) else f"{head} cannot fill an empty pile"
        top = self._top(dst)
        if top is None or not self._builds_on(head, top):
            return f"{head} does not build on {top}"
        return None

    def _canonical(self, move: Move, text: str) -> Move:
        src = pile_number(move.src, self.pile_count)
        dst = pile_number(move.dst, self.pile_count)
        if src is None or dst is None:
            return move
        count = move.count
        if token_count(text) == 2 and src != dst:
            legal = [
                k
                for k in range(1, self._run_length(src) + 1)
                if self._pile_move_reason(Move(move.src, move.dst, k)) is None
            ]
            count = max(legal, default=count)
        # The canonical text always carries the count: `3 5` alone may mean a longer run.
        return Move(move.src, move.dst, count, counted=True)

    def _move_cards(self, move: Move) -> MoveResult:
        """Perform a legal move out of a pile."""
        src = int(move.src) - 1
        pile = self._piles[src]
        if move.dst == FOUNDATION:
            c = pile.pop()
            assert c is not None
            target = self._foundation_for(c)
            assert target is not None
            self._foundations[target].append(c)
            cards: tuple[Card, ...] = (c,)
        else:
            moving = pile[-move.count :]
            del pile[-move.count :]
            self._piles[int(move.dst) - 1].extend(moving)
            # A player's copy may move cards it cannot see (None); the server never does.
            if None not in moving:
                cards = tuple(moving)  # type: ignore[arg-type]
            else:
                cards = tuple(c for c in moving if c is not None)
        transfer = Transfer(cards, move.src, move.dst)
        text = str(move) if move.dst == FOUNDATION else f"{move.src} {move.dst} {move.count}"
        return MoveResult(text, (transfer,), self._turn_up(src))

    def _turn_up(self, i: int) -> tuple[Reveal, ...]:
        """Turn a pile's exposed face-down card face up."""
        pile = self._piles[i]
        if pile and self._down[i] == len(pile):
            self._down[i] -= 1
            return (Reveal(pile[-1], str(i + 1)),)
        return ()

    def _learn(self, move: Move, reveals: Sequence[Reveal]) -> None:
        """Stock moves reveal the stock's next cards in order; a pile move reveals the pile's
        top face-down card."""
        if move.src == STOCK:
            if len(reveals) > len(self._stock):
                raise OutOfSync("the server revealed more cards than the stock holds")
            for k, r in enumerate(reveals):
                self._stock[-1 - k] = r.card
            return
        for r in reveals:
            i = pile_number(r.at, self.pile_count)
            if i is None or self._down[i] == 0 or r.at != move.src:
                raise OutOfSync(f"nothing face down to reveal at {r.at!r}")
            self._piles[i][self._down[i] - 1] = r.card

    # -- snapshots and serialisation ----------------------------------------------------------

    def _snapshot(self) -> Snapshot:
        return self._full_snapshot()

    def _full_snapshot(self) -> FullSnapshot:
        return (
            "full",
            tuple(tuple(p) for p in self._piles),
            tuple(self._down),
            tuple(self._stock),
            tuple(tuple(f) for f in self._foundations),
        )

    def _undo_snapshot(self, move: Move) -> Snapshot:
        """A pile's move takes cards off its source's top and puts them on its destination's
        top, or one on a foundation: record where, and the lengths before. No card is copied:
        on undo the cards are taken back from where they went (the last move is the only one
        undone, so they are still on top there). Only numbers, so a game's history holds no
        object the garbage collector walks. The source's `down` is kept too, though a move that
        turns a card is never undone."""
        src = pile_number(move.src, self.pile_count)
        if src is None:
            return self._snapshot()
        piles = self._piles
        if move.dst == FOUNDATION:
            return (
                "pile move",
                src,
                len(piles[src]),
                self._down[src],
                None,
                0,
                tuple(map(len, self._foundations)),
            )
        dst = pile_number(move.dst, self.pile_count)
        assert dst is not None
        return ("pile move", src, len(piles[src]), self._down[src], dst, len(piles[dst]), None)

    def _restore(self, snapshot: Snapshot) -> None:
        if snapshot[0] == "pile move":
            self._restore_pile_move(snapshot)
        elif snapshot[0] == "full":
            self._restore_full(snapshot)
        else:
            raise ValueError(f"{self.id} takes no {snapshot[0]!r} snapshot")

    def _restore_full(self, snapshot: FullSnapshot) -> None:
        _, piles, down, stock, foundations = snapshot
        self._piles = [list(p) for p in piles]
        self._down = list(down)
        self._stock = list(stock)
        self._foundations = [list(f) for f in foundations]

    def _restore_pile_move(self, snapshot: PileMoveSnapshot) -> None:
        _, src, src_len, down, dst, dst_len, heights = snapshot
        back = self._piles[src]
        if dst is not None:
            moved = self._piles[dst]
            back.extend(moved[dst_len:])
            del moved[dst_len:]
        if heights is not None:
            for f, n in zip(self._foundations, heights, strict=True):
                back.extend(f[n:])
                del f[n:]
        assert len(back) == src_len, "undo of a move that was not the last one"
        self._down[src] = down

    def full_state(self) -> TableauState:
        return self._tableau_state(())

    def _tableau_state(self, waste: tuple[Card, ...]) -> TableauState:
        piles = tuple(
            PileState(known_cards(p), d) for p, d in zip(self._piles, self._down, strict=True)
        )
        stock = known_cards(reversed(self._stock))
        return TableauState(piles, stock, waste, tuple(tuple(f) for f in self._foundations))

    def _piles_state(self) -> list[list[OrientedCard]]:
        return [
            [{"card": card_text(c), "up": k >= self._down[i]} for k, c in enumerate(p)]
            for i, p in enumerate(self._piles)
        ]

    def _piles_view(self) -> list[PileView]:
        return [
            {"down": self._down[i], "up": [card_text(c) for c in p[self._down[i] :]]}
            for i, p in enumerate(self._piles)
        ]

    def _load_piles(self, view: View) -> None:
        view = tableau_view(view)
        piles = view["piles"]
        if len(piles) != self.pile_count:
            raise ValueError(f"{self.id} has {self.pile_count} piles")
        self._down = [int(p["down"]) for p in piles]
        hidden: list[Card | None] = [None]
        self._piles = [
            hidden * int(p["down"]) + [card_or_hidden(t) for t in p["up"]] for p in piles
        ]
        self._stock = [None] * int(view["stock"])
        self._foundations = [[parse_card(t) for t in f] for f in view["foundations"]]


__all__ = ["FOUNDATION", "HIDDEN", "STOCK", "TableauGame"]
