"""`Services.build`: one game service, one fan-out, the config's settings, the app's metrics."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

import redis.asyncio

from server.config import Config
from server.redis import keys
from server.runtime.clock import ManualClock
from server.runtime.metrics import Metrics
from server.services import RACE_TTL_MS, Services

DAY = dt.date(2030, 6, 15)


def config(tmp_path: Path) -> Config:
    return replace(
        Config(),
        data_dir=tmp_path,
        daily_secret=b"svc",
        hint_penalty_ms=12_345,
        race_countdown_ms=1_111,
        race_time_limit_ms=22_222,
        race_grace_ms=3_333,
        race_fill_wait_ms=4_444,
        leaderboard_retention_days=7,
    )


def test_one_game_service_and_one_fanout_are_shared(
    redis_client: redis.asyncio.Redis, clock: ManualClock, tmp_path: Path
) -> None:
    s = Services.build(config(tmp_path), clock, redis_client, Metrics())
    assert s.races.games is s.games and s.race_referee.games is s.games
    assert s.games.store is s.store
    assert s.race_referee.store is s.races.store, "one race store for lobby and referee"
    assert s.race_referee.boards is s.races.boards
    assert s.race_clock.fanout is s.race_fanout and s.matchmaking.fanout is s.race_fanout
    assert s.race_clock.races is s.races and s.matchmaking.races is s.races
    assert s.race_clock.referee is s.race_referee
    assert s.players is s.races.players
    for part in (s.games, s.races, s.race_referee, s.deals, s.race_clock):
        assert part.clock is clock


def test_settings_come_from_the_config(
    redis_client: redis.asyncio.Redis, clock: ManualClock, tmp_path: Path
) -> None:
    cfg = config(tmp_path)
    s = Services.build(cfg, clock, redis_client, Metrics())
    assert s.config is cfg and s.redis is redis_client
    assert s.games.hint_penalty_ms == 12_345
    st = s.races.settings
    assert (st.countdown_ms, st.time_limit_ms, st.grace_ms, st.fill_wait_ms) == (
        1_111,
        22_222,
        3_333,
        4_444,
    )
    assert s.race_referee.grace_ms == 3_333
    assert s.store.retention_days == 7
    assert s.deals.certify is False and s.deals.secret == b"svc"


async def test_engine_time_is_counted_on_the_apps_metrics(
    redis_client: redis.asyncio.Redis, clock: ManualClock, tmp_path: Path
) -> None:
    metrics = Metrics()
    s = Services.build(config(tmp_path), clock, redis_client, metrics)
    pid, _ = await s.players.create("counted")
    live = await s.games.start_daily("fourteen-out", DAY, pid, 7)
    move = next(iter(live.game.legal_moves()))
    await s.games.play(live.record.game_id, pid, "counted", str(move), None)
    text = metrics.render().decode()
    line = next(
        x
        for x in text.splitlines()
        if x.startswith('solitaire_engine_cpu_seconds_total{variant="fourteen-out"}')
    )
    assert float(line.split()[-1]) > 0, "the game service times the engine on these metrics"
    assert "fourteen-out" not in Metrics().render().decode(), "and on no other registry"


async def test_races_are_kept_for_the_race_ttl(
    redis_client: redis.asyncio.Redis, clock: ManualClock, tmp_path: Path
) -> None:
    s = Services.build(config(tmp_path), clock, redis_client, Metrics())
    pid, _ = await s.players.create("roomy")
    race_id = await s.races.create_room(pid, "roomy", "fourteen-out", 2)
    ttl = await redis_client.pttl(keys.race(race_id))
    assert RACE_TTL_MS - 60_000 < ttl <= RACE_TTL_MS
    room = await s.races.load(race_id)
    assert room.creator == pid and room.code is not None
