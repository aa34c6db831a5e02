"""Everything a request handler may use, built once per app."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from redis.asyncio import Redis

from server.boards.leaderboard import Leaderboard
from server.config import Config
from server.games.deals import DailyDeals, HintGate, SolverPool
from server.games.free import FreeGames
from server.games.rollover import DayCloser
from server.games.service import GameService
from server.games.store import GameStore
from server.players.devices import Devices
from server.players.profiles import Profiles
from server.players.registry import PlayerRegistry
from server.players.signin import SigninCodes
from server.races.clock import RaceClock
from server.races.fanout import RaceFanout
from server.races.matchmaking import Matchmaking
from server.races.ratings import RaceBoards
from server.races.referee import RaceReferee
from server.races.rematch import Rematches
from server.races.service import RaceService, RaceSettings
from server.races.spectate import Spectators
from server.races.store import RaceStore
from server.redis import keys
from server.runtime.clock import Clock
from server.runtime.metrics import Metrics
from server.transport.ratelimit import AddressBudget

#: Races are kept this long in Redis after they are created.
RACE_TTL_MS = 7 * 86_400_000


@dataclass
class Services:
    config: Config
    clock: Clock
    redis: Redis
    players: PlayerRegistry
    store: GameStore
    games: GameService
    leaderboard: Leaderboard
    metrics: Metrics
    races: RaceService
    deals: DailyDeals
    race_referee: RaceReferee
    race_fanout: RaceFanout  # its reader runs in the app's cleanup_ctx
    race_clock: RaceClock  # runs in the app's cleanup_ctx
    matchmaking: Matchmaking  # its sweep runs in the app's cleanup_ctx
    spectators: Spectators  # this process's spectators (registered with race_fanout)
    day_closer: DayCloser  # closes the days that are over; runs in the app's cleanup_ctx
    hints: HintGate
    profiles: Profiles  # profiles and history pages (`profile.get`, `history.get`)
    signin: SigninCodes  # one-time sign-in codes (`signin.code`, `signin.redeem`)
    devices: Devices  # the player's devices (`devices`, `device.revoke`), trust periods
    free: FreeGames  # free (unranked) games: `free.start`
    rematches: Rematches  # `race.rematch`, `race.decline`; swept by the race clock
    expensive: AddressBudget  # costly requests' tokens per address (`server.transport.ratelimit`)
    frame_bytes: AddressBudget  # bytes of frames per address (`server.transport.ratelimit`)
    #: Set when a session of this process revoked its player's other sessions: the app's
    #: session sweep runs at once instead of at its next period.
    sessions_revoked: asyncio.Event = field(default_factory=asyncio.Event)

    @classmethod
    def build(cls, config: Config, clock: Clock, client: Redis, metrics: Metrics) -> Services:
        # The store's group commit (`Batcher`) is the app's one: every store and every script
        # below runs through it (the spectators and the day closer reach it by the store).
        store = GameStore(client, retention_days=config.leaderboard_retention_days)
        # Long game-over searches get a worker of their own: behind a deal certification
        # (up to a minute per candidate) or a hint they would hold a dead game open.
        games = GameService(
            store,
            clock,
            hint_penalty_ms=config.hint_penalty_ms,
            metrics=metrics,
            solvers=SolverPool(workers=1),
            race_time_limit_ms=config.race_time_limit_ms,
        )
        players = PlayerRegistry(
            client,
            clock,
            commit=store.batch,
            accounts_per_hour=config.accounts_per_address_hour,
        )
        leaderboard = Leaderboard(client, store.entries, store.batch)
        settings = RaceSettings(
            countdown_ms=config.race_countdown_ms,
            time_limit_ms=config.race_time_limit_ms,
            grace_ms=config.race_grace_ms,
            fill_wait_ms=config.race_fill_wait_ms,
            rooms_per_hour=config.race_rooms_per_hour,
            same_address_wait_ms=config.race_same_address_wait_ms,
            unrated_same_network=config.race_unrated_same_network,
        )
        race_store = RaceStore(client, RACE_TTL_MS, store.batch)  # one group commit
        boards = RaceBoards(
            client,
            config.leaderboard_retention_days,
            store.batch,
            provisional_rivals=config.race_provisional_rivals,
        )
        races = RaceService(race_store, boards, games, players, clock, settings)
        referee = RaceReferee(
            race_store,
            games,
            leaderboard,
            boards,
            clock,
            settings.grace_ms,
            countdown_ms=settings.countdown_ms,
            time_limit_ms=settings.time_limit_ms,
        )
        # A racer's move carries its progress in the append's batch (one round trip); the
        # rest of the race's reaction to a write is the app's `on_played` listener.
        games.on_append.append(referee.ride)
        fanout = RaceFanout(client, races, clock)
        races.on_moved_on.append(fanout.moved_on)
        deals = DailyDeals(
            client,
            clock,
            config.daily_secret,
            SolverPool(),
            certify=config.certify_deals,
            budget_s=config.solver_budget_s,
            retention_days=config.leaderboard_retention_days,
            batch=store.batch,
            tier_nodes=config.tier_nodes,
            tier_deals=config.tier_deals,
        )
        store.par_of = _par_of(deals)
        store.screen_results = config.fair_play_screen
        day_closer = DayCloser(
            client, store, games, players, clock, month_grace_ms=config.month_close_grace_ms
        )
        profiles = Profiles(
            store, leaderboard, boards, players, clock, day_closed=day_closer.closed
        )
        rematches = Rematches(races, client, clock)
        return cls(
            config=config,
            clock=clock,
            redis=client,
            players=players,
            store=store,
            games=games,
            leaderboard=leaderboard,
            metrics=metrics,
            races=races,
            deals=deals,
            race_referee=referee,
            race_fanout=fanout,
            race_clock=RaceClock(fanout, races, referee, clock, rematches),
            matchmaking=Matchmaking(races, fanout),
            spectators=Spectators(client, fanout, races, store, clock),
            day_closer=day_closer,
            hints=HintGate(client, config.hint_queue_max, config.hint_budget_s),
            profiles=profiles,
            signin=SigninCodes(
                client,
                players,
                clock,
                store.batch,
                attempts_per_hour=config.signin_attempts_per_address_hour,
                attempts_per_account_hour=config.signin_attempts_per_account_hour,
            ),
            devices=Devices(client, clock, store.batch, config.device_trust_days * 86_400_000),
            free=FreeGames(games, clock, store.batch, config.free_games_per_hour),
            rematches=rematches,
            expensive=AddressBudget(config.expensive_rate, config.expensive_burst, clock.monotonic),
            frame_bytes=AddressBudget(
                config.address_bytes_rate, config.address_bytes_burst, clock.monotonic
            ),
        )


def _par_of(deals: DailyDeals) -> Callable[[str, dt.date, str, bool], Awaitable[int | None]]:
    """The par of a day's tier (``catchup``: of its catch-up deal) for the fair-play screen
    (`GameStore.par_of`): the certified deals' winning line length, None when the deal was
    not certified (or has no par)."""

    async def par(variant: str, date: dt.date, tier: str, catchup: bool) -> int | None:
        if catchup:
            found = await deals.peek_tiers(variant, date, catchup=True)
            own = found.deals.get(tier) if found is not None else None
            return own.par if own is not None and own.certified else None
        if tier == keys.DAILY_TIER:
            deal = await deals.peek(variant, date)
            return deal.par if deal is not None and deal.certified else None
        found = await deals.peek_tiers(variant, date)
        tier_deal = found.deals.get(tier) if found is not None else None
        return tier_deal.par if tier_deal is not None and tier_deal.certified else None

    return par
