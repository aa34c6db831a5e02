"""Daily play end to end over real WebSockets and real Redis (the app in-process)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import signal
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import msgpack  # type: ignore[import-untyped]
import pytest
import pytest_asyncio
import redis.asyncio
import websockets

from engine import VARIANT_IDS, from_view, new_game
from server.config import Config
from tests.support.app import App, serve
from tests.support.procs import ServerProcess
from tests.support.wsclient import Client

DAY_MS = 86_400_000


@pytest_asyncio.fixture
async def app(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    config = replace(
        Config(),
        redis_url=redis_url,
        data_dir=tmp_path,
        daily_secret=b"e2e",
        rate_limit=1000.0,
        rate_burst=1000,
    )
    async with serve(config) as running:
        yield running


def visible(state: dict[str, Any]) -> Counter[str]:
    """Face-up cards of a full state (engine to_json) that a player may see."""
    out: Counter[str] = Counter()
    for key in ("piles", "tableau"):
        for pile in state.get(key) or []:
            for c in pile if isinstance(pile, list) else [pile]:
                if isinstance(c, dict) and c.get("up"):
                    out[c["card"]] += 1
    for key in ("waste", "foundation"):
        out.update(state.get(key) or [])
    for pile in state.get("foundations") or []:
        out.update(pile)
    if isinstance(state.get("discard"), list):
        out.update(state["discard"])
    return out


def view_cards(view: dict[str, Any]) -> Counter[str]:
    out: Counter[str] = Counter()

    def walk(v: Any) -> None:
        if (
            isinstance(v, str)
            and v not in ("??",)
            and v[-1:] in "CDHS"
            and len(v) <= 3
            and v[:-1] in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
        ):
            out[v] += 1
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(view)
    return out


async def full_state(r: redis.asyncio.Redis, game_id: str) -> dict[str, Any]:
    """The server's full state, rebuilt from Redis (the seed never leaves the server)."""
    from server.games.store import GameStore

    store = GameStore(r)
    try:
        record, moves = await store.load(game_id)
    finally:
        await store.batch.aclose()  # its kept connections back to the test's pool
    game = new_game(record.variant, record.seed)
    for m in moves:
        game.play(m)
    state: dict[str, Any] = json.loads(json.dumps(game.to_json()))
    return state


async def test_register_and_reconnect_by_token(app: App) -> None:
    a = await app.client("Alice")
    b = await Client.connect(app.url)
    again = await b.hello(token=a.token)
    assert again["player_id"] == a.player_id and "token" not in again
    c = await Client.connect(app.url)
    bad = await c.request("hello", versions=[1], token="x" * 24)
    assert bad["code"] == "not_authenticated"
    taken = await c.request("hello", versions=[1], name="alice")
    assert taken["code"] == "name_taken"
    early = await (await Client.connect(app.url)).request("daily.start", variant="fourteen-out")
    assert early["code"] == "not_authenticated"


async def test_every_variant_played_to_its_end_and_ranked(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    c = await app.client("player1")
    for variant in VARIANT_IDS:
        g = await c.request("daily.start", variant=variant)
        assert g["type"] == "game" and "seed" not in json.dumps(g)
        view, seq, gid = g["view"], g["seq"], g["game_id"]
        finished = False
        for _ in range(60):
            moves = list(from_view(view).legal_moves())
            if not moves:
                break
            app.clock.advance(100)
            r = await c.request("move", game_id=gid, move=str(moves[0]), expected_seq=seq)
            assert r["type"] == "moved", r
            view, seq = r["view"], r["seq"]
            state = await full_state(redis_client, gid)
            assert view_cards(view) <= visible(state), f"{variant}: a hidden card in the view"
            for ev in r["events"]:
                assert view_cards(ev) <= visible(state)
            if r["finished"]:
                finished = True
                break
        if not finished:
            res = await c.request("resign", game_id=gid)
            assert res["type"] == "finished" and res["result"]["resigned"]
        lb = await c.request("leaderboard.rank", variant=variant)
        assert lb["entry"]["rank"] == 1 and lb["entry"]["me"]


async def test_ranking_among_players(app: App) -> None:
    """Won > cleared > less time > fewer moves, on one day's board."""
    players = [await app.client(n) for n in ("ann", "ben", "cat")]
    results = {}
    for i, c in enumerate(players):
        g = await c.request("daily.start", variant="fourteen-out")
        view, seq = g["view"], 0
        for _ in range(i * 2):  # ann makes 0 pairs, ben 2, cat 4 (if the deal allows)
            moves = list(from_view(view).legal_moves())
            if not moves:
                break
            app.clock.advance(1000)
            r = await c.request("move", game_id=g["game_id"], move=str(moves[0]), expected_seq=seq)
            view, seq = r["view"], r["seq"]
        res = await c.request("resign", game_id=g["game_id"])
        results[c.player_id] = res["result"]
    top = await players[0].request("leaderboard.top", variant="fourteen-out", limit=10)
    order = [e["player_id"] for e in top["entries"]]
    expected = sorted(
        results, key=lambda p: (-results[p]["cleared"], results[p]["time_ms"], results[p]["moves"])
    )
    assert order == expected
    assert [e["rank"] for e in top["entries"]] == [1, 2, 3]
    around = await players[1].request("leaderboard.around", variant="fourteen-out", k=1)
    ben = players[1].player_id
    at = order.index(ben)  # k=1: ben's entry with one neighbour above and one below
    assert [e["player_id"] for e in around["entries"]] == order[max(0, at - 1) : at + 2]
    assert [e["rank"] for e in around["entries"]] == [
        order.index(e["player_id"]) + 1 for e in around["entries"]
    ]
    assert [e["me"] for e in around["entries"]] == [
        e["player_id"] == ben for e in around["entries"]
    ]
    assert around["total"] == 3


async def test_illegal_move_changes_nothing_and_stale_seq_conflicts(app: App) -> None:
    c = await app.client("dora")
    g = await c.request("daily.start", variant="triple-triangle")
    bad = await c.request("move", game_id=g["game_id"], move="1")
    assert bad["code"] == "illegal_move" and "'1'" in bad["message"]
    again = await c.request("game.get", game_id=g["game_id"])
    assert again["seq"] == 0 and again["view"] == g["view"]
    ok = await c.request("move", game_id=g["game_id"], move="d", expected_seq=0)
    assert ok["seq"] == 1
    stale = await c.request("move", game_id=g["game_id"], move="d", expected_seq=0)
    assert stale["code"] == "conflict"
    other = await app.client("eddy")
    theirs = await other.request("game.get", game_id=g["game_id"])
    assert theirs["code"] == "not_found"


async def test_resume_after_drop_and_one_ranked_attempt(app: App) -> None:
    c = await app.client("fred")
    g = await c.request("daily.start", variant="fourteen-out")
    moves = list(from_view(g["view"]).legal_moves())
    r = await c.request("move", game_id=g["game_id"], move=str(moves[0]))
    await c.close()
    c2 = await Client.connect(app.url, binary=False)
    await c2.hello(token=c.token)
    back = await c2.request("daily.start", variant="fourteen-out")
    assert back["game_id"] == g["game_id"] and back["seq"] == 1 and back["view"] == r["view"]
    await c2.request("resign", game_id=g["game_id"])
    done = await c2.request("daily.start", variant="fourteen-out")
    assert done["finished"] and done["result"]["rank"] == 1
    late = await c2.request("move", game_id=g["game_id"], move="1 2")
    assert late["code"] == "game_over"


async def test_day_rollover(app: App) -> None:
    c = await app.client("gina")
    today = await c.request("daily.start", variant="fourteen-out")
    await c.request("resign", game_id=today["game_id"])
    app.clock.advance(DAY_MS)
    tomorrow = await c.request("daily.start", variant="fourteen-out")
    assert tomorrow["date"] != today["date"] and tomorrow["game_id"] != today["game_id"]
    assert tomorrow["view"] != today["view"]
    past = await c.request("leaderboard.top", variant="fourteen-out", date=today["date"])
    assert past["total"] == 1
    # Published once the day is closed: every game of it settled (the rollover sweep).
    assert await app.services.day_closer.sweep(dt.date.fromisoformat(today["date"]))
    seeds = await c.request("daily.seeds", date=today["date"])
    assert "fourteen-out" in seeds["seeds"]
    hidden = await c.request("daily.seeds", date=tomorrow["date"])
    assert hidden["code"] == "not_found"
    export = await c.request("game.export", game_id=today["game_id"])
    assert export["seed"] == seeds["seeds"]["fourteen-out"]


async def test_bad_frames_get_errors_while_others_are_served(app: App) -> None:
    good = await app.client("hank")
    bad_frames: list[tuple[str | bytes, str, int | None]] = [
        (b"\xc1\xff garbage", "bad_request", None),  # not msgpack
        ("not json", "bad_request", None),
        ('{"type":"nope","id":3}', "unknown_type", 3),
        ('{"type":"ping"}', "bad_request", None),  # no id
        ('{"type":"ping","id":"x"}', "bad_request", None),  # an id that is not an integer
        (b"\x93\x01\x02\x03", "bad_request", None),  # msgpack, but an array
    ]
    async with websockets.connect(app.url) as ws:
        for frame, code, req_id in bad_frames:
            await ws.send(frame)
            raw = await ws.recv()
            # Answered in the form it came in: text for text, msgpack for binary.
            assert isinstance(raw, type(frame)), frame
            reply = json.loads(raw) if isinstance(raw, str) else msgpack.unpackb(raw)
            assert (reply["type"], reply["code"], reply.get("id")) == ("error", code, req_id)
            pong = await good.request("ping")
            assert pong["type"] == "pong"
        await ws.send(json.dumps({"type": "ping", "id": 9, "pad": "x" * 70_000}))
        too_large = json.loads(await asyncio.wait_for(ws.recv(), 5))
        # Refused unread: its id is not parsed out of a frame that large (docs/protocol.md §1).
        assert (too_large["code"], too_large.get("id")) == ("too_large", None)
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    assert (await good.request("ping"))["type"] == "pong"


async def test_health_ready_metrics(app: App) -> None:
    c = await app.client("ivan")
    await c.request("daily.start", variant="fourteen-out")
    async with aiohttp.ClientSession() as http:
        async with http.get(app.http + "/healthz") as r:
            assert r.status == 200
        async with http.get(app.http + "/readyz") as r:
            assert r.status == 200
        async with http.get(app.http + "/metrics") as r:
            body = await r.text()
    assert "solitaire_messages_total" in body and 'type="daily.start"' in body


def test_sigterm_tells_clients_and_closes_going_away(tmp_path: Path) -> None:
    srv = ServerProcess(tmp_path / "data").start()
    try:

        async def scenario() -> tuple[dict[str, Any], int]:
            c = await Client.connect(srv.url)
            await c.hello(name="judy")
            srv.popen.send_signal(signal.SIGTERM)
            push = await c.push("shutdown", timeout=10)
            await asyncio.wait_for(c.reader, 10)
            code = c.ws.close_code or 0
            return push, code

        push, code = asyncio.run(scenario())
        assert push["retry_after_ms"] > 0
        assert code == 1001
        assert srv.popen.wait(timeout=15) == 0
    finally:
        srv.stop()


async def test_an_idle_client_is_closed_and_an_active_one_is_not(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    config = replace(
        Config(), redis_url=redis_url, data_dir=tmp_path, daily_secret=b"idle", idle_timeout=0.6
    )
    async with serve(config) as running:
        idle = await running.client("sleepy")
        busy = await running.client("busy")
        for _ in range(8):  # 1.6 s of pings, each well within the timeout
            await asyncio.sleep(0.2)
            assert (await busy.request("ping"))["type"] == "pong"
        await asyncio.wait_for(idle.reader, 5)
        assert idle.ws.close_code == 1001 and idle.ws.close_reason == "idle timeout"
        assert (await busy.request("ping"))["type"] == "pong"
