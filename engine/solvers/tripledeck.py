"""Triple Deck and Triple Deck with Kings: best-score depth-first search.

Suits never matter in these games, so a card is only its rank: twelve identical copies of
every rank collapse into one, and the position is (piles as rank tuples with their face-down
counts, the talon, the waste position, how many foundations stand at each height). Piles are
interchangeable (nothing is ever dealt onto a pile), so the transposition key sorts them.

Search:

* the talon is one list in drawing order (waste then stock) and an index; "draw until card X
  is the waste top" is one macro move worth a run of ``d`` moves, so a ply always plays a card;
* safe foundation moves are forced: an Ace or a 2 (no card ever needs to wait on a 2: Aces go
  straight up), or a card whose rank minus one has no copy left outside the foundations;
* a sub-run is moved off a card it builds on only to send that card to a foundation, and a
  whole pile never moves to an empty pile; empty piles are interchangeable, so only the first
  is a destination;
* moves are ordered foundation plays, moves that turn a card, talon plays, the rest;
* the search keeps the best score seen and stops at the maximum.

Pruning rules marked *heuristic* in the code cut lines that are very unlikely to matter; when
one fires, an exhausted search reports its best score as not proven optimal.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import NamedTuple

from ..state import TableauState, full_state
from ..tripledeck import DRAW_COUNT, TripleDeck, foundation_score
from .base import (
    IMPOSSIBLE,
    UNKNOWN,
    WINNABLE,
    Budget,
    OutOfBudget,
    Solver,
    SolveResult,
    Verdict,
    register,
)
from .piles import PileSearch

# Move kinds: a run from pile to pile, a pile's top to a foundation, the waste top (after
# drawing) to a foundation or onto a pile.
_PILE, _PILE_F, _TALON_F, _TALON_P = range(4)


class _Move(NamedTuple):
    """A search move (a talon play is a macro: `n` draws, then the play).

    `a`: the source pile, or for a talon play the waste position once drawn (the card played
    is `talon[a - 1]`); `b`: the destination pile; `n`: the cards moved, or the draws.
    """

    kind: int
    a: int
    b: int
    n: int

    def texts(self) -> list[str]:
        """The engine's move texts (a draw macro becomes a run of ``d``)."""
        if self.kind == _PILE:
            return [f"{self.a + 1} {self.b + 1} {self.n}"]
        if self.kind == _PILE_F:
            return [f"{self.a + 1} f"]
        play = "w f" if self.kind == _TALON_F else f"w {self.b + 1}"
        return ["d"] * self.n + [play]


#: Moves interned: a search builds the same few thousand moves over and over, and a cache hit
#: costs a fraction of building a named tuple.
_move = lru_cache(maxsize=1 << 16)(_Move)


def _talon_stops(n: int, start: int) -> list[tuple[int, int]]:
    """(waste position, draws) for every waste top reachable by drawing alone from waste
    position `start` in a talon of n cards."""
    out: list[tuple[int, int]] = []
    if n == 0:
        return out
    if start:
        out.append((start, 0))
    p, steps, visited = start, 0, {start}
    while True:
        p = 0 if p == n else min(p + DRAW_COUNT, n)
        steps += 1
        if p in visited:
            return out
        visited.add(p)
        if p:
            out.append((p, steps))


class _TripleDeckSearch(PileSearch):
    """The position being searched (piles, talon, foundation heights, score) and the search
    state: seen keys, the current path and the best line found."""

    __slots__ = (
        "best_path",
        "best_score",
        "budget",
        "fcount",
        "heuristic",
        "left",
        "max_score",
        "path",
        "pos",
        "score",
        "seen",
        "talon",
        "top_rank",
    )

    def __init__(self, state: TableauState, top_rank: int, score: int, budget: Budget) -> None:
        super().__init__(
            [[c.rank for c in p.cards] for p in state.piles], [p.down for p in state.piles]
        )
        self.budget = budget
        self.top_rank = top_rank
        # The talon in drawing order: the waste then the stock; `pos` cards of it are drawn.
        self.talon = [c.rank for c in state.waste] + [c.rank for c in state.stock]
        self.pos = len(state.waste)
        self.fcount = [0] * (top_rank + 1)  # fcount[h]: foundations built up to rank h
        for f in state.foundations:
            self.fcount[len(f)] += 1
        self.left = [0] * (top_rank + 1)  # left[r]: cards of rank r not on a foundation
        for r in [r for p in self.piles for r in p] + self.talon:
            self.left[r] += 1
        self.score = score
        self.max_score = len(state.foundations) * foundation_score(top_rank)
        self.best_score = score
        self.best_path: list[_Move] = []
        self.path: list[_Move] = []
        self.seen: set[tuple[object, ...]] = set()
        self.heuristic = False  # a heuristic cut fired: an exhausted search proves nothing

    def run(self) -> bool:
        """Search for the best score; True when the search finished within its budget."""
        try:
            self.seen.add(self.key())
            self.dfs(0)
        except OutOfBudget:
            return False
        return True

    def dfs(self, depth: int) -> bool:
        """Search on from the current position; True once the maximum score is reached."""
        self.budget.tick(depth)
        if self.score > self.best_score:
            self.best_score = self.score
            self.best_path = self.path[:]
            if self.score == self.max_score:
                return True
        seen = self.seen
        for move in self.generate():
            card, note = self.play(move)
            k = self.key()
            if k in seen:
                self.budget.tt_hits += 1
                self.unplay(move, card, note)
                continue
            seen.add(k)
            self.path.append(move)
            if self.dfs(depth + 1):
                return True
            self.path.pop()
            self.unplay(move, card, note)
        return False

    def key(self) -> tuple[object, ...]:
        """The transposition key: piles are interchangeable, so they are sorted."""
        down, piles = self.down, self.piles
        return (
            tuple(sorted([(down[i], tuple(piles[i])) for i in range(len(piles))])),
            tuple(self.talon),
            self.pos,
            tuple(self.fcount),
        )

    # -- move generation ----------------------------------------------------------------------

    def generate(self) -> Iterator[_Move]:
        """The moves to try, in order: a forced safe foundation play alone, or foundation
        plays, moves that turn a card (most face-down cards first), talon plays, the rest.

        Lazily: most nodes never get past their first move, so the talon plays are listed
        only when the search comes back to them (the position is restored by then)."""
        forced = self.forced_play()
        if forced is not None:
            yield forced
            return
        tops: dict[int, list[int]] = {}  # pile tops by rank
        empty = -1  # the first empty pile
        for i, pile in enumerate(self.piles):
            if len(pile) > self.down[i]:
                tops.setdefault(pile[-1], []).append(i)
            elif not pile and empty < 0:
                empty = i
        found, turns, rest = self.pile_moves(tops, empty)
        yield from found
        yield from turns
        yield from self.talon_plays(tops, empty)
        yield from rest

    def forced_play(self) -> _Move | None:
        """A safe foundation play: an Ace or a 2, or a card whose rank minus one has no copy
        left outside the foundations (nothing is lost by sending it at once)."""
        fcount, left, down = self.fcount, self.left, self.down
        for i, pile in enumerate(self.piles):
            if len(pile) > down[i]:
                r = pile[-1]
                if fcount[r - 1] and (r <= 2 or not left[r - 1]):
                    return _move(_PILE_F, i, 0, 0)
        if self.pos:
            r = self.talon[self.pos - 1]
            if fcount[r - 1] and (r <= 2 or not left[r - 1]):
                return _move(_TALON_F, self.pos, 0, 0)
        return None

    def run_length(self, i: int) -> int:
        """The face-up run at the top of pile i that moves as a unit."""
        pile = self.piles[i]
        up = len(pile) - self.down[i]
        k = 1 if up > 0 else 0
        while k < up and pile[-k - 1] == pile[-k] + 1:
            k += 1
        return k

    def pile_moves(
        self, tops: dict[int, list[int]], empty: int
    ) -> tuple[list[_Move], list[_Move], list[_Move]]:
        """Moves out of the piles: (foundation plays and the sub-run moves that free a card
        for one, moves that turn a card in order, the rest)."""
        fcount, top_rank = self.fcount, self.top_rank
        found: list[_Move] = []
        turns: list[tuple[tuple[int, int], _Move]] = []
        rest: list[_Move] = []
        for i, pile in enumerate(self.piles):
            run = self.run_length(i)
            if not run:
                continue
            if fcount[pile[-1] - 1]:
                found.append(_move(_PILE_F, i, 0, 0))
            down = self.down[i]
            for k in range(1, run + 1):
                head = pile[-k]
                dsts = [d for d in tops.get(head + 1, ()) if d != i]
                if head == top_rank and empty >= 0 and k != len(pile):
                    dsts.append(empty)
                if not dsts:
                    continue
                if k < run:
                    # Moving a sub-run off a card it builds on only helps that card up.
                    if not fcount[head]:  # the card beneath has rank head + 1
                        self.heuristic = True
                        continue
                    found.extend(_move(_PILE, i, d, k) for d in dsts)
                elif down and k == len(pile) - down:
                    turns.extend(((-down, len(pile)), _move(_PILE, i, d, k)) for d in dsts)
                else:
                    rest.extend(_move(_PILE, i, d, k) for d in dsts)
        turns.sort()
        return found, [m for _, m in turns], rest

    def talon_plays(self, tops: dict[int, list[int]], empty: int) -> list[_Move]:
        """Plays of every card drawing alone can bring to the waste top: foundation plays
        first, each kind by the draws it takes (the order the stops come in)."""
        found: list[_Move] = []
        onto: list[_Move] = []
        for p, draws in _talon_stops(len(self.talon), self.pos):
            r = self.talon[p - 1]
            if self.fcount[r - 1]:
                found.append(_move(_TALON_F, p, 0, draws))
            for d in tops.get(r + 1, ()):
                onto.append(_move(_TALON_P, p, d, draws))
            if r == self.top_rank and empty >= 0:
                onto.append(_move(_TALON_P, p, empty, draws))
        return found + onto

    # -- playing and taking back --------------------------------------------------------------

    def play(self, move: _Move) -> tuple[int, int]:
        """Play a move; (the card moved, a note) for `unplay`: for a pile move whether a card
        turned, for a talon play the waste position before it."""
        kind, a, b, n = move
        if kind == _PILE:
            return 0, self.move_run(a, b, n)
        if kind == _PILE_F:
            r, turned = self.take_top(a)
            self.to_foundation(r)
            return r, turned
        old_pos = self.pos
        r = self.talon.pop(a - 1)
        self.pos = a - 1
        if kind == _TALON_F:
            self.to_foundation(r)
        else:
            self.piles[b].append(r)
        return r, old_pos

    def unplay(self, move: _Move, card: int, note: int) -> None:
        kind, a, b, n = move
        if kind == _PILE:
            self.unmove_run(a, b, n, bool(note))
        elif kind == _PILE_F:
            self.from_foundation(card)
            self.put_back(a, card, bool(note))
        else:
            if kind == _TALON_F:
                self.from_foundation(card)
            else:
                self.piles[b].pop()
            self.talon.insert(a - 1, card)
            self.pos = note

    def to_foundation(self, r: int) -> None:
        self.fcount[r - 1] -= 1
        self.fcount[r] += 1
        self.left[r] -= 1
        self.score += r  # foundation_score(r) - foundation_score(r - 1)

    def from_foundation(self, r: int) -> None:
        self.fcount[r] -= 1
        self.fcount[r - 1] += 1
        self.left[r] += 1
        self.score -= r


@register
class TripleDeckSolver(Solver):
    family = TripleDeck

    def search(self) -> SolveResult:
        game = self.game
        assert isinstance(game, TripleDeck)
        search = _TripleDeckSearch(full_state(game), game.top_rank, game.score, self.budget)
        exhausted = search.run()
        best, top = search.best_score, search.max_score
        proven = best == top or (exhausted and not search.heuristic)
        verdict: Verdict
        if best == top:
            verdict = WINNABLE
        elif proven:
            verdict = IMPOSSIBLE
        else:
            verdict = UNKNOWN
        line = [text for move in search.best_path for text in move.texts()]
        return SolveResult(
            verdict, line, self.budget.stats(), best_score=best, max_score=top, optimal=proven
        )
