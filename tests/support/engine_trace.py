"""Seeded random play of every variant, written down move by move: what the engine answered.

`python -m tests.support.engine_trace` prints the traces as JSON, so the same play can be
traced by another build of the engine (the pure-Python source, with it first on PYTHONPATH)
and compared with the compiled one (tests/engine/test_compiled.py).
"""

from __future__ import annotations

import json
import random
import sys

import engine

#: Moves played per game; games end earlier when over.
MAX_MOVES = 160


def trace(variant: str, seed: int) -> list[object]:
    """Every step of one game: the move (or undo), its events, the legal moves and view after."""
    rng = random.Random(f"{variant}:{seed}")
    game = engine.new_game(variant, seed)
    steps: list[object] = [game.view()]
    for _ in range(MAX_MOVES):
        legal = [str(m) for m in game.legal_moves()]
        if not legal:
            break
        text = engine.UNDO if game.can_undo() and rng.random() < 0.15 else rng.choice(legal)
        try:
            result = game.play(text)
        except engine.IllegalMove as exc:  # the copy's refusals must match too
            steps.append(["illegal", text, str(exc)])
            continue
        steps.append([text, result.events(), legal, game.view(), game.over, game.result()])
    steps.append(game.to_json())
    return steps


def traces(seeds: range) -> dict[str, list[list[object]]]:
    return {v: [trace(v, s) for s in seeds] for v in engine.VARIANT_IDS}


if __name__ == "__main__":
    json.dump({"compiled": engine.COMPILED, "traces": traces(range(int(sys.argv[1])))}, sys.stdout)
