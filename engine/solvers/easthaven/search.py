"""Triple Easthaven: the depth-first search (which alone can prove a deal impossible) and the
move generation every Easthaven search shares.

`solver.EasthavenSolver` runs `bestfirst.BestFirst` on most of the
budget (it wins 97 of 100 deals within 60,000 positions) and this module's depth-first search
on the rest, then shortens the line (`lines`).

A card is its engine code (suit * 13 + rank - 1); the three foundations of a suit are
interchangeable, so they are kept as counts per height. The transposition key is the piles
with their face-down counts, the stock size (the stock's order never changes) and those counts;
once the stock is empty nothing is ever dealt onto a pile again, so the piles are sorted in the
key (pile symmetry).

Sound cuts (a win exists after them iff before; `tests/engine/test_solver_easthaven.py`
checks them against a plain search through the engine's moves on small positions):

* a foundation play of a card that is `safe_to_play` is forced (tried alone);
* a card that is `safe_to_play` never comes back from a foundation;
* empty piles are interchangeable once the stock is empty, so only the first is a destination
  and a whole pile never moves to one; the piles are sorted in the key then.

Heuristic cuts (they may lose a win; each marks the search `heuristic` when it fires, and an
exhausted heuristic search says ``unknown``, never ``impossible``):

* every other foundation play is forced too (it decided 70 % of deals within 10 s instead of
  48 % when only the safe plays were forced);
* a sub-run is moved off a card it builds on only to send that card to a foundation;
* a foundation card comes back only where a run head in the tableau can then build on it;
* the idle limit: at most IDLE_LIMIT moves in a row without progress;
* empty-pile symmetry while the stock still deals onto the piles.

Order: foundation plays, moves that turn a face-down card (most face-down cards first), moves
that empty a pile, dealing, the rest, foundation returns; restarts (Luby's sequence of node
limits) reorder each group.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from ...cards import RANK_TEXT, SUITS
from ...easthaven import PER_SUIT, PILES
from ...state import TableauState
from ..base import (
    Budget,
)
from ..piles import PileSearch

RANK = tuple(c % 13 + 1 for c in range(52))
SUIT = tuple(c // 13 for c in range(52))
_RED = tuple(SUITS[c // 13] in "DH" for c in range(52))
_TEXT = tuple(RANK_TEXT[c % 13 + 1] + SUITS[c // 13] for c in range(52))

# Move kinds: a run from pile to pile, a pile's top up to a foundation, a deal, a foundation
# card back onto a pile.
PILE, UP, DEAL, BACK = range(4)
#: Moves in a row that neither send a card up, turn one nor deal (heuristic cut).
IDLE_LIMIT = 6
#: Nodes of an attempt, times Luby's sequence (a DFS stuck under one bad early choice gets
#: out by starting over with another move order).
FIRST_ATTEMPT_NODES = 4000


# A card builds on another when its fit key equals the other's slot key.
FIT = tuple(RANK[c] * 2 + _RED[c] for c in range(52))
SLOT = tuple((RANK[c] - 1) * 2 + (not _RED[c]) for c in range(52))


def safe_to_play(c: int, low_black: int, low_red: int) -> bool:
    """Whether playing card c (rank r) from a pile top to a foundation loses nothing, given the
    lowest black and the lowest red foundation heights.

    Safe when every card of the other colour up to rank r - 1 and every card of c's colour up
    to rank r - 2 is on a foundation (an Ace: always). Call those cards *low*. Proof: take a
    winning line from the position with c still on its pile and drop from it every move of a
    low card (they all start on foundations). A low card only ever hosts low cards (a card
    that builds on a black rank <= r - 1 or a red rank <= r - 2 is itself low), so no other
    card sat on one, runs keep their non-low cards, and piles only gain empty space; foundation
    plays of other cards need heights no low card could lower. Only a low card (the other
    colour, rank r - 1) builds on c, so in the trimmed line c hosts nothing, and dropping c's
    own moves too leaves a legal winning line from the position with c already up: its
    foundation is one card ahead, which never blocks a play (three foundations per suit, three
    copies of each card), and a card dealt onto c's pile lands on the card beneath instead.
    The rule without the second condition is not safe: a red 3 over the last Ace of its suit
    may need a black 4 brought back from a foundation onto this red 5.
    """
    r = RANK[c]
    own, other = (low_red, low_black) if _RED[c] else (low_black, low_red)
    return other >= r - 1 and own >= r - 2


class SearchMove(NamedTuple):
    """A search move. `a`: the source pile, or the card (its code) of a foundation return;
    `b`: the destination pile; `n`: the cards moved."""

    kind: int
    a: int
    b: int
    n: int

    def text(self) -> str:
        if self.kind == PILE:
            return f"{self.a + 1} {self.b + 1} {self.n}"
        if self.kind == UP:
            return f"{self.a + 1} f"
        if self.kind == DEAL:
            return "d"
        return f"f{_TEXT[self.a]} {self.b + 1}"


#: Moves interned: a search builds the same few thousand moves over and over, and a cache hit
#: costs a fraction of building a named tuple.
search_move = lru_cache(maxsize=1 << 16)(SearchMove)


#: The one deal move (the search tells a deal by identity).
_DEAL_MOVE = search_move(DEAL, 0, 0, 0)


def luby(i: int) -> int:
    """The i-th term (from 1) of Luby's restart sequence 1 1 2 1 1 2 4 1 1 2 1 1 2 4 8 ...:
    within a constant factor of the best fixed restart length for any heavy-tailed search."""
    k = 1
    while (1 << k) - 1 < i:
        k += 1
    while i != (1 << k) - 1:
        i -= (1 << (k - 1)) - 1
        k = 1
        while (1 << k) - 1 < i:
            k += 1
    return 1 << (k - 1)


class _Restart(Exception):
    """An attempt spent its nodes: start again with another move order."""


@dataclass(slots=True)
class _PileMoves:
    """The moves between piles of one position, by group, and the fit keys of the movable
    run heads (a foundation card comes back only to take one of them)."""

    found: list[SearchMove]  # sub-run moves that free a card for a foundation
    turns: list[tuple[int, SearchMove]]  # moves that turn a face-down card, by -face-down count
    empties: list[SearchMove]  # moves that empty a pile
    rest: list[SearchMove]
    heads: set[int]


class EasthavenSearch(PileSearch):
    """The position being searched (piles, stock, foundation heights per suit) and the search
    state: seen keys, the path, the attempt and whether a heuristic cut fired."""

    __slots__ = (
        "attempt",
        "budget",
        "fc",
        "heuristic",
        "node_limit",
        "on_found",
        "path",
        "seen",
        "start",
        "stock",
        "total",
    )

    def __init__(self, state: TableauState, total: int, budget: Budget) -> None:
        super().__init__([], [])
        self.start = state
        self.total = total
        self.budget = budget
        self.stock: list[int] = []  # next card last
        self.fc = [[0] * 14 for _ in range(4)]  # fc[suit][h]: foundations of the suit at h
        self.on_found = 0
        self.seen: set[tuple[object, ...]] = set()
        self.path: list[SearchMove] = []
        self.heuristic = False  # a cut not proven harmless fired: exhausted proves nothing
        self.attempt = 0  # restarts so far
        self.node_limit = 0  # the node count at which this attempt gives up

    def load(self) -> None:
        """(Re)load the starting position."""
        state = self.start
        self.piles = [[c.code for c in p.cards] for p in state.piles]
        self.down = [p.down for p in state.piles]
        self.stock = [c.code for c in reversed(state.stock)]
        self.fc = [[0] * 14 for _ in range(4)]
        for i, f in enumerate(state.foundations):
            self.fc[i // PER_SUIT][len(f)] += 1
        self.on_found = sum(len(f) for f in state.foundations)

    def run(self) -> bool:
        """Search for a win, restarting with another move order whenever an attempt spends
        its nodes; raises OutOfBudget."""
        while True:
            limit = FIRST_ATTEMPT_NODES * luby(self.attempt + 1)
            self.load()
            self.seen.clear()
            self.path.clear()
            self.node_limit = self.budget.nodes + limit
            try:
                self.seen.add(self.key())
                return self.on_found == self.total or self.dfs(0, 0, self.on_found)
            except _Restart:
                self.attempt += 1

    def dfs(self, depth: int, idle: int, mark: int) -> bool:
        """Search on; `idle`: moves since the last progress, `mark`: the most cards ever up
        on this line (a card sent back and up again is no progress)."""
        self.budget.tick(depth)
        if self.budget.nodes > self.node_limit:
            raise _Restart
        seen = self.seen
        for move in self.generate():
            turned_before = sum(self.down)
            card, note = self.play(move)
            if self.on_found == self.total:
                self.path.append(move)
                return True
            # Progress is monotone, which bounds the depth: at most IDLE_LIMIT idle moves
            # between two steps of progress.
            progress = move is _DEAL_MOVE or self.on_found > mark or sum(self.down) < turned_before
            if not progress and idle >= IDLE_LIMIT:
                self.heuristic = True
                self.unplay(move, card, note)
                continue
            k = self.key()
            if k in seen:
                self.budget.tt_hits += 1
                self.unplay(move, card, note)
                continue
            seen.add(k)
            self.path.append(move)
            if self.dfs(depth + 1, 0 if progress else idle + 1, max(mark, self.on_found)):
                return True
            self.path.pop()
            self.unplay(move, card, note)
        return False

    def key(self) -> tuple[object, ...]:
        """The transposition key; piles are sorted (interchangeable) once the stock is empty."""
        down = self.down
        piles = self.piles
        ps = [(down[i], tuple(piles[i])) for i in range(PILES)]
        if not self.stock:
            ps.sort()
        return tuple(ps), len(self.stock), tuple(map(tuple, self.fc))

    # -- move generation ----------------------------------------------------------------------

    def lows(self) -> tuple[list[int], int, int]:
        """The lowest foundation height of each suit, and of the black and of the red suits."""
        low = [next(h for h in range(14) if row[h]) for row in self.fc]
        return low, min(low[0], low[3]), min(low[1], low[2])

    def generate(self) -> list[SearchMove]:
        """The moves to try, in order: a forced foundation play alone, or foundation plays,
        moves that turn a face-down card (most first), moves that empty a pile, dealing, the
        rest, foundation returns. A restart shuffles each group (deterministically)."""
        tops: dict[int, list[int]] = {}  # fit key a pile top takes -> piles
        empty = -1  # the first empty pile
        piles, down = self.piles, self.down
        for i in range(PILES):
            pile = piles[i]
            if len(pile) > down[i]:
                c = pile[-1]
                r = RANK[c]
                if self.fc[SUIT[c]][r - 1]:
                    # Every foundation play is forced. It is proven harmless when the card is
                    # `safe_to_play`; otherwise it is a heuristic cut, which the foundation
                    # return can often undo.
                    if not self.safe_up(c):
                        self.heuristic = True
                    return [search_move(UP, i, 0, 1)]
                tops.setdefault(SLOT[c], []).append(i)
            elif not pile and empty < 0:
                empty = i
        moves = self.pile_moves(tops, empty)
        if empty >= 0 and self.stock and sum(1 for p in self.piles if not p) > 1:
            self.heuristic = True  # other empty piles would receive other dealt cards
        groups = [
            moves.found,
            [m for _, m in moves.turns],
            moves.empties,
            [_DEAL_MOVE] if self.stock else [],
            moves.rest,
            self.returns(tops, empty, moves.heads),
        ]
        if self.attempt:
            self.reorder(groups)
        return [m for group in groups for m in group]

    def reorder(self, groups: list[list[SearchMove]]) -> None:
        """A restart tries each group in another (deterministic) order, and every other one
        deals before emptying piles."""
        a = self.attempt
        for group in groups:
            group.sort(key=lambda m: hash((a, m)))
        if self.stock and a % 2:
            groups[2], groups[3] = groups[3], groups[2]

    def safe_up(self, c: int) -> bool:
        """Card c (rank r) may go up with no harm: see `safe_to_play`."""
        _, low_black, low_red = self.lows()
        return safe_to_play(c, low_black, low_red)

    def pile_moves(self, tops: dict[int, list[int]], empty: int) -> _PileMoves:
        """The moves of every pile's run and sub-runs, by group."""
        moves = _PileMoves([], [], [], [], set())
        piles, down, stock = self.piles, self.down, self.stock
        for i in range(PILES):
            pile = piles[i]
            face_up = len(pile) - down[i]
            if face_up <= 0:
                continue
            run = 1
            while run < face_up and SLOT[pile[-run - 1]] == FIT[pile[-run]]:
                run += 1
            for k in range(1, run + 1):
                fit = FIT[pile[-k]]
                moves.heads.add(fit)
                dsts = [d for d in tops.get(fit, ()) if d != i]
                if empty >= 0:
                    if k != len(pile):
                        dsts.append(empty)
                    elif stock:
                        self.heuristic = True
                if dsts:
                    self.file_moves(moves, i, k, run, dsts)
        moves.turns.sort(key=lambda t: t[0])
        return moves

    def file_moves(self, moves: _PileMoves, i: int, k: int, run: int, dsts: list[int]) -> None:
        """Add the moves of pile i's top k cards (of a run of `run`) onto `dsts` to their
        group."""
        pile, down = self.piles[i], self.down[i]
        if k < run:
            # A sub-run leaves a card it built on: tried only to send that card up (a
            # heuristic cut otherwise: the card might take another copy of the sub-run's head).
            below = pile[-k - 1]
            if self.fc[SUIT[below]][RANK[below] - 1]:
                moves.found.extend(search_move(PILE, i, d, k) for d in dsts)
            else:
                self.heuristic = True
        elif down and k == len(pile) - down:
            moves.turns.extend((-down, search_move(PILE, i, d, k)) for d in dsts)
        elif k == len(pile):
            moves.empties.extend(search_move(PILE, i, d, k) for d in dsts)
        else:
            moves.rest.extend(search_move(PILE, i, d, k) for d in dsts)

    def returns(self, tops: dict[int, list[int]], empty: int, heads: set[int]) -> list[SearchMove]:
        """Foundation cards back onto a pile, only where a run head can then build on them."""
        backs: list[SearchMove] = []
        low, low_black, low_red = self.lows()
        for s, row in enumerate(self.fc):
            for h in range(max(low[s], 1), 14):
                c = s * 13 + h - 1
                if not row[h] or safe_to_play(c, low_black, low_red):
                    continue  # a card safe to play up is never needed back (`safe_to_play`)
                dsts = list(tops.get(FIT[c], ()))
                if empty >= 0:
                    dsts.append(empty)
                if dsts and SLOT[c] in heads:
                    backs.extend(search_move(BACK, c, d, 1) for d in dsts)
                elif dsts:
                    self.heuristic = True
        return backs

    # -- playing and taking back --------------------------------------------------------------

    def play(self, move: SearchMove) -> tuple[int, int]:
        """Play a move; (the card moved, a note) for `unplay`: whether a card turned, or for
        a deal the cards dealt."""
        kind, a, b, n = move
        if kind == PILE:
            return 0, self.move_run(a, b, n)
        if kind == UP:
            c, turned = self.take_top(a)
            row, h = self.fc[SUIT[c]], RANK[c]
            row[h - 1] -= 1
            row[h] += 1
            self.on_found += 1
            return c, turned
        if kind == DEAL:
            n = min(PILES, len(self.stock))
            for i in range(n):
                self.piles[i].append(self.stock.pop())
            return 0, n
        row, h = self.fc[SUIT[a]], RANK[a]  # a foundation card back onto pile b
        row[h] -= 1
        row[h - 1] += 1
        self.on_found -= 1
        self.piles[b].append(a)
        return a, 0

    def unplay(self, move: SearchMove, card: int, note: int) -> None:
        kind, a, b, n = move
        if kind == PILE:
            self.unmove_run(a, b, n, bool(note))
        elif kind == UP:
            row, h = self.fc[SUIT[card]], RANK[card]
            row[h] -= 1
            row[h - 1] += 1
            self.on_found -= 1
            self.put_back(a, card, bool(note))
        elif kind == DEAL:
            for i in reversed(range(note)):
                self.stock.append(self.piles[i].pop())
        else:
            self.piles[b].pop()
            row, h = self.fc[SUIT[a]], RANK[a]
            row[h - 1] -= 1
            row[h] += 1
            self.on_found += 1
