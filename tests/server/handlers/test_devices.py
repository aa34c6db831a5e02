"""Devices and trust (protocol 9): a stolen sign-in code is no takeover, the owner hears of a
new device and signs it out, and a named redemption is not blocked by a burnt shared address.
Real server, real Redis, real WebSockets; the attacker uses only the documented protocol."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import redis.asyncio

from server.players.devices import DEFAULT_TRUST_MS
from tests.support.app import App, serve, unthrottled_config
from tests.support.wsclient import Client

V9 = (7, 8, 9)


async def owner_of(app: App, name: str) -> Client:
    c = await Client.connect(app.url)
    await c.hello(name=name, versions=V9)
    return c


async def redeem_on(app: App, code: str, versions: tuple[int, ...] = V9, **more: Any) -> Client:
    """A new connection signed in with ``code`` (asserts it worked)."""
    c = await Client.connect(app.url)
    welcome = await c.request("signin.redeem", versions=list(versions), code=code, **more)
    assert welcome["type"] == "welcome", welcome
    c.player_id, c.token = welcome["player_id"], welcome["token"]
    return c


async def try_redeem(app: App, code: str, **more: Any) -> dict[str, Any]:
    c = await Client.connect(app.url)
    try:
        return await c.request("signin.redeem", versions=list(V9), code=code, **more)
    finally:
        await c.close()


async def closed_with(c: Client, timeout: float = 5.0) -> tuple[int, str]:
    await asyncio.wait_for(c.ws.wait_closed(), timeout)
    assert c.ws.close_code is not None
    return c.ws.close_code, c.ws.close_reason or ""


async def token_works(app: App, token: str) -> bool:
    c = await Client.connect(app.url)
    try:
        r = await c.request("hello", versions=list(V9), token=token)
        return bool(r["type"] == "welcome")
    finally:
        await c.close()


async def test_a_stolen_code_cannot_lock_the_owner_out(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """The attack of the review: a thief redeems the owner's code and revokes everything. Now
    the thief's device is on trial: no `token.revoke_all`, no signing older devices out."""
    async with serve(unthrottled_config(redis_url, tmp_path, b"dev1")) as app:
        owner = await owner_of(app, "alice")
        code = (await owner.request("signin.code"))["code"]
        thief = await redeem_on(app, code, device="evil")

        r = await thief.request("token.revoke_all")
        assert (r["type"], r["code"]) == ("error", "not_trusted_yet"), r
        listed = await thief.request("devices")
        assert listed["type"] == "devices", listed
        assert listed["trusted_at"] > app.clock.now_ms()
        original = next(d for d in listed["devices"] if d["how"] == "original")
        assert not original["can_revoke"]
        r = await thief.request("device.revoke", device=original["device"])
        assert (r["type"], r["code"]) == ("error", "not_trusted_yet"), r

        # The owner is still in, on the open connection and with the token.
        assert (await owner.request("ping"))["type"] == "pong"
        assert await token_works(app, owner.token)
        await owner.close()
        await thief.close()


async def test_a_version_7_thief_gets_limit_reached_and_the_owner_stays(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """An old client (versions 5..7) plays the same attack: refused with a code it knows."""
    async with serve(unthrottled_config(redis_url, tmp_path, b"dev2")) as app:
        owner = await owner_of(app, "alice")
        code = (await owner.request("signin.code"))["code"]
        thief = await redeem_on(app, code, versions=(5, 6, 7))
        r = await thief.request("token.revoke_all")
        assert (r["type"], r["code"]) == ("error", "limit_reached"), r
        # Devices are version 9: unknown to this client.
        r = await thief.request("devices")
        assert (r["type"], r["code"]) == ("error", "unknown_type"), r
        assert await token_works(app, owner.token)
        await owner.close()
        await thief.close()


async def test_the_owner_is_told_sees_and_revokes_the_new_device(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with serve(unthrottled_config(redis_url, tmp_path, b"dev3")) as app:
        owner = await owner_of(app, "alice")
        old_client = await Client.connect(app.url)  # a version 8 session of the owner
        await old_client.hello(token=owner.token, versions=(8,))
        code = (await owner.request("signin.code"))["code"]
        app.clock.advance(1000)
        thief = await redeem_on(app, code, device="Firefox on Linux")

        told = await owner.push("device.signed_in")
        assert told["name"] == "Firefox on Linux"
        assert told["signed_in_at"] == app.clock.now_ms()
        listed = await owner.request("devices")
        assert "trusted_at" not in listed
        devs = listed["devices"]
        assert [(d["how"], d["current"], d["can_revoke"]) for d in devs] == [
            ("original", True, False),
            ("code", False, True),
        ]
        assert devs[1]["device"] == told["device"] and devs[1]["name"] == "Firefox on Linux"
        assert devs[0]["signed_in_at"] < devs[1]["signed_in_at"]
        # Neither the new device itself nor the version 8 session got the push.
        await asyncio.sleep(0.3)
        for c in (thief, old_client):
            assert not any(m.get("type") == "device.signed_in" for m in c.seen), c.seen

        after = await owner.request("device.revoke", device=told["device"])
        assert after["type"] == "devices", after
        assert [d["how"] for d in after["devices"]] == ["original"]
        assert await closed_with(thief, 3.0) == (4001, "token revoked")
        assert not await token_works(app, thief.token)
        assert (await old_client.request("ping"))["type"] == "pong"  # the owner's stay open
        r = await owner.request("device.revoke", device=told["device"])
        assert (r["type"], r["code"]) == ("error", "not_found"), r
        r = await owner.request("device.revoke", device="original")
        assert (r["type"], r["code"]) == ("error", "bad_request"), r
        await owner.close()
        await old_client.close()


async def test_a_code_device_may_revoke_newer_devices_and_after_its_trial_everything(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with serve(unthrottled_config(redis_url, tmp_path, b"dev4")) as app:
        owner = await owner_of(app, "alice")
        phone = await redeem_on(app, (await owner.request("signin.code"))["code"])
        app.clock.advance(1000)
        tablet = await redeem_on(app, (await phone.request("signin.code"))["code"])
        listed = await phone.request("devices")
        newer = listed["devices"][2]
        assert newer["how"] == "code" and newer["can_revoke"], listed
        done = await phone.request("device.revoke", device=newer["device"])
        assert done["type"] == "devices" and len(done["devices"]) == 2, done
        assert await closed_with(tablet, 3.0) == (4001, "token revoked")

        app.clock.advance(DEFAULT_TRUST_MS)  # the phone's trial is over
        listed = await phone.request("devices")
        assert "trusted_at" not in listed and listed["devices"][0]["can_revoke"], listed
        r = await phone.request("token.revoke_all")
        assert r["type"] == "token", r
        assert await closed_with(owner, 3.0) == (4001, "token revoked")
        # The phone is now the original device, keeping how and when it signed in.
        listed = await phone.request("devices")
        assert [(d["device"], d["how"], d["current"]) for d in listed["devices"]] == [
            ("original", "code", True)
        ]
        await phone.close()


async def test_a_named_redemption_works_behind_a_burnt_address(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """A guesser behind the school's NAT burns its 20 tries an hour; the pupil signs in
    naming the account. Guessing by name is limited per account, and the code dies then."""
    config = unthrottled_config(
        redis_url,
        tmp_path,
        b"dev5",
        signin_attempts_per_address_hour=20,
        signin_attempts_per_account_hour=5,
    )
    async with serve(config) as app:
        for _ in range(20):
            r = await try_redeem(app, "ZZZZ-ZZZZ")
            assert r["code"] == "invalid_code", r
        r = await try_redeem(app, "ZZZZ-ZZZZ")
        assert r["code"] == "limit_reached", r

        owner = await owner_of(app, "pupil")
        code = (await owner.request("signin.code"))["code"]
        r = await try_redeem(app, code)  # nameless: still blocked
        assert r["code"] == "limit_reached", r
        r = await try_redeem(app, code, name="nobody_here")  # no such account: the address's
        assert r["code"] == "limit_reached", r
        wrong_account = await owner_of(app, "other")
        r = await try_redeem(app, code, name="other")  # the code is not other's
        assert r["code"] == "invalid_code", r
        await wrong_account.close()
        pupil = await redeem_on(app, code, name="PUPIL")
        assert pupil.player_id == owner.player_id

        # The guesser turns to named guesses: five an hour for the account, then its code dies.
        code = (await owner.request("signin.code"))["code"]
        for _ in range(4):  # one try was the pupil's
            r = await try_redeem(app, "ZZZZ-ZZZZ", name="pupil")
            assert r["code"] == "invalid_code", r
        r = await try_redeem(app, "ZZZZ-ZZZZ", name="pupil")
        assert r["code"] == "limit_reached", r
        assert "void" in r["message"]
        r = await try_redeem(app, code, name="pupil")
        assert r["code"] == "limit_reached", r
        app.clock.advance(3_600_000)
        r = await try_redeem(app, code, name="pupil")
        assert r["code"] == "invalid_code", r  # voided, not merely waiting
        await owner.close()
        await pupil.close()


async def test_name_and_device_need_version_9(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with serve(unthrottled_config(redis_url, tmp_path, b"dev6")) as app:
        owner = await owner_of(app, "alice")
        code = (await owner.request("signin.code"))["code"]
        c = await Client.connect(app.url)
        r = await c.request("signin.redeem", versions=[7, 8], code=code, name="alice")
        assert (r["type"], r["code"]) == ("error", "bad_request"), r
        await c.close()
        # A version 8 redemption works exactly as before (and the code is still live).
        phone = await redeem_on(app, code, versions=(8,))
        assert phone.player_id == owner.player_id
        await owner.close()
        await phone.close()
