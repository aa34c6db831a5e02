"""Free play (protocol 7): an unranked game of any variant on a random deal, as often as the
player likes within a per-hour limit.

A free game is a game kind of its own (`server.redis.keys.FreeGameKeys`, record kind
``free``), played through the same `GameService` and engine path as a daily or race game:
every move validated by the engine and durable before its reply, undo and hints as in a
daily game. It is on no board, in no history, streak or rating, and never closed by the day.

Its seed comes from `secrets` in ``FREE_SEED_BASE..2**64-1``, a space of its own: daily
seeds (`server.games.daily.daily_seed`) and race seeds (`server.races.service`) are all
below 2**53, so no free deal is ever today's daily deal (nobody practises the daily on a
free game) nor a race's.
"""

from __future__ import annotations

import secrets
from typing import Final

from engine.deals import MAX_SEED
from server.games.deals import lasts_a_move
from server.games.service import GameService, LiveGame
from server.redis import keys
from server.redis.batch import Batcher
from server.redis.quota import HOUR_MS, take_hourly
from server.runtime.clock import Clock
from server.runtime.errors import LimitReached

__all__ = ["FREE_SEED_BASE", "FreeGames", "free_seed"]

#: The least free seed: every daily and race seed is below it (53 bits).
FREE_SEED_BASE: Final = 1 << 53


def free_seed(variant: str) -> int:
    """A random seed of the free space whose deal `lasts_a_move`, as a race's: a deal that
    every first move ends (one Fourteen Out deal in ~240 of those offering a move) is no game
    to play for fun either."""
    while True:
        seed = FREE_SEED_BASE + secrets.randbelow(MAX_SEED + 1 - FREE_SEED_BASE)
        if lasts_a_move(variant, seed):
            return seed


class FreeGames:
    """Deals free games; ``per_hour`` bounds how many one player starts an hour (0: any)."""

    def __init__(self, games: GameService, clock: Clock, commit: Batcher, per_hour: int) -> None:
        self._games = games
        self._clock = clock
        self._commit = commit
        self.per_hour = per_hour

    async def start(self, variant: str, player_id: str) -> LiveGame:
        """A new free game of ``variant`` for the player. Raises ``LimitReached`` past
        `per_hour` games this hour."""
        now = self._clock.now_ms()
        key = keys.free_started(player_id, now // HOUR_MS)
        if not await take_hourly(self._commit, key, self.per_hour):
            raise LimitReached(
                f"{self.per_hour} free games an hour at most; finish one of yours "
                "(game.get resumes it) or try again later"
            )
        game_id = keys.free_game_id(now, player_id)
        return await self._games.start_game(game_id, "free", variant, free_seed(variant))
