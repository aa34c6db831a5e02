"""A light load generator: precomputed move scripts sent over a minimal WebSocket client.

Made to cost the client as little CPU per request as possible, so that on a small shared
machine the generator is never the limit of a CPU-per-request measurement:

* no engine work: every player plays a script computed before the run
  (``benchmarks/load/scripts.py``) with ``expected_seq``; replies are decoded (msgpack) and
  only their ``type``, ``id``, ``game_id`` and ``finished`` fields are read (never
  ``moved.view``, which protocol version 2 drops);
* no aiohttp, no tasks or futures per request: each player is an ``asyncio.Protocol`` whose
  ``data_received`` parses the WebSocket frames itself and sends the next request from
  there (client frames are masked with an all-zero key, which the RFC allows a server to
  receive as any other key);
* several worker processes (``spawn``), each on uvloop when it is installed.

A run is a fixed amount of work played to its end: each of the ``players`` slots plays
``games`` complete games, one per connection: connect, ``hello`` (a new player, protocol
``versions: [N]``), ``daily.start`` of its variant (slot i plays variant i mod the number of
variants), the script's moves with ``expected_seq``, ``resign`` if the script did not end
the game, close (one daily game per player and day). Measuring whole games matters: the
cost of a move depends on how far the game is (a Triple Easthaven move late in the game
costs several times an early one), so a time window cut out of games started together
would weigh the moves by their position. Closed loop, no think time. Against the echo
server the same frames are sent (the echo's replies carry no game).

Two kinds of client (``GenConfig.client``):

* ``cli``, the terminal client's requests: it runs the engine itself and follows ``moved.events``
  (the server sends the lean reply of the player's version, nothing more);
* ``browser``, the browser page's: ``hello.features: ["rules_free"]``, and it follows each
  ``moved.changes`` as board.js does (``apply_changes``: plain data edits, no rule), checking
  ``seq`` and asking ``game.get`` on a gap. The server then adds to every reply the move in
  words, the changes and the safe moves (handlers/games.py ``_follow``): its cost per move
  beside the CLI's is what this client measures. With ``verify`` each game ends with a
  ``game.get`` whose view must equal the one followed (a check run outside the measured
  windows: it adds a request per game).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from typing import Any, cast

import msgpack  # type: ignore[import-untyped]

from engine.patches import apply_patch

_MASK = b"\x00\x00\x00\x00"
_EXPECT = {
    "hello": "welcome",
    "daily.start": "game",
    "move": "moved",
    "resign": "finished",
    "game.get": "game",
}
#: The view's fields a game's end decided after its last reply changes.
_END_FIELDS = ("over", "won", "can_undo")
#: The kinds of client (module docstring).
CLIENTS = ("cli", "browser")


def apply_changes(view: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """The view a lean ``moved``'s ``changes`` leave (docs/protocol.md, "Following a game"),
    as the browser's ``applyChanges`` (clients/web/assets/board.js) and the engine's
    `apply_patch` compute it: plain data edits, no rule of any game."""
    return apply_patch(view, changes)


@dataclass(frozen=True)
class GenConfig:
    host: str
    port: int
    #: variant -> scripts, as (moves, finished) pairs; player i plays script i % len
    scripts: dict[str, tuple[tuple[tuple[str, ...], bool], ...]]
    variants: tuple[str, ...]
    players: int = 100
    processes: int = 2
    protocol: int = 1
    echo: bool = False
    games: int = 1  # complete games per player slot
    start_at: float = 0.0  # time.time() at which players start connecting
    ramp_s: float = 0.5
    deadline: float = 0.0  # time.time(): no new request after this (a safety net)
    tag: str = "g"
    client: str = "cli"  # CLIENTS: the terminal client's requests or the browser page's
    verify: bool = False  # browser: end each game with a game.get checking the followed view


@dataclass
class GenStats:
    requests: Counter[str] = field(default_factory=Counter)  # replies received, by request
    reply_bytes: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    error_examples: list[str] = field(default_factory=list)
    pushes: int = 0
    players: int = 0
    games: int = 0
    move_ms: list[float] = field(default_factory=list)  # round trips
    resyncs: int = 0  # browser: game.get after a gap in seq or a reply without changes
    verified: int = 0  # browser with verify: games whose followed view equalled game.get's

    def error(self, key: str, example: str) -> None:
        self.errors[key] += 1
        if len(self.error_examples) < 5:
            self.error_examples.append(example[:300])

    def merge(self, other: GenStats) -> None:
        self.requests.update(other.requests)
        self.reply_bytes.update(other.reply_bytes)
        self.errors.update(other.errors)
        self.error_examples += other.error_examples[: max(0, 5 - len(self.error_examples))]
        self.pushes += other.pushes
        self.players += other.players
        self.games += other.games
        self.move_ms += other.move_ms
        self.resyncs += other.resyncs
        self.verified += other.verified

    def mean_reply_sizes(self) -> dict[str, int]:
        return {k: round(self.reply_bytes[k] / n) for k, n in self.requests.items() if n}


class _Gen:
    def __init__(self, cfg: GenConfig, index: int) -> None:
        self.cfg = cfg
        self.index = index
        self.stats = GenStats()
        self.stopping = False
        self.active = 0
        self.generation: Counter[int] = Counter()  # games begun per slot
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transports: set[asyncio.BaseTransport] = set()
        self.slots = [i for i in range(cfg.players) if i % cfg.processes == index]
        self.handshake = (
            f"GET /ws HTTP/1.1\r\nHost: {cfg.host}:{cfg.port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()

    def connect(self, slot: int) -> None:
        if self.stopping:
            self._maybe_done()
            return
        self.active += 1
        asyncio.get_running_loop().create_task(self._connect(slot))

    async def _connect(self, slot: int) -> None:
        loop = asyncio.get_running_loop()
        gen = self.generation[slot]
        self.generation[slot] += 1
        name = f"B{self.cfg.tag}{slot:x}n{gen}"[:20]
        try:
            await loop.create_connection(
                lambda: _Player(self, slot, name, gen), self.cfg.host, self.cfg.port
            )
        except OSError as exc:
            self.stats.error(f"connect:{type(exc).__name__}", repr(exc))
            self.active -= 1
            self.generation[slot] -= 1
            loop.call_later(0.1, self.connect, slot)

    def closed(self, slot: int) -> None:
        self.active -= 1
        if self.stopping or self.generation[slot] >= self.cfg.games:
            self._maybe_done()
        else:
            self.connect(slot)

    def stop(self) -> None:
        self.stopping = True
        self._maybe_done()

    def _maybe_done(self) -> None:
        finished = all(self.generation[s] >= self.cfg.games for s in self.slots)
        if (self.stopping or finished) and self.active <= 0 and not self.done.done():
            self.done.set_result(None)


class _Player(asyncio.Protocol):
    """One simulated player on one connection: a state machine driven by the replies."""

    def __init__(self, gen: _Gen, slot: int, name: str, game_no: int) -> None:
        self.gen, self.slot, self.name, self.game_no = gen, slot, name, game_no
        cfg = gen.cfg
        self.echo = cfg.echo
        self.buf = bytearray()
        self.upgraded = False
        self.transport: asyncio.Transport | None = None
        self.rid = 0
        self.kind = ""
        self.t0 = 0.0
        self.variants = (cfg.variants[slot % len(cfg.variants)],)
        self.vi = -1
        self.moves: tuple[str, ...] = ()
        self.finishes = False
        self.mi = 0
        self.game_id = ""
        self.closing = False
        self.browser = cfg.client == "browser"
        self.view: dict[str, Any] = {}  # browser: the view followed by the moves' changes
        self.seq = 0

    # -- transport ------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are no asyncio.Transport subclasses, hence the cast
        self.transport = cast(asyncio.Transport, transport)
        self.gen.transports.add(transport)
        self.transport.write(self.gen.handshake)

    def connection_lost(self, exc: Exception | None) -> None:
        self.gen.transports.discard(self.transport)
        if not self.closing and not self.gen.stopping:
            self.gen.stats.error("connection_lost", f"{self.name} {self.kind}: {exc!r}")
        self.gen.closed(self.slot)

    def close(self) -> None:
        self.closing = True
        if self.transport is not None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        if not self.upgraded:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(buf[:end])
            del buf[: end + 4]
            if not head.startswith(b"HTTP/1.1 101"):
                self.gen.stats.error("handshake", head.decode(errors="replace"))
                self.close()
                return
            self.upgraded = True
            self.gen.stats.players += 1
            hello: dict[str, Any] = {
                "type": "hello",
                "versions": [self.gen.cfg.protocol],
                "name": self.name,
            }
            if self.browser:
                hello["features"] = ["rules_free"]
            self.send(hello, "hello")
        pos, n = 0, len(buf)
        while n - pos >= 2:
            b0, length = buf[pos], buf[pos + 1] & 0x7F
            head_len = 2
            if length == 126:
                if n - pos < 4:
                    break
                length, head_len = int.from_bytes(buf[pos + 2 : pos + 4], "big"), 4
            elif length == 127:
                if n - pos < 10:
                    break
                length, head_len = int.from_bytes(buf[pos + 2 : pos + 10], "big"), 10
            if n - pos < head_len + length:
                break
            payload = bytes(buf[pos + head_len : pos + head_len + length])
            pos += head_len + length
            op = b0 & 0x0F
            if op == 2:
                self.on_reply(payload)
            elif op == 9:  # ping
                self._frame(0x8A, payload)
            elif op == 8:  # close
                if not self.closing and not self.gen.stopping:
                    self.gen.stats.error("closed_by_server", repr(payload[:120]))
                self.close()
                break
            elif op != 10:
                self.gen.stats.error(f"opcode_{op}", repr(payload[:120]))
        if pos:
            del buf[:pos]

    def _frame(self, b0: int, payload: bytes) -> None:
        n = len(payload)
        if n < 126:
            head = bytes((b0, 0x80 | n))
        elif n < 65536:
            head = bytes((b0, 0xFE)) + n.to_bytes(2, "big")
        else:
            head = bytes((b0, 0xFF)) + n.to_bytes(8, "big")
        assert self.transport is not None
        self.transport.write(head + _MASK + payload)

    # -- the player -----------------------------------------------------------------------------

    def send(self, msg: dict[str, Any], kind: str) -> None:
        if self.closing:
            return
        self.rid += 1
        msg["id"] = self.rid
        self.kind = kind
        self._frame(0x82, msgpack.packb(msg))
        self.t0 = time.perf_counter()

    def on_reply(self, payload: bytes) -> None:
        reply = msgpack.unpackb(payload)
        gen = self.gen
        st = gen.stats
        if not isinstance(reply, dict) or reply.get("id") != self.rid:
            st.pushes += 1
            return
        kind = self.kind
        st.requests[kind] += 1
        st.reply_bytes[kind] += len(payload)
        if kind == "move":
            st.move_ms.append((time.perf_counter() - self.t0) * 1000)
        ok = self.echo or reply.get("type") == _EXPECT[kind]
        if kind == "resign" and reply.get("code") == "game_over":
            # The game ended after its last move, found by the search that goes on after the
            # reply (its `game.finished` push may arrive after this resign went out): the
            # game is finished, as the protocol says, not an error.
            ok = True
        if not ok:
            st.error(f"{kind}:{reply.get('code', reply.get('type'))}", repr(reply))
        if gen.stopping or time.time() >= gen.cfg.deadline:
            self.close()
            return
        if kind == "hello":
            if ok:
                self.next_game()
            else:
                self.close()
        elif kind == "move":
            if not ok:
                self.send({"type": "resign", "game_id": self.game_id}, "resign")
                return
            self.mi += 1
            finished = (self.echo and self.finishes and self.mi == len(self.moves)) or (
                not self.echo and reply.get("finished")
            )
            if self.browser and not self.echo:
                changes = reply.get("changes")
                if reply.get("seq") != self.seq + 1 or not isinstance(changes, dict):
                    # A gap or a reply without changes: the browser asks for the game.
                    st.resyncs += 1
                    self.send({"type": "game.get", "game_id": self.game_id}, "game.get")
                    return
                self.view = apply_changes(self.view, changes)
                self.seq += 1
                if self.gen.cfg.verify and (finished or self.mi >= len(self.moves)):
                    self.send({"type": "game.get", "game_id": self.game_id}, "game.get")
                    return
            if finished:
                st.games += 1
                self.next_game()
            else:
                self.next_move()
        elif kind == "game.get":
            if not ok:
                self.close()
                return
            if self.view and reply.get("seq") == self.seq:  # the check at a game's end
                view = dict(reply.get("view") or {})
                if view.get("over") and not self.view.get("over"):
                    # The game ended after its last reply (the search that goes on after it;
                    # the `game.finished` push, on which the browser reloads the game): only
                    # the end's own fields differ from what the moves' changes said.
                    view.update({k: self.view.get(k) for k in _END_FIELDS})
                if view == self.view:
                    st.verified += 1
                else:
                    st.error("followed_view", f"{self.game_id} seq {self.seq}: views differ")
            self.view, self.seq = dict(reply["view"]), int(reply["seq"])
            if reply.get("finished"):
                st.games += 1
                self.next_game()
            else:
                self.next_move()
        elif kind == "daily.start":
            if not ok or (not self.echo and reply.get("finished")):
                self.next_game()
                return
            self.game_id = "d.echo" if self.echo else str(reply["game_id"])
            self.mi = 0
            if self.browser and not self.echo:
                self.view, self.seq = dict(reply["view"]), int(reply.get("seq", 0))
            self.next_move()
        else:  # resign
            if ok:
                st.games += 1
            self.next_game()

    def next_game(self) -> None:
        self.vi += 1
        if self.vi >= len(self.variants):
            self.close()  # reconnects as a new player
            return
        variant = self.variants[self.vi]
        scripts = self.gen.cfg.scripts[variant]
        k = self.slot // len(self.gen.cfg.variants) + self.game_no
        self.moves, self.finishes = scripts[k % len(scripts)]
        self.send({"type": "daily.start", "variant": variant}, "daily.start")

    def next_move(self) -> None:
        if self.mi < len(self.moves):
            self.send(
                {
                    "type": "move",
                    "game_id": self.game_id,
                    "move": self.moves[self.mi],
                    "expected_seq": self.mi,
                },
                "move",
            )
        else:
            self.send({"type": "resign", "game_id": self.game_id}, "resign")


async def _run(cfg: GenConfig, index: int) -> GenStats:
    loop = asyncio.get_running_loop()
    gen = _Gen(cfg, index)
    await asyncio.sleep(max(0.0, cfg.start_at - time.time()))
    for k, slot in enumerate(gen.slots):
        loop.call_later(cfg.ramp_s * k / max(1, len(gen.slots)), gen.connect, slot)
    if not gen.slots:
        gen.stop()
    loop.call_later(max(0.0, cfg.deadline - time.time()), gen.stop)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(
            asyncio.shield(gen.done), timeout=max(0.0, cfg.deadline - time.time()) + 10.0
        )
    for t in list(gen.transports):
        t.close()
    await asyncio.sleep(0)
    return gen.stats


def _main(cfg: GenConfig, index: int, out: Queue[tuple[int, GenStats]], leave: Event) -> None:
    try:
        import uvloop  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        stats = asyncio.run(_run(cfg, index))
    else:
        stats = uvloop.run(_run(cfg, index))
    out.put((index, stats))
    # Stay (idle) until the benchmark has read this process's CPU time for the last time.
    leave.wait(60.0)


class Generator:
    """``cfg.processes`` worker processes: ``start()``, ``pids``, ``wait()`` until every
    worker has played its games (they stay alive, idle, so that their CPU time can still be
    read), then ``release()``."""

    def __init__(self, cfg: GenConfig) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.queue: Queue[tuple[int, GenStats]] = ctx.Queue()
        self.leave = ctx.Event()
        self.procs: list[BaseProcess] = [
            ctx.Process(target=_main, args=(cfg, i, self.queue, self.leave), daemon=True)
            for i in range(cfg.processes)
        ]
        self.per_process: list[GenStats] = []
        self.timeout = max(10.0, cfg.deadline - time.time() + 20.0)

    def start(self) -> Generator:
        for p in self.procs:
            p.start()
        return self

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs if p.pid is not None]

    def wait(self) -> GenStats:
        """The merged stats once every worker is done (or the deadline passed)."""
        results: dict[int, GenStats] = {}
        deadline = time.monotonic() + self.timeout
        while len(results) < len(self.procs):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            with contextlib.suppress(Exception):
                i, st = self.queue.get(timeout=left)
                results[i] = st
        self.per_process = [results.get(i, GenStats()) for i in range(len(self.procs))]
        total = GenStats()
        for st in self.per_process:
            total.merge(st)
        if len(results) < len(self.procs):
            total.error(
                "generator_lost", f"{len(self.procs) - len(results)} worker(s) returned nothing"
            )
        return total

    def release(self) -> None:
        self.leave.set()
        for p in self.procs:
            p.join(timeout=5.0)
            if p.is_alive():
                p.kill()


def scripts_for(
    scripts: dict[str, Sequence[Any]],
) -> dict[str, tuple[tuple[tuple[str, ...], bool], ...]]:
    """``benchmarks.load.scripts.Script`` lists as the plain tuples a worker receives."""
    return {v: tuple((tuple(s.moves), bool(s.finished)) for s in lst) for v, lst in scripts.items()}
