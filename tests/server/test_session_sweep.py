"""The session sweep (`server.app._sweep_sessions`): a session whose token died closes on
every process, told over pub/sub at once or, that message lost, from the revocations stream
within `SESSION_SWEEP_S`; and a sweep costs Redis a command, not two per connected session
(it read every session's tokens every 2 s: ~470 ms of CPU and as long a stall at 10,000)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio

from server.app import SESSION_SWEEP_S
from tests.support.app import serve, unthrottled_config
from tests.support.devices import closed_with, device_of, signed_in
from tests.support.wsclient import Client


async def calls(r: redis.asyncio.Redis, *commands: str) -> int:
    """How many times Redis ran ``commands`` so far (scripts' calls included)."""
    stats: dict[str, Any] = await r.info("commandstats")
    return sum(int(stats.get(f"cmdstat_{c}", {}).get("calls", 0)) for c in commands)


async def test_a_lost_revocation_message_is_made_up_by_the_stream(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pub/sub message of a rotation never arrives (published nowhere): the other
    process still closes the session open with the dead token, from the revocations stream,
    within its sweep's period."""

    async def lost(*_: object) -> None:
        return None

    monkeypatch.setattr("server.players.registry.announce_revoked", lost)
    async with (
        serve(unthrottled_config(redis_url, tmp_path / "one", b"sw1")) as one,
        serve(unthrottled_config(redis_url, tmp_path / "two", b"sw1")) as two,
    ):
        owner = await signed_in(one, "rotor")
        zombie = await Client.connect(two.url)
        await zombie.hello(token=owner.token, versions=(9,))
        await asyncio.sleep(SESSION_SWEEP_S + 0.5)  # past the first sweep (a full one)
        assert (await owner.request("token.rotate"))["type"] == "token"
        rotated = time.monotonic()
        assert await closed_with(zombie, SESSION_SWEEP_S + 2.0) == (4001, "token revoked")
        assert time.monotonic() - rotated <= SESSION_SWEEP_S + 1.0
        assert (await owner.request("ping"))["type"] == "pong"
        await owner.close()


async def test_a_sweep_reads_no_session_unless_its_player_lost_a_token(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """40 sessions connected, two sweep periods with no revocation: no session's tokens are
    read (the sweep read two keys a session each period). Then one device is revoked: the
    sessions of that player only are read."""
    async with serve(unthrottled_config(redis_url, tmp_path, b"sw2")) as app:
        idle = [await signed_in(app, f"idle{i}") for i in range(40)]
        owner = await signed_in(app, "owner")
        phone = await device_of(app, owner, device="phone")
        await asyncio.sleep(SESSION_SWEEP_S)  # the first sweep's full check is behind us
        before = await calls(redis_client, "sismember")
        await asyncio.sleep(2 * SESSION_SWEEP_S + 0.5)
        assert await calls(redis_client, "sismember") == before, "idle sessions were read"

        listed = await owner.request("devices")
        target = next(d["device"] for d in listed["devices"] if d["how"] != "original")
        before = await calls(redis_client, "sismember")
        revoked = await owner.request("device.revoke", device=target)
        assert revoked["type"] == "devices", revoked
        assert await closed_with(phone, 1.0) == (4001, "token revoked")
        read = await calls(redis_client, "sismember") - before
        # The revoke script's own checks, plus the sweep's one read per session of the
        # player here (two: the owner and the phone), never one per session connected.
        assert 0 < read < 10, read
        assert (await owner.request("ping"))["type"] == "pong"
        for c in (*idle, owner):
            await c.close()
