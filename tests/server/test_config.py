"""Settings from flags and environment, and the persisted daily secret (`server.config`)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import socket
import subprocess
from pathlib import Path

import pytest
import redis.exceptions

from server.config import Config
from server.games.daily import daily_seed
from server.redis.connect import connected
from server.redis.embedded import find_redis_server
from tests.support.procs import free_port

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


def test_every_bounded_flag_is_checked_at_its_edge(tmp_path: Path) -> None:
    """A value at a flag's least allowed edge passes, one step past it stops the server."""
    base = {"SOLITAIRE_DATA_DIR": str(tmp_path), "SOLITAIRE_DAILY_SECRET": "s"}
    for good, bad in (
        (["--api-burst", "1"], ["--api-burst", "0"]),
        (["--api-rate", "0"], ["--api-rate", "-0.5"]),
        (["--rate-limit", "0.1"], ["--rate-limit", "0"]),
        (["--race-rooms-per-hour", "1"], ["--race-rooms-per-hour", "0"]),
        (["--loop-lag-interval-ms", "0"], ["--loop-lag-interval-ms", "-1"]),
        (["--address-bytes-rate", "0"], ["--address-bytes-rate", "-1"]),
        # The byte budget must hold a frame of the largest size, else that frame never passes.
        (["--address-bytes-burst", "65536"], ["--address-bytes-burst", "65535"]),
        (
            ["--address-bytes-rate", "0", "--address-bytes-burst", "1"],
            ["--address-bytes-burst", "0"],
        ),
    ):
        Config.from_args(good, env=base)
        with pytest.raises(SystemExit):
            Config.from_args(bad, env=base)


def test_fair_play_limits_from_flags_and_env(tmp_path: Path) -> None:
    base = {"SOLITAIRE_DATA_DIR": str(tmp_path), "SOLITAIRE_DAILY_SECRET": "s"}
    cfg = Config.from_args([], env=base)
    assert (cfg.accounts_per_address_hour, cfg.connections_per_address) == (20, 64)
    assert (cfg.hello_timeout, cfg.hint_queue_max) == (10.0, 8)
    assert cfg.trusted_proxies == () and cfg.allowed_origins == ()
    assert (cfg.address_bytes_rate, cfg.address_bytes_burst) == (128 * 1024, 512 * 1024)
    env = {
        **base,
        "SOLITAIRE_TRUSTED_PROXIES": "10.0.0.0/8, ::1/128",
        "SOLITAIRE_ACCOUNTS_PER_ADDRESS_HOUR": "0",
        "SOLITAIRE_CONNECTIONS_PER_ADDRESS": "5",
        "SOLITAIRE_HELLO_TIMEOUT": "2.5",
        "SOLITAIRE_HINT_QUEUE_MAX": "3",
        "SOLITAIRE_ADDRESS_BYTES_RATE": "0",
        "SOLITAIRE_ALLOWED_ORIGINS": "https://Play.Example/,https://b.example",
    }
    cfg = Config.from_args([], env=env)
    assert cfg.trusted_proxies == ("10.0.0.0/8", "::1/128")
    assert (cfg.accounts_per_address_hour, cfg.connections_per_address) == (0, 5)
    assert (cfg.hello_timeout, cfg.hint_queue_max) == (2.5, 3)
    assert cfg.address_bytes_rate == 0.0
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


def test_secrets_come_from_files(tmp_path: Path) -> None:
    (tmp_path / "daily").write_text("from-a-file\n")
    (tmp_path / "redis").write_text("s3cret\n")
    cfg = Config.from_args(
        [
            "--data-dir",
            str(tmp_path),
            "--daily-secret-file",
            str(tmp_path / "daily"),
            "--redis-url",
            "redis://db:6379/0",
        ],
        env={"REDIS_PASSWORD_FILE": str(tmp_path / "redis")},
    )
    assert cfg.daily_secret == b"from-a-file" and cfg.redis_password == "s3cret"
    assert "s3cret" not in repr(cfg) and "from-a-file" not in repr(cfg)
    assert not (tmp_path / "daily_secret").exists()  # nothing generated beside it


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--daily-secret", "x", "--daily-secret-file", "F"], "not both"),
        (["--daily-secret-file", "MISSING"], "cannot read"),
        (["--daily-secret-file", "EMPTY"], "is empty"),
        (["--redis-password-file", "F"], "needs --redis-url"),
        (["--redis-url", "redis://:pw@db:6379", "--redis-password-file", "F"], "has a password"),
    ],
)
def test_unusable_secret_files_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    (tmp_path / "F").write_text("x")
    (tmp_path / "EMPTY").write_text("\n")
    argv = [str(tmp_path / a) if a in ("F", "MISSING", "EMPTY") else a for a in argv]
    with pytest.raises(SystemExit):
        Config.from_args(["--data-dir", str(tmp_path), *argv], env={})
    assert message in capsys.readouterr().err


async def test_a_password_file_opens_a_redis_that_requires_it(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [
            find_redis_server(),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--requirepass",
            "s3cret",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        (tmp_path / "pw").write_text("s3cret\n")
        url = f"redis://127.0.0.1:{port}/0"
        cfg = Config.from_args(
            [
                "--data-dir",
                str(tmp_path),
                "--redis-url",
                url,
                "--redis-password-file",
                str(tmp_path / "pw"),
            ],
            env={},
        )
        for _ in range(100):  # until redis-server listens
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                break
            await asyncio.sleep(0.05)
        async with connected(cfg) as client:
            assert await client.ping()
        without = Config.from_args(["--data-dir", str(tmp_path), "--redis-url", url], env={})
        async with connected(without) as client:
            with pytest.raises(redis.exceptions.AuthenticationError):
                await client.ping()
    finally:
        proc.terminate()
        proc.wait(5)


def test_fair_play_screen_is_on_from_the_command_line(tmp_path: Path) -> None:
    env = {"SOLITAIRE_DATA_DIR": str(tmp_path), "SOLITAIRE_DAILY_SECRET": "s"}
    assert not Config().fair_play_screen  # a bare Config (tests) screens nothing
    assert Config.from_args([], env=env).fair_play_screen
    assert not Config.from_args(["--no-fair-play-screen"], env=env).fair_play_screen
    off = {**env, "SOLITAIRE_FAIR_PLAY_SCREEN": "0"}
    assert not Config.from_args([], env=off).fair_play_screen


def test_the_metrics_token_comes_from_its_flag_or_env_and_stays_out_of_repr(
    tmp_path: Path,
) -> None:
    where = ["--data-dir", str(tmp_path)]
    assert Config.from_args(where, env={}).metrics_token == ""
    env = {"SOLITAIRE_METRICS_TOKEN": "from-env"}
    assert Config.from_args(where, env=env).metrics_token == "from-env"
    cfg = Config.from_args([*where, "--metrics-token", "from-flag"], env=env)
    assert cfg.metrics_token == "from-flag" and "from-flag" not in repr(cfg)
