"""Triple Easthaven's solver against a plain exhaustive search through the engine's own moves
on small positions: its sound cuts (safe foundation plays, no return of a safe card, empty
piles interchangeable once the stock is empty) never change the verdict, `impossible` is only
said of positions the plain search cannot win, and found lines replay and are shortened."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Hashable

import pytest

from engine import Game, new_game
from engine.cards import Card, card
from engine.easthaven import TripleEasthaven
from engine.moves import Move
from engine.snapshots import Snapshot
from engine.solvers import IMPOSSIBLE, WINNABLE, solve
from engine.solvers.base import Budget, OutOfBudget
from engine.solvers.easthaven.bestfirst import BestFirst
from engine.solvers.easthaven.lines import legal, parse_line, shorten, wins
from engine.solvers.easthaven.search import (
    BACK,
    UP,
    EasthavenSearch,
    SearchMove,
    luby,
    safe_to_play,
    search_move,
)
from engine.state import full_state, known_cards
from engine.tableau import FOUNDATION, TableauGame
from tests.engine.helpers import C, as_kind, fresh

#: Positions the plain search may expand before a sample is dropped as too big.
PLAIN_LIMIT = 4_000


def _lows(game: Game) -> tuple[int, int]:
    """The lowest black and lowest red foundation heights."""
    heights = [len(f) for f in as_kind(game, TableauGame)._foundations]
    black = min(heights[0:3] + heights[9:12])
    red = min(heights[3:9])
    return black, red


def _safe_top(game: Game, pile: int) -> Card | None:
    """Pile `pile`'s top card when it may go up and `safe_to_play` says so."""
    tableau = as_kind(game, TableauGame)
    top = tableau._top(pile)
    if top is None or tableau._foundation_for(top) is None:
        return None
    return top if safe_to_play(top.code, *_lows(game)) else None


def plain_winnable(game: Game, *, pruned: bool = False) -> bool | None:
    """Whether the position can be won, by exhaustive search over the engine's legal moves
    with exact keys; None when it needs more than PLAIN_LIMIT positions. `pruned` applies the
    solver's sound cuts (forced safe plays, safe cards never return, sorted piles once the
    stock is empty) so that the two searches can be compared."""
    start = game._snapshot()
    try:
        return _plain_search(game, pruned)
    finally:
        game._restore(start)


def _plain_search(game: Game, pruned: bool) -> bool | None:
    assert isinstance(game, TripleEasthaven)
    seen: set[Hashable] = set()
    stack: list[Snapshot] = [game._snapshot()]

    def key() -> Hashable:
        snap = game._full_snapshot()
        _, tableau, down, stock, found = snap
        if pruned and not stock:
            piles = sorted(
                ([c.code for c in known_cards(p)], d) for p, d in zip(tableau, down, strict=True)
            )
            heights = [sorted(len(f) for f in found[3 * s : 3 * s + 3]) for s in range(4)]
            return str(piles), str(heights)
        return snap

    seen.add(key())
    while stack:
        game._restore(stack.pop())
        if game.won:
            return True
        if len(seen) > PLAIN_LIMIT:
            return None
        moves = list(game._generate())
        if pruned:
            moves = _prune(game, moves)
        # Pushed last, popped first: foundation plays, then moves between piles, then the
        # rest, so a win is usually found long before the limit.
        moves.sort(key=_preference, reverse=True)
        here = game._snapshot()
        for move in moves:
            game._do(move)
            k = key()
            if k not in seen:
                seen.add(k)
                stack.append(game._snapshot())
            game._restore(here)
    return False


def _preference(move: Move) -> int:
    if move.dst == FOUNDATION:
        return 0
    if move.src.startswith(FOUNDATION):
        return 3
    return 2 if move.src == "d" else 1


def _prune(game: Game, moves: list[Move]) -> list[Move]:
    for i in range(12):
        if _safe_top(game, i) is not None:
            return [Move(str(i + 1), FOUNDATION)]
    low_black, low_red = _lows(game)
    return [
        m
        for m in moves
        if not (
            m.src.startswith(FOUNDATION)
            and m.src != FOUNDATION
            and safe_to_play(C(m.src[1:]).code, low_black, low_red)
        )
    ]


def small_position(rng: random.Random, loose: int, stock: int) -> Game:
    """An end position: a face-down King at the bottom of each pile (so no pile is empty and
    few foundation cards can come back), every foundation up to its Queen but for `loose`
    cards taken off their tops: `stock` of them in the stock, the rest face up on random
    piles."""
    heights = [12] * 12
    taken: list[Card] = []
    for _ in range(loose):
        f = rng.choice([i for i in range(12) if heights[i] > 0])
        taken.append(card(heights[f], "CDHS"[f // 3]))
        heights[f] -= 1
    rng.shuffle(taken)
    piles: list[list[Card]] = [[card(13, "CDHS"[f // 3])] for f in range(12)]
    rng.shuffle(piles)
    in_stock, rest = taken[:stock], taken[stock:]
    for c in rest:
        piles[rng.randrange(12)].append(c)
    down = [1 if len(p) > 1 else 0 for p in piles]
    foundations = [[card(r, "CDHS"[f // 3]) for r in range(1, heights[f] + 1)] for f in range(12)]
    return fresh(
        "triple-easthaven",
        _piles=piles,
        _down=down,
        _stock=list(reversed(in_stock)),
        _foundations=foundations,
    )


def _samples(count: int, seed: int, loose: tuple[int, int] = (4, 10)) -> list[Game]:
    rng = random.Random(seed)
    return [
        small_position(rng, rng.randint(*loose), rng.choice((0, 0, 1, 2))) for _ in range(count)
    ]


def test_the_sound_cuts_keep_every_win() -> None:
    """Where the plain search finds a win, so does the search with the solver's sound cuts,
    and the solver (its sound depth-first search alone, too) never calls it impossible."""
    compared = decided = 0
    for game in _samples(40, 17):
        if plain_winnable(game) is not True:
            continue
        pruned = plain_winnable(game, pruned=True)
        assert pruned is not False, game.to_json()  # None: over the limit (other order)
        decided += pruned is True
        assert solve(game, max_nodes=5_000).verdict != IMPOSSIBLE
        assert isinstance(game, TripleEasthaven)
        dfs = EasthavenSearch(full_state(game), game.total_cards, Budget(5_000, None))
        with contextlib.suppress(OutOfBudget):
            assert dfs.run() or dfs.heuristic, game.to_json()
        compared += 1
    assert compared >= 20 and decided >= 15


def test_a_safe_play_keeps_every_win() -> None:
    """Playing a `safe_to_play` card up never turns a winnable position into a lost one (the
    other way round holds trivially: the play is a legal move)."""
    checked = 0
    for game in _samples(60, 5, (1, 4)):
        if plain_winnable(game) is not True:
            continue
        for pile in range(12):
            if _safe_top(game, pile) is None:
                continue
            after = fresh("triple-easthaven", **_state_of(game))
            after.apply(Move(str(pile + 1), FOUNDATION))
            assert plain_winnable(after) is True, game.to_json()
            checked += 1
    assert checked >= 10


def _state_of(game: Game) -> dict[str, object]:
    assert isinstance(game, TripleEasthaven)
    _, piles, down, stock, foundations = game._full_snapshot()
    return {
        "_piles": [list(p) for p in piles],
        "_down": list(down),
        "_stock": list(stock),
        "_foundations": [list(f) for f in foundations],
    }


def with_detours(search: EasthavenSearch, line: list[SearchMove]) -> list[SearchMove]:
    """`line` with a detour after every tenth move where one fits: a foundation card brought
    down onto a pile and played straight back up."""
    out: list[SearchMove] = []
    search.load()
    for k, move in enumerate(line):
        out.append(move)
        search.play(move)
        if k % 10:
            continue
        for c in range(52):
            for dst in range(12):
                back = search_move(BACK, c, dst, 1)
                if legal(search, back):
                    out += [back, search_move(UP, dst, 0, 1)]
                    search.play(back)
                    search.play(out[-1])
                    break
            else:
                continue
            break
    return out


def test_shortening_a_line_keeps_it_winning() -> None:
    game = new_game("triple-easthaven", 1000003)
    assert isinstance(game, TripleEasthaven)
    raw = BestFirst(full_state(game), game.total_cards, Budget(400_000, None)).run()
    assert raw is not None
    search = EasthavenSearch(full_state(game), game.total_cards, Budget(None, None))
    assert wins(search, raw)
    line = with_detours(search, raw)
    assert len(line) > len(raw) and wins(search, line)
    shorter = shorten(search, line, Budget(300_000, None))
    assert len(shorter) <= len(raw) and wins(search, shorter)
    end = new_game("triple-easthaven", 1000003)
    end.replay([m.text() for m in shorter])
    assert end.won
    # The fast rules refuse what the engine refuses: a line cut short, a move out of order.
    assert not wins(search, shorter[:-1])
    assert not wins(search, shorter[1:])
    assert parse_line([m.text() for m in shorter]) == shorter
    with pytest.raises(ValueError, match="not a solver move"):
        parse_line(["1 2 3 4"])


def test_luby_sequence() -> None:
    assert [luby(i) for i in range(1, 16)] == [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]


@pytest.mark.parametrize("seed", [1000001, 1000010])
def test_best_first_decides_deals_the_old_search_did_not(seed: int) -> None:
    """Deals the depth-first search alone left undecided after 10 s (issue #17)."""
    result = solve(new_game("triple-easthaven", seed), max_nodes=150_000)
    assert result.verdict == WINNABLE
    end = new_game("triple-easthaven", seed)
    for move in result.solution:
        end.play(move)
    assert end.won
