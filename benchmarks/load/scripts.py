"""Move scripts computed before a benchmark run, so the load generator does no engine work.

The server deals the daily game of a variant from the daily secret and the date; with
``--no-certify`` the seed is the day's first that offers a move
(``server.games.deals.first_playable``),
which the benchmark knows because it chooses both (``--daily-secret``, and ``--date`` through
the server's ``--clock-offset-ms``). A script is a random legal game on that deal (fixed RNG):
the moves in the server's notation, played with ``expected_seq`` by every simulated player.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence
from dataclasses import dataclass

from engine import new_game
from engine.views import View
from server.games.daily import DAY_MS, day_start_ms
from server.games.deals import first_playable


@dataclass(frozen=True)
class Script:
    variant: str
    moves: tuple[str, ...]
    finished: bool  # the last move ends the game (else the player resigns after it)


def deal_seed(secret: bytes, variant: str, date: dt.date) -> int:
    """The seed the server deals for ``variant`` on ``date`` with ``--no-certify``: the day's
    first candidate whose deal offers a move (``server.games.deals.first_playable``)."""
    return first_playable(secret, variant, date)[0]


def initial_view(secret: bytes, variant: str, date: dt.date) -> View:
    return new_game(variant, deal_seed(secret, variant, date)).view()


def play_random(variant: str, seed: int, rng: random.Random, max_moves: int) -> Script:
    game = new_game(variant, seed)
    moves: list[str] = []
    while len(moves) < max_moves:
        legal = list(game.legal_moves())
        if not legal:
            break
        move = rng.choice(legal)
        game.apply(move)
        moves.append(str(move))
    return Script(variant, tuple(moves), game.over)


def build(
    secret: bytes,
    date: dt.date,
    variants: Sequence[str],
    *,
    per_variant: int = 4,
    max_moves: int = 200,
    rng_seed: int = 1,
) -> dict[str, list[Script]]:
    """``per_variant`` scripts of each variant on the day's deal (a fixed RNG per script)."""
    out: dict[str, list[Script]] = {}
    for variant in variants:
        seed = deal_seed(secret, variant, date)
        out[variant] = [
            play_random(variant, seed, random.Random(f"{rng_seed}:{variant}:{k}"), max_moves)
            for k in range(per_variant)
        ]
    return out


def clock_offset_ms(date: dt.date, now_ms: int) -> int:
    """The ``--clock-offset-ms`` that puts the server at noon UTC on ``date``."""
    return day_start_ms(date) + DAY_MS // 2 - now_ms
