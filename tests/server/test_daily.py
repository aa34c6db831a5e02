"""Daily seeds, UTC day arithmetic, the manual clock and the persisted daily secret."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.clock import Clock, ManualClock, SystemClock
from server.config import Config
from server.daily import DAY_MS, daily_seed, day_start_ms, ms_until_rollover, utc_date

D = dt.date(2030, 6, 15)


def test_daily_seed_deterministic_and_distinct() -> None:
    s = b"secret"
    assert daily_seed(s, "klondike", D) == daily_seed(s, "klondike", D)
    seeds = {
        daily_seed(s, v, D + dt.timedelta(days=i))
        for v in ("klondike", "spider", "freecell", "pyramid", "golf")
        for i in range(30)
    }
    assert len(seeds) == 150
    assert daily_seed(b"other", "klondike", D) != daily_seed(s, "klondike", D)
    assert all(0 <= x < 2**53 for x in seeds)


def test_daily_seed_known_value() -> None:
    # Pinned so an accidental change of the derivation (which would change every deal) fails.
    import hashlib
    import hmac

    digest = hmac.new(b"k", b"daily:klondike:2030-06-15", hashlib.sha256).digest()
    assert daily_seed(b"k", "klondike", D) == int.from_bytes(digest[:8], "big") & (2**53 - 1)


@given(st.integers(min_value=0, max_value=2**45))
def test_utc_date_and_rollover(now_ms: int) -> None:
    d = utc_date(now_ms)
    assert day_start_ms(d) <= now_ms < day_start_ms(d) + DAY_MS
    left = ms_until_rollover(now_ms)
    assert 0 < left <= DAY_MS
    assert utc_date(now_ms + left) == d + dt.timedelta(days=1)
    assert utc_date(now_ms + left - 1) == d


def test_utc_date_matches_datetime() -> None:
    ms = 1_907_755_200_000
    assert utc_date(ms) == dt.datetime.fromtimestamp(ms / 1000, dt.UTC).date() == D


def test_manual_clock_day_rollover() -> None:
    clock = ManualClock(day_start_ms(D) + DAY_MS - 1000)
    assert isinstance(clock, Clock)
    assert utc_date(clock.now_ms()) == D
    mono = clock.monotonic()
    clock.advance(ms_until_rollover(clock.now_ms()))
    assert utc_date(clock.now_ms()) == D + dt.timedelta(days=1)
    assert clock.monotonic() == pytest.approx(mono + 1.0)
    clock.set(day_start_ms(D))  # wall clock jumps back; monotonic does not
    assert utc_date(clock.now_ms()) == D and clock.monotonic() == pytest.approx(mono + 1.0)
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_system_clock() -> None:
    c = SystemClock()
    assert isinstance(c, Clock)
    assert abs(c.now_ms() - dt.datetime.now(dt.UTC).timestamp() * 1000) < 5000
    assert c.monotonic() <= c.monotonic()


def test_config_defaults_and_env(tmp_path: Path) -> None:
    cfg = Config.from_args([], env={"SOLITAIRE_DATA_DIR": str(tmp_path), "SOLITAIRE_PORT": "9000"})
    assert cfg.port == 9000 and cfg.data_dir == tmp_path and cfg.redis_url is None
    assert cfg.max_msg_size == 64 * 1024 and cfg.redis_appendfsync == "everysec"
    assert len(cfg.daily_secret) == 32
    assert "daily_secret" not in repr(cfg)
    # Flags win over env; an explicit secret is used verbatim.
    cfg2 = Config.from_args(
        ["--port", "9001", "--daily-secret", "s3cr3t", "--log-level", "debug"],
        env={"SOLITAIRE_PORT": "9000", "REDIS_URL": "redis://localhost:6379/0"},
    )
    assert (cfg2.port, cfg2.daily_secret, cfg2.log_level) == (9001, b"s3cr3t", "DEBUG")
    assert cfg2.redis_url == "redis://localhost:6379/0"


def test_generated_secret_survives_restart(tmp_path: Path) -> None:
    env = {"SOLITAIRE_DATA_DIR": str(tmp_path / "data")}
    first = Config.from_args([], env=env).daily_secret
    assert Config.from_args([], env=env).daily_secret == first
    assert (tmp_path / "data" / "daily_secret").stat().st_mode & 0o077 == 0
    assert daily_seed(first, "klondike", D) == daily_seed(
        Config.from_args([], env=env).daily_secret, "klondike", D
    )


def test_config_rejects_bad_values(tmp_path: Path) -> None:
    for argv in (["--port", "70000"], ["--redis-appendfsync", "sometimes"], ["--heartbeat", "0"]):
        with pytest.raises(SystemExit):
            Config.from_args([*argv, "--daily-secret", "x"], env={})


def test_event_loop_choice() -> None:
    import asyncio
    from dataclasses import replace as _replace

    from server.__main__ import new_event_loop

    plain = new_event_loop(Config())
    assert type(plain).__module__.startswith("asyncio")
    plain.close()
    uv = new_event_loop(_replace(Config(), uvloop=True))
    assert type(uv).__module__.startswith("uvloop")  # uvloop is a dependency on CPython/Linux
    assert isinstance(uv, asyncio.AbstractEventLoop)
    uv.close()
    assert Config.from_args(["--uvloop", "--daily-secret", "x"]).uvloop
