"""Reconnect storm: one of three server processes behind HAProxy dies; how fast is everyone back?

    python benchmarks/reconnect_storm.py [--quick] [--players N] [--addresses N] [--moves N]
        [--first-retry-ms MS] [--json FILE] [--keep DIR]

Three ``python -m server`` processes on one redis-server (AOF everysec), behind Debian's HAProxy
with deploy/haproxy.cfg and its production edge limits (benchmarks/load/topology.py). Setup:
``--players`` players connect through the balancer (from ``--addresses`` loopback source
addresses), each a new player (``hello`` with a name) who starts today's daily game of a
variant (player i: variant i mod 6) and plays ``--moves`` moves of a precomputed script with
``expected_seq`` (benchmarks/load/scripts.py; ``--no-certify`` and a pinned date make the deal
known ahead). HAProxy's ``leastconn`` spreads them over the three processes.

The storm: process s1 is killed with SIGKILL. HAProxy cuts its clients' connections at once
(their server side is gone); each of them reconnects like the browser client
(clients/web/assets/net.js: first retry after 500 ms ± 20 %, then doubling up to 15 s)
through the balancer, says ``hello`` with its token, and resumes: ``game.get`` of its game must
answer the ``seq`` of its last acknowledged move (and ``welcome.daily`` must list the game).

Figures: time from the kill until every player of s1 is resumed (the last one; also p50/p99
per player), p50/p99/max of the successful ``hello`` (request to ``welcome``), attempts and
errors by kind, when HAProxy marked s1 DOWN, and the client process's CPU share (one asyncio
process: on a 2-core machine it must not be what limits the figures). A table, then one JSON
line (also written to ``--json``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import random
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.load import cpumeter, procs, scripts  # noqa: E402
from benchmarks.load.topology import (  # noqa: E402
    BACKOFF_FIRST_S,
    BACKOFF_MAX_S,
    Errors,
    Lost,
    Player,
    arguments,
    cpu_by_role,
    cpu_share,
    crowd,
    lb_counters,
    lb_log_size,
    lb_marked_down,
    loop_lag_max_ms,
    machine,
    percentile_ms,
    run_bench,
    set_up,
    sizes,
    start_stack,
    table_text,
    variant_of,
)
from engine import VARIANT_IDS  # noqa: E402
from tests.support.balancer import Balancer  # noqa: E402

DATE = dt.date(2030, 6, 15)
SECRET = "bench"  # procs.BENCH_FLAGS deals with this secret
VERSIONS = (5,)
#: The storm is over when every cut player is back, or after this long.
STORM_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class StormConfig:
    players: int = 3000
    addresses: int = 300
    moves: int = 3
    first_retry_ms: int = 500
    jitter: float = 0.2  # each wait is drawn from delay * (1 ± jitter), as the browser does
    setup_concurrency: int = 100


@dataclass
class Figures:
    players: int
    first_retry_ms: int  # the clients' first reconnection delay
    jitter: float  # ... drawn from delay * (1 ± jitter), then doubling
    setup_s: float
    on_killed: int  # s1's open connections just before the kill (its /metrics)
    cut: int  # players whose connection closed
    resumed: int
    all_back_s: float  # kill -> the last cut player resumed
    cut_p50_ms: float  # kill -> the client saw its connection close
    cut_max_ms: float
    resume_p50_ms: float  # kill -> resumed, per player
    resume_p99_ms: float
    connect_p50_ms: float  # TCP connect + WebSocket upgrade through HAProxy (successful)
    connect_p99_ms: float
    hello_p50_ms: float
    hello_p99_ms: float
    hello_max_ms: float
    attempts: int  # connection attempts of the cut players
    lb_down_s: float  # kill -> HAProxy shows s1 DOWN
    #: HAProxy's connection errors, retries and redispatches during the storm
    lb_retries: dict[str, int] = field(default_factory=dict)
    #: every server HAProxy marked DOWN during the storm (s1; another one would be a busy
    #: process taken for a dead one, its players cut too)
    marked_down: list[str] = field(default_factory=list)
    #: the surviving servers' longest event-loop stall during the storm, in ms
    loop_lag_max_ms: dict[str, float] = field(default_factory=dict)
    #: each part's CPU from the kill to the last resume (or s1 DOWN if later), in cores
    cpu_cores: dict[str, float] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    setup_errors: dict[str, int] = field(default_factory=dict)
    machine: dict[str, str | int | float] = field(default_factory=dict)


@dataclass
class _Back:
    """One cut player's way back."""

    closed_at: float
    resumed_at: float = 0.0
    hello_s: float = 0.0
    connect_s: float = 0.0  # the successful attempt's TCP connect and WebSocket upgrade
    attempts: int = 0


class Storm:
    def __init__(self, cfg: StormConfig, url: str) -> None:
        self.cfg = cfg
        self.players = crowd(url, cfg.players, cfg.addresses, VERSIONS)
        self.ready: list[Player] = []
        self.setup_errors = Errors()
        self.errors = Errors()
        self.back: dict[int, _Back] = {}
        self.rng = random.Random(7)
        plays = scripts.build(
            SECRET.encode(), DATE, VARIANT_IDS, per_variant=1, max_moves=cfg.moves
        )
        self.moves = {v: s[0].moves for v, s in plays.items()}

    async def setup(self) -> float:
        """Every player starts its daily game and plays its moves: how long it took (s)."""

        async def play(p: Player) -> str | None:
            game = await p.request("daily.start", variant=variant_of(p))
            if game.type != "game":
                return f"daily.start: {game.code}"
            p.game_id, p.seq = game.text("game_id"), game.number("seq")
            for move in self.moves[variant_of(p)]:
                moved = await p.request("move", game_id=p.game_id, move=move, expected_seq=p.seq)
                if moved.type != "moved":
                    return f"move: {moved.code}"
                p.seq = moved.number("seq")
            return None

        self.ready, took = await set_up(
            self.players, self.cfg.setup_concurrency, self.setup_errors, play
        )
        return took

    async def watch(self, p: Player) -> None:
        """Wait for the connection to close; then reconnect, hello and resume."""
        await p.wait_closed()
        back = self.back[p.index] = _Back(time.monotonic())
        delay = self.cfg.first_retry_ms / 1000 or BACKOFF_FIRST_S
        while True:
            j = self.cfg.jitter
            await asyncio.sleep(delay * self.rng.uniform(1 - j, 1 + j))
            delay = min(2 * delay, BACKOFF_MAX_S)
            back.attempts += 1
            try:
                opening = time.monotonic()
                await p.open()
                sent = time.monotonic()
                welcome = await p.hello()
                took = time.monotonic() - sent
                if welcome.type != "welcome":
                    self.errors.add(f"hello: {welcome.code}")
                    await p.close()
                    continue
                daily = welcome.raw.get("daily")
                if not isinstance(daily, list) or not any(
                    isinstance(d, dict) and d.get("game_id") == p.game_id for d in daily
                ):
                    self.errors.add("welcome.daily lacks the game")
                game = await p.request("game.get", game_id=p.game_id)
            except Lost as exc:
                self.errors.add(str(exc).split(":")[0] + " lost")
                await p.close()
                continue
            if game.type != "game":
                self.errors.add(f"game.get: {game.code}")
            elif game.number("seq") != p.seq:
                self.errors.add("game.get older or newer than the acknowledged seq")
            back.hello_s = took
            back.connect_s = sent - opening
            back.resumed_at = time.monotonic()
            return


def _watch_lb(lb: Balancer, name: str, out: list[float], stop: threading.Event) -> None:
    """Note when HAProxy first shows ``name`` DOWN (its health checks: about 2 s)."""
    while not stop.is_set():
        try:
            if lb.states().get(name, "").startswith("DOWN"):
                out.append(time.monotonic())
                return
        except OSError:
            pass
        time.sleep(0.05)


async def storm(cfg: StormConfig, workdir: Path) -> Figures:
    host = machine()
    flags = (
        *procs.BENCH_FLAGS,
        "--clock-offset-ms",
        str(scripts.clock_offset_ms(DATE, time.time_ns() // 1_000_000)),
    )
    stack = await asyncio.to_thread(start_stack, workdir, flags)
    try:
        run = Storm(cfg, stack.url)
        setup_s = await run.setup()
        await asyncio.sleep(0.5)  # let every process count its connections
        victim = stack.servers[0]
        on_killed = int(cpumeter.total(cpumeter.scrape(victim.port), "solitaire_connections"))
        watchers = [asyncio.create_task(run.watch(p)) for p in run.ready]
        down: list[float] = []
        stop = threading.Event()
        lb_thread = threading.Thread(
            target=_watch_lb, args=(stack.lb, "s1", down, stop), daemon=True
        )
        lb_thread.start()
        cpu0, lb0 = cpu_by_role(stack), lb_counters(stack.lb)
        loop_lag_max_ms(stack)  # resets the maxima
        lb_since = lb_log_size(stack.lb)
        killed_at = time.monotonic()
        victim.kill()
        deadline = killed_at + STORM_TIMEOUT_S
        while time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            done = [b for b in run.back.values() if b.resumed_at]
            if down and len(run.back) >= on_killed and len(done) == len(run.back):
                break
        cpu = cpu_share(cpu0, cpu_by_role(stack), time.monotonic() - killed_at)
        await asyncio.sleep(1.0)  # a late cut would show here
        lb1 = lb_counters(stack.lb)
        lags = loop_lag_max_ms(stack)
        stop.set()
        for w in watchers:
            w.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        backs = list(run.back.values())
        done = [b for b in backs if b.resumed_at]
        unresumed = len(backs) - len(done)
        if unresumed:
            run.errors.add(f"not resumed within {STORM_TIMEOUT_S:.0f} s")
        hellos = [b.hello_s for b in done]
        connects = [b.connect_s for b in done]
        resumes = [b.resumed_at - killed_at for b in done]
        cuts = [b.closed_at - killed_at for b in backs]
        return Figures(
            players=len(run.ready),
            first_retry_ms=cfg.first_retry_ms,
            jitter=cfg.jitter,
            setup_s=round(setup_s, 2),
            on_killed=on_killed,
            cut=len(backs),
            resumed=len(done),
            all_back_s=round(max(resumes, default=float("nan")), 3),
            cut_p50_ms=round(percentile_ms(cuts, 50), 1),
            cut_max_ms=round(1000 * max(cuts, default=float("nan")), 1),
            resume_p50_ms=round(percentile_ms(resumes, 50), 1),
            resume_p99_ms=round(percentile_ms(resumes, 99), 1),
            connect_p50_ms=round(percentile_ms(connects, 50), 1),
            connect_p99_ms=round(percentile_ms(connects, 99), 1),
            hello_p50_ms=round(percentile_ms(hellos, 50), 1),
            hello_p99_ms=round(percentile_ms(hellos, 99), 1),
            hello_max_ms=round(1000 * max(hellos, default=float("nan")), 1),
            attempts=sum(b.attempts for b in backs),
            lb_down_s=round(down[0] - killed_at, 2) if down else float("nan"),
            lb_retries={k: lb1[k] - lb0[k] for k in lb1},
            marked_down=[m.split(" is DOWN")[0] for m in lb_marked_down(stack.lb, lb_since)],
            loop_lag_max_ms=lags,
            cpu_cores=cpu,
            errors=dict(run.errors.counts),
            setup_errors=dict(run.setup_errors.counts),
            machine=host,
        )
    finally:
        await asyncio.to_thread(stack.stop)


def table(f: Figures) -> str:
    rows = [
        ("players connected (setup)", f"{f.players} in {f.setup_s:.1f} s"),
        (
            "clients' first retry after",
            f"{f.first_retry_ms} ms ± {100 * f.jitter:.0f} %, then doubling",
        ),
        ("on the killed process (its gauge)", str(f.on_killed)),
        ("connections cut / resumed", f"{f.cut} / {f.resumed}"),
        ("kill -> client sees the close, p50 / max", f"{f.cut_p50_ms:.0f} / {f.cut_max_ms:.0f} ms"),
        ("kill -> every cut player resumed", f"{f.all_back_s:.2f} s"),
        ("kill -> resumed, p50 / p99", f"{f.resume_p50_ms:.0f} / {f.resume_p99_ms:.0f} ms"),
        ("connect + upgrade, p50 / p99", f"{f.connect_p50_ms:.1f} / {f.connect_p99_ms:.1f} ms"),
        (
            "hello -> welcome, p50 / p99 / max",
            f"{f.hello_p50_ms:.1f} / {f.hello_p99_ms:.1f} / {f.hello_max_ms:.1f} ms",
        ),
        ("connection attempts of the cut players", str(f.attempts)),
        ("kill -> HAProxy shows s1 DOWN", f"{f.lb_down_s:.2f} s"),
        (
            "HAProxy: connect errors / retries / redispatches",
            " / ".join(str(f.lb_retries.get(k, 0)) for k in ("econ", "wretr", "wredis")),
        ),
        (
            "CPU kill -> last resume, in cores",
            ", ".join(f"{k} {v}" for k, v in f.cpu_cores.items()),
        ),
        ("servers HAProxy marked DOWN", ", ".join(f.marked_down) or "none"),
        ("event-loop lag max, s2 and s3", ", ".join(f"{v} ms" for v in f.loop_lag_max_ms.values())),
        ("errors", json.dumps(f.errors) if f.errors else "none"),
        ("setup errors", json.dumps(f.setup_errors) if f.setup_errors else "none"),
    ]
    return table_text("reconnect storm", f.machine, rows)


def main(argv: Sequence[str] | None = None) -> Figures:
    ap = arguments(__doc__, "300 players")
    ap.add_argument("--moves", type=int, default=StormConfig.moves)
    ap.add_argument("--first-retry-ms", type=int, default=StormConfig.first_retry_ms)
    ap.add_argument(
        "--jitter", type=float, default=StormConfig.jitter, help="0.2: the browser's ± 20 %%"
    )
    a = ap.parse_args(argv)
    players, addresses = sizes(a, StormConfig.players)
    cfg = StormConfig(
        players=players,
        addresses=addresses,
        moves=a.moves,
        first_retry_ms=a.first_retry_ms,
        jitter=a.jitter,
    )
    return run_bench("reconnect_storm", a, lambda where: storm(cfg, where), table)


if __name__ == "__main__":
    main()
