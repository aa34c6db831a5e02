"""Devices and trust (protocol 9): a stolen sign-in code is no takeover, the owner hears of a
new device and signs it out, and a named redemption is not blocked by a burnt shared address.
Real server, real Redis, real WebSockets; the attacker uses only the documented protocol."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from pathlib import Path

import pytest
import redis.asyncio
import websockets

from engine import from_view
from server.players.devices import DEFAULT_TRUST_MS
from server.players.registry import hash_token
from server.redis import keys
from tests.support.app import serve, unthrottled_config
from tests.support.devices import (
    V9,
    closed_with,
    code_of,
    device_of,
    redeem_on,
    signed_in,
    token_works,
    try_redeem,
)
from tests.support.procs import ServerProcess
from tests.support.wsclient import Client


async def test_a_stolen_code_cannot_lock_the_owner_out(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """The attack of the review: a thief redeems the owner's code and revokes everything. Now
    the thief's device is on trial: no `token.revoke_all`, no signing older devices out."""
    async with serve(unthrottled_config(redis_url, tmp_path, b"dev1")) as app:
        owner = await signed_in(app, "alice")
        thief = await device_of(app, owner, device="evil")

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
        owner = await signed_in(app, "alice")
        thief = await device_of(app, owner, versions=(5, 6, 7))
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
        owner = await signed_in(app, "alice")
        old_client = await Client.connect(app.url)  # a version 8 session of the owner
        await old_client.hello(token=owner.token, versions=(8,))
        code = await code_of(owner)
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


async def test_device_ids_never_start_with_a_dash(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`solitaire device-revoke <id>` reads a leading dash as an option (it failed a CI run,
    one id in 64): a drawn id with one is drawn again."""
    drawn = iter(["-dash1ab", "--dash2a", "Dev_ok1-"])
    real = secrets.token_urlsafe
    monkeypatch.setattr(
        "server.players.registry.secrets.token_urlsafe",
        lambda n=None: (next(drawn, None) if n == 6 else None) or real(n),
    )
    async with serve(unthrottled_config(redis_url, tmp_path, b"dev8")) as app:
        owner = await signed_in(app, "dashy")
        laptop = await redeem_on(app, await code_of(owner), device="laptop")
        listed = await owner.request("devices")
        assert [d["device"] for d in listed["devices"] if d["how"] == "code"] == ["Dev_ok1-"]
        await owner.close()
        await laptop.close()


async def test_a_code_device_may_revoke_newer_devices_and_after_its_trial_everything(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with serve(unthrottled_config(redis_url, tmp_path, b"dev4")) as app:
        owner = await signed_in(app, "alice")
        phone = await device_of(app, owner)
        app.clock.advance(1000)
        tablet = await device_of(app, phone)
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

        owner = await signed_in(app, "pupil")
        code = await code_of(owner)
        r = await try_redeem(app, code)  # nameless: still blocked
        assert r["code"] == "limit_reached", r
        r = await try_redeem(app, code, name="nobody_here")  # no such account: the address's
        assert r["code"] == "limit_reached", r
        wrong_account = await signed_in(app, "other")
        r = await try_redeem(app, code, name="other")  # the code is not other's
        assert r["code"] == "invalid_code", r
        await wrong_account.close()
        pupil = await redeem_on(app, code, name="PUPIL")
        assert pupil.player_id == owner.player_id

        # The guesser turns to named guesses: five an hour for the account, then its code dies.
        code = await code_of(owner)
        for _ in range(4):  # one try was the pupil's
            r = await try_redeem(app, "ZZZZ-ZZZZ", name="pupil")
            assert r["code"] == "invalid_code", r
        r = await try_redeem(app, "ZZZZ-ZZZZ", name="pupil")
        assert r["code"] == "limit_reached", r
        assert "without the name" in r["message"], r
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
        owner = await signed_in(app, "alice")
        code = await code_of(owner)
        c = await Client.connect(app.url)
        r = await c.request("signin.redeem", versions=[7, 8], code=code, name="alice")
        assert (r["type"], r["code"]) == ("error", "bad_request"), r
        await c.close()
        # A version 8 redemption works exactly as before (and the code is still live).
        phone = await redeem_on(app, code, versions=(8,))
        assert phone.player_id == owner.player_id
        await owner.close()
        await phone.close()


async def test_a_rotated_away_connection_dies_and_cannot_outlive_its_device(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """The zombie of the review: a thief opens a second connection with its token T1, rotates
    to T2 on the first, and hopes the zombie outlives the owner's `device.revoke`. A
    rotated-away token's sessions close (4001); a dead token's session gets no code."""
    async with serve(unthrottled_config(redis_url, tmp_path, b"dev7")) as app:
        owner = await signed_in(app, "alice")
        thief = await device_of(app, owner, device="phone")
        zombie = await Client.connect(app.url)
        await zombie.hello(token=thief.token, versions=V9)
        rotated = await thief.request("token.rotate")
        assert rotated["type"] == "token", rotated

        assert await closed_with(zombie, 3.0) == (4001, "token revoked")
        assert (await thief.request("ping"))["type"] == "pong"  # the rotating one stays
        listed = await owner.request("devices")
        dev = next(d["device"] for d in listed["devices"] if d["how"] == "code")
        after = await owner.request("device.revoke", device=dev)
        assert [d["how"] for d in after["devices"]] == ["original"], after
        assert await closed_with(thief, 3.0) == (4001, "token revoked")
        # The owner's live code is still the owner's: no zombie killed it.
        phone = await device_of(app, owner)
        assert phone.player_id == owner.player_id
        await phone.close()
        await owner.close()


async def test_a_session_whose_token_died_gets_no_sign_in_code(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """Between the token's death and the sweep, a sensitive request checks the token itself:
    `signin.code` from a dead token is refused and leaves the owner's live code alone."""
    async with serve(unthrottled_config(redis_url, tmp_path, b"dev8")) as app:
        owner = await signed_in(app, "alice")
        thief = await device_of(app, owner)
        live = await code_of(owner)
        # The thief's token dies in Redis without this process hearing of it (as when the
        # owner revokes on another process, before that process's sweep).
        await redis_client.hdel(keys.players_by_token(), hash_token(thief.token))
        r = await thief.request("signin.code")
        assert (r["type"], r["code"]) == ("error", "not_authenticated"), r
        phone = await redeem_on(app, live)
        assert phone.player_id == owner.player_id
        await phone.close()
        await owner.close()


async def test_a_name_guesser_kills_a_code_once_is_told_of_and_pays_per_address(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """Review F2: six named guesses used to void the victim's code, and every later guess
    voided the next one, for free. Now the code dies once, when the tries are first used up;
    the victim is told, signs in without the name, and the guesser's address runs dry."""
    config = unthrottled_config(
        redis_url,
        tmp_path,
        b"dev9",
        signin_attempts_per_address_hour=20,
        signin_attempts_per_account_hour=5,
    )
    async with serve(config) as app:
        victim = await signed_in(app, "victim")
        old_client = await Client.connect(app.url)  # a version 8 session: no push for it
        await old_client.hello(token=victim.token, versions=(8,))
        first = await code_of(victim)
        for _ in range(5):
            r = await try_redeem(app, "2222-2222", name="victim")
            assert r["code"] == "invalid_code", r
        r = await try_redeem(app, "2222-2222", name="victim")
        assert r["code"] == "limit_reached", r
        assert "without the name" in r["message"], r
        told = await victim.push("signin.tries_used")
        hour = 3_600_000
        assert told["until"] == (app.clock.now_ms() // hour + 1) * hour
        r = await try_redeem(app, first)
        assert r["code"] == "invalid_code", r  # voided once, when the tries ran out

        # Every further guess is refused and kills nothing: the victim's new code works
        # without the name (from the same address: named guesses have their own counter).
        fresh = await code_of(victim)
        for _ in range(3):
            r = await try_redeem(app, "2222-2222", name="victim")
            assert r["code"] == "limit_reached", r
        r = await try_redeem(app, fresh, name="victim")  # named: refused, the code lives on
        assert r["code"] == "limit_reached", r
        phone = await redeem_on(app, fresh)
        assert phone.player_id == victim.player_id
        await asyncio.sleep(0.3)
        assert [m["type"] for m in victim.seen].count("signin.tries_used") == 1
        assert not any(m.get("type") == "signin.tries_used" for m in old_client.seen)

        # The guesser's address pays for named guesses: 20 an hour (10 spent above).
        others = [await signed_in(app, n) for n in ("bob", "carol", "dave")]
        for who in ("bob", "carol"):
            for _ in range(5):
                r = await try_redeem(app, "2222-2222", name=who)
                assert r["code"] == "invalid_code", r
        dave_code = await code_of(others[2])
        r = await try_redeem(app, "2222-2222", name="dave")
        assert r["code"] == "limit_reached" and "this address" in r["message"], r
        r = await try_redeem(app, dave_code, name="dave")  # the address, not dave, is out
        assert r["code"] == "limit_reached", r
        dave_phone = await redeem_on(app, dave_code)  # dave's code was never voided
        assert dave_phone.player_id == others[2].player_id
        for c in (victim, old_client, phone, dave_phone, *others):
            await c.close()


async def test_a_zombie_on_another_process_is_closed_by_that_process_sweep(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """The zombie said hello on another server process than the one that served the
    rotation: that process's sweep closes it (at once, told over pub/sub; every 2 s as the
    fallback), and until then it cannot ask the owner's sign-in code, rotate, or list or
    revoke devices."""
    async with (
        serve(unthrottled_config(redis_url, tmp_path / "one", b"dev10")) as one,
        serve(unthrottled_config(redis_url, tmp_path / "two", b"dev10")) as two,
    ):
        owner = await signed_in(one, "alice")
        thief = await device_of(one, owner)
        zombie = await Client.connect(two.url)
        await zombie.hello(token=thief.token, versions=V9)
        live = await code_of(owner)
        assert (await thief.request("token.rotate"))["type"] == "token"
        for ask in ("signin.code", "token.rotate", "devices"):
            try:
                r = await zombie.request(ask, timeout=2.0)
            except (websockets.ConnectionClosed, TimeoutError):
                break  # the sweep was quicker (closed before or after the request went)
            assert (r["type"], r["code"]) == ("error", "not_authenticated"), r
        assert await closed_with(zombie, 5.0) == (4001, "token revoked")
        phone = await redeem_on(one, live)  # the owner's code survived the zombie
        assert phone.player_id == owner.player_id
        for c in (owner, thief, phone):
            await c.close()


async def test_a_device_revoked_on_one_process_is_closed_at_once_on_another(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """Two server processes on one Redis: the owner on one revokes the device whose socket
    is on the other. The revocation goes out on Redis pub/sub and the other process closes
    the device (4001) within ~300 ms, not at its next 2 s sweep: a move from the revoked
    device no longer lands, and its token is dead everywhere."""
    with (
        ServerProcess(tmp_path / "one", redis_url=redis_url) as one,
        ServerProcess(tmp_path / "two", redis_url=redis_url) as two,
    ):
        owner = await signed_in(one, "alice")
        phone = await device_of(two, owner, device="phone")
        game = await phone.request("daily.start", variant="fourteen-out")
        assert game["type"] == "game", game
        move = str(next(iter(from_view(game["view"]).legal_moves())))
        told = await owner.push("device.signed_in")
        for _ in range(3):  # several revocations: each one closes at once, not by luck
            after = await owner.request("device.revoke", device=told["device"])
            assert [d["how"] for d in after["devices"]] == ["original"], after
            revoked_at = time.monotonic()
            assert await closed_with(phone, 0.3) == (4001, "token revoked")
            assert time.monotonic() - revoked_at < 0.3
            with contextlib.suppress(websockets.ConnectionClosed):  # the move finds it shut
                r = await phone.request("move", timeout=0.5, game_id=game["game_id"], move=move)
                raise AssertionError(f"a revoked device's move was answered: {r}")
            assert not await token_works(two, phone.token)
            # The owner signs the phone in again for the next round.
            phone = await device_of(two, owner, device="phone")
            told = await owner.push("device.signed_in")
        seen = await owner.request("game.get", game_id=game["game_id"])
        assert seen["seq"] == 0, seen  # no move of the revoked device landed
        await phone.close()
        await owner.close()
