"""PlayerRegistry against a real Redis."""

from __future__ import annotations

import asyncio
import hashlib
import secrets

import pytest
import redis.asyncio

from server.players import registry as players
from server.players.registry import PlayerRegistry, hash_token
from server.redis import keys
from server.runtime.clock import ManualClock
from server.runtime.errors import InvalidInput, NameTaken


async def test_create_and_authenticate(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    reg = PlayerRegistry(redis_client, clock)
    pid, token = await reg.create("Alice_1")
    assert keys.valid_player_id(pid) and len(pid) == 12
    assert len(token) == 32  # token_urlsafe(24): 192 bits

    player = await reg.authenticate(token)
    assert player is not None
    assert (player.id, player.name, player.created_at_ms) == (pid, "Alice_1", clock.now_ms())
    assert await reg.get(pid) == player
    assert await reg.id_for_name("ALICE_1") == pid


async def test_bad_tokens_do_not_authenticate(redis_client: redis.asyncio.Redis) -> None:
    reg = PlayerRegistry(redis_client)
    _, token = await reg.create("bob")
    assert await reg.authenticate(token + "x") is None
    assert await reg.authenticate("") is None
    assert await reg.authenticate("a" * 10_000) is None
    assert await reg.get("nope") is None
    assert await reg.get("bad id with spaces") is None


async def test_name_unique_ignoring_case(redis_client: redis.asyncio.Redis) -> None:
    reg = PlayerRegistry(redis_client)
    pid, _ = await reg.create("Carol")
    for other in ("carol", "CAROL", "cArOl"):
        with pytest.raises(NameTaken):
            await reg.create(other)
    # A refused create writes nothing: still exactly one player hash.
    assert len([k async for k in redis_client.scan_iter(keys.player_pattern())]) == 1
    assert await redis_client.hlen(keys.players_by_token()) == 1
    assert (await reg.get(pid)).name == "Carol"  # type: ignore[union-attr]


async def test_concurrent_creates_same_name_one_wins(redis_client: redis.asyncio.Redis) -> None:
    reg = PlayerRegistry(redis_client)
    results = await asyncio.gather(
        *(reg.create(n) for n in ["dave", "Dave", "DAVE", "daVe"] * 5), return_exceptions=True
    )
    ok = [r for r in results if not isinstance(r, BaseException)]
    assert len(ok) == 1
    assert all(isinstance(r, NameTaken) for r in results if isinstance(r, BaseException))


async def test_invalid_names_rejected(redis_client: redis.asyncio.Redis) -> None:
    reg = PlayerRegistry(redis_client)
    for bad in ("ab", "x" * 21, "has space", "emoji🙂", "semi;colon"):
        with pytest.raises(InvalidInput):
            await reg.create(bad)


async def test_token_stored_only_hashed(redis_client: redis.asyncio.Redis) -> None:
    reg = PlayerRegistry(redis_client)
    tokens = [(await reg.create(f"user{i}"))[1] for i in range(3)]
    dump = []
    async for key in redis_client.scan_iter("*"):
        dump.append(key)
        kind = await redis_client.type(key)
        if kind == "hash":
            for f, v in (await redis_client.hgetall(key)).items():
                dump += [f, v]
        else:
            dump.append(repr(await redis_client.dump(key)))
    blob = "\n".join(dump)
    for token in tokens:
        assert token not in blob
        assert hash_token(token) == hashlib.sha256(token.encode()).hexdigest()
        assert hash_token(token) in blob


async def test_names_batch(redis_client: redis.asyncio.Redis) -> None:
    reg = PlayerRegistry(redis_client)
    a, _ = await reg.create("erin")
    b, _ = await reg.create("frank")
    got = await reg.names([a, b, a, "unknownpid00", "bad id"])
    assert got == {a: "erin", b: "frank"}
    assert await reg.names([]) == {}


async def test_register_returns_the_player_as_stored(redis_client: redis.asyncio.Redis) -> None:
    reg = PlayerRegistry(redis_client)
    player, token = await reg.register("Grace_7")
    assert await reg.get(player.id) == player
    assert await reg.authenticate(token) == player


def test_player_ids_never_start_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    """`solitaire profile <id>` would read a leading dash as an option (it failed a CLI test)."""
    drawn = iter(["-Ab3_x9Kq2Lm", "--zz12345678", "Zb3_x9Kq2Lm-"])
    monkeypatch.setattr("server.players.registry.secrets.token_urlsafe", lambda n: next(drawn))
    assert players._new_player_id() == "Zb3_x9Kq2Lm-"


async def _inner_calls(r: redis.asyncio.Redis) -> dict[str, int]:
    stats = await r.info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}


async def test_a_new_player_is_seven_commands_and_a_collision_writes_nothing(
    redis_client: redis.asyncio.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #30 (redis-server per game): the new player's script checks the name (by_name,
    by_fold), the id (EXISTS) and the token's digest with the HSETNX that writes it: 7
    commands, not 8. A colliding id or token, drawn again, writes nothing; a taken name is
    refused whatever was drawn."""
    reg = PlayerRegistry(redis_client)
    first, first_token = await reg.register("Ada_1")
    real = secrets.token_urlsafe
    # Drawn: the first player's id again (collides), then the first player's token again
    # (collides), then fresh values.
    drawn = iter([first.id, "tok-ignored", "Zz9_id000001", first_token])

    def draw(n: int) -> str:
        return next(drawn, None) or real(n)

    monkeypatch.setattr("server.players.registry.secrets.token_urlsafe", draw)
    before = await _inner_calls(redis_client)
    second, token = await reg.register("Bob_2")
    after = await _inner_calls(redis_client)
    assert second.id not in (first.id, "Zz9_id000001") and token != first_token
    assert await reg.authenticate(first_token) == first
    assert await reg.authenticate(token) is not None
    assert await redis_client.hlen(keys.players_by_token()) == 2
    assert not await redis_client.exists(keys.player("Zz9_id000001"))
    # three attempts: 3 commands (the id's EXISTS refused), 4 (the token's HSETNX), 7
    inner = {
        c: n - before.get(c, 0)
        for c, n in after.items()
        if c not in ("evalsha", "eval", "info", "script") and n != before.get(c, 0)
    }
    assert inner == {"hexists": 6, "exists": 3, "hsetnx": 2, "hset": 3}, inner
    with pytest.raises(NameTaken):
        await reg.register("ada_1")
