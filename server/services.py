"""Everything a request handler may use, built once per app."""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio

from .clock import Clock
from .config import Config
from .games import GameService
from .gamestore import GameStore
from .leaderboard import Leaderboard
from .metrics import Metrics
from .players import PlayerRegistry


@dataclass
class Services:
    config: Config
    clock: Clock
    redis: redis.asyncio.Redis
    players: PlayerRegistry
    store: GameStore
    games: GameService
    leaderboard: Leaderboard
    metrics: Metrics

    @classmethod
    def build(cls, config: Config, clock: Clock, client: redis.asyncio.Redis,
              metrics: Metrics) -> Services:
        store = GameStore(client, retention_days=config.leaderboard_retention_days)
        return cls(config=config, clock=clock, redis=client, players=PlayerRegistry(client, clock),
                   store=store, games=GameService(store, clock), leaderboard=Leaderboard(client),
                   metrics=metrics)
