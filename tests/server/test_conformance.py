"""Conformance: the server against docs/protocol.md, over real sockets (issue 12).

The document drives the test, so a drift between the two fails it:

* every request of a ``### `request` → `reply` `` heading is sent, built from the document's
  own JSON example of that request (with the example's ids swapped for real ones), and must
  get the reply type the heading names; every request type the server knows must be
  documented, and every documented one must be exercised here;
* every error code of the §7 table is provoked end to end and must come back with that code
  (`internal` from a second app whose `ping` handler has a bug injected);
* every close code of the §1 table is provoked and must end the connection with that code
  (1013 from a client that stops reading, on an app with a tiny send queue);
* the clients offer every version the server speaks, and use version 4's `with_view`;
* the versions the document claims are the server's, and each field table of §5 and §6 lists
  exactly the fields of its message or nested map (no table split by a paragraph).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
import pytest_asyncio
import redis.asyncio
import websockets

import protocol as p
from engine import from_view
from protocol.schema import Struct, fields_of
from server.config import Config
from server.transport.router import Router
from server.transport.session import Session
from tests.support.app import App, serve
from tests.support.procs import free_port
from tests.support.protodoc import (
    claimed_versions,
    documented_closes,
    documented_errors,
    documented_requests,
    example,
    field_tables,
    stray_table_rows,
)
from tests.support.slowreader import close_a_slow_reader
from tests.support.wsclient import Client

DAY_MS = 86_400_000
#: Every version the server speaks, as a client offers them in `hello`.
ALL_VERSIONS = sorted(p.SUPPORTED_VERSIONS)


async def frames_until_close(
    ws: websockets.ClientConnection, timeout: float = 15.0
) -> tuple[list[dict[str, Any]], int | None]:
    """Every frame until the server closes, and the close code it sent (None: no close
    frame)."""
    got: list[dict[str, Any]] = []

    async def read() -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for frame in ws:
                got.append(
                    msgpack.unpackb(frame) if isinstance(frame, bytes) else json.loads(frame)
                )

    await asyncio.wait_for(read(), timeout)
    rcvd = ws.protocol.close_rcvd
    return got, rcvd.code if rcvd is not None else None


@dataclass
class Results:
    replies: dict[str, dict[str, Any]] = field(default_factory=dict)  # request type -> reply
    errors: dict[str, dict[str, Any]] = field(default_factory=dict)  # code -> error reply
    closes: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # code -> frames


@pytest.fixture
def config(redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path) -> Config:
    return replace(
        Config(),
        redis_url=redis_url,
        data_dir=tmp_path,
        daily_secret=b"conf",
        race_countdown_ms=60_000,
        hint_budget_s=5.0,
        race_rooms_per_hour=1,  # a second room within the hour: `limit_reached`
    )


@pytest_asyncio.fixture
async def app(config: Config) -> AsyncIterator[App]:
    async with serve(config) as running:
        yield running


async def _requests(app: App, out: Results) -> None:
    """Every documented request, from its example, in an order that gives each a subject."""

    async def ask(c: Client, kind: str, **override: Any) -> dict[str, Any]:
        reply = await c.request(kind, **example(kind, **override))
        out.replies[kind] = reply
        return reply

    me, bob, carol = [await Client.connect(app.url) for _ in range(3)]
    welcome = await ask(me, "hello", name="conf_me", versions=ALL_VERSIONS)
    assert welcome["version"] == max(ALL_VERSIONS), "the highest version both sides speak"
    me.player_id, me.token = welcome["player_id"], welcome["token"]
    await bob.hello(name="conf_bob", versions=tuple(ALL_VERSIONS))
    await carol.hello(name="conf_carol", versions=tuple(ALL_VERSIONS))
    await ask(me, "ping")
    # Day 0: a daily game played, hinted, undone and resigned; a Triple Deck game finished.
    game = await ask(me, "daily.start", variant="fourteen-out")
    gid = game["game_id"]
    await ask(me, "game.get", game_id=gid)
    move = str(next(iter(from_view(game["view"]).legal_moves())))
    moved = await ask(me, "move", game_id=gid, move=move, expected_seq=0, with_view=True)
    now = await me.request("game.get", game_id=gid)
    assert moved["view"] == now["view"] and now["seq"] == 1, "with_view: the whole new view"
    lean = await ask(me, "undo", game_id=gid, expected_seq=1)
    assert "view" not in lean and lean["seq"] == 2, "no view unless asked for (version 2 on)"
    await ask(me, "hint", game_id=gid)
    await ask(me, "resign", game_id=gid)
    deck = await me.request("daily.start", variant="triple-deck")
    await ask(me, "finish", game_id=deck["game_id"])
    day0 = game["date"]
    await ask(me, "leaderboard.top", variant="fourteen-out", date=day0)
    await ask(me, "leaderboard.around", variant="fourteen-out", date=day0)
    await ask(me, "leaderboard.rank", variant="fourteen-out", date=day0)
    # Version 8: a tier of today and the month's calendar.
    hard = await me.request("daily.start", variant="fourteen-out", tier="hard")
    assert hard["tier"] == "hard" and hard["game_id"] != gid, "a tier's own game"
    await ask(me, "calendar.get")
    # Day 1: day 0 is over, its seeds and games are public.
    app.clock.advance(DAY_MS)
    assert await app.services.day_closer.sweep(dt.date.fromisoformat(day0)), "day 0 closed"
    await ask(me, "daily.seeds", date=day0)
    await ask(me, "game.export", game_id=gid)
    await ask(carol, "profile.get", name="conf_me")
    await ask(me, "history.get", variant="fourteen-out", before=None)
    # Races: the queue, a private room of two, spectated by a third player, and the boards.
    await ask(me, "race.queue", variant="fourteen-out")
    await ask(me, "race.leave")
    room = await ask(me, "race.create")
    race_id, code = room["race"]["race_id"], room["race"]["code"]
    await ask(bob, "race.join", code=code)
    await ask(me, "race.start", race_id=race_id)
    await ask(bob, "race.get", race_id=race_id, since=0)
    await ask(carol, "race.list", variant=room["race"]["variant"])
    await ask(carol, "race.watch", race_id=race_id)
    await ask(carol, "race.unwatch", race_id=race_id)
    variant = example("race.top")["variant"]
    await ask(me, "race.top", variant=variant)
    await ask(me, "race.around", variant=variant)
    await ask(me, "race.rank", variant=variant, date=None)
    await ask(me, "race.recent", variant=variant)
    # Errors that need this world: a finished game, a past day's game, a race counting down.
    done = await me.request("daily.start", variant="triple-triangle")
    await me.request("resign", game_id=done["game_id"])
    out.errors["game_over"] = await me.request("move", game_id=done["game_id"], move="d")
    out.errors["day_over"] = await me.request("move", game_id=gid, move=move)
    early = await me.request("race.get", race_id=race_id)
    out.errors["not_started"] = await me.request(
        "move", game_id=early["race"]["game_id"], move="1 2"
    )
    # carol's room is her one of the hour: once it is closed, another is refused.
    assert (await carol.request("race.create", variant="fourteen-out"))["type"] == "race.room"
    assert (await carol.request("race.leave"))["type"] == "race.left"
    out.errors["limit_reached"] = await carol.request("race.create", variant="fourteen-out")
    today = await me.request("daily.start", variant="fourteen-out")
    out.errors["illegal_move"] = await me.request("move", game_id=today["game_id"], move="1 1")
    out.errors["not_found"] = await me.request("daily.start", variant="klondike")
    out.errors["conflict"] = await me.request("hello", versions=[3], token=me.token)
    out.errors["unknown_type"] = await me.request("no.such.request")
    await me.ws.send("{not json")
    out.errors["bad_request"] = await me.push("error")
    fresh = await Client.connect(app.url)
    out.errors["not_authenticated"] = await fresh.request("daily.start", variant="fourteen-out")
    out.errors["name_taken"] = await fresh.request("hello", versions=[3], name="conf_me")
    out.errors["invalid_name"] = await fresh.request("hello", versions=[3], name="no way!")
    # Accounts (version 7): a second device signed in by a code; the code is then dead.
    shown = await ask(me, "signin.code")
    device = await Client.connect(app.url)
    signed = await ask(device, "signin.redeem", code=shown["code"].lower())
    assert signed["player_id"] == me.player_id and signed["token"] != me.token
    out.errors["invalid_code"] = await fresh.request(
        "signin.redeem", versions=ALL_VERSIONS, code=shown["code"]
    )
    await device.close()
    # Devices (version 9): a device signed in by a code is listed; on trial it may not sign
    # me (the original device) out; I sign it out.
    shown = await me.request("signin.code")
    newer = await Client.connect(app.url)
    signed = await newer.request("signin.redeem", versions=ALL_VERSIONS, code=shown["code"])
    assert signed["version"] == max(ALL_VERSIONS), signed
    listed = await ask(me, "devices")
    mine = next(d for d in listed["devices"] if d["current"])
    out.errors["not_trusted_yet"] = await newer.request("device.revoke", device=mine["device"])
    last = listed["devices"][-1]
    assert last["how"] == "code" and last["can_revoke"], listed
    left = await ask(me, "device.revoke", device=last["device"])
    assert last["device"] not in {d["device"] for d in left["devices"]}
    await newer.close()
    free = await ask(me, "free.start")
    assert free["free"] is True and free["game_id"] != gid
    # Rematch (version 7): a race of two run to its end, a rematch asked and declined.
    x, y = await Client.connect(app.url), await Client.connect(app.url)
    await x.hello(name="conf_x", versions=tuple(ALL_VERSIONS))
    await y.hello(name="conf_y", versions=tuple(ALL_VERSIONS))
    duel = (await y.request("race.create", variant="fourteen-out", size=2))["race"]
    await x.request("race.join", code=duel["code"])
    await y.request("race.start", race_id=duel["race_id"])
    app.clock.advance(60_000)
    for c in (x, y):
        got = await c.push("race.started", race_id=duel["race_id"])
        await c.request("resign", game_id=got["game_id"])
    while (await x.push("race.update"))["race"]["status"] != "finished":
        pass
    again = await ask(x, "race.rematch", race_id=duel["race_id"])  # x's one room this hour
    offer = await y.push("race.rematch_offer")
    assert offer["race_id"] == again["race"]["race_id"]
    await ask(y, "race.decline", race_id=offer["race_id"])
    assert (await x.push("race.rematch_declined"))["player_id"] == y.player_id
    for c in (x, y):
        await c.close()
    # Tokens (version 5): a second session of mine is closed (4001) by `token.revoke_all`.
    rotated = await ask(me, "token.rotate")
    mine = await websockets.connect(app.url, max_size=2**20)
    await mine.send(
        json.dumps({"type": "hello", "id": 1, "versions": [5], "token": rotated["token"]})
    )
    assert json.loads(await mine.recv())["type"] == "welcome"
    await ask(me, "token.revoke_all")
    out.closes[4001], code = await frames_until_close(mine)
    assert code == 4001, out.closes[4001]
    for c in (me, bob, carol, fresh):
        await c.close()


async def _closes(app: App, out: Results) -> None:
    """The closes that need nothing but a socket: 1002, 1007, 1008, 1009."""
    ws = await websockets.connect(app.url, max_size=2**20)
    await ws.send(json.dumps({"type": "hello", "id": 1, "versions": [99], "name": "conf_v"}))
    out.closes[1002], code = await frames_until_close(ws)
    assert code == 1002, out.closes[1002]
    out.errors["unsupported_version"] = out.closes[1002][0]

    ws = await websockets.connect(app.url, max_size=2**20)
    big = json.dumps({"type": "ping", "id": 7})[:-1] + " " * (p.MAX_FRAME_SIZE + 10) + "}"
    await ws.send(big)
    frames, code = await frames_until_close(ws)
    assert code == 1009, frames
    out.closes[1009] = frames
    out.errors["too_large"] = frames[0]

    ws = await websockets.connect(app.url, max_size=2**20)
    await ws.send(b'{"type": "ping", "id": 8, "x": "\xff"}', text=True)  # not UTF-8
    frames, code = await frames_until_close(ws)
    assert code == 1007, frames
    out.closes[1007] = frames

    ws = await websockets.connect(app.url, max_size=2**20)
    for i in range(200):
        await ws.send(json.dumps({"type": "ping", "id": i}))
    frames, code = await frames_until_close(ws)
    assert code == 1008, frames[-3:]
    out.closes[1008] = frames
    out.errors["rate_limited"] = next(f for f in frames if f.get("code") == "rate_limited")


async def _limits(config: Config, out: Results) -> None:
    """`limit_reached` from a server allowing one new player per address and hour."""
    async with serve(replace(config, accounts_per_address_hour=1)) as limited:
        first = await limited.client("conf_lim1", versions=tuple(ALL_VERSIONS))
        second = await Client.connect(limited.url)
        out.errors["limit_reached"] = await second.request(
            "hello", versions=ALL_VERSIONS, name="conf_lim2"
        )
        for c in (first, second):
            await c.close()


async def broken_ping(session: Session, req: p.Ping) -> p.ServerMessage:
    raise ZeroDivisionError("a bug injected into the ping handler")


async def _a_bug_and_a_slow_reader(
    config: Config, caplog: pytest.LogCaptureFixture, out: Results
) -> None:
    """`internal` from a second app whose `ping` handler has a bug, and on it 1013: a client
    that stops reading while its send queue (4 frames here) overflows."""
    slow = replace(config, send_queue_max=4, rate_limit=1e6, rate_burst=1_000_000)
    async with serve(slow, routes=Router().on(p.Ping, broken_ping), send_buffer=4096) as buggy:
        c = await buggy.client("conf_bug", versions=tuple(ALL_VERSIONS))
        out.errors["internal"] = await c.request("ping")
        assert (await c.request("race.list"))["type"] == "race.list", "and it goes on"
        await c.close()
        closed = await close_a_slow_reader(buggy, caplog)
    assert (closed.code, closed.reason) == (1013, "too slow"), closed.frames[-3:]
    out.closes[1013] = closed.frames


async def _outage_and_goodbyes(tmp_path: Path, out: Results) -> None:
    """`unavailable` from a server whose Redis is down, and both 1001 closes: the idle
    timeout, and the server going away (after `shutdown`)."""
    dead = f"redis://127.0.0.1:{free_port()}/0"
    config = replace(
        Config(), redis_url=dead, data_dir=tmp_path / "dead", daily_secret=b"x", idle_timeout=0.5
    )
    async with serve(config) as down:
        c = await Client.connect(down.url)
        out.errors["unavailable"] = await c.request("hello", versions=[3], name="conf_down")
        idle = await websockets.connect(down.url)
        frames, code = await frames_until_close(idle)
        assert code == 1001 and frames == []
        leaving = await websockets.connect(down.url)
        await leaving.send(json.dumps({"type": "ping", "id": 1}))
        assert json.loads(await leaving.recv())["type"] == "pong"
    frames, code = await frames_until_close(leaving)
    assert code == 1001, frames
    out.closes[1001] = frames
    await c.close()


async def test_the_server_does_what_docs_protocol_md_says(
    app: App, config: Config, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = Results()
    await _requests(app, out)
    await _closes(app, out)
    await _limits(config, out)
    await _a_bug_and_a_slow_reader(config, caplog, out)
    await _outage_and_goodbyes(tmp_path, out)

    documented = documented_requests()
    assert set(documented) == set(p.CLIENT_MESSAGES), (
        "every request the server knows is documented (a `### `x` → `y`` heading), and only those"
    )
    assert set(out.replies) == set(documented), "every documented request was exercised"
    for kind, reply_type in documented.items():
        reply = out.replies[kind]
        assert reply["type"] == reply_type, f"{kind}: documented {reply_type}, got {reply}"
        p.decode_server(json.dumps(reply))  # and it has the documented schema

    codes = documented_errors()
    assert len(codes) >= 15 and set(codes) == {str(c) for c in p.ErrorCode}, (
        "the §7 table lists exactly the server's error codes"
    )
    assert set(out.errors) == set(codes), "every documented error code was provoked"
    for code in codes:
        reply = out.errors[code]
        assert (reply["type"], reply["code"]) == ("error", code), f"{code}: got {reply}"

    closes = documented_closes()
    assert len(closes) >= 5, "the §1 close table is where this test reads it"
    assert set(out.closes) == set(closes), "every documented close code was provoked"
    assert out.closes[1001][0]["type"] == "shutdown", "going away: `shutdown` first"
    assert out.closes[1002][0]["code"] == "unsupported_version"
    assert out.closes[1002][0]["versions"] == ALL_VERSIONS, "the versions in a field"
    assert out.closes[1009][0]["code"] == "too_large"
    assert out.closes[1008][-1]["code"] == "rate_limited", "every reply before the 1008"
    assert len(out.closes[1013]) > 2, "the frames queued before the 1013 are delivered"


def test_the_versions_the_document_claims_are_the_servers() -> None:
    claims = claimed_versions()
    assert claims == {where: set(p.SUPPORTED_VERSIONS) for where in claims}, (
        "every place the document names the versions names those the server speaks"
    )


#: The nested maps of §6, by the bold label of their table (the messages go by their type).
NESTED: dict[str, type[Struct]] = {
    "result": p.GameResult,
    "entry": p.LeaderboardEntry,
    "active race": p.ActiveRace,
    "daily game": p.DailyGame,
    "variant descriptor": p.VariantInfo,
}


def wire_fields(cls: type[Struct]) -> set[str]:
    """The fields a table documents: the `id` of requests and replies is said once, in §2,
    for all (only `error`, whose `id` may be absent, lists it)."""
    names = {f.name for f in fields_of(cls)}
    return names - {"id"} if issubclass(cls, p.Reply | p.ClientMessage) else names


def test_every_field_table_lists_its_messages_fields() -> None:
    """Each table of §5 (under a request's heading) and of §6 (under a message's heading, or
    a nested map's bold label) names exactly the fields of the protocol package's class."""
    checked: set[str] = set()
    for number, classes in ((5, {**p.CLIENT_MESSAGES}), (6, {**p.SERVER_MESSAGES, **NESTED})):
        tables = field_tables(number)
        assert set(tables) <= set(classes), f"§{number}: a table of no known message"
        for label, documented in tables.items():
            assert len(documented) == len(set(documented)), f"{label}: a field twice"
            assert set(documented) == wire_fields(classes[label]), f"§{number} `{label}`"
            checked.add(label)
    assert {
        "hello",
        "move",
        "welcome",
        "game",
        "moved",
        "leaderboard",
        "error",
        "result",
        "entry",
    } <= checked, "the tables are where this test reads them"


def test_no_table_is_split_by_a_paragraph() -> None:
    assert stray_table_rows() == [], "a row after prose renders as text, outside its table"
