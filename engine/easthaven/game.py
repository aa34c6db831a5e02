"""Triple Easthaven: three decks, twelve piles, twelve suit foundations, a stock dealt across.

Extra move text: ``d`` deals one card face up onto each pile; ``f8H 5`` moves the 8H from the
top of a foundation back onto pile 5 (``f 5`` when only one foundation card fits).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from ..cards import SUITS, Card, parse_card
from ..game import OverDecided, OverStepper, pile_number
from ..moves import Move, MoveResult, Reveal, Transfer
from ..snapshots import Snapshot
from ..tableau import FOUNDATION, STOCK, TableauGame
from ..views import TableauStateBody, TableauViewBody, View
from .over import ProgressSearch, encode

PILES: Final = 12
PER_SUIT: Final = 3


class TripleEasthaven(TableauGame):
    id = "triple-easthaven"
    title = "Triple Easthaven"
    decks = 3
    may_finish = True
    pile_count = PILES

    def _deal(self, cards: list[Card]) -> None:
        self._piles = [list(cards[3 * i : 3 * i + 3]) for i in range(PILES)]
        self._down = [2] * PILES
        self._stock = list(reversed(cards[3 * PILES :]))
        # Foundations 1-3 take clubs, 4-6 diamonds, 7-9 hearts, 10-12 spades.
        self._foundations = [[] for _ in range(4 * PER_SUIT)]

    def _fit(self, lower: Card) -> tuple[int, bool]:
        return lower.rank, lower.red

    def _slot(self, upper: Card) -> tuple[int, bool]:
        return upper.rank - 1, not upper.red  # one rank lower, the other colour

    def _fills_empty(self, head: Card) -> bool:
        return True

    def _foundation_for(self, c: Card) -> int | None:
        first = SUITS.index(c.suit) * PER_SUIT
        for i in range(first, first + PER_SUIT):
            if len(self._foundations[i]) == c.rank - 1:
                return i
        return None

    # -- moves --------------------------------------------------------------------------------

    def _foundation_tops(self) -> Iterator[Card]:
        seen: set[Card] = set()
        for f in self._foundations:
            if f and f[-1] not in seen:
                seen.add(f[-1])
                yield f[-1]

    def _return_moves(self) -> Iterator[Move]:
        for c in self._foundation_tops():
            for dst in range(PILES):
                if self._accepts(dst, c):
                    yield Move(FOUNDATION + c.text, str(dst + 1))

    def _generate(self) -> Iterator[Move]:
        yield from self._tableau_moves()
        yield from self._return_moves()
        if self._stock:
            yield Move(STOCK)

    def _canonical(self, move: Move, text: str) -> Move:
        if move.src.lower().startswith(FOUNDATION):
            name = move.src[1:]
            if not name:  # `f 5`: the foundation card, when only one fits
                dst = pile_number(move.dst, PILES)
                fits = [
                    c for c in self._foundation_tops() if dst is not None and self._accepts(dst, c)
                ]
                return Move(FOUNDATION + fits[0].text, move.dst) if len(fits) == 1 else move
            try:
                return Move(FOUNDATION + parse_card(name).text, move.dst, move.count)
            except ValueError:
                return move
        return super()._canonical(move, text)

    def _reason(self, move: Move) -> str | None:
        if move.src == STOCK:
            if move.dst or move.count != 1:
                return "'d' takes no destination"
            return None if self._stock else "the stock is empty"
        if move.src.startswith(FOUNDATION):
            return self._return_reason(move)
        if pile_number(move.src, PILES) is None:
            return f"the source must be a pile from 1 to {PILES}, a foundation card or 'd'"
        return self._pile_move_reason(move)

    def _return_reason(self, move: Move) -> str | None:
        try:
            c = parse_card(move.src[1:])
        except ValueError:
            return self._unnamed_return_reason(move)
        if move.count != 1:
            return "only one card at a time leaves a foundation"
        if c not in set(self._foundation_tops()):
            return f"{c} is not on top of a foundation"
        dst = pile_number(move.dst, PILES)
        if dst is None:
            return f"the destination must be a pile from 1 to {PILES}"
        if self._accepts(dst, c):
            return None
        return f"{c} does not build on {self._top(dst)}"

    def _unnamed_return_reason(self, move: Move) -> str:
        """Why `f 5` (no card named) is not a move: no foundation card fits there, or more
        than one does (one that fits alone was named by `_canonical`)."""
        dst = pile_number(move.dst, PILES)
        if move.src != FOUNDATION or dst is None:
            return "name the foundation card to move back, like 'f8H 5'"
        tops = list(self._foundation_tops())
        if not tops:
            return "the foundations are empty"
        if not any(self._accepts(dst, c) for c in tops):
            return f"no foundation card builds on {self._top(dst)}"
        return f"more than one foundation card fits pile {dst + 1}: name it, like 'f8H {dst + 1}'"

    def _do(self, move: Move) -> MoveResult:
        if move.src == STOCK:
            dealt = [self._stock.pop() for _ in range(min(PILES, len(self._stock)))]
            transfers, reveals = [], []
            for i, c in enumerate(dealt):
                self._piles[i].append(c)
                reveals.append(Reveal(c, str(i + 1)))
                if c is not None:
                    transfers.append(Transfer((c,), "s", str(i + 1)))
            return MoveResult(str(move), tuple(transfers), tuple(reveals))
        if move.src.startswith(FOUNDATION):
            c = parse_card(move.src[1:])
            for f in self._foundations:
                if f and f[-1] is c:
                    f.pop()
                    break
            self._piles[int(move.dst) - 1].append(c)
            return MoveResult(str(move), (Transfer((c,), FOUNDATION, move.dst),))
        return self._move_cards(move)

    # -- the end of the game ------------------------------------------------------------------

    def _over_key(self) -> bytes:
        """The position as `over.encode` writes it (face-up cards are never hidden)."""
        piles = []
        for pile, down in zip(self._piles, self._down, strict=True):
            up = [c.code for c in pile[down:] if c is not None]
            piles.append((down > 0, up))
        return encode(piles, [len(f) for f in self._foundations])

    def _is_over(self) -> bool:
        """Over when the stock is empty and no sequence of moves puts another card on the
        foundations (net) or turns a face-down card: whatever is left only shuttles cards.

        Exact; see `engine.easthaven.over` for the search and its bounds; `over_search` runs
        the same search in slices.
        """
        if self._stock:
            return False
        return not ProgressSearch(self._over_key()).run()

    def _stays_live(self, move: Move, result: MoveResult, was_live: bool) -> bool:
        """Not over, without a search, after two kinds of move (exact, see below):

        * a card back from a foundation: it can go straight back, which is progress from here;
        * a pile-to-pile move that turned nothing, from a position judged not over, when the
          same cards can move straight back (`_reason` of the reverse move). The position before
          is then reachable from here with the same foundations and face-down cards, and
          progress was reachable from it, so it is from here.

        Most moves once the stock is empty shuttle runs back and forth, so the search runs only
        after a play, a turn, or a move that cannot be taken back.
        """
        if move.src.startswith(FOUNDATION):
            return True
        if not was_live or result.revealed_hidden or move.src == STOCK or move.dst == FOUNDATION:
            return False
        # The moved cards are still one run on top of the destination and nothing turned, so
        # the source is empty (any run fills it) or shows a face-up top the head may build on.
        back = self._piles[int(move.src) - 1]
        if not back:
            return True
        head, top = self._piles[int(move.dst) - 1][-move.count], back[-1]
        return head is not None and top is not None and self._builds_on(head, top)

    def over_search(self) -> OverStepper:
        """The game-over check in slices: `step(max_nodes)` returns `over`, or None while
        undecided; the verdict is cached as `over` once decided (if the position is unchanged)."""
        if self._stock or self.won:
            return OverDecided(self.won)
        if self._over_known:
            return OverDecided(self.over)
        if self._progress_at_hand():
            self.settle_over(False)
            return OverDecided(False)
        return _EasthavenOverSearch(self)

    def _progress_at_hand(self) -> bool:
        """True when one move makes progress: a pile's top plays to a foundation, or a
        pile's whole face-up run moves away and turns the card beneath. Then the game is
        not over (exact), and the search, which costs far more to set up, is not needed."""
        piles, down = self._piles, self._down
        slots = set()
        empty = False
        for i in range(PILES):
            pile = piles[i]
            if not pile:
                empty = True
            elif len(pile) > down[i]:
                top = pile[-1]
                if top is not None:
                    if self._foundation_for(top) is not None:
                        return True
                    slots.add(self._slot(top))
        for i in range(PILES):
            d = down[i]
            if d and self._run_length(i) == len(piles[i]) - d:
                head = piles[i][d]
                # never its own pile's slot: the head ranks at least the top's rank
                if head is not None and (empty or self._fit(head) in slots):
                    return True
        return False

    # -- undo -----------------------------------------------------------------------------------

    def _undo_snapshot(self, move: Move) -> Snapshot:
        """A card back from a foundation lands on a pile's top: record that pile's length and
        the foundations' lengths; undo puts the card back on the foundation it left. Other
        moves as the tableau games record them (numbers only)."""
        if move.src.startswith(FOUNDATION):
            dst = int(move.dst) - 1
            return (
                "from foundation",
                dst,
                len(self._piles[dst]),
                tuple(map(len, self._foundations)),
            )
        return super()._undo_snapshot(move)

    def _restore(self, snapshot: Snapshot) -> None:
        if snapshot[0] == "from foundation":
            _, dst, dst_len, heights = snapshot
            card = self._piles[dst].pop()
            assert len(self._piles[dst]) == dst_len, "undo of a move that was not the last one"
            assert card is not None, "a card back from a foundation is face up"
            short = next(
                f for f, n in zip(self._foundations, heights, strict=True) if len(f) == n - 1
            )
            short.append(card)
            return
        super()._restore(snapshot)

    # -- serialisation ------------------------------------------------------------------------

    def _state_json(self) -> TableauStateBody:
        return {
            "piles": self._piles_state(),
            "stock": [str(c) for c in reversed(self._stock)],
            "foundations": [[c.text for c in f] for f in self._foundations],
        }

    def _view_json(self) -> TableauViewBody:
        return {
            "piles": self._piles_view(),
            "stock": len(self._stock),
            "foundations": [[c.text for c in f] for f in self._foundations],
        }

    def _load_view(self, view: View) -> None:
        self._load_piles(view)


@dataclass(frozen=True, slots=True)
class EasthavenOverTask:
    """The game-over check of one position with the stock empty, as data (its search key):
    `run` searches to the end (`engine.easthaven.over`), True when the game is over."""

    key: bytes

    def run(self) -> bool:
        return not ProgressSearch(self.key).run()

    def __reduce__(self) -> tuple[type[EasthavenOverTask], tuple[bytes]]:
        # By constructor: a compiled frozen dataclass cannot be filled field by field.
        return EasthavenOverTask, (self.key,)


class _EasthavenOverSearch:
    """A resumable `TripleEasthaven` game-over check (see `TripleEasthaven.over_search`)."""

    __slots__ = ("_game", "_key", "_moves", "_search")

    def __init__(self, game: TripleEasthaven) -> None:
        self._game = game
        self._moves = game.moves
        self._key = game._over_key()
        self._search = ProgressSearch(self._key)

    def step(self, max_nodes: int) -> bool | None:
        """Expand at most `max_nodes` positions: True when over, False when not, None while
        undecided. The first decision is stored as the game's `over` if it has not moved."""
        progress = self._search.step(max_nodes)
        if progress is None:
            return None
        game = self._game
        if (
            not game._over_known
            and game.moves == self._moves
            and not game._stock
            and game._over_key() == self._key
        ):
            game.settle_over(not progress)
        return not progress

    def task(self) -> EasthavenOverTask:
        """The check as data for another process; it starts over from the position (the
        slices run here are few: the server hands a search over after a few hundred)."""
        return EasthavenOverTask(self._key)
