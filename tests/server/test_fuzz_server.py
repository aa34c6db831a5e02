"""Protocol fuzzing against a live server (the app in a thread, real TCP, the session Redis).

Random bytes, random text, random msgpack/JSON structures and mutations of valid requests are
sent as binary and text frames. Each frame must be answered (a reply, or an error reply with a
known code other than ``internal``), or the socket closed with a close code; nothing may be
logged at ERROR (an unhandled exception in the server or in aiohttp); and a well-behaved client
on another connection keeps getting correct replies throughout.

The default run is modest; ``test_fuzz_long_run`` (marked slow) sends >= 100,000 frames.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import secrets
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

import protocol as p
from server.config import Config
from server.runtime.clock import system_clock
from tests.support.app import serve

pytestmark = pytest.mark.filterwarnings("ignore:connect\\(\\) must be used:DeprecationWarning")

PUSH_TYPES = frozenset({"race.update", "race.event", "race.started", "shutdown"})
CODES = p.ERROR_CODES - {"internal"}


class ThreadServer:
    """`serve` run by an event loop in a background thread, for these synchronous tests."""

    def __init__(self, config: Config) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.serving = serve(config, system_clock(config.clock_offset_ms))
        app = asyncio.run_coroutine_threadsafe(self.serving.__aenter__(), self.loop).result(30)
        self.url = app.url

    def stop(self) -> None:
        done = self.serving.__aexit__(None, None, None)
        asyncio.run_coroutine_threadsafe(done, self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def _decode(raw: str | bytes) -> dict[str, Any]:
    msg = msgpack.unpackb(raw) if isinstance(raw, bytes) else json.loads(raw)
    assert isinstance(msg, dict), msg
    return msg


class Peer:
    """A sync client; reconnects (and says hello again) after the server closes it."""

    def __init__(self, url: str, name: str | None) -> None:
        self.url, self.name = url, name
        self.token: str | None = None
        self.ws: ClientConnection = self._open()
        self.closes: list[int | None] = []
        self.game_id = ""

    def _open(self) -> ClientConnection:
        ws = connect(self.url, max_size=2**20, open_timeout=10)
        if self.name is not None:
            hello: dict[str, Any] = {"type": "hello", "id": 1, "versions": [1]}
            hello.update({"token": self.token} if self.token else {"name": self.name})
            ws.send(msgpack.packb(hello))
            welcome = _decode(ws.recv(timeout=10))
            assert welcome["type"] == "welcome", welcome
            self.token = self.token or welcome["token"]
        return ws

    def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        self.ws.send(msgpack.packb(msg))
        while True:
            reply = _decode(self.ws.recv(timeout=10))
            if reply.get("type") not in PUSH_TYPES:
                return reply

    def exchange(self, frame: str | bytes) -> dict[str, Any] | None:
        """Send one frame; its answer, or None if the server closed the socket (with a code)."""
        try:
            self.ws.send(frame)
            while True:
                reply = _decode(self.ws.recv(timeout=10))
                if reply.get("type") not in PUSH_TYPES:
                    check_answer(reply)
                    return reply
        except ConnectionClosed:
            code = self.ws.close_code
            assert code is not None and code not in (1006, 1011), f"closed with {code}"
            self.closes.append(code)
            self.ws = self._open()
            return None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ws.close()


def check_answer(reply: dict[str, Any]) -> None:
    assert isinstance(reply.get("type"), str), reply
    if reply["type"] == "error":
        assert reply.get("code") in CODES, reply


@pytest.fixture(scope="module")
def fuzz_server(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadServer]:
    config = replace(
        Config(),
        redis_url=redis_url,
        data_dir=Path(tmp_path_factory.mktemp("fz")),
        daily_secret=b"fuzz",
        rate_limit=1e6,
        rate_burst=1_000_000,
        hint_budget_s=0.2,
    )
    server = ThreadServer(config)
    yield server
    server.stop()


class Scene:
    """A fuzzing connection with a daily game, and a well-behaved client with its own."""

    def __init__(self, url: str) -> None:
        tag = secrets.token_hex(3)
        self.fuzz = Peer(url, f"fz{tag}")
        self.good = Peer(url, f"ok{tag}")
        self.anon = Peer(url, None)
        g = self.fuzz.request({"type": "daily.start", "id": 2, "variant": "fourteen-out"})
        self.fuzz.game_id = g["game_id"]
        g = self.good.request({"type": "daily.start", "id": 2, "variant": "triple-deck"})
        self.good.game_id, self.good_seq = g["game_id"], g["seq"]
        self.good_view = g["view"]
        self.rid = 100

    def templates(self) -> list[dict[str, Any]]:
        gid = self.fuzz.game_id
        return [
            {"type": "hello", "id": 1, "versions": [1], "name": "someone"},
            {"type": "hello", "id": 1, "versions": [1], "token": "x" * 32},
            {"type": "ping", "id": 3},
            {"type": "daily.start", "id": 4, "variant": "fourteen-out"},
            {"type": "game.get", "id": 5, "game_id": gid},
            {"type": "move", "id": 6, "game_id": gid, "move": "1 2", "expected_seq": 0},
            {"type": "undo", "id": 7, "game_id": gid, "expected_seq": 1},
            {"type": "resign", "id": 8, "game_id": gid},
            {
                "type": "leaderboard.top",
                "id": 9,
                "variant": "fourteen-out",
                "offset": 0,
                "limit": 20,
                "date": "2030-06-15",
            },
            {"type": "leaderboard.around", "id": 10, "variant": "triple-deck", "k": 5},
            {"type": "leaderboard.rank", "id": 11, "variant": "triple-triangle"},
            {"type": "race.queue", "id": 12, "variant": "fourteen-out", "size": 2},
            {"type": "race.leave", "id": 13},
            {"type": "race.create", "id": 14, "variant": "fourteen-out", "size": 3},
            {"type": "race.join", "id": 15, "code": "ABCDEF"},
            {"type": "race.start", "id": 16, "race_id": "20300615-abcdef123456"},
            {"type": "race.get", "id": 17, "race_id": "20300615-abcdef123456", "since": 0},
            {"type": "race.top", "id": 18, "variant": "fourteen-out", "board": "rating"},
            {"type": "race.around", "id": 19, "variant": "fourteen-out", "board": "wins", "k": 2},
            {"type": "race.rank", "id": 20, "variant": "fourteen-out", "board": "rating"},
            {"type": "race.recent", "id": 21, "variant": "fourteen-out", "limit": 5},
            {"type": "hint", "id": 22, "game_id": gid},
            {"type": "daily.seeds", "id": 23, "date": "2020-01-01"},
            {"type": "game.export", "id": 24, "game_id": gid},
        ]

    def check_good(self) -> None:
        self.rid += 1
        r = self.good.request({"type": "ping", "id": self.rid})
        assert r == {"type": "pong", "id": self.rid, "server_time": r["server_time"]}, r
        self.rid += 1
        g = self.good.request({"type": "game.get", "id": self.rid, "game_id": self.good.game_id})
        assert g["type"] == "game" and g["id"] == self.rid, g
        assert g["seq"] == self.good_seq and g["view"] == self.good_view

    def close(self) -> None:
        for peer in (self.fuzz, self.good, self.anon):
            peer.close()


# -- strategies ----------------------------------------------------------------------------

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=24)
    | st.binary(max_size=16)
)
_json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=24)


def _tree(leaves: st.SearchStrategy[Any], keys: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda c: st.lists(c, max_size=4) | st.dictionaries(keys, c, max_size=4),
        max_leaves=12,
    )


msgpack_values = _tree(_scalars, st.text(max_size=12) | st.integers(-5, 5) | st.binary(max_size=4))
json_values = _tree(_json_scalars, st.text(max_size=12))
field_names = st.sampled_from(
    [
        "type",
        "id",
        "versions",
        "name",
        "token",
        "variant",
        "game_id",
        "move",
        "expected_seq",
        "offset",
        "limit",
        "k",
        "date",
        "size",
        "code",
        "race_id",
        "since",
        "board",
    ]
) | st.text(max_size=8)


@st.composite
def mutation(draw: st.DrawFn, templates: list[dict[str, Any]]) -> dict[str, Any]:
    msg = dict(draw(st.sampled_from(templates)))
    # values that are valid somewhere: mutants get past validation into the handlers
    plausible = st.sampled_from([v for t in templates for v in t.values()]) | st.integers(-1, 3)
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["drop", "set", "add", "retype", "reid"]))
        if op == "drop" and msg:
            msg.pop(draw(st.sampled_from(sorted(msg))))
        elif op == "set" and msg:
            msg[draw(st.sampled_from(sorted(msg)))] = draw(plausible | json_values)
        elif op == "add":
            msg[draw(field_names)] = draw(plausible | json_values)
        elif op == "retype":
            msg["type"] = draw(st.sampled_from(sorted(p.CLIENT_MESSAGES)) | st.text(max_size=12))
        else:
            msg["id"] = draw(st.integers(-(2**40), 2**40) | json_values)
    return msg


def encode(value: Any, binary: bool) -> bytes | str | None:
    try:
        if binary:
            return msgpack.packb(value, use_bin_type=True)  # type: ignore[no-any-return]
        return json.dumps(value)
    except (TypeError, ValueError, OverflowError):
        return None


@st.composite
def frames(draw: st.DrawFn, templates: list[dict[str, Any]]) -> str | bytes:
    kind = draw(st.sampled_from(["bytes", "text", "structure", "mutation", "mutation"]))
    binary = draw(st.booleans())
    if kind == "bytes":
        return draw(st.binary(max_size=256))
    if kind == "text":
        return draw(st.text(max_size=256))
    value = (
        draw(msgpack_values if binary else json_values)
        if kind == "structure"
        else draw(mutation(templates))
    )
    frame = encode(value, binary)
    if frame is None:  # not encodable that way: send the other form
        frame = encode(value, not binary)
    return frame if frame is not None else repr(value)


# -- tests ---------------------------------------------------------------------------------


def _no_errors_logged(caplog: pytest.LogCaptureFixture) -> None:
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not bad, "\n".join(f"{r.name}: {r.getMessage()}\n{r.exc_text or ''}" for r in bad)


def test_fuzz_frames(fuzz_server: ThreadServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    scene = Scene(fuzz_server.url)
    templates = scene.templates()

    @settings(
        max_examples=500, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(frame=frames(templates), anonymous=st.booleans())
    def fuzz(frame: str | bytes, anonymous: bool) -> None:
        (scene.anon if anonymous else scene.fuzz).exchange(frame)

    try:
        fuzz()
        for _ in range(3):
            scene.check_good()
    finally:
        scene.close()
    _no_errors_logged(caplog)


def test_interleaved_well_behaved_client(
    fuzz_server: ThreadServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Fuzz frames and the good client's requests alternate on one server."""
    caplog.set_level(logging.WARNING)
    scene = Scene(fuzz_server.url)
    rng = random.Random(5)
    templates = scene.templates()
    try:
        for i in range(150):
            scene.fuzz.exchange(random_frame(rng, templates))
            if i % 10 == 0:
                scene.check_good()
    finally:
        scene.close()
    _no_errors_logged(caplog)


def random_frame(rng: random.Random, templates: list[dict[str, Any]]) -> str | bytes:
    """A fast, hypothesis-free frame generator for long runs."""
    kind = rng.randrange(5)
    if kind == 0:
        return rng.randbytes(rng.randrange(64))
    if kind == 1:
        return "".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randrange(64)))
    msg: Any = dict(rng.choice(templates))
    junk: list[Any] = [
        None,
        True,
        -1,
        2**63,
        1.5,
        float("nan"),
        "",
        "x" * 300,
        [],
        {},
        [1, [2, [3]]],
        {"a": {"b": 1}},
        "2030-02-30",
        "d.x.y.z",
        -(2**70),
    ]
    for _ in range(rng.randrange(1, 4)):
        op = rng.randrange(4)
        if op == 0 and msg:
            msg.pop(rng.choice(sorted(msg)))
        elif op == 1 and msg:
            msg[rng.choice(sorted(msg))] = rng.choice(junk)
        elif op == 2:
            msg[rng.choice(["type", "id", "extra", "variant", "size", "k"])] = rng.choice(junk)
        else:
            msg["type"] = rng.choice(sorted(p.CLIENT_MESSAGES))
    if kind == 4:
        msg = rng.choice([[msg], msg, 17, "msg"])
    frame = encode(msg, rng.random() < 0.5) or encode(msg, True) or encode(msg, False)
    if frame is None:
        return b"\xc1"  # never used by msgpack
    if isinstance(frame, bytes) and rng.random() < 0.2:  # truncate or flip a byte
        cut = rng.randrange(len(frame) + 1)
        frame = frame[:cut] + bytes([rng.randrange(256)]) + frame[cut + 1 :]
    return frame


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_fuzz_long_run(fuzz_server: ThreadServer, caplog: pytest.LogCaptureFixture) -> None:
    """>= 100,000 frames, pipelined in batches; the good client is checked between batches."""
    caplog.set_level(logging.WARNING)
    scene = Scene(fuzz_server.url)
    rng = random.Random(2024)
    templates = scene.templates()
    sent = answered = closed = 0
    try:
        while sent < 100_000:
            # fewer frames in flight than the server's send queue holds (64): a client that
            # does not read while it writes is otherwise closed as too slow (1013)
            batch = [random_frame(rng, templates) for _ in range(32)]
            try:
                for frame in batch:
                    scene.fuzz.ws.send(frame)
                    sent += 1  # counted once on the wire: a close cuts the batch short
                while answered < sent:
                    reply = _decode(scene.fuzz.ws.recv(timeout=30))
                    if reply.get("type") not in PUSH_TYPES:
                        check_answer(reply)
                        answered += 1
            except ConnectionClosed:
                code = scene.fuzz.ws.close_code
                assert code is not None and code not in (1006, 1011), code
                closed += 1
                answered = sent  # frames after the close are not answered
                scene.fuzz.ws = scene.fuzz._open()
            scene.check_good()
    finally:
        scene.close()
    assert sent >= 100_000
    assert closed < sent // 100, closed  # most frames were answered, not cut off by a close
    _no_errors_logged(caplog)
