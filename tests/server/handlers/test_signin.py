"""Sign-in codes (protocol 7): the same player on a second device, and a guesser who tries
to become someone else. Real server, real Redis, real WebSockets."""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio
import websockets

from protocol.signin import SIGNIN_ALPHABET
from server.players.signin import CODE_TTL_MS
from server.redis import keys
from tests.support.app import serve, unthrottled_config
from tests.support.devices import code_of, signed_in, try_redeem
from tests.support.wsclient import Client

V7 = (5, 6, 7)


async def test_a_code_signs_a_second_device_in_as_the_same_player(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with serve(unthrottled_config(redis_url, tmp_path, b"signin")) as app:
        alice = await signed_in(app, "alice", V7)
        shown = await alice.request("signin.code")
        assert shown["type"] == "signin.code", shown
        code = shown["code"]
        assert len(code) == 9 and code[4] == "-"
        assert all(ch in SIGNIN_ALPHABET for ch in code.replace("-", ""))
        assert shown["expires_at"] == app.clock.now_ms() + CODE_TTL_MS
        # Stored hashed: the code's text is nowhere in Redis.
        for key in await redis_client.keys("*"):
            if await redis_client.type(key) == "string":
                assert code.replace("-", "") not in (await redis_client.get(key) or "")
            assert code.replace("-", "") not in key

        # The second device types it in lower case, without the dash.
        phone = await Client.connect(app.url)
        welcome = await phone.request(
            "signin.redeem",
            versions=list(V7),
            code=code.replace("-", " ").lower(),
            features=["rules_free"],
        )
        assert welcome["type"] == "welcome", welcome
        # The features asked for hold as after `hello`: lean moves in card words.
        assert welcome["features"] == ["rules_free"], welcome
        assert (welcome["player_id"], welcome["name"]) == (alice.player_id, "alice")
        assert welcome["version"] == 7
        phone_token = welcome["token"]
        assert phone_token and phone_token != alice.token
        # Same player: a daily game started on the phone is alice's on the first device.
        game = await phone.request("daily.start", variant="fourteen-out")
        again = await alice.request("game.get", game_id=game["game_id"])
        assert again["type"] == "game", again

        # Single use: the code is dead.
        used = await try_redeem(app, code, V7)
        assert (used["type"], used["code"]) == ("error", "invalid_code")

        # Both tokens work; rotating the phone's leaves the first device's alone.
        for token in (alice.token, phone_token):
            c = await Client.connect(app.url)
            assert (await c.hello(token=token, versions=V7))["player_id"] == alice.player_id
            await c.close()
        rotated = await phone.request("token.rotate")
        assert rotated["type"] == "token"
        c = await Client.connect(app.url)
        await c.hello(token=alice.token, versions=V7)
        await c.close()
        stale = await Client.connect(app.url)
        refused = await stale.request("hello", versions=list(V7), token=phone_token)
        assert refused["code"] == "not_authenticated"
        await stale.close()

        # Revoking every session drops the phone's token too.
        await alice.request("token.revoke_all")
        gone = await Client.connect(app.url)
        refused = await gone.request("hello", versions=list(V7), token=rotated["token"])
        assert refused["code"] == "not_authenticated"
        assert await redis_client.scard(keys.player_devices(alice.player_id)) == 0
        for c in (alice, phone, gone):
            await c.close()


async def test_a_code_dies_when_replaced_or_after_five_minutes(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with serve(unthrottled_config(redis_url, tmp_path, b"signin")) as app:
        bob = await signed_in(app, "bob", V7)
        first = await code_of(bob)
        second = await code_of(bob)
        assert first != second
        once = await try_redeem(app, first, V7)
        assert once["code"] == "invalid_code", "one live code per account"
        app.clock.advance(CODE_TTL_MS)
        assert (await try_redeem(app, second, V7))["code"] == "invalid_code", "expired"
        third = await code_of(bob)
        app.clock.advance(CODE_TTL_MS - 1)
        assert (await try_redeem(app, third, V7))["type"] == "welcome"
        await bob.close()


async def test_old_versions_and_signed_in_connections_cannot_use_codes(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with serve(unthrottled_config(redis_url, tmp_path, b"signin")) as app:
        v6 = await Client.connect(app.url)
        await v6.hello(name="carol", versions=(5, 6))
        assert (await v6.request("signin.code"))["code"] == "unknown_type"
        carol = await signed_in(app, "carol7", V7)
        code = await code_of(carol)
        assert (await try_redeem(app, code, versions=(5, 6)))["code"] == "unknown_type"
        twice = await carol.request("signin.redeem", versions=list(V7), code=code)
        assert twice["code"] == "conflict", "a signed-in connection redeems nothing"
        for junk in ("", "x" * 33):
            assert (await try_redeem(app, junk, V7))["code"] == "bad_request"
        for wrong in ("0000-0000", "ABCD", "ABCD-EFGH-J", "abcd?efg"):
            assert (await try_redeem(app, wrong, V7))["code"] == "invalid_code", wrong
        lived = await try_redeem(app, code, V7)
        assert lived["type"] == "welcome", "the code lived through it all"
        await v6.close()
        await carol.close()


async def test_a_brute_force_guesser_is_stopped_per_address(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """A cheater tries random codes to take over whoever has one live: every try counts, the
    address is cut off after the limit (the right code included), the victim's code stays
    live for the victim's own second device once the hour has passed."""
    cfg = unthrottled_config(redis_url, tmp_path, b"signin", signin_attempts_per_address_hour=12)
    async with serve(cfg) as app:
        victim = await signed_in(app, "victim", V7)
        live = await code_of(victim)
        guesser = await Client.connect(app.url)
        answers = []
        for _ in range(40):
            guess = "".join(secrets.choice(SIGNIN_ALPHABET) for _ in range(8))
            r = await guesser.request("signin.redeem", versions=list(V7), code=guess)
            answers.append(r["code"] if r["type"] == "error" else r["type"])
        assert answers[:12] == ["invalid_code"] * 12
        assert set(answers[12:]) == {"limit_reached"}, answers
        # Even the right code is refused from this address now; nothing was signed in.
        r = await guesser.request("signin.redeem", versions=list(V7), code=live)
        assert r["code"] == "limit_reached"
        assert (await guesser.request("ping"))["type"] == "pong"
        assert (await guesser.request("daily.start", variant="fourteen-out"))["code"] == (
            "not_authenticated"
        )
        app.clock.advance(3_600_000)  # the next hour: the address may try again
        fresh = await code_of(victim)
        assert (await try_redeem(app, fresh, V7))["player_id"] == victim.player_id
        await guesser.close()
        await victim.close()


async def test_a_redeemed_device_is_no_new_account(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One new player an hour from this address: the second device of that player still signs
    in (it is the same account, no quota spent), and a code never makes a second account. A
    player's devices are bounded (3 here)."""
    monkeypatch.setattr("server.players.signin.MAX_DEVICES", 3)
    cfg = unthrottled_config(redis_url, tmp_path, b"signin", accounts_per_address_hour=1)
    async with serve(cfg) as app:
        first = await signed_in(app, "solo", V7)
        refused = await Client.connect(app.url)
        r = await refused.request("hello", versions=list(V7), name="puppet")
        assert r["code"] == "limit_reached"
        for _ in range(3):
            code = await code_of(first)
            w = await try_redeem(app, code, V7)
            assert (w["type"], w["player_id"]) == ("welcome", first.player_id)
        assert await redis_client.hlen(keys.players_by_name()) == 1, "still one account"
        assert await redis_client.scard(keys.player_devices(first.player_id)) == 3
        fourth = await try_redeem(app, await code_of(first), V7)
        assert fourth["code"] == "limit_reached", fourth
        await first.request("token.revoke_all")  # every device out: room for new ones
        fresh = await code_of(first)
        assert (await try_redeem(app, fresh, V7))["type"] == "welcome"
        await refused.close()
        await first.close()


async def redeem_from(url: str, address: str, code: str) -> dict[str, Any]:
    """One connection, forwarded for ``address`` by a trusted proxy, redeeming ``code``."""
    async with websockets.connect(url, additional_headers={"X-Forwarded-For": address}) as ws:
        await ws.send(
            json.dumps({"type": "signin.redeem", "id": 1, "versions": list(V7), "code": code})
        )
        reply: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 10))
        return reply


async def test_a_guesser_spread_over_a_network_is_stopped_per_network(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """The cheat: guess codes from a fresh IPv6 /64 each time (a site's /48 holds 65,536 of
    them). Each /48 (or IPv4 /24) may try five times the per-address limit an hour."""
    cfg = unthrottled_config(
        redis_url,
        tmp_path,
        b"signin",
        signin_attempts_per_address_hour=2,
        trusted_proxies=("127.0.0.0/8",),
    )
    async with serve(cfg) as app:
        answers = []
        for i in range(14):  # 14 /64s of one /48, two tries each would allow 28
            address = f"2001:db8:1:{i:x}::1"
            answers.append((await redeem_from(app.url, address, "ABCD-EFGH"))["code"])
        assert answers[:10] == ["invalid_code"] * 10
        assert set(answers[10:]) == {"limit_reached"}, answers
        other_site = await redeem_from(app.url, "2001:db8:2::1", "ABCD-EFGH")
        assert other_site["code"] == "invalid_code", "another /48 is not held back"
