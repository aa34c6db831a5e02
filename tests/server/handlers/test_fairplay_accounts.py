"""Accounts, names and tokens (docs/fairplay.md): look-alike and reserved names, token
rotation and revocation, one hint in flight per player with a bounded solver queue.

Real server, real Redis, real WebSockets; the cheats are played as a cheating client would.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import redis.asyncio

from server.config import Config
from server.players.names import fold_name, is_reserved
from server.players.registry import PlayerRegistry, hash_token
from tests.support.app import App, serve, unthrottled_config
from tests.support.devices import closed_with
from tests.support.wsclient import Client


def config(redis_url: str, tmp_path: Path, **changes: Any) -> Config:
    return unthrottled_config(redis_url, tmp_path, b"accounts", **changes)


def running(
    redis_url: str, tmp_path: Path, redis_client: redis.asyncio.Redis, **changes: Any
) -> contextlib.AbstractAsyncContextManager[App]:
    del redis_client  # flushed by the fixture: each test starts from an empty database
    return serve(config(redis_url, tmp_path, **changes))


async def try_hello(app: App, **fields: Any) -> dict[str, Any]:
    c = await Client.connect(app.url)
    try:
        return await c.request("hello", versions=[1, 2, 3, 4, 5], **fields)
    finally:
        await c.close()


async def v5(app: App, *, name: str | None = None, token: str | None = None) -> Client:
    c = await Client.connect(app.url)
    await c.hello(name=name, token=token, versions=(5,))
    return c


# -- names ------------------------------------------------------------------------------------


def test_fold_names() -> None:
    assert fold_name("AIice") == fold_name("alice") == fold_name("A1ice") == fold_name("aiice")
    assert fold_name("B0b") == fold_name("bob")
    assert fold_name("rnary") == fold_name("mary")
    assert fold_name("vvendy") == fold_name("wendy")
    assert fold_name("a-b_c") == fold_name("a_b-c")
    assert fold_name("alice") != fold_name("alicia")
    assert is_reserved("Admin") and is_reserved("adm1n") and is_reserved("SYSTEM")
    assert not is_reserved("admiral")
    # Separators anywhere do not make a reserved name free (found by a helper playing the
    # cheater: `admin_` and `a-dmin` were new accounts).
    assert all(map(is_reserved, ("admin_", "a-dmin", "_Adm1n_", "sys-tem", "mo_d", "n-u-l-l")))
    assert not is_reserved("admin2") and not is_reserved("the_admiral")


async def test_look_alike_and_reserved_names_are_refused(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with running(redis_url, tmp_path, redis_client) as app:
        alice = await v5(app, name="alice")
        for fake in ("AIice", "A1ice", "ALICE", "aIice"):
            r = await try_hello(app, name=fake)
            assert (r["type"], r["code"]) == ("error", "name_taken"), (fake, r)
        for reserved in ("admin", "Adm1n", "moderator", "system", "server", "solitaire", "a-dmin_"):
            r = await try_hello(app, name=reserved)
            assert (r["type"], r["code"]) == ("error", "invalid_name"), (reserved, r)
        assert (await try_hello(app, name="alicia"))["type"] == "welcome"
        # Found by a look-alike of their name too (profile by name).
        r = await alice.request("profile.get", name="AIice")
        assert r["type"] == "profile" and r["player_id"] == alice.player_id, r
        await alice.close()


async def test_existing_look_alike_players_keep_their_names(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """Players created before folding (only in ``by_name``, casefolded) keep their names and
    tokens; once the app has started (and backfilled), their look-alikes are taken."""
    for pid, name, token in (
        ("oldAlice0001", "alice", "t" * 32),
        ("oldAiice0001", "aiice", "u" * 32),
    ):
        await redis_client.hset("sol:{players}:by_name", name.casefold(), pid)
        await redis_client.hset("sol:{players}:by_token", hash_token(token), pid)
        await redis_client.hset(
            f"sol:{{players}}:p:{pid}",
            mapping={"name": name, "token_hash": hash_token(token), "created_at_ms": 1},
        )
    async with serve(config(redis_url, tmp_path)) as app:
        for token, name in (("t" * 32, "alice"), ("u" * 32, "aiice")):
            c = await v5(app, token=token)
            assert c.player_id.startswith("old")
            assert (await c.request("profile.get"))["name"] == name
            await c.close()
        r = await try_hello(app, name="AIice")
        assert (r["type"], r["code"]) == ("error", "name_taken"), r
    assert await PlayerRegistry(redis_client).backfill_folds() == 0  # done once


# -- tokens -----------------------------------------------------------------------------------


async def test_token_rotate_replaces_the_token_at_once(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with running(redis_url, tmp_path, redis_client) as app:
        a = await v5(app, name="rotor")
        old = a.token
        other = await v5(app, token=old)
        r = await a.request("token.rotate")
        assert r["type"] == "token" and r["player_id"] == a.player_id, r
        new = r["token"]
        assert new != old
        stale = await try_hello(app, token=old)
        assert (stale["type"], stale["code"]) == ("error", "not_authenticated"), stale
        fresh = await v5(app, token=new)
        assert fresh.player_id == a.player_id
        # The other session opened with the old token is closed: a dead token keeps no
        # session (a zombie connection would outlive the device's `device.revoke`).
        await asyncio.wait_for(other.ws.wait_closed(), 3.0)
        assert (other.ws.close_code, other.ws.close_reason) == (4001, "token revoked")
        assert (await a.request("ping"))["type"] == "pong"  # the rotating session stays
        # Rotating again from the session that holds the current token works.
        again = await fresh.request("token.rotate")
        assert again["type"] == "token" and again["token"] not in (old, new)
        for c in (a, other, fresh):
            await c.close()


async def test_token_revoke_all_closes_every_other_session_everywhere(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """The owner of a stolen token revokes it: the thief's sessions, on this process and on
    another process sharing the Redis, are closed (4001) and the token no longer works."""
    async with (
        running(redis_url, tmp_path / "one", redis_client) as one,
        serve(config(redis_url, tmp_path / "two")) as two,
    ):
        owner = await v5(one, name="victim")
        stolen = owner.token
        thief_here = await v5(one, token=stolen)
        thief_there = await v5(two, token=stolen)
        bystander = await v5(two, name="bystander")
        r = await owner.request("token.revoke_all")
        assert r["type"] == "token" and r["token"] != stolen, r
        assert await closed_with(thief_here, 1.0) == (4001, "token revoked")
        # At once there too: the revocation is published (`sessions.revoked`), not left to
        # that process's 2 s sweep.
        assert await closed_with(thief_there, 1.0) == (4001, "token revoked")
        assert (await owner.request("ping"))["type"] == "pong"  # the owner keeps the session
        assert (await bystander.request("ping"))["type"] == "pong"  # others are unaffected
        stale = await try_hello(two, token=stolen)
        assert (stale["type"], stale["code"]) == ("error", "not_authenticated"), stale
        back = await v5(two, token=r["token"])
        assert back.player_id == owner.player_id
        for c in (owner, bystander, back):
            await c.close()


async def test_token_requests_need_version_5(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with running(redis_url, tmp_path, redis_client) as app:
        c = await app.client("oldtimer", versions=(1, 2, 3, 4))
        for kind in ("token.rotate", "token.revoke_all"):
            r = await c.request(kind)
            assert (r["type"], r["code"]) == ("error", "unknown_type"), r
        assert (await try_hello(app, token=c.token))["type"] == "welcome"  # unchanged
        await c.close()


# -- hints --------------------------------------------------------------------------------------


async def start_daily(c: Client) -> str:
    g = await c.request("daily.start", variant="fourteen-out")
    assert g["type"] == "game", g
    return str(g["game_id"])


async def test_hint_flood_is_refused_while_another_players_hint_is_served(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """A cheater opens five sessions on one token and asks for five hints at once: one is
    computed, four are `rate_limited`, and another player's hint is served meanwhile."""
    async with running(redis_url, tmp_path, redis_client) as app:
        cheat = await v5(app, name="flooder")
        honest = await v5(app, name="honest")
        game = await start_daily(cheat)
        honest_game = await start_daily(honest)
        sessions = [cheat, *[await v5(app, token=cheat.token) for _ in range(4)]]
        replies = await asyncio.gather(
            honest.request("hint", game_id=honest_game, timeout=30),
            *(s.request("hint", game_id=game, timeout=30) for s in sessions),
        )
        assert replies[0]["type"] == "hint" and replies[0]["move"], replies[0]
        kinds = sorted(r["type"] if r["type"] == "hint" else r["code"] for r in replies[1:])
        assert kinds == ["hint", "rate_limited", "rate_limited", "rate_limited", "rate_limited"]
        # Counted once; once the hint is answered, the next one is served.
        assert next(r for r in replies[1:] if r["type"] == "hint")["hints"] == 1
        r = await cheat.request("hint", game_id=game, timeout=30)
        assert r["type"] == "hint" and r["hints"] == 2, r
        for c in (honest, *sessions):
            await c.close()


async def test_a_full_hint_queue_answers_unavailable(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with running(redis_url, tmp_path, redis_client, hint_queue_max=1) as app:
        a, b = await v5(app, name="first"), await v5(app, name="second")
        ga, gb = await start_daily(a), await start_daily(b)
        ra, rb = await asyncio.gather(
            a.request("hint", game_id=ga, timeout=30), b.request("hint", game_id=gb, timeout=30)
        )
        got = sorted([ra, rb], key=lambda r: r["type"])
        assert got[0]["type"] == "error" and got[0]["code"] == "unavailable", got
        assert "retry" in got[0]["message"]
        assert got[1]["type"] == "hint"
        late, game = (b, gb) if rb["type"] == "error" else (a, ga)
        r = await late.request("hint", game_id=game, timeout=30)  # the queue is free again
        assert r["type"] == "hint", r
        await a.close()
        await b.close()


async def test_closing_mid_hint_leaves_no_lock(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """A client that asks for a hint and hangs up does not block its player's next hint."""
    async with running(redis_url, tmp_path, redis_client) as app:
        c = await v5(app, name="leaver")
        game = await start_daily(c)
        await c.ws.send(msgpack.packb({"type": "hint", "id": 99, "game_id": game}))
        await c.close()
        lock = f"sol:{{players}}:hint:{c.player_id}"
        for _ in range(100):
            if not await redis_client.exists(lock):
                break
            await asyncio.sleep(0.1)
        assert not await redis_client.exists(lock)
        again = await v5(app, token=c.token)
        assert (await again.request("hint", game_id=game, timeout=30))["type"] == "hint"
        await again.close()
