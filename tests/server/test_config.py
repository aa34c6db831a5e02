"""Settings from flags and environment, and the persisted daily secret (`server.config`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from server.config import Config
from server.games.daily import daily_seed

D = dt.date(2030, 6, 15)


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


def test_fair_play_limits_from_flags_and_env(tmp_path: Path) -> None:
    base = {"SOLITAIRE_DATA_DIR": str(tmp_path), "SOLITAIRE_DAILY_SECRET": "s"}
    cfg = Config.from_args([], env=base)
    assert (cfg.accounts_per_address_hour, cfg.connections_per_address) == (20, 64)
    assert (cfg.hello_timeout, cfg.hint_queue_max) == (10.0, 8)
    assert cfg.trusted_proxies == () and cfg.allowed_origins == ()
    env = {
        **base,
        "SOLITAIRE_TRUSTED_PROXIES": "10.0.0.0/8, ::1/128",
        "SOLITAIRE_ACCOUNTS_PER_ADDRESS_HOUR": "0",
        "SOLITAIRE_CONNECTIONS_PER_ADDRESS": "5",
        "SOLITAIRE_HELLO_TIMEOUT": "2.5",
        "SOLITAIRE_HINT_QUEUE_MAX": "3",
        "SOLITAIRE_ALLOWED_ORIGINS": "https://Play.Example/,https://b.example",
    }
    cfg = Config.from_args([], env=env)
    assert cfg.trusted_proxies == ("10.0.0.0/8", "::1/128")
    assert (cfg.accounts_per_address_hour, cfg.connections_per_address) == (0, 5)
    assert (cfg.hello_timeout, cfg.hint_queue_max) == (2.5, 3)
    assert cfg.allowed_origins == ("https://play.example", "https://b.example")
    flags = ["--accounts-per-address-hour", "7", "--trusted-proxies", "192.0.2.1"]
    cfg = Config.from_args(flags, env=env)
    assert (cfg.accounts_per_address_hour, cfg.trusted_proxies) == (7, ("192.0.2.1",))
    for bad in (
        ["--trusted-proxies", "not-a-network"],
        ["--accounts-per-address-hour", "-1"],
        ["--hello-timeout", "0"],
        ["--hint-queue-max", "0"],
    ):
        with pytest.raises(SystemExit):
            Config.from_args(bad, env=base)
