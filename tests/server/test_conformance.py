"""Conformance: the server against docs/protocol.md, over real sockets (issue 12).

The document drives the test, so a drift between the two fails it:

* every request of a ``### `request` → `reply` `` heading is sent, built from the document's
  own JSON example of that request (with the example's ids swapped for real ones), and must
  get the reply type the heading names; every request type the server knows must be
  documented, and every documented one must be exercised here;
* every error code of the §7 table is provoked end to end and must come back with that code;
* every close code of the §1 table is provoked and must end the connection with that code.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest_asyncio
import redis.asyncio
import websockets

import protocol as p
from engine import from_view
from server.config import Config
from tests.support.app import App, serve
from tests.support.procs import free_port
from tests.support.wsclient import Client

DOC = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")
DAY_MS = 86_400_000

#: Documented codes that no request of a correct server can provoke on purpose, and why.
NOT_PROVOKABLE = {
    "internal": "a bug in the server; a correct server never answers it on purpose",
    1013: "a client too slow to read: the close frame itself waits behind the frames it "
          "does not read, so no client can observe it reliably",
}


def _section(number: int) -> str:
    """The text of ``## <number>.`` up to the next ``## `` heading."""
    match = re.search(rf"^## {number}\. .*?(?=^## )", DOC, re.M | re.S)
    assert match is not None, f"docs/protocol.md has no section {number}"
    return match.group(0)


def documented_requests() -> dict[str, str]:
    """request type -> reply type, from every ``### `a`, `b` → `c`; `d` → `e` `` heading."""
    pairs: dict[str, str] = {}
    for heading in re.findall(r"^### (.+)$", DOC, re.M):
        for part in heading.split(";"):
            if "→" not in part:
                continue
            left, right = part.split("→", 1)
            reply = re.findall(r"`([^`]+)`", right)[0]
            for request in re.findall(r"`([^`]+)`", left):
                pairs[request] = reply
    return pairs


def documented_errors() -> list[str]:
    return re.findall(r"^\| `([a-z_]+)` \|", _section(7), re.M)


def documented_closes() -> list[int]:
    return [int(code) for code in re.findall(r"^\| (\d{4}) \(", _section(1), re.M)]


def request_examples() -> dict[str, dict[str, Any]]:
    """The first JSON example of each request type (one that decodes as a request)."""
    found: dict[str, dict[str, Any]] = {}
    for body in re.findall(r"```json\n(.*?)```", DOC, re.S):
        try:
            msg = p.decode(body)
        except p.ProtocolError:
            continue  # a reply or push
        found.setdefault(msg.type, json.loads(body))
    return found


EXAMPLES = request_examples()


def example(kind: str, **override: Any) -> dict[str, Any]:
    """The document's example of request `kind`, without its id, with `override` applied
    (None removes a field)."""
    fields = {k: v for k, v in EXAMPLES[kind].items() if k not in ("type", "id")}
    fields.update(override)
    return {k: v for k, v in fields.items() if v is not None}


async def frames_until_close(ws: websockets.ClientConnection,
                             timeout: float = 15.0) -> tuple[list[dict[str, Any]], int | None]:
    """Every frame until the server closes, and the close code it sent (None: no close
    frame)."""
    got: list[dict[str, Any]] = []

    async def read() -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for frame in ws:
                got.append(msgpack.unpackb(frame) if isinstance(frame, bytes)
                           else json.loads(frame))

    await asyncio.wait_for(read(), timeout)
    rcvd = ws.protocol.close_rcvd
    return got, rcvd.code if rcvd is not None else None


@dataclass
class Results:
    replies: dict[str, dict[str, Any]] = field(default_factory=dict)  # request type -> reply
    errors: dict[str, dict[str, Any]] = field(default_factory=dict)  # code -> error reply
    closes: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # code -> frames


@pytest_asyncio.fixture
async def app(redis_url: str, redis_client: redis.asyncio.Redis,
              tmp_path: Path) -> AsyncIterator[App]:
    config = replace(Config(), redis_url=redis_url, data_dir=tmp_path, daily_secret=b"conf",
                     race_countdown_ms=60_000, hint_budget_s=5.0)
    async with serve(config) as running:
        yield running


async def _requests(app: App, out: Results) -> None:
    """Every documented request, from its example, in an order that gives each a subject."""
    async def ask(c: Client, kind: str, **override: Any) -> dict[str, Any]:
        reply = await c.request(kind, **example(kind, **override))
        out.replies[kind] = reply
        return reply

    me, bob, carol = [await Client.connect(app.url) for _ in range(3)]
    welcome = await ask(me, "hello", name="conf_me", versions=[1, 2, 3])
    me.player_id, me.token = welcome["player_id"], welcome["token"]
    await bob.hello(name="conf_bob", versions=(1, 2, 3))
    await carol.hello(name="conf_carol", versions=(1, 2, 3))
    await ask(me, "ping")
    # Day 0: a daily game played, hinted, undone and resigned; a Triple Deck game finished.
    game = await ask(me, "daily.start", variant="fourteen-out")
    gid = game["game_id"]
    await ask(me, "game.get", game_id=gid)
    move = str(next(iter(from_view(game["view"]).legal_moves())))
    await ask(me, "move", game_id=gid, move=move, expected_seq=0)
    await ask(me, "undo", game_id=gid, expected_seq=1)
    await ask(me, "hint", game_id=gid)
    await ask(me, "resign", game_id=gid)
    deck = await me.request("daily.start", variant="triple-deck")
    await ask(me, "finish", game_id=deck["game_id"])
    day0 = game["date"]
    await ask(me, "leaderboard.top", variant="fourteen-out", date=day0)
    await ask(me, "leaderboard.around", variant="fourteen-out", date=day0)
    await ask(me, "leaderboard.rank", variant="fourteen-out", date=day0)
    # Day 1: day 0 is over, its seeds and games are public.
    app.clock.advance(DAY_MS)
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
    # Errors that need this world: a finished game, a race still counting down.
    out.errors["game_over"] = await me.request("move", game_id=gid, move=move)
    early = await me.request("race.get", race_id=race_id)
    out.errors["not_started"] = await me.request(
        "move", game_id=early["race"]["game_id"], move="1 2")
    today = await me.request("daily.start", variant="fourteen-out")
    out.errors["illegal_move"] = await me.request("move", game_id=today["game_id"],
                                                  move="1 1")
    out.errors["not_found"] = await me.request("daily.start", variant="klondike")
    out.errors["conflict"] = await me.request("hello", versions=[3], token=me.token)
    out.errors["unknown_type"] = await me.request("no.such.request")
    await me.ws.send("{not json")
    out.errors["bad_request"] = await me.push("error")
    fresh = await Client.connect(app.url)
    out.errors["not_authenticated"] = await fresh.request("daily.start", variant="fourteen-out")
    out.errors["name_taken"] = await fresh.request("hello", versions=[3], name="conf_me")
    out.errors["invalid_name"] = await fresh.request("hello", versions=[3], name="no way!")
    for c in (me, bob, carol, fresh):
        await c.close()


async def _closes(app: App, out: Results) -> None:
    """The closes that need nothing but a socket: 1002, 1008, 1009."""
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
    for i in range(200):
        await ws.send(json.dumps({"type": "ping", "id": i}))
    frames, code = await frames_until_close(ws)
    assert code == 1008, frames[-3:]
    out.closes[1008] = frames
    out.errors["rate_limited"] = next(f for f in frames if f.get("code") == "rate_limited")


async def _outage_and_goodbyes(tmp_path: Path, out: Results) -> None:
    """`unavailable` from a server whose Redis is down, and both 1001 closes: the idle
    timeout, and the server going away (after `shutdown`)."""
    dead = f"redis://127.0.0.1:{free_port()}/0"
    config = replace(Config(), redis_url=dead, data_dir=tmp_path / "dead", daily_secret=b"x",
                     idle_timeout=0.5)
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


async def test_the_server_does_what_docs_protocol_md_says(app: App, tmp_path: Path) -> None:
    out = Results()
    await _requests(app, out)
    await _closes(app, out)
    await _outage_and_goodbyes(tmp_path, out)

    documented = documented_requests()
    assert set(documented) == set(p.CLIENT_MESSAGES), \
        "every request the server knows is documented (a `### `x` → `y`` heading), and only those"
    assert set(out.replies) == set(documented), "every documented request was exercised"
    for kind, reply_type in documented.items():
        reply = out.replies[kind]
        assert reply["type"] == reply_type, f"{kind}: documented {reply_type}, got {reply}"
        p.decode_server(json.dumps(reply))  # and it has the documented schema

    codes = documented_errors()
    assert len(codes) >= 15 and set(codes) == {str(c) for c in p.ErrorCode}, \
        "the §7 table lists exactly the server's error codes"
    provoked = set(codes) - {c for c in NOT_PROVOKABLE if isinstance(c, str)}
    assert set(out.errors) == provoked, "every documented error code was provoked"
    for code in provoked:
        reply = out.errors[code]
        assert (reply["type"], reply["code"]) == ("error", code), f"{code}: got {reply}"

    closes = documented_closes()
    assert len(closes) >= 5, "the §1 close table is where this test reads it"
    assert set(out.closes) == set(closes) - set(NOT_PROVOKABLE)
    assert out.closes[1001][0]["type"] == "shutdown", "going away: `shutdown` first"
    assert out.closes[1002][0]["code"] == "unsupported_version"
    assert out.closes[1009][0]["code"] == "too_large"
    assert out.closes[1008][-1]["code"] == "rate_limited", "every reply before the 1008"

