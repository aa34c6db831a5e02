"""The service end to end on a real three-master Redis Cluster: daily play (in-process app)
and a race across two server processes, the same scenarios as on a single Redis
(test_e2e_daily.py, test_races_multiprocess.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio

from engine import VARIANT_IDS, from_view
from server.config import Config
from server.games.store import GameStore
from tests.support.app import App, serve
from tests.support.procs import ServerProcess
from tests.support.races import race_config, start_race
from tests.support.wsclient import Client

pytest_plugins = ["tests.support.cluster"]

FLAGS = ("--daily-secret", "x", "--race-countdown-ms", "300", "--log-level", "WARNING")


@pytest_asyncio.fixture
async def app(
    cluster_url: str, cluster_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    config = replace(
        Config(),
        redis_url=cluster_url,
        data_dir=tmp_path,
        daily_secret=b"e2e",
        rate_limit=1000.0,
        rate_burst=1000,
    )
    async with serve(config) as running:
        yield running


async def test_every_variant_played_and_ranked_on_the_cluster(
    app: App, cluster_client: redis.asyncio.Redis
) -> None:
    players = [await app.client(n) for n in ("cl-ann", "cl-ben")]
    for variant in VARIANT_IDS:
        for i, c in enumerate(players):
            g = await c.request("daily.start", variant=variant)
            assert g["type"] == "game" and "seed" not in json.dumps(g)
            view, seq, gid = g["view"], g["seq"], g["game_id"]
            finished = False
            for _ in range(4 * (i + 1)):  # ben plays further than ann
                moves = list(from_view(view).legal_moves())
                if not moves:
                    break
                app.clock.advance(100)
                r = await c.request("move", game_id=gid, move=str(moves[0]), expected_seq=seq)
                assert r["type"] == "moved", r
                view, seq, finished = r["view"], r["seq"], r["finished"]
                if finished:
                    break
            store = GameStore(cluster_client)
            record, log = await store.load(gid)  # one script on the game's slot
            await store.batch.aclose()
            assert record.seq == seq == len(log)
            if not finished:
                fin = await c.request("resign", game_id=gid)
                assert fin["type"] == "finished" and fin["result"]["resigned"], fin
            again = await c.request("daily.start", variant=variant)
            assert again["game_id"] == gid and again["finished"], again
        top = await players[0].request("leaderboard.top", variant=variant, limit=10)
        assert top["total"] == 2, top
        for c in players:
            rank = await c.request("leaderboard.rank", variant=variant)
            assert rank["entry"]["player_id"] == c.player_id


async def test_register_reconnect_and_names_on_the_cluster(app: App) -> None:
    a = await app.client("Cl-Alice")
    b = await Client.connect(app.url)
    assert (await b.hello(token=a.token))["player_id"] == a.player_id
    taken = await (await Client.connect(app.url)).request("hello", versions=[1], name="cl-alice")
    assert taken["code"] == "name_taken"


async def test_private_room_race_on_the_cluster(
    cluster_url: str, cluster_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with serve(race_config(cluster_url, tmp_path)) as app:
        host, guest = await app.client("cl-host"), await app.client("cl-guest")
        room = await host.request("race.create", variant="fourteen-out")
        assert room["type"] == "race.room", room
        joined = await guest.request("race.join", code=room["race"]["code"])
        assert joined["type"] == "race.room", joined
        await host.request("race.start", race_id=room["race"]["race_id"])
        started = await start_race(app, host, guest)
        assert started[0]["view"] == started[1]["view"]
        for c, s in zip((host, guest), started, strict=True):
            assert (await c.request("resign", game_id=s["game_id"]))["type"] == "finished"
        fin = await guest.push("race.event")
        while fin["event"]["kind"] != "finished":
            fin = await guest.push("race.event")
        assert {r["name"] for r in fin["event"]["results"]} == {"cl-host", "cl-guest"}
        board = await host.request("race.top", variant="fourteen-out", board="rating")
        assert board["type"] == "race.board", board


@pytest.fixture
def two_servers(
    cluster_url: str, cluster_client: redis.asyncio.Redis, tmp_path: Path
) -> Iterator[list[str]]:
    servers: list[ServerProcess] = []
    try:
        for i in range(2):
            servers.append(ServerProcess(tmp_path / f"s{i}", FLAGS, redis_url=cluster_url).start())
        yield [srv.url for srv in servers]
    finally:
        for srv in servers:
            srv.stop()


async def test_race_across_two_processes_on_the_cluster(two_servers: list[str]) -> None:
    url1, url2 = two_servers
    a, b = await Client.connect(url1), await Client.connect(url2)
    await a.hello(name="cl-nora")
    await b.hello(name="cl-oscar")
    await a.request("race.queue", variant="fourteen-out")
    await b.request("race.queue", variant="fourteen-out")
    ua, ub = await a.push("race.update"), await b.push("race.update")
    assert ua["race"]["race_id"] == ub["race"]["race_id"]
    sa, sb = await a.push("race.started"), await b.push("race.started")
    assert sa["view"] == sb["view"]
    moves = list(from_view(sb["view"]).legal_moves())
    moved = await b.request("move", game_id=sb["game_id"], move=str(moves[0]), expected_seq=0)
    assert moved["type"] == "moved"
    ev = await a.push("race.event")  # b's progress, fanned out from the other process
    while ev["event"]["kind"] != "progress":
        ev = await a.push("race.event")
    assert ev["event"]["player_id"] == b.player_id and ev["event"]["moves"] == 1
    await b.close()  # b carries on from the other process
    b2 = await Client.connect(url1)
    await b2.hello(token=b.token)
    game = await b2.request("game.get", game_id=sb["game_id"])
    assert game["seq"] == 1 and game["view"] == moved["view"]
    assert (await a.request("resign", game_id=sa["game_id"]))["type"] == "finished"
    await b2.request("resign", game_id=sb["game_id"])
    fin = await b2.push("race.event")
    while fin["event"]["kind"] != "finished":
        fin = await b2.push("race.event")
    assert {r["name"] for r in fin["event"]["results"]} == {"cl-nora", "cl-oscar"}
