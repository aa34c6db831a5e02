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

from collections.abc import Callable

from ..tripledeck import DRAW_COUNT, TripleDeck, foundation_score
from .base import (
    IMPOSSIBLE,
    UNKNOWN,
    WINNABLE,
    OutOfBudget,
    Solver,
    SolveResult,
    Verdict,
    register,
    require_full_state,
)
from .piles import move_run, take_top

# Move kinds on the search path: (kind, a, b, draws)
_PILE, _PILE_F, _TALON_F, _TALON_P = range(4)


@register
class TripleDeckSolver(Solver):
    family = TripleDeck

    def search(self) -> SolveResult:
        game = self.game
        assert isinstance(game, TripleDeck)
        require_full_state(*game._piles, game._stock)
        top_rank = game.top_rank
        n_piles = game.pile_count
        piles: list[list[int]] = [[c.rank for c in p if c is not None] for p in game._piles]
        down = list(game._down)
        talon: list[int] = [c.rank for c in game._waste]
        talon.extend(c.rank for c in reversed(game._stock) if c is not None)
        pos = len(game._waste)
        fcount = [0] * (top_rank + 1)  # fcount[h]: foundations built up to rank h
        for f in game._foundations:
            fcount[len(f)] += 1
        left = [0] * (top_rank + 1)  # left[r]: cards of rank r not on a foundation
        for p in piles:
            for r in p:
                left[r] += 1
        for r in talon:
            left[r] += 1
        score0 = game.score
        max_score = 12 * foundation_score(top_rank)
        budget = self.budget
        seen: set[tuple[object, ...]] = set()
        path: list[tuple[int, int, int, int]] = []
        best = [score0, 0]  # best score, and the path length that reached it
        best_path: list[tuple[int, int, int, int]] = []
        heuristic = [False]
        state = {"pos": pos}

        def talon_stops(start: int) -> list[tuple[int, int]]:
            """(waste position, draws) for every waste top reachable by drawing alone."""
            n = len(talon)
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

        def run_len(i: int) -> int:
            pile = piles[i]
            up = len(pile) - down[i]
            k = 1 if up > 0 else 0
            while k < up and pile[-k - 1] == pile[-k] + 1:
                k += 1
            return k

        def key() -> tuple[object, ...]:
            return (tuple(sorted((down[i], tuple(piles[i])) for i in range(n_piles))),
                    tuple(talon), state["pos"], tuple(fcount))

        def to_foundation(r: int) -> int:
            fcount[r - 1] -= 1
            fcount[r] += 1
            left[r] -= 1
            return r  # points gained: foundation_score(r) - foundation_score(r - 1)

        def from_foundation(r: int) -> None:
            fcount[r] -= 1
            fcount[r - 1] += 1
            left[r] += 1

        def dfs(depth: int, score: int) -> bool:
            budget.tick(depth)
            if score > best[0]:
                best[0], best[1] = score, len(path)
                best_path[:] = path
                if score == max_score:
                    return True
            moves = generate()
            for move in moves:
                gained, undo = apply(move)
                k = key()
                if k in seen:
                    budget.tt_hits += 1
                    undo()
                    continue
                seen.add(k)
                path.append(move)
                if dfs(depth + 1, score + gained):
                    return True
                path.pop()
                undo()
            return False

        def generate() -> list[tuple[int, int, int, int]]:
            pos_ = state["pos"]
            stops = talon_stops(pos_)
            # A forced safe foundation play.
            for i in range(n_piles):
                if len(piles[i]) > down[i]:
                    r = piles[i][-1]
                    if fcount[r - 1] and (r <= 2 or not left[r - 1]):
                        return [(_PILE_F, i, 0, 0)]
            if pos_:
                r = talon[pos_ - 1]
                if fcount[r - 1] and (r <= 2 or not left[r - 1]):
                    return [(_TALON_F, pos_, 0, 0)]
            found: list[tuple[int, int, int, int]] = []
            turns: list[tuple[tuple[int, int], tuple[int, int, int, int]]] = []
            talon_plays: list[tuple[int, int, int, int]] = []
            rest: list[tuple[int, int, int, int]] = []
            tops: dict[int, list[int]] = {}
            empty = -1
            for i in range(n_piles):
                if len(piles[i]) > down[i]:
                    tops.setdefault(piles[i][-1], []).append(i)
                elif not piles[i] and empty < 0:
                    empty = i
            for i in range(n_piles):
                pile = piles[i]
                run = run_len(i)
                if not run:
                    continue
                if fcount[pile[-1] - 1]:
                    found.append((_PILE_F, i, 0, 0))
                for k in range(1, run + 1):
                    head = pile[-k]
                    dsts = [d for d in tops.get(head + 1, ()) if d != i]
                    whole = k == len(pile)
                    if head == top_rank and empty >= 0 and not whole:
                        dsts.append(empty)
                    if not dsts:
                        continue
                    if k < run:
                        # Moving a sub-run off a card it builds on only helps that card up.
                        if not fcount[head]:  # the card beneath has rank head + 1
                            heuristic[0] = True
                            continue
                        found.extend((_PILE, i, d, k) for d in dsts)
                    elif down[i] and k == len(pile) - down[i]:
                        turns.extend(((-down[i], len(pile)), (_PILE, i, d, k)) for d in dsts)
                    else:
                        rest.extend((_PILE, i, d, k) for d in dsts)
            for p, draws in stops:
                r = talon[p - 1]
                if fcount[r - 1]:
                    talon_plays.append((_TALON_F, p, 0, draws))
                for d in tops.get(r + 1, ()):
                    talon_plays.append((_TALON_P, p, d, draws))
                if r == top_rank and empty >= 0:
                    talon_plays.append((_TALON_P, p, empty, draws))
            turns.sort()
            talon_plays.sort(key=lambda m: (m[0] != _TALON_F, m[3]))
            return found + [m for _, m in turns] + talon_plays + rest

        def apply(move: tuple[int, int, int, int]) -> tuple[int, Callable[[], None]]:
            kind, a, b, draws = move
            if kind == _PILE:
                return 0, move_run(piles, down, a, b, draws)
            if kind == _PILE_F:
                r, put_back = take_top(piles, down, a)
                gained = to_foundation(r)

                def undo_found() -> None:
                    from_foundation(r)
                    put_back()
                return gained, undo_found
            old_pos = state["pos"]
            r = talon.pop(a - 1)
            state["pos"] = a - 1
            gained = 0
            if kind == _TALON_F:
                gained = to_foundation(r)
            else:
                piles[b].append(r)

            def undo_talon() -> None:
                if kind == _TALON_F:
                    from_foundation(r)
                else:
                    piles[b].pop()
                talon.insert(a - 1, r)
                state["pos"] = old_pos
            return gained, undo_talon

        exhausted = False
        try:
            seen.add(key())
            dfs(0, score0)
            exhausted = True
        except OutOfBudget:
            pass
        line = self._line(best_path)
        proven = best[0] == max_score or (exhausted and not heuristic[0])
        verdict: Verdict
        if best[0] == max_score:
            verdict = WINNABLE
        elif proven:
            verdict = IMPOSSIBLE
        else:
            verdict = UNKNOWN
        return SolveResult(verdict, line, budget.stats(), best_score=best[0],
                           max_score=max_score, optimal=proven)

    @staticmethod
    def _line(moves: list[tuple[int, int, int, int]]) -> list[str]:
        """The engine's move texts for a search path (draw macros become runs of ``d``)."""
        out: list[str] = []
        for kind, a, b, draws in moves:
            if kind == _PILE:
                out.append(f"{a + 1} {b + 1} {draws}")
            elif kind == _PILE_F:
                out.append(f"{a + 1} f")
            else:
                out.extend(["d"] * draws)
                out.append("w f" if kind == _TALON_F else f"w {b + 1}")
        return out
