"""The load generator: simulated players in several processes, over real WebSockets.

Each player connects, says hello (a new player), and for each variant in turn starts the daily
game and plays it the way a client does: the moves are chosen from its own view with
``engine.from_view(view).legal_moves()`` (resigning when there is none, or after ``max_moves``),
then asks for the leaderboard (top, around me, my rank). When it has played every variant it
reconnects as a new player. With ``race_every`` > 0, every n-th player races instead
(``race.queue`` pairs, then plays the race game from its ``race.started`` view).

Against the echo baseline (``echo=True``) the same loop runs but the view is the player's own
freshly dealt one and never changes: the client does the same work per request (legal moves,
encode, decode of a reply of the real size) and the server does none of the game's.

All requests are binary (msgpack) frames. Round trips are timed from send to reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import random
import secrets
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import msgpack  # type: ignore[import-untyped]

from engine import VARIANT_IDS, from_view, new_game

#: Error codes that are outcomes, not failures: a race can end under a racer's feet.
RACE_OUTCOMES = frozenset({"game_over"})
PUSH_TYPES = frozenset({"race.update", "race.event", "race.started", "shutdown"})


@dataclass(frozen=True)
class LoadConfig:
    players: int = 100
    processes: int = 2
    duration_s: float = 20.0
    ramp_s: float = 2.0  # players connect spread over this long
    variants: tuple[str, ...] = VARIANT_IDS
    max_moves: int = 200  # per game, then resign
    think_s: float = 0.0  # mean pause between a reply and the next request (exponential)
    race_every: int = 0  # every n-th player races (0: none)
    race_variant: str = "fourteen-out"
    echo: bool = False
    echo_game_moves: int = 40  # echo mode: moves per "game" (use the real run's mean)
    request_timeout_s: float = 30.0
    start_delay_s: float = 3.0  # time for the worker processes to start before the clock runs


@dataclass
class LoadResult:
    config: LoadConfig
    urls: tuple[str, ...]
    moves: int = 0
    requests: int = 0
    games_finished: int = 0
    races_finished: int = 0
    players: int = 0
    move_ms: list[float] = field(default_factory=list)
    request_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    error_examples: list[str] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    reply_bytes: dict[str, list[int]] = field(default_factory=dict)  # type -> [sum, count]
    moves_per_game: list[int] = field(default_factory=list)

    @property
    def moves_per_s(self) -> float:
        return self.moves / self.config.duration_s

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.config.duration_s

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    def move_pct(self, q: float) -> float:
        return percentile(self.move_ms, q)

    def request_pct(self, q: float) -> float:
        return percentile(self.request_ms, q)

    def mean_reply_sizes(self) -> dict[str, int]:
        return {k: round(s / n) for k, (s, n) in self.reply_bytes.items() if n}

    def mean_moves_per_game(self) -> float:
        return statistics.fmean(self.moves_per_game) if self.moves_per_game else 0.0

    def merge(self, part: dict[str, Any]) -> None:
        self.moves += part["moves"]
        self.requests += part["requests"]
        self.games_finished += part["games_finished"]
        self.races_finished += part["races_finished"]
        self.players += part["players"]
        self.move_ms += part["move_ms"]
        self.request_ms += part["request_ms"]
        self.errors.update(part["errors"])
        self.outcomes.update(part["outcomes"])
        self.error_examples += part["error_examples"][: max(0, 5 - len(self.error_examples))]
        self.moves_per_game += part["moves_per_game"]
        for k, (s, n) in part["reply_bytes"].items():
            cur = self.reply_bytes.setdefault(k, [0, 0])
            cur[0] += s
            cur[1] += n

    def summary(self) -> str:
        return (
            f"{self.moves_per_s:,.0f} moves/s, {self.requests_per_s:,.0f} requests/s; "
            f"move round trip p50 {self.move_pct(50):.1f} ms, p95 {self.move_pct(95):.1f} ms,"
            f" p99 {self.move_pct(99):.1f} ms; errors {self.error_count}; "
            f"games finished {self.games_finished}"
        )


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


class ConnectionLost(Exception):
    pass


class _Stats:
    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, end
        self.moves = self.requests = self.games_finished = self.races_finished = 0
        self.players = 0
        self.move_ms: list[float] = []
        self.request_ms: list[float] = []
        self.errors: Counter[str] = Counter()
        self.outcomes: Counter[str] = Counter()
        self.error_examples: list[str] = []
        self.reply_bytes: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        self.moves_per_game: list[int] = []

    def in_window(self, t: float) -> bool:
        return self.start <= t <= self.end

    def error(self, key: str, example: str) -> None:
        self.errors[key] += 1
        if len(self.error_examples) < 5:
            self.error_examples.append(example[:300])

    def dump(self) -> dict[str, Any]:
        return {
            "moves": self.moves,
            "requests": self.requests,
            "games_finished": self.games_finished,
            "races_finished": self.races_finished,
            "players": self.players,
            "move_ms": self.move_ms,
            "request_ms": self.request_ms,
            "errors": dict(self.errors),
            "outcomes": dict(self.outcomes),
            "error_examples": self.error_examples,
            "reply_bytes": dict(self.reply_bytes),
            "moves_per_game": self.moves_per_game,
        }


class _Conn:
    """One player's socket: sequential requests, pushes stashed."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, stats: _Stats, timeout: float) -> None:
        self.ws, self.stats, self.timeout = ws, stats, timeout
        self.next_id = 1
        self.pushes: list[dict[str, Any]] = []

    async def _receive(self, timeout: float) -> dict[str, Any]:
        msg = await self.ws.receive(timeout=timeout)
        if msg.type != aiohttp.WSMsgType.BINARY:
            raise ConnectionLost(f"{msg.type.name} {self.ws.close_code} {msg.extra or ''}")
        reply: dict[str, Any] = msgpack.unpackb(msg.data)
        reply["_size"] = len(msg.data)
        return reply

    async def request(self, type_: str, **fields: Any) -> dict[str, Any]:
        rid = self.next_id
        self.next_id += 1
        frame = msgpack.packb({"type": type_, "id": rid, **fields})
        t0 = time.perf_counter()
        await self.ws.send_bytes(frame)
        while True:
            reply = await self._receive(self.timeout)
            if reply.get("id") == rid:
                break
            self.pushes.append(reply)
        t1 = time.perf_counter()
        st = self.stats
        now = time.time()
        if st.in_window(now):
            st.requests += 1
            ms = (t1 - t0) * 1000
            st.request_ms.append(ms)
            if type_ == "move":
                st.moves += 1
                st.move_ms.append(ms)
        rb = st.reply_bytes[type_]
        rb[0] += reply["_size"]
        rb[1] += 1
        return reply

    async def push(self, type_: str, timeout: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while True:
            for i, m in enumerate(self.pushes):
                if m.get("type") == type_:
                    del self.pushes[: i + 1]
                    return m
            self.pushes.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                self.pushes.append(await self._receive(left))
            except TimeoutError:
                return None


class _Player:
    def __init__(
        self, cfg: LoadConfig, url: str, name: str, stats: _Stats, rng: random.Random, racer: bool
    ) -> None:
        self.cfg, self.url, self.name, self.stats, self.rng = cfg, url, name, stats, rng
        self.racer = racer

    def _check(self, reply: dict[str, Any], want: str, what: str) -> bool:
        if self.cfg.echo:
            return True
        if reply.get("type") == want:
            return True
        if reply.get("type") == "error" and self.racer and reply.get("code") in RACE_OUTCOMES:
            self.stats.outcomes[str(reply.get("code"))] += 1
            return False
        self.stats.error(f"{what}:{reply.get('code', reply.get('type'))}", repr(reply))
        return False

    async def _think(self) -> None:
        if self.cfg.think_s > 0:
            await asyncio.sleep(self.rng.expovariate(1 / self.cfg.think_s))

    async def play(self, conn: _Conn, variant: str, game_id: str, view: Any, seq: int) -> bool:
        """Play a game to its end; True if it finished (its result is recorded)."""
        cfg, n = self.cfg, 0
        if cfg.echo:
            view = new_game(variant, self.rng.randrange(1 << 30)).view()
        while time.time() < self.stats.end:
            moves = list(from_view(view).legal_moves())
            if not moves or n >= (cfg.echo_game_moves if cfg.echo else cfg.max_moves):
                r = await conn.request("resign", game_id=game_id)
                self.stats.moves_per_game.append(n)
                return self._check(r, "finished", "resign")
            await self._think()
            r = await conn.request(
                "move", game_id=game_id, move=str(self.rng.choice(moves)), expected_seq=seq
            )
            n += 1
            if not self._check(r, "moved", "move"):
                return False
            if not cfg.echo:
                view, seq = r["view"], r["seq"]
                if r["finished"]:
                    self.stats.moves_per_game.append(n)
                    return True
        return False

    async def leaderboards(self, conn: _Conn, variant: str) -> None:
        for kind, extra in (
            ("leaderboard.top", {"limit": 10}),
            ("leaderboard.around", {"k": 5}),
            ("leaderboard.rank", {}),
        ):
            await self._think()
            r = await conn.request(kind, variant=variant, **extra)
            self._check(r, "rank" if kind == "leaderboard.rank" else "leaderboard", kind)

    async def daily(self, conn: _Conn) -> None:
        variants = list(self.cfg.variants)
        self.rng.shuffle(variants)
        for variant in variants:
            if time.time() >= self.stats.end:
                return
            r = await conn.request("daily.start", variant=variant)
            if not self._check(r, "game", "daily.start"):
                continue
            game_id = f"d.{variant}.2000-01-01.x" if self.cfg.echo else r["game_id"]
            if self.cfg.echo or not r["finished"]:
                view, seq = (None, 0) if self.cfg.echo else (r["view"], r["seq"])
                if await self.play(conn, variant, game_id, view, seq):
                    self.stats.games_finished += 1
                    await self.leaderboards(conn, variant)

    async def race(self, conn: _Conn) -> None:
        while time.time() < self.stats.end:
            r = await conn.request("race.queue", variant=self.cfg.race_variant)
            if not self._check(r, "race.queued", "race.queue"):
                return
            started = await conn.push("race.started", max(0.1, self.stats.end - time.time()))
            if started is None:
                with contextlib.suppress(ConnectionLost, TimeoutError):
                    await conn.request("race.leave")
                return
            if await self.play(conn, self.cfg.race_variant, started["game_id"], started["view"], 0):
                self.stats.races_finished += 1
            if not await self._race_over(conn):
                return

    async def _race_over(self, conn: _Conn) -> bool:
        """Wait for the race to end (a racer is in one race at a time)."""
        while time.time() < self.stats.end:
            ev = await conn.push("race.event", max(0.1, self.stats.end - time.time()))
            if ev is not None and ev["event"].get("kind") == "finished":
                conn.pushes.clear()
                return True
        return False

    async def run(self, session: aiohttp.ClientSession) -> None:
        try:
            async with session.ws_connect(
                self.url, autoping=True, max_msg_size=0, compress=0
            ) as ws:
                conn = _Conn(ws, self.stats, self.cfg.request_timeout_s)
                r = await conn.request("hello", versions=[1], name=self.name)
                if not self._check(r, "welcome", "hello"):
                    return
                self.stats.players += 1
                if self.racer and not self.cfg.echo:
                    await self.race(conn)
                else:
                    await self.daily(conn)
        except (ConnectionLost, TimeoutError, aiohttp.ClientError, OSError) as exc:
            if time.time() < self.stats.end:
                self.stats.error(f"connection:{type(exc).__name__}", repr(exc))


async def _worker_async(
    urls: Sequence[str], cfg: LoadConfig, index: int, start: float, tag: str
) -> dict[str, Any]:
    stats = _Stats(start, start + cfg.duration_s)
    mine = [i for i in range(cfg.players) if i % cfg.processes == index]
    rng = random.Random(f"{tag}:{index}")
    await asyncio.sleep(max(0.0, start - time.time()))
    conn = aiohttp.TCPConnector(limit=0, force_close=False)
    async with aiohttp.ClientSession(connector=conn) as session:

        async def one(i: int) -> None:
            await asyncio.sleep(cfg.ramp_s * i / max(1, cfg.players))
            gen = 0
            racer = cfg.race_every > 0 and (i // 2) % cfg.race_every == 0
            while time.time() < stats.end:
                name = f"L{tag}{i:x}n{gen}"
                player = _Player(
                    cfg, urls[i % len(urls)], name, stats, random.Random(rng.random()), racer
                )
                await player.run(session)
                gen += 1

        await asyncio.gather(*(one(i) for i in mine))
    return stats.dump()


def _worker(args: tuple[Sequence[str], LoadConfig, int, float, str]) -> dict[str, Any]:
    """One worker process; on uvloop when it is installed (the client's own overhead, kept
    low for every server alike)."""
    try:
        import uvloop  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return asyncio.run(_worker_async(*args))
    result: dict[str, Any] = uvloop.run(_worker_async(*args))
    return result


def run_load(urls: Sequence[str], cfg: LoadConfig) -> LoadResult:
    """Run ``cfg.players`` players against ``urls`` (split evenly) in ``cfg.processes``
    worker processes for ``cfg.duration_s`` seconds; blocks until done."""
    tag = secrets.token_hex(2)
    start = time.time() + cfg.start_delay_s
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(cfg.processes) as pool:
        parts = pool.map(_worker, [(tuple(urls), cfg, i, start, tag) for i in range(cfg.processes)])
    result = LoadResult(cfg, tuple(urls))
    for part in parts:
        result.merge(part)
    return result


def count_board_entries(redis_url: str) -> int:
    """Entries on every daily board in Redis (the results the server wrote)."""
    import redis

    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        return sum(int(client.zcard(k)) for k in client.scan_iter("sol:{d:*}:board", count=1000))
    finally:
        client.close()
