"""Moves a test can play on a deal it did not choose (a race deal, a free deal: random) and
still have a game in play after them: the first legal move may end a game (CI saw a `resign`
refused with `game_over`, a browser's clock stopped and a CLI exit early). Judged by the
player's own copy of the game (`engine.from_view`), as a client without the server's
verdicts sees it: a game goes on while it is not over and a move is left."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine import from_view


def goes_on(view: Mapping[str, object], line: Sequence[str]) -> bool:
    """Whether the game of ``view`` is still in play after the moves of ``line``."""
    game = from_view(view)
    for move in line:
        game.apply(move)
    return not game.over and next(iter(game.legal_moves()), None) is not None


def line_that_goes_on(view: Mapping[str, object], length: int) -> list[str]:
    """A line of ``length`` legal moves after which the game goes on (depth first, in the
    engine's order of legal moves), or the longest such line shorter than that when none is
    as long; empty when no move keeps the game in play."""
    best: list[str] = []

    def search(line: list[str]) -> bool:
        nonlocal best
        if len(line) > len(best):
            best = list(line)
        if len(line) == length:
            return True
        game = from_view(view)
        for played in line:
            game.apply(played)
        for move in game.legal_moves():
            if goes_on(view, [*line, str(move)]) and search([*line, str(move)]):
                return True
        return False

    search([])
    return best


def move_that_goes_on(view: Mapping[str, object]) -> str:
    """A first move after which the game goes on (race deals always have one:
    `server.games.deals.lasts_a_move`)."""
    line = line_that_goes_on(view, 1)
    assert line, "no move of this deal keeps the game in play"
    return line[0]
