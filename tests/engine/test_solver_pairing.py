"""The pairing solver (Fourteen Out, Triple Fourteens) against a plain exhaustive search on
small positions, with restarts forced after a handful of nodes so that the dead set kept across
restarts and the seeded tie-breaking are exercised; verdicts are deterministic."""

from __future__ import annotations

import random

import pytest

from engine import Game, new_game
from engine.cards import card
from engine.pairing import PairingGame
from engine.solvers import IMPOSSIBLE, UNKNOWN, WINNABLE, solve
from engine.solvers import pairing as pairing_solver
from tests.engine.helpers import as_kind, fresh


def plain_winnable(heights: list[int], piles: list[tuple[int, ...]]) -> bool:
    """Exhaustive search over pile heights: remove two top cards of different piles summing
    to 14, no cut at all."""
    dead: set[tuple[int, ...]] = set()

    def search(h: list[int]) -> bool:
        if not any(h):
            return True
        key = tuple(h)
        if key in dead:
            return False
        tops = [(i, piles[i][h[i] - 1]) for i in range(len(h)) if h[i]]
        for a, (i, ri) in enumerate(tops):
            for j, rj in tops[a + 1 :]:
                if ri + rj == 14:
                    h[i] -= 1
                    h[j] -= 1
                    won = search(h)
                    h[i] += 1
                    h[j] += 1
                    if won:
                        return True
        dead.add(key)
        return False

    return search(list(heights))


def small_position(rng: random.Random, variant: str) -> Game:
    """A few balanced rank pairs scattered over some of the piles, bottom first."""
    ranks: list[int] = []
    for _ in range(rng.randint(3, 7)):
        r = rng.randint(1, 13)
        ranks += [r, 14 - r]
    rng.shuffle(ranks)
    n = 12 if variant == "fourteen-out" else 24
    used = rng.randint(2, 5)
    piles: list[list[int]] = [[] for _ in range(n)]
    for r in ranks:
        piles[rng.randrange(used)].append(r)
    built = [tuple(card(r, "CDHS"[k % 4]) for k, r in enumerate(p)) for p in piles]
    return fresh(variant, _piles=built, _heights=[len(p) for p in built])


def _ranks(game: Game) -> tuple[list[int], list[tuple[int, ...]]]:
    pairing = as_kind(game, PairingGame)
    piles = [tuple(c.rank for c in p) for p in pairing._piles]
    return list(pairing._heights), piles


@pytest.mark.parametrize("variant", ["fourteen-out", "triple-fourteens"])
@pytest.mark.parametrize("first_attempt", [pairing_solver.FIRST_ATTEMPT_NODES, 2])
def test_verdicts_match_the_plain_search(
    variant: str, first_attempt: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pairing_solver, "FIRST_ATTEMPT_NODES", first_attempt)
    rng = random.Random(1)
    verdicts = []
    for _ in range(150):
        game = small_position(rng, variant)
        result = solve(game)
        verdicts.append(result.verdict)
        assert (result.verdict == WINNABLE) == plain_winnable(*_ranks(game))
        if result.verdict == WINNABLE:
            for move in result.solution:
                game.play(move)
            assert game.won
    assert {WINNABLE, IMPOSSIBLE} <= set(verdicts) and UNKNOWN not in verdicts


def test_restarts_decide_a_deal_the_plain_order_does_not() -> None:
    """Seed 1000042 of Triple Fourteens: the first order is stuck for minutes (issue #17)."""
    result = solve(new_game("triple-fourteens", 1000042), max_nodes=50_000)
    assert result.verdict == WINNABLE and len(result.solution) == 78
    again = solve(new_game("triple-fourteens", 1000042), max_nodes=50_000)
    assert (again.solution, again.stats.nodes) == (result.solution, result.stats.nodes)


def test_an_impossible_deal_is_proven_across_restarts(monkeypatch: pytest.MonkeyPatch) -> None:
    """With restarts after every few nodes the dead set still carries the proof."""
    monkeypatch.setattr(pairing_solver, "FIRST_ATTEMPT_NODES", 3)
    for seed in (48, 50):  # impossible Fourteen Out deals
        assert solve(new_game("fourteen-out", seed)).verdict == IMPOSSIBLE
