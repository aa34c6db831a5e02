"""Everything a request handler may use, built once per app."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import redis.asyncio

from .clock import Clock
from .config import Config
from .deals import DailyDeals, SolverPool
from .games import GameService
from .gamestore import GameStore
from .leaderboard import Leaderboard
from .metrics import Metrics
from .players import PlayerRegistry
from .races import RaceService, RaceSettings
from .racestore import RaceStore
from .ratings import RaceBoards

if TYPE_CHECKING:
    from .racehub import RaceHub

#: Races are kept this long in Redis after they are created.
RACE_TTL_MS = 7 * 86_400_000


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
    races: RaceService
    deals: DailyDeals
    hub: RaceHub | None = None  # set when the app starts its background tasks

    @classmethod
    def build(cls, config: Config, clock: Clock, client: redis.asyncio.Redis,
              metrics: Metrics) -> Services:
        store = GameStore(client, retention_days=config.leaderboard_retention_days)
        games = GameService(store, clock, hint_penalty_ms=config.hint_penalty_ms)
        players = PlayerRegistry(client, clock)
        leaderboard = Leaderboard(client)
        settings = RaceSettings(countdown_ms=config.race_countdown_ms,
                                time_limit_ms=config.race_time_limit_ms,
                                grace_ms=config.race_grace_ms,
                                fill_wait_ms=config.race_fill_wait_ms)
        races = RaceService(RaceStore(client, RACE_TTL_MS), games,
                            RaceBoards(client, config.leaderboard_retention_days), leaderboard,
                            players, clock, settings)
        deals = DailyDeals(client, clock, config.daily_secret, SolverPool(),
                           certify=config.certify_deals, budget_s=config.solver_budget_s,
                           retention_days=config.leaderboard_retention_days)
        return cls(config=config, clock=clock, redis=client, players=players, store=store,
                   games=games, leaderboard=leaderboard, metrics=metrics, races=races,
                   deals=deals)
