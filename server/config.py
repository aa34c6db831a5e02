"""Server configuration: command-line flags with environment-variable fallbacks."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import secrets
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "APPENDFSYNC_CHOICES",
    "CLUSTER_SCHEME",
    "ClusterUrl",
    "Config",
    "load_or_create_secret",
    "parse_cluster_url",
]

APPENDFSYNC_CHOICES = ("always", "everysec", "no")
SECRET_FILE = "daily_secret"
#: URL scheme of a Redis Cluster (``rediss+cluster`` with TLS): every store runs on the cluster.
CLUSTER_SCHEME = "redis+cluster"
_TLS_CLUSTER_SCHEME = "rediss+cluster"
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


@dataclass(frozen=True)
class Config:
    """Immutable server settings; build with :meth:`from_args`."""

    host: str = "127.0.0.1"
    port: int = 8765
    redis_url: str | None = None  # None: start an embedded redis-server in data_dir
    data_dir: Path = Path("./data")
    daily_secret: bytes = field(default=b"", repr=False)  # keep out of logs
    # Password of an external Redis, read from a file (--redis-password-file): a secret kept
    # out of the environment and the command line, which other processes can read.
    redis_password: str | None = field(default=None, repr=False)
    log_level: str = "INFO"
    max_msg_size: int = 64 * 1024
    heartbeat: float = 20.0  # seconds between websocket pings
    idle_timeout: float = 300.0  # seconds without client messages before disconnect
    rate_limit: float = 20.0  # sustained client messages per second (token bucket rate)
    rate_burst: int = 40  # token bucket capacity
    # Costly requests (`server.transport.ratelimit.REQUEST_COSTS`: calendar.get costs 10) take
    # their tokens from a budget per address group too, across its connections: this many a
    # second, bursts up to `expensive_burst` (0: no budget per address; docs/fairplay.md).
    expensive_rate: float = 20.0
    expensive_burst: int = 60
    # Bytes of frames per address group a second, across its connections, bursts up to
    # `address_bytes_burst` (0: no such budget): what a frame costs to parse grows with its
    # size, up to ~300x a ping's for 64 KiB built to be slow (docs/fairplay.md, "Limits").
    address_bytes_rate: float = 128 * 1024
    address_bytes_burst: int = 512 * 1024
    send_queue_max: int = 64  # outbound messages queued per connection before dropping it
    leaderboard_retention_days: int = 90
    redis_appendfsync: str = "everysec"
    race_countdown_ms: int = 3_000  # between a race being dealt and its start
    race_time_limit_ms: int = 600_000
    race_grace_ms: int = 30_000  # a disconnected racer may come back within this
    race_fill_wait_ms: int = 15_000  # a group race starts with >= 2 racers after this wait
    # Private rooms one account may create per hour (docs/fairplay.md); `limit_reached` after.
    race_rooms_per_hour: int = 20
    # Accounts of one client address are paired by the queue with each other only when nobody
    # else came for this long. 0 in a bare Config() (tests: every socket comes from
    # 127.0.0.1); the command line's default is 15 s (`--race-same-address-wait-ms`).
    race_same_address_wait_ms: int = 0
    # Racers of one network (the /24 of IPv4, the /64 of IPv6) are never rated against each
    # other (docs/fairplay.md, "One network, one rating"). Off in a bare Config() (tests:
    # every socket comes from 127.0.0.1); the command line turns it on unless
    # --race-rate-same-network is given (env SOLITAIRE_RACE_RATE_SAME_NETWORK=1).
    race_unrated_same_network: bool = False
    # A racer rated against fewer distinct rivals than this is provisional: rated, but moving
    # nobody else's rating and giving no race win (docs/fairplay.md). 0 in a bare Config();
    # the command line's default is 5 (`--race-provisional-rivals`), at most 50.
    race_provisional_rivals: int = 0
    # Daily deals proven winnable by the solver. Off in a bare Config() (tests); the command
    # line turns it on unless --no-certify is given.
    certify_deals: bool = False
    solver_budget_s: float = 10.0  # per candidate deal
    # Tiers per day (docs/deals.md): the difficulty model's search budget per candidate deal
    # (nodes) and how many candidates the day's tier certification may rate per variant.
    tier_nodes: int = 20_000
    tier_deals: int = 60
    hint_budget_s: float = 3.0
    hint_penalty_ms: int = 30_000
    # Run on uvloop (--uvloop). Off by default: it measured no faster for this server, whose
    # time is Python work per move, not socket handling (docs/performance.md).
    uvloop: bool = False
    # Validate every outgoing message against its schema (--validate-replies): on in a bare
    # Config() and in the tests, off in production, where replies are built from typed values.
    validate_replies: bool = True
    # Screen finished daily games for results no human could produce (docs/fairplay.md). Off
    # in a bare Config() (tests that play at machine speed on purpose); the command line turns
    # it on unless --no-fair-play-screen is given (or SOLITAIRE_FAIR_PLAY_SCREEN=0).
    fair_play_screen: bool = False
    # Shift of the wall clock (--clock-offset-ms): benchmarks pin the date of the daily deals.
    clock_offset_ms: int = 0
    # Period of the event-loop lag probe (server/runtime/looplag.py); 0 turns it off.
    loop_lag_interval_ms: float = 10.0
    # Fair-play limits (docs/fairplay.md, "Limits per address and per account"). The
    # per-address limits are off (0) in a bare Config(): every test socket comes from
    # 127.0.0.1; the command line's defaults are 20 accounts an hour and 64 connections.
    # Peers whose X-Forwarded-For is believed (CIDRs); none: the peer is the client.
    trusted_proxies: tuple[str, ...] = ()
    accounts_per_address_hour: int = 0  # new players per client address and hour; 0: no limit
    connections_per_address: int = 0  # open WebSockets per client address and process; 0: any
    # Sign-in codes tried (`signin.redeem`) per client address and hour; 0: no limit (a bare
    # Config()); the command line's default is 20.
    signin_attempts_per_address_hour: int = 0
    # Sign-in codes tried naming one account (`signin.redeem` with `name`) per hour; past
    # them the account's live code dies. 0: no limit (a bare Config()); the command line's
    # default is 5.
    signin_attempts_per_account_hour: int = 0
    # Days a device signed in by a code is on trial: it may not revoke older devices nor
    # every session (`server.players.devices`); 0: no trial.
    device_trust_days: int = 7
    # How long after a month's end its catch-up deals' seeds are published (ms): the most the
    # clocks of two server processes may differ. A catch-up game's writes stop at the month's
    # end by the writing process's clock, so a process whose clock lags by less than this can
    # no longer take a catch-up move once any process publishes (docs/fairplay.md).
    month_close_grace_ms: int = 300_000
    # Free games (`free.start`, unranked) one player may start per hour; 0: no limit (a bare
    # Config()); the command line's default is 60.
    free_games_per_hour: int = 0
    # Hints in free games one player may ask per hour (they also run only on the solver's
    # spare capacity); 0: no limit (a bare Config()); the command line's default is 30.
    free_hints_per_hour: int = 0
    # Solver time (ms) one player's hints may take per hour, in every game kind (a search that
    # finds no move costs as much as one that does); past it `limit_reached` until the next
    # hour. 0: no limit (a bare Config()); the command line's default is 60000 (60 s).
    hint_solver_ms_per_hour: int = 0
    hello_timeout: float = 10.0  # seconds a new connection has to say `hello`
    # The HTTP API (/api/v1, docs/api.md): requests per second per client address group and
    # its burst (0: no limit, a bare Config(); the command line's default is 5/s, bursts of
    # 60), and open streams per address group and process (0: any; default 16).
    api_rate: float = 0.0
    api_burst: int = 60
    api_streams_per_address: int = 0
    # /metrics (docs/reliability.md): scraped from the same host (a loopback peer sending no
    # X-Forwarded-For) or with ``Authorization: Bearer <metrics_token>``; anyone else: 403.
    metrics_token: str = field(default="", repr=False)  # keep out of logs
    hint_queue_max: int = 8  # hints waiting for or in the solver per process (`unavailable` past)
    # Origins allowed to open /ws besides the server's own; "*" allows any. A request without
    # an Origin header (the CLI, other non-browser clients) is always allowed.
    allowed_origins: tuple[str, ...] = ()

    @classmethod
    def from_args(
        cls, argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None
    ) -> Config:
        """Parse ``argv`` (flags win over ``env``, which defaults to ``os.environ``).

        Without a configured daily secret one is generated once and persisted in
        ``data_dir/daily_secret``, so daily deals survive restarts.
        """
        env = os.environ if env is None else env
        d = cls()
        p = argparse.ArgumentParser(prog="solitaire-server", description=__doc__)
        _where_flags(p, d, env)
        _play_flags(p, d, env)
        _operation_flags(p, d, env)
        a = p.parse_args(argv)
        _check(p, a)
        data_dir: Path = a.data_dir
        redis_password = _secrets(p, a)
        secret = a.daily_secret.encode() if a.daily_secret else load_or_create_secret(data_dir)
        return cls(
            host=a.host,
            port=a.port,
            redis_url=a.redis_url,
            redis_password=redis_password,
            data_dir=data_dir,
            daily_secret=secret,
            log_level=a.log_level,
            max_msg_size=a.max_msg_size,
            heartbeat=a.heartbeat,
            idle_timeout=a.idle_timeout,
            rate_limit=a.rate_limit,
            rate_burst=a.rate_burst,
            expensive_rate=a.expensive_rate,
            expensive_burst=a.expensive_burst,
            address_bytes_rate=a.address_bytes_rate,
            address_bytes_burst=a.address_bytes_burst,
            send_queue_max=a.send_queue_max,
            leaderboard_retention_days=a.leaderboard_retention_days,
            redis_appendfsync=a.redis_appendfsync,
            race_countdown_ms=a.race_countdown_ms,
            race_time_limit_ms=a.race_time_limit_ms,
            race_grace_ms=a.race_grace_ms,
            race_fill_wait_ms=a.race_fill_wait_ms,
            race_rooms_per_hour=a.race_rooms_per_hour,
            race_same_address_wait_ms=a.race_same_address_wait_ms,
            race_unrated_same_network=not a.race_rate_same_network,
            race_provisional_rivals=a.race_provisional_rivals,
            certify_deals=not a.no_certify,
            fair_play_screen=not a.no_fair_play_screen,
            solver_budget_s=a.solver_budget,
            tier_nodes=a.tier_nodes,
            tier_deals=a.tier_deals,
            hint_budget_s=a.hint_budget,
            hint_penalty_ms=a.hint_penalty_ms,
            uvloop=a.uvloop,
            validate_replies=a.validate_replies,
            clock_offset_ms=a.clock_offset_ms,
            loop_lag_interval_ms=a.loop_lag_interval_ms,
            trusted_proxies=_split(a.trusted_proxies),
            accounts_per_address_hour=a.accounts_per_address_hour,
            connections_per_address=a.connections_per_address,
            signin_attempts_per_address_hour=a.signin_attempts_per_address_hour,
            signin_attempts_per_account_hour=a.signin_attempts_per_account_hour,
            free_hints_per_hour=a.free_hints_per_hour,
            hint_solver_ms_per_hour=a.hint_solver_ms_per_hour,
            device_trust_days=a.device_trust_days,
            month_close_grace_ms=a.month_close_grace_ms,
            free_games_per_hour=a.free_games_per_hour,
            hello_timeout=a.hello_timeout,
            api_rate=a.api_rate,
            api_burst=a.api_burst,
            api_streams_per_address=a.api_streams_per_address,
            metrics_token=a.metrics_token,
            hint_queue_max=a.hint_queue_max,
            allowed_origins=tuple(o.rstrip("/").lower() for o in _split(a.allowed_origins)),
        )

    @property
    def log_level_no(self) -> int:
        """``log_level`` as a :mod:`logging` level number."""
        return logging.getLevelNamesMapping()[self.log_level]


def _where_flags(p: argparse.ArgumentParser, d: Config, env: Mapping[str, str]) -> None:
    """Where the server listens and keeps its data; connections and their limits."""
    p.add_argument("--host", default=env.get("SOLITAIRE_HOST", d.host))
    p.add_argument("--port", type=int, default=int(env.get("SOLITAIRE_PORT", d.port)))
    p.add_argument(
        "--redis-url",
        default=env.get("REDIS_URL") or None,
        help="external Redis (redis://, rediss://, unix://) or a Redis Cluster "
        "(redis+cluster://host:port[,host:port...], rediss+cluster:// with TLS); "
        "default: embedded redis-server",
    )
    p.add_argument("--data-dir", type=Path, default=Path(env.get("SOLITAIRE_DATA_DIR", d.data_dir)))
    p.add_argument(
        "--daily-secret",
        default=env.get("SOLITAIRE_DAILY_SECRET") or None,
        help="secret for daily deal seeds (UTF-8 text); default: generated, kept in data dir",
    )
    p.add_argument(
        "--daily-secret-file",
        type=Path,
        default=env.get("SOLITAIRE_DAILY_SECRET_FILE") or None,
        help="read the daily secret from this file (a container secret) instead",
    )
    p.add_argument(
        "--redis-password-file",
        type=Path,
        default=env.get("REDIS_PASSWORD_FILE") or None,
        help="password of the external Redis, read from this file (the URL then has none)",
    )
    p.add_argument(
        "--log-level",
        type=str.upper,
        choices=_LOG_LEVELS,
        default=env.get("SOLITAIRE_LOG_LEVEL", d.log_level).upper(),
    )
    p.add_argument("--max-msg-size", type=int, default=d.max_msg_size)
    p.add_argument("--heartbeat", type=float, default=d.heartbeat)
    p.add_argument("--idle-timeout", type=float, default=d.idle_timeout)
    p.add_argument("--rate-limit", type=float, default=d.rate_limit)
    p.add_argument("--rate-burst", type=int, default=d.rate_burst)
    p.add_argument(
        "--expensive-rate",
        type=float,
        default=float(env.get("SOLITAIRE_EXPENSIVE_RATE") or d.expensive_rate),
        help="tokens a second of costly requests (calendar.get: 10) per client address, "
        "across its connections; 0: no such budget",
    )
    p.add_argument(
        "--expensive-burst",
        type=int,
        default=int(env.get("SOLITAIRE_EXPENSIVE_BURST") or d.expensive_burst),
        help="the most tokens of costly requests one client address may spend at once",
    )
    p.add_argument(
        "--address-bytes-rate",
        type=float,
        default=float(env.get("SOLITAIRE_ADDRESS_BYTES_RATE") or d.address_bytes_rate),
        help="bytes of frames a second per client address, across its connections; "
        "0: no such budget",
    )
    p.add_argument(
        "--address-bytes-burst",
        type=int,
        default=int(env.get("SOLITAIRE_ADDRESS_BYTES_BURST") or d.address_bytes_burst),
        help="the most bytes of frames one client address may send at once "
        "(at least --max-msg-size)",
    )
    p.add_argument("--send-queue-max", type=int, default=d.send_queue_max)
    p.add_argument("--leaderboard-retention-days", type=int, default=d.leaderboard_retention_days)
    p.add_argument("--redis-appendfsync", choices=APPENDFSYNC_CHOICES, default=d.redis_appendfsync)


def _play_flags(p: argparse.ArgumentParser, d: Config, env: Mapping[str, str]) -> None:
    """Races, deals, hints and the fair-play screen."""
    p.add_argument("--race-countdown-ms", type=int, default=d.race_countdown_ms)
    p.add_argument("--race-time-limit-ms", type=int, default=d.race_time_limit_ms)
    p.add_argument("--race-grace-ms", type=int, default=d.race_grace_ms)
    p.add_argument("--race-fill-wait-ms", type=int, default=d.race_fill_wait_ms)
    p.add_argument(
        "--race-rooms-per-hour",
        type=int,
        default=int(env.get("SOLITAIRE_RACE_ROOMS_PER_HOUR") or d.race_rooms_per_hour),
        help="private race rooms one account may create per hour (limit_reached after)",
    )
    p.add_argument(
        "--race-same-address-wait-ms",
        type=int,
        default=int(env.get("SOLITAIRE_RACE_SAME_ADDRESS_WAIT_MS") or 15_000),
        help="the race queue pairs accounts of one client address with each other only "
        "after waiting this long for someone else (default 15000)",
    )
    p.add_argument(
        "--race-rate-same-network",
        action="store_true",
        default=env.get("SOLITAIRE_RACE_RATE_SAME_NETWORK") == "1",
        help="rate racers of one network (IPv4 /24, IPv6 /64) against each other; by default "
        "they are not (docs/fairplay.md); env SOLITAIRE_RACE_RATE_SAME_NETWORK=1",
    )
    p.add_argument(
        "--race-provisional-rivals",
        type=int,
        default=int(env.get("SOLITAIRE_RACE_PROVISIONAL_RIVALS") or 5),
        help="a racer rated against fewer distinct rivals than this is provisional: moves "
        "nobody else's rating (0 none, at most 50; default 5); env "
        "SOLITAIRE_RACE_PROVISIONAL_RIVALS",
    )
    p.add_argument(
        "--uvloop",
        action="store_true",
        default=env.get("SOLITAIRE_UVLOOP") == "1",
        help="run on uvloop instead of asyncio's own event loop",
    )
    p.add_argument(
        "--no-certify",
        action="store_true",
        help="deal the plain daily seed instead of a solver-certified one",
    )
    p.add_argument(
        "--no-fair-play-screen",
        action="store_true",
        default=env.get("SOLITAIRE_FAIR_PLAY_SCREEN") == "0",
        help="rank every finished game without screening it for machine play "
        "(docs/fairplay.md); env SOLITAIRE_FAIR_PLAY_SCREEN=0",
    )
    p.add_argument(
        "--solver-budget",
        type=float,
        default=d.solver_budget_s,
        help="seconds of search per candidate daily deal",
    )
    p.add_argument(
        "--tier-nodes",
        type=int,
        default=int(env.get("SOLITAIRE_TIER_NODES") or d.tier_nodes),
        help="search nodes per candidate deal when certifying a day's tiers (docs/deals.md); "
        "env SOLITAIRE_TIER_NODES",
    )
    p.add_argument(
        "--tier-deals",
        type=int,
        default=int(env.get("SOLITAIRE_TIER_DEALS") or d.tier_deals),
        help="candidate deals rated per variant and day for its tiers; a tier with no deal "
        "among them is absent that day; env SOLITAIRE_TIER_DEALS",
    )
    p.add_argument("--hint-budget", type=float, default=d.hint_budget_s)
    p.add_argument("--hint-penalty-ms", type=int, default=d.hint_penalty_ms)


def _operation_flags(p: argparse.ArgumentParser, d: Config, env: Mapping[str, str]) -> None:
    """Clock, probes, proxies, per-address limits, the HTTP API and origins."""
    p.add_argument(
        "--clock-offset-ms",
        type=int,
        default=int(env.get("SOLITAIRE_CLOCK_OFFSET_MS") or d.clock_offset_ms),
        help="add this to the wall clock (benchmarks: a fixed date for the daily deals); default 0",
    )
    p.add_argument(
        "--loop-lag-interval-ms",
        type=float,
        default=d.loop_lag_interval_ms,
        help="period of the event-loop lag probe (/metrics solitaire_loop_lag_seconds); 0: off",
    )
    p.add_argument(
        "--validate-replies",
        action="store_true",
        default=env.get("SOLITAIRE_VALIDATE_REPLIES") == "1",
        help="check every outgoing message against the protocol schema "
        "(debugging; the tests run with it)",
    )
    p.add_argument(
        "--trusted-proxies",
        default=env.get("SOLITAIRE_TRUSTED_PROXIES", ""),
        help="comma-separated CIDRs of reverse proxies whose X-Forwarded-For names the "
        "client address (default: none, the peer address is the client's)",
    )
    p.add_argument(
        "--accounts-per-address-hour",
        type=int,
        default=int(env.get("SOLITAIRE_ACCOUNTS_PER_ADDRESS_HOUR") or 20),
        help="new players one client address may create per hour; 0: no limit (default 20)",
    )
    p.add_argument(
        "--signin-attempts-per-address-hour",
        type=int,
        default=int(env.get("SOLITAIRE_SIGNIN_ATTEMPTS_PER_ADDRESS_HOUR") or 20),
        help="sign-in codes one client address may try per hour, right or wrong (named "
        "and nameless tries each); 0: no limit (default 20)",
    )
    p.add_argument(
        "--signin-attempts-per-account-hour",
        type=int,
        default=int(env.get("SOLITAIRE_SIGNIN_ATTEMPTS_PER_ACCOUNT_HOUR") or 5),
        help="sign-in codes tried per hour naming one account (signin.redeem with name); "
        "past them named redemptions of it are refused for the hour and its live code "
        "dies once. 0: no limit (default 5)",
    )
    p.add_argument(
        "--free-hints-per-hour",
        type=int,
        default=int(env.get("SOLITAIRE_FREE_HINTS_PER_HOUR") or 30),
        help="hints one player may ask per hour in free (unranked) games; 0: no limit (default 30)",
    )
    p.add_argument(
        "--hint-solver-ms-per-hour",
        type=int,
        default=int(env.get("SOLITAIRE_HINT_SOLVER_MS_PER_HOUR") or 60_000),
        help="solver time (ms) one player's hints may take per hour, found move or not; "
        "past it hints answer limit_reached until the next hour. 0: no limit (default 60000)",
    )
    p.add_argument(
        "--month-close-grace-ms",
        type=int,
        default=int(env.get("SOLITAIRE_MONTH_CLOSE_GRACE_MS") or d.month_close_grace_ms),
        help="ms after a month's end before its catch-up seeds are published: the largest "
        "clock skew between server processes tolerated (default 300000)",
    )
    p.add_argument(
        "--device-trust-days",
        type=int,
        default=int(env.get("SOLITAIRE_DEVICE_TRUST_DAYS") or d.device_trust_days),
        help="days a device signed in by a code may not sign older devices out nor revoke "
        "every session; 0: no trial (default 7)",
    )
    p.add_argument(
        "--free-games-per-hour",
        type=int,
        default=int(env.get("SOLITAIRE_FREE_GAMES_PER_HOUR") or 60),
        help="free (unranked) games one player may start per hour; 0: no limit (default 60)",
    )
    p.add_argument(
        "--connections-per-address",
        type=int,
        default=int(env.get("SOLITAIRE_CONNECTIONS_PER_ADDRESS") or 64),
        help="open WebSockets per client address and process; 0: no limit (default 64)",
    )
    p.add_argument(
        "--api-rate",
        type=float,
        default=float(env.get("SOLITAIRE_API_RATE") or 5.0),
        help="HTTP API requests a second per client address; 0: no limit (default 5)",
    )
    p.add_argument(
        "--api-burst",
        type=int,
        default=int(env.get("SOLITAIRE_API_BURST") or d.api_burst),
        help=f"HTTP API requests one address may send at once (default {d.api_burst})",
    )
    p.add_argument(
        "--api-streams-per-address",
        type=int,
        default=int(env.get("SOLITAIRE_API_STREAMS_PER_ADDRESS") or 16),
        help="open HTTP API streams per client address and process; 0: any (default 16)",
    )
    p.add_argument(
        "--metrics-token",
        default=env.get("SOLITAIRE_METRICS_TOKEN", d.metrics_token),
        help="/metrics answers a scraper sending 'Authorization: Bearer TOKEN' from anywhere; "
        "without it only a scraper on this host (loopback, no X-Forwarded-For): default none",
    )
    p.add_argument(
        "--hello-timeout",
        type=float,
        default=float(env.get("SOLITAIRE_HELLO_TIMEOUT") or d.hello_timeout),
        help="seconds a new connection has to send hello before it is closed (1008)",
    )
    p.add_argument(
        "--hint-queue-max",
        type=int,
        default=int(env.get("SOLITAIRE_HINT_QUEUE_MAX") or d.hint_queue_max),
        help="hints waiting for or in the solver per process; more are refused (unavailable)",
    )
    p.add_argument(
        "--allowed-origins",
        default=env.get("SOLITAIRE_ALLOWED_ORIGINS", ""),
        help="comma-separated origins (scheme://host[:port]) allowed to open /ws besides "
        "the server's own; '*': any. Clients sending no Origin are always allowed",
    )


#: (flags, least value, whether that value itself is allowed), checked by `_check`
_BOUNDS: tuple[tuple[tuple[str, ...], float, bool], ...] = (
    (
        (
            "max_msg_size",
            "rate_burst",
            "expensive_burst",
            "address_bytes_burst",
            "send_queue_max",
            "leaderboard_retention_days",
            "race_rooms_per_hour",
            "api_burst",
            "hint_queue_max",
            "tier_nodes",
            "tier_deals",
        ),
        1,
        True,
    ),
    (("heartbeat", "idle_timeout", "rate_limit", "hello_timeout"), 0, False),
    (
        (
            "race_same_address_wait_ms",
            "race_provisional_rivals",
            "loop_lag_interval_ms",
            "accounts_per_address_hour",
            "signin_attempts_per_address_hour",
            "signin_attempts_per_account_hour",
            "device_trust_days",
            "month_close_grace_ms",
            "free_hints_per_hour",
            "hint_solver_ms_per_hour",
            "free_games_per_hour",
            "connections_per_address",
            "api_rate",
            "expensive_rate",
            "address_bytes_rate",
            "api_streams_per_address",
        ),
        0,
        True,
    ),
)


def _check(p: argparse.ArgumentParser, a: argparse.Namespace) -> None:
    """Refuse values out of range (exits with the usage and the reason)."""
    if not 0 <= a.port <= 65535:
        p.error(f"--port out of range: {a.port}")
    for names, least, allowed in _BOUNDS:
        for name in names:
            value = getattr(a, name)
            if value < least or (value == least and not allowed):
                flag = "--" + name.replace("_", "-")
                p.error(f"{flag} must be {'>=' if allowed else '>'} {least}")
    if a.address_bytes_rate > 0 and a.address_bytes_burst < a.max_msg_size:
        p.error(
            "--address-bytes-burst must be >= --max-msg-size (else a frame of the largest "
            "size could never pass)"
        )
    if a.race_provisional_rivals > 50:  # ratings keep the newest 50 rivals (RIVALS_MAX)
        p.error("--race-provisional-rivals must be <= 50")
    for cidr in _split(a.trusted_proxies):
        try:
            ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            p.error(f"--trusted-proxies: not a CIDR: {cidr!r}")
    if a.redis_url:
        try:
            parse_cluster_url(a.redis_url)
        except ValueError as exc:
            p.error(f"--redis-url: {exc}")


def _secrets(p: argparse.ArgumentParser, a: argparse.Namespace) -> str | None:
    """Read the secret files: the daily secret into ``a``; the Redis password returned."""
    if a.daily_secret and a.daily_secret_file:
        p.error("give --daily-secret or --daily-secret-file, not both")
    if a.daily_secret_file:
        a.daily_secret = _read_secret(p, a.daily_secret_file, "--daily-secret-file")
    redis_password = None
    if a.redis_password_file:
        if not a.redis_url:
            p.error("--redis-password-file needs --redis-url (the embedded Redis has none)")
        if urllib.parse.urlsplit(a.redis_url).password:
            p.error("--redis-password-file: the --redis-url already has a password")
        redis_password = _read_secret(p, a.redis_password_file, "--redis-password-file")
    return redis_password


def _split(text: str) -> tuple[str, ...]:
    """The non-empty items of a comma-separated flag."""
    return tuple(item.strip() for item in text.split(",") if item.strip())


@dataclass(frozen=True, slots=True)
class ClusterUrl:
    """A parsed ``redis+cluster://`` URL: the startup nodes and their credentials."""

    nodes: tuple[tuple[str, int], ...]
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    tls: bool = False


def _read_secret(parser: argparse.ArgumentParser, path: Path, flag: str) -> str:
    """A secret file's text without its trailing newline; a clear error when unusable."""
    try:
        text = path.read_text(encoding="utf-8").rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        parser.error(f"{flag}: cannot read {path}: {exc}")
    if not text:
        parser.error(f"{flag}: {path} is empty")
    return text


def parse_cluster_url(url: str) -> ClusterUrl | None:
    """The cluster a ``redis+cluster://[user:password@]host:port[,host:port...]`` URL names;
    None for any other scheme (a single Redis). Raises ValueError for a malformed one."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in (CLUSTER_SCHEME, _TLS_CLUSTER_SCHEME):
        return None
    rest, _, query = rest.partition("?")
    if query:
        raise ValueError("a cluster URL takes no query options")
    userinfo, at, hosts = rest.rpartition("@")
    if not at:
        hosts, userinfo = rest, ""
    hosts, _, db = hosts.partition("/")
    if db not in ("", "0"):
        raise ValueError("a Redis Cluster has only database 0")
    username = password = None
    if userinfo:
        user, colon, pw = userinfo.partition(":")
        username = urllib.parse.unquote(user) or None
        password = urllib.parse.unquote(pw) if colon else None
    nodes = tuple(_host_port(part) for part in hosts.split(","))
    return ClusterUrl(nodes, username, password, scheme.lower() == _TLS_CLUSTER_SCHEME)


def _host_port(text: str) -> tuple[str, int]:
    if text.startswith("["):  # [IPv6]:port
        host, close, port = text[1:].partition("]")
        if not close or not port.startswith(":"):
            raise ValueError(f"bad cluster node {text!r}: expected [address]:port")
        port = port[1:]
    else:
        host, colon, port = text.rpartition(":")
        if not colon:
            raise ValueError(f"bad cluster node {text!r}: expected host:port")
    if not host or not port.isdigit() or not 0 < int(port) <= 65535:
        raise ValueError(f"bad cluster node {text!r}: expected host:port")
    return host, int(port)


def load_or_create_secret(data_dir: Path) -> bytes:
    """Read ``data_dir/daily_secret`` (hex), creating it with 32 random bytes if missing.

    Creation is race-free (O_EXCL): two servers starting at once agree on one secret.
    """
    path = data_dir / SECRET_FILE
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        # A concurrent creator may not have written it yet: give it a moment.
        for _ in range(50):
            text = path.read_text().strip()
            if text:
                return bytes.fromhex(text)
            time.sleep(0.01)
        raise ValueError(f"{path} is empty; delete it to generate a new secret") from None
    secret = secrets.token_bytes(32)
    with os.fdopen(fd, "w") as f:
        f.write(secret.hex() + "\n")
        f.flush()
        os.fsync(f.fileno())
    return secret
