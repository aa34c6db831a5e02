"""The pub/sub codec: typed messages round-trip, the emit script's payload is `encode`'s,
and anything else is refused with `PubSubDecodeError` (real Redis for the channel path)."""

from __future__ import annotations

import asyncio
import json

import pytest
import redis.asyncio

import protocol.races as pr
from protocol.rematch import RematchDeclined, RematchOffer
from server.races.model import RaceStatus
from server.races.store import RaceStore
from server.redis import keys, pubsub

RACE = "20300615-a1b2c3d4e5f6"
PROGRESS = pr.RacerProgress(
    player_id="p_1", cleared=6, score=6, moves=3, finished=False, won=False, stuck=False
)
ENDED = pr.RaceEnded(
    reason="time limit",
    results=(
        pr.RaceResultEntry(
            player_id="p_1",
            name="alice",
            place=1,
            won=False,
            cleared=6,
            score=6,
            time_ms=60_000,
            moves=3,
            forfeited=False,
            rating=1130,
            rating_change=130,
        ),
        pr.RaceResultEntry(
            player_id="p_2",
            name="bobby",
            place=2,
            won=False,
            cleared=0,
            score=0,
            time_ms=60_000,
            moves=0,
            forfeited=True,
        ),
    ),
)
MESSAGES: list[pubsub.PubSubMessage] = [
    pubsub.RaceEventPublished(race_id=RACE, version=4, event=PROGRESS),
    pubsub.RaceEventPublished(race_id=RACE, version=9, event=ENDED),
    pubsub.RaceEventPublished(
        race_id=RACE, version=1, event=pr.RaceCountdown(start_at=1, ends_at=2)
    ),
    pubsub.PlayerMatched(player_id="p_1", race_id=RACE),
    pubsub.GameEnded(player_id="p_1", game_id="d.triple-deck.2030-06-15.p_1", origin="a1b2c3"),
    pubsub.GameEnded(player_id="p_1", game_id=f"r.{RACE}.p_1", origin="a1b2c3"),
    pubsub.GameEnded(player_id="p_1", game_id=f"f.{RACE}.p_1", origin="a1b2c3"),
    pubsub.PlayerPush(
        player_id="p_2",
        push=RematchOffer(
            race_id=RACE,
            rematch_of="20300615-0a1b2c3d4e5f",
            variant="fourteen-out",
            code="Q7KX2M",
            player_id="p_1",
            name="alice",
            expires_at=1_907_755_260_000,
        ),
    ),
    pubsub.PlayerPush(
        player_id="p_1", push=RematchDeclined(race_id=RACE, player_id="p_2", name="bob")
    ),
    pubsub.SessionsRevoked(player_id="p_1"),
]


@pytest.mark.parametrize("msg", MESSAGES, ids=lambda m: type(m).__name__)
def test_round_trip(msg: pubsub.PubSubMessage) -> None:
    data = pubsub.encode(msg)
    assert pubsub.decode(data) == msg
    assert pubsub.decode(data.decode()) == msg  # what a decode_responses client hands over


def test_unrated_results_keep_their_nulls() -> None:
    data = json.loads(pubsub.encode(MESSAGES[1]))
    assert data["event"]["results"][1]["rating"] is None
    assert list(data["event"]) == ["kind", "reason", "results"]


def _race_event(**changes: object) -> bytes:
    obj = json.loads(pubsub.encode(MESSAGES[0]))
    obj.update(changes)
    return json.dumps({k: v for k, v in obj.items() if v is not ...}).encode()


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"matched 20300615-a1b2c3d4e5f6",
        b'3 {"kind": "progress"}',
        b"\xff\xfe",
        b"[1, 2]",
        b"null",
        b'{"t": "race.evnt"}',
        b'{"race_id": "20300615-a1b2c3d4e5f6"}',
        _race_event(version=0),
        _race_event(version=True),
        _race_event(version="4"),
        _race_event(version=...),
        _race_event(race_id="../etc"),
        _race_event(race_id=7),
        _race_event(extra=1),
        _race_event(event={"kind": "progress", "player_id": "p_1"}),
        _race_event(event={"kind": "teleport"}),
        _race_event(event=[1]),
        _race_event(event={**pr.dump_race_event(PROGRESS), "card": "AS"}),
        b'{"t": "player.matched", "player_id": "p 1", "race_id": "20300615-a1b2c3d4e5f6"}',
        b'{"t": "player.matched", "player_id": "p_1"}',
        b'{"t": "game.ended", "player_id": "p_1", "game_id": "d.nope", "origin": "a"}',
        b'{"t": "game.ended", "player_id": "p_1", "game_id": "d.triple-deck.2030-06-15.p_1"}',
        b'{"t": "game.ended", "player_id": "p_1", "game_id": "d.triple-deck.2030-06-15.p_1",'
        b' "origin": ""}',
        b'{"t": "player.push", "player_id": "p_1", "push": {"type": "pong", "server_time": 1}}',
        b'{"t": "player.push", "player_id": "p_1", "push": {"type": "race.rematch_declined"}}',
        b'{"t": "player.push", "player_id": "p 1", "push": {}}',
        b'{"t": "sessions.revoked"}',
        b'{"t": "sessions.revoked", "player_id": "p 1"}',
        b'{"t": "sessions.revoked", "player_id": 1}',
        b'{"t": "sessions.revoked", "player_id": "p_1", "token": "x"}',
    ],
    ids=repr,
)
def test_malformed_payloads_are_refused(payload: bytes) -> None:
    with pytest.raises(pubsub.PubSubDecodeError):
        pubsub.decode(payload)


def test_encode_refuses_bad_ids() -> None:
    with pytest.raises(ValueError):
        pubsub.encode(pubsub.PlayerMatched(player_id="p_1", race_id="nope"))
    with pytest.raises(ValueError):
        pubsub.encode(pubsub.GameEnded(player_id="p_1", game_id="x", origin="a"))
    with pytest.raises(ValueError):
        pubsub.encode(pubsub.SessionsRevoked(player_id="p 1"))


async def _next_message(ps: redis.asyncio.client.PubSub) -> str:
    for _ in range(50):
        msg = await ps.get_message(ignore_subscribe_messages=True, timeout=0.1)
        if msg is not None:
            return str(msg["data"])
    raise AssertionError("nothing published")


async def test_emit_and_match_publish_codec_payloads(redis_client: redis.asyncio.Redis) -> None:
    store = RaceStore(redis_client, ttl_ms=60_000)
    await store.create(RACE, "fourteen-out", 2, 7, 0, [("p_1", "alice"), ("p_2", "bobby")])
    ps = redis_client.pubsub()
    await ps.subscribe(keys.race_channel(RACE), keys.player_channel("p_2"))
    try:
        assert await store.emit(RACE, pr.RacerJoined(player_id="p_2", name="bobby")) == 1
        assert await store.emit(RACE, PROGRESS) == 2
        first, second = await _next_message(ps), await _next_message(ps)
        assert pubsub.decode(second) == pubsub.RaceEventPublished(RACE, 2, PROGRESS)
        assert second.encode() == pubsub.encode(pubsub.decode(second)), "byte for byte"
        assert pubsub.decode(first) == pubsub.RaceEventPublished(
            RACE, 1, pr.RacerJoined(player_id="p_2", name="bobby")
        )
        await store.announce_match(["p_2"], RACE)
        assert pubsub.decode(await _next_message(ps)) == pubsub.PlayerMatched("p_2", RACE)
    finally:
        await ps.aclose()  # type: ignore[no-untyped-call]
    logged = await store.events_since(RACE, 1)
    assert [(e.version, e.event) for e in logged] == [(2, PROGRESS)]
    assert logged[0].to_wire() == {"v": 2, **pr.dump_race_event(PROGRESS)}
    assert (await store.load(RACE)).version == 2


async def test_forfeits_are_atomic_and_once(redis_client: redis.asyncio.Redis) -> None:
    store = RaceStore(redis_client, ttl_ms=60_000)
    racers = [(f"p_{i}", f"racer{i}") for i in range(6)]
    await store.create(RACE, "fourteen-out", 6, 7, 0, racers)
    assert not await store.add_forfeit(RACE, "p_1"), "an open race has no forfeits"
    assert await store.begin(RACE, 10, 20)
    added = await asyncio.gather(*(store.add_forfeit(RACE, pid) for pid, _ in racers[:5] * 2))
    assert sum(added) == 5, "each racer forfeits exactly once, none lost"
    race = await store.load(RACE)
    assert race.status is RaceStatus.RUNNING
    assert race.forfeited == frozenset(pid for pid, _ in racers[:5])
