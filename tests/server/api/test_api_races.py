"""Races and players through the public API (issue #29), on the real server: running races
listed for spectators, a race's event stream under the spectator rules (the cheat of
watching one's own race from outside, played over HTTP), a finished race with its moves,
profiles and histories by name, race boards, and the per-address rate limit."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
import redis.asyncio

from engine import full_state, new_game
from server.races import spectate
from server.redis import keys
from tests.support.apiclient import ApiClient, schema_validate
from tests.support.apistream import stream, strings
from tests.support.app import App, serve
from tests.support.races import race_config, start_race
from tests.support.wsclient import Client

V5 = (1, 2, 3, 4, 5)
VARIANT = "triple-triangle"  # a stock and face-down cards: plenty a spectator must not see


async def room(app: App, *clients: Client) -> str:
    made = await clients[0].request("race.create", variant=VARIANT, size=len(clients))
    for c in clients[1:]:
        assert (await c.request("race.join", code=made["race"]["code"]))["type"] == "race.room"
    race_id: str = made["race"]["race_id"]
    assert (await clients[0].request("race.start", race_id=race_id))["type"] == "race.room"
    return race_id


async def test_a_race_stream_hides_what_a_racer_has_not_seen_then_the_race_is_published(
    race_app: App,
    api: ApiClient,
    session: aiohttp.ClientSession,
    redis_client: redis.asyncio.Redis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cheat: a racer follows their own race over HTTP; the rival's stock draws are the
    racer's own next cards. The stream's boards of the rival stay at the deal while the racer
    has not seen them, as a WebSocket spectator's do."""
    monkeypatch.setattr(spectate, "DELAY_MS", 200)
    cheat, rival = await race_app.client("cheat", versions=V5), await race_app.client("rival")
    race_id = await room(race_app, cheat, rival)
    live = (await api.get(f"/api/v1/races/live?variant={VARIANT}")).json()
    assert [r["race_id"] for r in live["races"]] == [race_id]
    running = await api.get(f"/api/v1/races/{race_id}")
    assert running.json()["finished"] is False and "moves" not in running.json()
    assert "code" not in running.json()["race"], "the room's code is the racers' own"
    assert running.headers["Cache-Control"] == "public, max-age=5"

    async with stream(session, f"{race_app.http}/api/v1/races/{race_id}/events") as events:
        first = await events.until(lambda m: m["type"] == "race.watching")
        assert "code" not in first["race"] and "game_id" not in first["race"]
        started = {s["game_id"]: s for s in await start_race(race_app, cheat, rival)}
        gid_c = keys.race_game_id(race_id, cheat.player_id)
        gid_r = keys.race_game_id(race_id, rival.player_id)
        seen_by_cheat = strings(started[gid_c]["view"])
        for _ in range(3):  # the rival draws from the stock; the cheat does not
            moved = await rival.request("move", game_id=gid_r, move="d")
            assert moved["type"] == "moved", moved
        await events.until(
            lambda m: (
                m["type"] == "race.event"
                and m["event"]["kind"] == "progress"
                and m["event"]["player_id"] == rival.player_id
                and m["event"]["moves"] == 3
            )
        )
        await asyncio.sleep(0.1)  # the boards of that batch
        rival_boards = [
            m["board"]
            for m in events.lines
            if m["type"] == "race.spectate" and m["board"]["player_id"] == rival.player_id
        ]
        assert rival_boards, "the rival's board, as dealt"
        assert {b["seq"] for b in rival_boards} == {0}, "no position after a card is drawn"
        seed = int(await redis_client.hget(keys.race(race_id), "seed") or 0)
        deck = {str(c) for c in full_state(new_game(VARIANT, seed)).cards()}
        drawn = (strings(moved["view"]) & deck) - seen_by_cheat
        assert drawn, "the rival turned up cards the cheat has not seen"
        assert not drawn & set(events.raw.decode().replace('"', " ").split()), "held back"
        assert strings(events.lines) & deck <= seen_by_cheat
        assert '"seed"' not in events.raw.decode()
        for c, gid in ((cheat, gid_c), (rival, gid_r)):
            assert (await c.request("resign", game_id=gid))["type"] == "finished"
        await events.until(lambda m: m["type"] == "race.event" and m["event"]["kind"] == "finished")
        await events.ended()  # the stream ends with the race

    done = await api.get(f"/api/v1/races/{race_id}")
    body = done.json()
    assert body["finished"] and done.headers["Cache-Control"] == "public, max-age=86400, immutable"
    assert {r["name"]: r["place"] for r in body["race"]["racers"]}.keys() == {"cheat", "rival"}
    assert not any("connected" in r for r in body["race"]["racers"]), "the same bytes later"
    assert all(r["resigned"] for r in body["race"]["racers"]), "both gave up (version 10 rows)"
    resigns = [m for m in events.lines if m["type"] == "race.event" and m["event"].get("resigned")]
    assert {m["event"]["player_id"] for m in resigns} == {cheat.player_id, rival.player_id}
    log = await redis_client.lrange(keys.parse_game_id(gid_r).log, 0, -1)
    assert body["moves"] == {"cheat": [], "rival": log} and log == ["d", "d", "d"]
    assert '"seed"' not in done.body.decode(), "a race's seed goes to its racers only"
    again = await api.get(f"/api/v1/races/{race_id}", {"If-None-Match": done.headers["ETag"]})
    assert again.status == 304
    assert (await api.get(f"/api/v1/races/live?variant={VARIANT}")).json()["races"] == []


async def test_profiles_histories_and_race_boards_by_name(race_app: App, api: ApiClient) -> None:
    amy = await race_app.client("Amy_Player", versions=V5)
    g = await amy.request("daily.start", variant="fourteen-out")
    race_app.clock.advance(5_000)
    assert (await amy.request("resign", game_id=g["game_id"]))["type"] == "finished"
    ws = await amy.request("profile.get")
    got = await api.get("/api/v1/players/amy_player")  # any case
    body = got.json()
    assert body["name"] == "Amy_Player" and body["player_id"] == ws["player_id"]
    assert body["daily"] == ws["daily"] and body["recent"] == ws["recent"]
    assert "me" not in body and "id" not in body and "type" not in body
    assert got.headers["Cache-Control"] == "public, max-age=30"
    page = (await api.get("/api/v1/players/Amy_Player/history/fourteen-out?limit=1")).json()
    assert page["name"] == "Amy_Player" and len(page["entries"]) == 1
    ws_page = await amy.request("history.get", variant="fourteen-out", limit=1)
    assert page["entries"] == ws_page["entries"] and page["entries"][0]["resigned"]
    none = (await api.get("/api/v1/players/Amy_Player/history/triple-deck")).json()
    assert none["entries"] == [] and "next_before" not in none
    assert (await api.get("/api/v1/players/Amy_Player/history/fourteen-out?before=x")).status == 400
    races = (await api.get("/api/v1/players/Amy_Player/races/fourteen-out")).json()
    assert races == {"name": "Amy_Player", "variant": "fourteen-out", "races": []}
    board = (await api.get("/api/v1/race-boards/fourteen-out/rating?limit=5")).json()
    assert board["board"] == "rating" and board["date"] is None and board["entries"] == []
    wins = (await api.get("/api/v1/race-boards/fourteen-out/wins")).json()
    assert wins["date"] == "2030-06-15" and wins["total"] == 0


@pytest_asyncio.fixture
async def limited(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    """Two requests a second per address, bursts of 3; the peer (127.0.0.1) is a trusted
    proxy, so X-Forwarded-For names the client."""
    config = replace(
        race_config(redis_url, tmp_path),
        api_rate=2.0,
        api_burst=3,
        api_streams_per_address=1,
        trusted_proxies=("127.0.0.1/32",),
    )
    async with serve(config) as app:
        yield app


async def test_rate_limits_per_address_answer_429_with_retry_after(
    limited: App, session: aiohttp.ClientSession
) -> None:
    api = ApiClient(limited.http, session)
    me = {"X-Forwarded-For": "203.0.113.7"}
    for _ in range(3):
        assert (await api.get("/api/v1/days/today", me)).status == 200
    refused = await api.get("/api/v1/days/today", me)
    assert (refused.status, refused.code) == (429, "rate_limited")
    assert int(refused.headers["Retry-After"]) == 1
    assert refused.headers["Access-Control-Allow-Origin"] == "*"
    # Another address is not held back by this one's requests.
    assert (await api.get("/api/v1/days/today", {"X-Forwarded-For": "198.51.100.1"})).status == 200
    await asyncio.sleep(1.0)
    assert (await api.get("/api/v1/days/today", me)).status == 200
    # One open stream per address here: a second one is refused while the first is open.
    other = {"X-Forwarded-For": "198.51.100.2"}
    async with session.get(
        f"{limited.http}/api/v1/live/fourteen-out/board", headers=other
    ) as first:
        assert first.status == 200
        line = json.loads(await first.content.readline())
        schema_validate(line, "BoardStreamLine")
        second = await api.get("/api/v1/live/fourteen-out/board", other)
        assert (second.status, second.code) == (429, "rate_limited")


async def test_finished_races_are_listed_newest_first_and_paged(
    race_app: App, api: ApiClient
) -> None:
    """Each finished race joins its variant's list once (its end completed by the referee),
    newest first; ``next_before`` pages through it without repeats; running ones are absent."""
    a, b = await race_app.client("lister_a", versions=V5), await race_app.client("lister_b")
    mine: list[str] = []
    for _ in range(3):
        race_id = await room(race_app, a, b)
        await start_race(race_app, a, b)
        for c in (a, b):
            gid = keys.race_game_id(race_id, c.player_id)
            assert (await c.request("resign", game_id=gid))["type"] == "finished"
        for c in (a, b):
            while (await c.push("race.event"))["event"]["kind"] != "finished":
                pass
        mine.append(race_id)
        race_app.clock.advance(60_000)
    running = await room(race_app, a, b)
    # A race's end is listed once spectators know it: the spectator delay after it.
    await asyncio.sleep(race_app.services.spectators.delay_ms / 1000)

    listed: list[dict[str, Any]] = []
    path = f"/api/v1/races/finished?variant={VARIANT}&limit=2"
    for _ in range(50):
        page = (await api.get(path)).json()
        listed += page["races"]
        if page["next_before"] is None:
            break
        path = f"/api/v1/races/finished?variant={VARIANT}&limit=2&before={page['next_before']}"
    ids = [r["race"]["race_id"] for r in listed]
    assert len(ids) == len(set(ids)), "no race on two pages"
    assert running not in ids
    assert [i for i in ids if i in mine] == mine[::-1]
    ends = [r["finished_at"] for r in listed]
    assert ends == sorted(ends, reverse=True)
    first = next(r for r in listed if r["race"]["race_id"] == mine[-1])["race"]
    assert {r["name"] for r in first["racers"]} == {"lister_a", "lister_b"}
    missing = await api.get("/api/v1/races/finished")
    assert (missing.status, missing.code) == (400, "bad_request")


async def test_race_json_shows_nothing_the_stream_has_not_shown_yet(
    race_app: App, api: ApiClient, session: aiohttp.ClientSession
) -> None:
    """The cheat: a racer polls the race's JSON for the rival's live move count (the stream
    gives it 3 s late). The JSON, the live list and a stream's first line now show each
    racer's progress and the race's end only once the spectator delay has passed."""
    delay_s = race_app.services.spectators.delay_ms / 1000
    cheat, rival = await race_app.client("cheat", versions=V5), await race_app.client("rival")
    race_id = await room(race_app, cheat, rival)
    await start_race(race_app, cheat, rival)
    gid_r = keys.race_game_id(race_id, rival.player_id)
    gid_c = keys.race_game_id(race_id, cheat.player_id)
    # The cheat draws the same cards first: spectators see a board only once every racer
    # still playing has seen its cards (docs/fairplay.md), so the rival's board can show.
    for gid, c in ((gid_c, cheat), (gid_r, rival)):
        for _ in range(3):
            assert (await c.request("move", game_id=gid, move="d"))["type"] == "moved"
    moved_at = asyncio.get_running_loop().time()

    def moves(race: dict[str, Any]) -> dict[str, int]:
        return {r["name"]: r["moves"] for r in race["racers"]}

    now = (await api.get(f"/api/v1/races/{race_id}")).json()
    assert moves(now["race"]) == {"cheat": 0, "rival": 0}, "not before the stream shows it"
    listed = (await api.get(f"/api/v1/races/live?variant={VARIANT}")).json()["races"]
    assert [moves(r) for r in listed] == [{"cheat": 0, "rival": 0}]
    async with stream(session, f"{race_app.http}/api/v1/races/{race_id}/events") as events:
        first = await events.until(lambda m: m["type"] == "race.watching")
        assert moves(first["race"]) == {"cheat": 0, "rival": 0}, "nor in a stream's first line"
        # The stream then shows the rival's board after the delay; the JSON no sooner.
        await events.until(
            lambda m: (
                m["type"] == "race.spectate"
                and m["board"]["player_id"] == rival.player_id
                and m["board"]["seq"] == 3
                and m["board"].get("view") is not None
            )
        )
    assert asyncio.get_running_loop().time() - moved_at >= delay_s - 0.1
    later = (await api.get(f"/api/v1/races/{race_id}")).json()
    assert moves(later["race"]) == {"cheat": 3, "rival": 3}

    # The end: not shown (no results, no moves) until the delay has passed.
    for c in (cheat, rival):
        gid = keys.race_game_id(race_id, c.player_id)
        assert (await c.request("resign", game_id=gid))["type"] == "finished"
    ended = await c.push("race.update")
    assert ended["race"]["status"] == "finished"
    early = await api.get(f"/api/v1/races/{race_id}")
    assert early.json()["finished"] is False and "moves" not in early.json()
    assert "immutable" not in early.headers["Cache-Control"]
    assert all("place" not in r for r in early.json()["race"]["racers"])
    done: dict[str, Any] = {}
    deadline = asyncio.get_running_loop().time() + delay_s + 5
    while not done.get("finished"):
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.2)
        done = (await api.get(f"/api/v1/races/{race_id}")).json()
    assert done["moves"]["rival"] == ["d", "d", "d"]
