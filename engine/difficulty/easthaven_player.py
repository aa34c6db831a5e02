"""The Triple Easthaven simulated player: a short beam lookahead over what the view shows.

The shared greedy player (`player`) rates one move at a time; at Triple Easthaven that
leaves about 80 % of the points, because a card reaches a foundation only after a few moves
that each gain nothing (move a run away, play the card under it, put the run back). This
player plans such lines, from the player's view only (`Game.view()`: the face-up cards, how
many cards lie face down under each pile, the foundations and the stock's size; never a
face-down card or the stock order), on a small model of that view:

* **Evaluation** of a position (`_value`): 100 per foundation card, `TURN` per face-down
  card turned, `EMPTY` per empty pile, minus a penalty for what is buried: each face-up
  card below a break (it cannot move until the cards on it go) costs `BLOCK` per segment
  above it, times 1 / (1 + the ranks its foundation still needs before it), and each
  face-down card costs `DOWN` per face-up segment on it.
* **Lookahead** (`_plan`): a beam search over the moves that show nothing new (pile to
  pile, pile to foundation, foundation back to a pile), `Tactics.depth` moves deep keeping
  the `Tactics.beam` best positions at each depth, with a transposition set; a move that
  turns a face-down card ends its line (what shows is unknown). Moves that only shuffle
  visible runs are pruned: a part of a run moves only when the card it uncovers plays to a
  foundation, a run moves to an empty pile only when something lies under it, one empty
  pile stands for all, and a foundation card comes back only when a pile's run can build
  on it. The best line is played if it raises the evaluation (a ratchet: the player never
  takes a line that loses ground); else the stock is dealt; with the stock empty too, the
  player stops.
* **Skill**: `Level` maps to `Tactics` (depth, beam) and the shared `Skill.noise`: with that
  probability a turn plays a random legal move (a deal among them) instead of the plan.
  The player never returns to a position it has seen. Time is modelled as in `player`:
  `Skill.base_s` + `Skill.per_bit_s` × log2(legal moves + 1) per move.

About 0.1-0.3 s a game (pure Python); deterministic for (seed, level, trial).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ..cards import SUITS, parse_card
from ..variants import new_game

if TYPE_CHECKING:
    from .skill import Level, PlayOutcome

VARIANT: Final = "triple-easthaven"
PILES: Final = 12

#: Evaluation weights (see the module's text).
TURN: Final = 60.0
EMPTY: Final = 25.0
BLOCK: Final = 12.0
DOWN: Final = 6.0


@dataclass(frozen=True, slots=True)
class Tactics:
    """How far a level looks ahead: moves deep, positions kept per depth."""

    depth: int
    beam: int


#: Lookahead per level name (`Skill.name`).
TACTICS: Final[dict[str, Tactics]] = {
    "greedy": Tactics(depth=2, beam=2),
    "novice": Tactics(depth=2, beam=1),
    "casual": Tactics(depth=2, beam=2),
    "skilled": Tactics(depth=3, beam=3),
}

# A card is an int: suit index (C, D, H, S) * 13 + rank - 1.
_RED: Final = (False, True, True, False)

#: A position: the face-up cards of each pile (bottom first), the face-down counts, the
#: three foundation heights of each suit (sorted) and the stock's size.
Piles = tuple[tuple[int, ...], ...]
Found = tuple[tuple[int, int, int], ...]
# A move: ("p", src, dst, count) | ("f", src, 0, 0) | ("r", card, dst, 0) | ("d", 0, 0, 0)
PlanMove = tuple[str, int, int, int]


_RANKS: Final = tuple(c % 13 + 1 for c in range(52))
_SUITS: Final = tuple(c // 13 for c in range(52))
#: _BUILDS[lower][upper]: may `lower` sit on `upper` (one rank lower, the other colour)?
_BUILDS: Final = tuple(
    tuple(_RANKS[lo] == _RANKS[up] - 1 and _RED[_SUITS[lo]] != _RED[_SUITS[up]] for up in range(52))
    for lo in range(52)
)


def _rank(c: int) -> int:
    return _RANKS[c]


def _suit(c: int) -> int:
    return _SUITS[c]


def _builds_on(lower: int, upper: int) -> bool:
    return _BUILDS[lower][upper]


def _run(up: tuple[int, ...]) -> int:
    """Cards at the top of a face-up stack that move as one run."""
    n = len(up)
    if n == 0:
        return 0
    k = 1
    while k < n and _builds_on(up[n - k], up[n - k - 1]):
        k += 1
    return k


def _plays(c: int, found: Found) -> bool:
    return _rank(c) - 1 in found[_suit(c)]


def _need(c: int, found: Found) -> int:
    """Ranks the card's suit still needs on a foundation before the card plays."""
    r = _RANKS[c] - 1
    best = -1
    for h in found[_SUITS[c]]:
        if best < h <= r:
            best = h
    return r - best if best >= 0 else 13


def _value(piles: Piles, down: tuple[int, ...], found: Found) -> float:
    total = 100.0 * sum(sum(f) for f in found) - TURN * sum(down)
    builds = _BUILDS
    for up, d in zip(piles, down, strict=True):
        n = len(up)
        if n == 0:
            if d == 0:
                total += EMPTY
            continue
        # Segments (maximal runs) from the top down; a card below k breaks waits on k segments.
        segments = 1
        i = n - 1
        while i > 0:
            below = up[i - 1]
            if not builds[up[i]][below]:
                segments += 1
            if segments > 1:
                total -= BLOCK * (segments - 1) / (1 + _need(below, found))
            i -= 1
        total -= DOWN * d * segments
    return total


def _moves(
    piles: Piles, down: tuple[int, ...], found: Found, stock: int, *, pruned: bool
) -> list[PlanMove]:
    """The legal moves (`pruned`: without the shuffles the module's text lists)."""
    out: list[PlanMove] = []
    empty = [i for i in range(PILES) if not piles[i] and down[i] == 0]
    runs = [_run(up) for up in piles]
    tops: dict[int, list[int]] = {}
    for i, up in enumerate(piles):
        if up:
            tops.setdefault(up[-1], []).append(i)
    for src, up in enumerate(piles):
        n = len(up)
        if n == 0:
            continue
        if _plays(up[-1], found):
            out.append(("f", src, 0, 0))
        for count in range(1, runs[src] + 1):
            head = up[n - count]
            whole = count == n
            # Part of a run moves only to uncover a card that plays.
            if pruned and count < runs[src] and not _plays(up[n - count - 1], found):
                continue
            r, red = _rank(head), _RED[_suit(head)]
            if r < 13:
                for suit in range(4):
                    if _RED[suit] == red:
                        continue
                    for dst in tops.get(suit * 13 + r, ()):
                        if dst != src:
                            out.append(("p", src, dst, count))
            if empty and (not pruned or not (whole and down[src] == 0)):
                for dst in empty[:1] if pruned else empty:
                    if dst != src:
                        out.append(("p", src, dst, count))
    for suit in range(4):
        for h in sorted(set(found[suit])):
            if h == 0:
                continue
            card = suit * 13 + h - 1
            useful = not pruned or any(
                up and any(_builds_on(up[len(up) - k], card) for k in range(1, runs[i] + 1))
                for i, up in enumerate(piles)
            )
            if not useful:
                continue
            for dst in range(PILES):
                up = piles[dst]
                if (up and _builds_on(card, up[-1])) or (not up and down[dst] == 0):
                    out.append(("r", card, dst, 0))
    if stock:
        out.append(("d", 0, 0, 0))
    return out


def _after(
    piles: Piles, down: tuple[int, ...], found: Found, move: PlanMove
) -> tuple[Piles, tuple[int, ...], Found, bool]:
    """The position after a move that is not a deal: (piles, down, found, turns a card)."""
    kind, a, b, count = move
    p = list(piles)
    f = found
    if kind == "r":
        suit, h = _suit(a), _rank(a)
        heights = list(found[suit])
        heights[heights.index(h)] = h - 1
        f = _set_suit(found, suit, heights)
        p[b] = (*p[b], a)
        return tuple(p), down, f, False
    up = p[a]
    if kind == "f":
        c = up[-1]
        suit = _suit(c)
        heights = list(found[suit])
        heights[heights.index(_rank(c) - 1)] = _rank(c)
        f = _set_suit(found, suit, heights)
        p[a] = up[:-1]
    else:
        p[b] = p[b] + up[len(up) - count :]
        p[a] = up[: len(up) - count]
    turns = not p[a] and down[a] > 0
    return tuple(p), down, f, turns


def _set_suit(found: Found, suit: int, heights: list[int]) -> Found:
    heights.sort()
    new = list(found)
    new[suit] = (heights[0], heights[1], heights[2])
    return tuple(new)


def _text(move: PlanMove) -> str:
    kind, a, b, count = move
    if kind == "d":
        return "d"
    if kind == "f":
        return f"{a + 1} f"
    if kind == "r":
        rank = _rank(a)
        name = {1: "A", 11: "J", 12: "Q", 13: "K"}.get(rank, str(rank))
        return f"f{name}{SUITS[_suit(a)]} {b + 1}"
    return f"{a + 1} {b + 1} {count}"


def _plan(
    piles: Piles,
    down: tuple[int, ...],
    found: Found,
    tactics: Tactics,
    seen: set[tuple[Piles, tuple[int, ...], Found]],
) -> list[PlanMove] | None:
    """The best line of at most `tactics.depth` moves that show nothing new (or end on a
    move that turns a card), when it raises the evaluation; None otherwise."""
    start = _value(piles, down, found)
    best_value = start + 1e-6
    best: list[PlanMove] | None = None
    visited = {(piles, down, found)} | seen
    beam: list[tuple[float, Piles, Found, list[PlanMove]]] = [(start, piles, found, [])]
    for _ in range(tactics.depth):
        children: list[tuple[float, Piles, Found, list[PlanMove]]] = []
        for _, p, f, line in beam:
            for move in _moves(p, down, f, 0, pruned=True):
                q, d, g, turns = _after(p, down, f, move)
                key = (q, d, g)
                if key in visited:
                    continue
                visited.add(key)
                if turns:
                    # The card under it turns: worth `TURN`, what shows is unknown.
                    value = _value(q, (*d[: move[1]], d[move[1]] - 1, *d[move[1] + 1 :]), g)
                else:
                    value = _value(q, d, g)
                path = [*line, move]
                if value > best_value:
                    best_value, best = value, path
                if not turns:
                    children.append((value, q, g, path))
        if not children:
            break
        children.sort(key=lambda c: c[0], reverse=True)
        beam = children[: tactics.beam]
    return best


def _read(view: dict[str, object]) -> tuple[Piles, tuple[int, ...], Found, int]:
    """The player's model of the view."""
    raw_piles = view["piles"]
    assert isinstance(raw_piles, list)
    piles = tuple(tuple(parse_card(t).code for t in pile["up"]) for pile in raw_piles)
    down = tuple(int(pile["down"]) for pile in raw_piles)
    heights: list[list[int]] = [[], [], [], []]
    raw_found = view["foundations"]
    assert isinstance(raw_found, list)
    for i, cards in enumerate(raw_found):
        heights[i // 3].append(len(cards))
    found: Found = tuple((*sorted(h),) for h in heights)  # type: ignore[misc]
    stock = view["stock"]
    assert isinstance(stock, int)
    return piles, down, found, stock


def play_easthaven(
    seed: int, level: Level, trial: int = 0, *, max_moves: int | None = None
) -> PlayOutcome:
    """Play one Triple Easthaven deal; deterministic for (seed, level, trial)."""
    from .skill import PlayOutcome

    skill = level.skill
    tactics = TACTICS[skill.name]
    game = new_game(VARIANT, seed)
    rng = random.Random(f"{VARIANT}/{seed}/{skill.name}/{trial}/lookahead")
    limit = max_moves if max_moves is not None else 3 * game.total_cards + 100
    seconds = 0.0
    seen: set[tuple[Piles, tuple[int, ...], Found]] = set()
    plan: list[PlanMove] = []
    while game.moves < limit and not game.won:
        view = dict(game.view())
        piles, down, found, stock = _read(view)
        seen.add((piles, down, found))
        legal = _moves(piles, down, found, stock, pruned=False)
        if not legal:
            break
        seconds += skill.think_s(len(legal))
        if plan:
            move = plan.pop(0)
        elif skill.noise and rng.random() < skill.noise:
            fresh = [
                m for m in legal if m[0] == "d" or _after(piles, down, found, m)[:3] not in seen
            ]
            if not fresh:
                break
            move = fresh[rng.randrange(len(fresh))]
        else:
            line = _plan(piles, down, found, tactics, seen)
            if line is None:
                if not stock:
                    break
                move = ("d", 0, 0, 0)
            else:
                move, plan = line[0], line[1:]
        game.defer_over()
        game.play(_text(move))
        game.defer_over()  # `view` must not judge the game over (a search)
    cards = game.total_cards
    return PlayOutcome(game.won, game.moves, round(seconds, 3), game.points, cards)
