"""Midnight rush: every connected player starts the new day's deal within a second of 00:00 UTC.

    python benchmarks/midnight_rush.py [--quick] [--players N] [--addresses N] [--lead S]
        [--solver-budget S] [--json FILE] [--keep DIR]

Three ``python -m server`` processes on one redis-server behind Debian's HAProxy with
deploy/haproxy.cfg (benchmarks/load/topology.py), with deal certification ON (the solver,
``--solver-budget`` per candidate) and their clocks moved (``--clock-offset-ms``, one offset
for all three) to ``--lead`` seconds before midnight UTC of a fixed day. While the old day
runs out, each process keeps today's and tomorrow's deals computed ahead
(server/app.py ``_prepare_deals`` → ``DailyDeals.prepare_ahead``), ``--players`` players
connect through the balancer and each starts the old day's daily game of its variant (player
i: variant i mod 6), which the day's end closes (server/games/rollover.py).

The rush: each player sends ``daily.start`` of its variant at a random instant within the
first second of the new day (by the servers' clock, which the client knows exactly: same
wall clock, same offset). Figures: p50/p99/max of ``daily.start`` (request to ``game``), the
errors, and that the reply is the new day's game.

No certification on that path, proved three ways: (1) just before midnight every variant's
new-day deal is already stored in Redis, certified (the read path serves a stored deal and
never computes one: ``DailyDeals._obtain``); (2) after midnight the servers' logs (INFO) hold
no certification line for the new day (the background preparation of the day after may log
its own, off the request path); (3) each reply carries the stored deal's ``par``. A table,
then one JSON line (also written to ``--json``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import random
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.load import procs  # noqa: E402
from benchmarks.load.topology import (  # noqa: E402
    Errors,
    Lost,
    Player,
    Stack,
    arguments,
    cpu_by_role,
    cpu_share,
    crowd,
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
from server.games.daily import day_start_ms  # noqa: E402
from server.games.deals import Deal  # noqa: E402
from server.redis import keys  # noqa: E402
from server.redis.connect import connect  # noqa: E402

#: The day that ends during the run (any fixed day: the deals do not depend on the real one).
OLD_DAY = dt.date(2030, 6, 15)
NEW_DAY = OLD_DAY + dt.timedelta(days=1)
VERSIONS = (5,)
#: Every player's request goes out this long after midnight at the earliest.
AFTER_MIDNIGHT_S = 0.005


class LeadTooShort(RuntimeError):
    """The servers' midnight came before the players and the deals were ready."""


@dataclass(frozen=True)
class RushConfig:
    players: int = 3000
    addresses: int = 300
    lead_s: float = 60.0
    solver_budget_s: float = 0.5
    setup_concurrency: int = 100
    old_games: bool = True  # each player has the old day's game open (closed at midnight)


@dataclass
class Figures:
    players: int
    old_games: int  # old-day games open at midnight (the day's end closes them)
    setup_s: float
    margin_s: float  # setup done this long before midnight
    deals_stored_ahead: int  # variants whose new-day deal was in Redis before midnight
    deals_certified: int  # ... and certified
    started: int  # daily.start answered with the new day's game
    start_p50_ms: float
    start_p99_ms: float
    start_max_ms: float
    spread_s: float  # first request -> last reply
    with_par: int  # replies carrying the stored deal's par
    par_mismatch: int  # replies whose par differs from the stored deal's
    certification_lines_before_midnight: int  # for the new day: the detector works
    certification_lines_after_midnight: int  # for the new day (must be 0)
    next_day_lines_after_midnight: int  # the day after: background preparation
    #: "another process dealt first": a deal certified twice (0 since the deals fix)
    duplicate_certifications: int
    old_day_closed_s: float  # midnight -> every variant of the old day closed (server logs)
    #: servers HAProxy marked DOWN (health check failed) from midnight on: their players cut
    marked_down: list[str] = field(default_factory=list)
    #: each server's longest event-loop stall from just before midnight to the end, in ms
    loop_lag_max_ms: dict[str, float] = field(default_factory=dict)
    #: each part's CPU from midnight to the last reply, in cores (2 = both cores of 2)
    cpu_cores: dict[str, float] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    setup_errors: dict[str, int] = field(default_factory=dict)
    machine: dict[str, str | int | float] = field(default_factory=dict)


def _flags(offset_ms: int, budget_s: float) -> tuple[str, ...]:
    """The benchmark flags with certification on and the clock moved."""
    bench = list(procs.BENCH_FLAGS)
    bench.remove("--no-certify")
    level = bench.index("--log-level")
    bench[level + 1] = "INFO"  # the deals' certification lines
    return (
        *bench,
        "--solver-budget",
        str(budget_s),
        "--clock-offset-ms",
        str(offset_ms),
    )


async def _stored_deals(redis_url: str, date: dt.date) -> dict[str, Deal]:
    client = connect(redis_url)
    try:
        out = {}
        for variant in VARIANT_IDS:
            raw = await client.get(keys.daily_deal(variant, date))
            if raw:
                out[variant] = Deal.load(variant, date, raw)
        return out
    finally:
        await client.aclose()


def _log_sizes(stack: Stack) -> list[int]:
    return [s.log_path.stat().st_size if s.log_path else 0 for s in stack.servers]


def _tails(stack: Stack, sizes: list[int]) -> list[str]:
    """Each server's log lines written after ``sizes``."""
    out: list[str] = []
    for s, size in zip(stack.servers, sizes, strict=True):
        if s.log_path is None:
            continue
        with s.log_path.open("rb") as f:
            f.seek(size)
            out += f.read().decode(errors="replace").splitlines()
    return out


def _lines_after(stack: Stack, sizes: list[int], date: dt.date) -> int:
    """Certification lines (`server.games.deals`) about ``date`` written after ``sizes``."""
    day = date.isoformat()
    return sum("server.games.deals" in line and day in line for line in _tails(stack, sizes))


def _count_after(stack: Stack, sizes: list[int], text: str) -> int:
    return sum(text in line for line in _tails(stack, sizes))


_CLOSED = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) INFO server\.games\.rollover: "
    r"daily (\S+) of (\S+) closed"
)


def _day_closed_at(stack: Stack, sizes: list[int], date: dt.date) -> float:
    """When (time.time()) the last variant of ``date`` was closed by the first process to
    see it closed (`DayCloser` logs it); 0 while a variant is still open."""
    first: dict[str, float] = {}
    for s, size in zip(stack.servers, sizes, strict=True):
        if s.log_path is None:
            continue
        with s.log_path.open("rb") as f:
            f.seek(size)
            tail = f.read().decode(errors="replace")
        for line in tail.splitlines():
            m = _CLOSED.match(line)
            if m and m.group(4) == date.isoformat():
                at = time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S"))
                at += int(m.group(2)) / 1000
                first[m.group(3)] = min(first.get(m.group(3), at), at)
    return max(first.values()) if len(first) == len(VARIANT_IDS) else 0.0


async def rush(cfg: RushConfig, workdir: Path) -> Figures:
    host = machine()
    midnight_ms = day_start_ms(NEW_DAY)
    offset_ms = midnight_ms - int(cfg.lead_s * 1000) - time.time_ns() // 1_000_000
    #: time.time() at the servers' midnight.
    midnight_wall = (midnight_ms - offset_ms) / 1000
    stack = await asyncio.to_thread(start_stack, workdir, _flags(offset_ms, cfg.solver_budget_s))
    players = crowd(stack.url, cfg.players, cfg.addresses, VERSIONS)
    try:
        setup_errors, errors = Errors(), Errors()

        async def old_game(p: Player) -> str | None:
            if not cfg.old_games:
                return None
            game = await p.request("daily.start", variant=variant_of(p))
            if game.type != "game" or game.text("date") != OLD_DAY.isoformat():
                return f"old day's daily.start: {game.code or game.text('date')}"
            return None

        ready, setup_s = await set_up(players, cfg.setup_concurrency, setup_errors, old_game)
        # The new day's deals, stored ahead by the servers' background preparation.
        stored: dict[str, Deal] = {}
        while time.time() < midnight_wall - 1.0:
            stored = await _stored_deals(stack.redis.url, NEW_DAY)
            if len(stored) == len(VARIANT_IDS):
                break
            await asyncio.sleep(0.2)
        margin_s = midnight_wall - time.time()
        if margin_s < 0.5:
            raise LeadTooShort(
                f"setup ended {-margin_s:.1f} s before midnight: give a longer --lead"
            )
        if len(stored) < len(VARIANT_IDS):
            raise LeadTooShort(
                f"{len(stored)} of {len(VARIANT_IDS)} new-day deals stored a second before "
                "midnight (a start would certify): give a longer --lead"
            )
        await asyncio.sleep(max(0.0, midnight_wall - time.time() - 0.3))
        sizes = _log_sizes(stack)  # the logs' ends, just before midnight
        lb_since = lb_log_size(stack.lb)
        await asyncio.to_thread(loop_lag_max_ms, stack)  # resets the maxima
        await asyncio.sleep(max(0.0, midnight_wall - time.time()))
        cpu0, wall0 = cpu_by_role(stack), time.monotonic()
        rng = random.Random(11)
        took: list[float] = []
        first_sent, last_reply = float("inf"), 0.0
        with_par = par_mismatch = 0

        async def start_one(p: Player) -> None:
            nonlocal first_sent, last_reply, with_par, par_mismatch
            variant = variant_of(p)
            at = midnight_wall + AFTER_MIDNIGHT_S + rng.uniform(0, 1.0 - AFTER_MIDNIGHT_S)
            await asyncio.sleep(max(0.0, at - time.time()))
            sent = time.monotonic()
            first_sent = min(first_sent, sent)
            try:
                game = await p.request("daily.start", variant=variant)
            except Lost as exc:
                errors.add(f"{exc} (connection cut)")
                return
            done = time.monotonic()
            last_reply = max(last_reply, done)
            if game.type != "game":
                errors.add(f"daily.start: {game.code}")
                return
            if game.text("date") != NEW_DAY.isoformat():
                errors.add(f"daily.start dealt {game.text('date')}")
                return
            took.append(done - sent)
            par = game.number("par")
            if par >= 0:
                with_par += 1
            deal = stored.get(variant)
            if deal is not None and deal.par is not None and par != deal.par:
                par_mismatch += 1

        await asyncio.gather(*(start_one(p) for p in ready))
        cpu = cpu_share(cpu0, cpu_by_role(stack), time.monotonic() - wall0)
        closed_at = 0.0
        for _ in range(100):  # the old day's end, as the servers logged it
            await asyncio.sleep(0.2)
            closed_at = _day_closed_at(stack, sizes, OLD_DAY)
            if closed_at:
                break
        lags = await asyncio.to_thread(loop_lag_max_ms, stack)
        return Figures(
            players=len(ready),
            old_games=len(ready) if cfg.old_games else 0,
            setup_s=round(setup_s, 2),
            margin_s=round(margin_s, 2),
            deals_stored_ahead=len(stored),
            deals_certified=sum(d.certified for d in stored.values()),
            started=len(took),
            start_p50_ms=round(percentile_ms(took, 50), 1),
            start_p99_ms=round(percentile_ms(took, 99), 1),
            start_max_ms=round(1000 * max(took, default=float("nan")), 1),
            spread_s=round(last_reply - first_sent, 3) if took else float("nan"),
            with_par=with_par,
            par_mismatch=par_mismatch,
            certification_lines_before_midnight=_lines_after(stack, [0] * len(sizes), NEW_DAY)
            - _lines_after(stack, sizes, NEW_DAY),
            certification_lines_after_midnight=_lines_after(stack, sizes, NEW_DAY),
            next_day_lines_after_midnight=_lines_after(
                stack, sizes, NEW_DAY + dt.timedelta(days=1)
            ),
            duplicate_certifications=_count_after(stack, sizes, "another process dealt first"),
            old_day_closed_s=round(closed_at - midnight_wall, 2) if closed_at else float("nan"),
            marked_down=lb_marked_down(stack.lb, lb_since),
            loop_lag_max_ms=lags,
            cpu_cores=cpu,
            errors=dict(errors.counts),
            setup_errors=dict(setup_errors.counts),
            machine=host,
        )
    finally:
        for p in players:
            if p.ws is not None:
                p.ws.transport.abort()
        await asyncio.to_thread(stack.stop)


def table(f: Figures) -> str:
    rows = [
        ("players connected (setup)", f"{f.players} in {f.setup_s:.1f} s"),
        ("old-day games open at midnight", str(f.old_games)),
        ("setup done before midnight", f"{f.margin_s:.1f} s"),
        (
            "new-day deals stored before midnight",
            f"{f.deals_stored_ahead} of {len(VARIANT_IDS)} ({f.deals_certified} certified)",
        ),
        ("new day's daily.start answered", f"{f.started} of {f.players}"),
        (
            "daily.start, p50 / p99 / max",
            f"{f.start_p50_ms:.1f} / {f.start_p99_ms:.1f} / {f.start_max_ms:.1f} ms",
        ),
        ("first request -> last reply", f"{f.spread_s:.2f} s"),
        ("00:00 -> old day closed (every variant)", f"{f.old_day_closed_s:.2f} s"),
        ("replies with the stored par / mismatched", f"{f.with_par} / {f.par_mismatch}"),
        (
            "new-day certification log lines before / after 00:00",
            f"{f.certification_lines_before_midnight} / {f.certification_lines_after_midnight}",
        ),
        ("day-after lines after 00:00 (background)", str(f.next_day_lines_after_midnight)),
        ("deals certified twice after 00:00", str(f.duplicate_certifications)),
        (
            "CPU 00:00 -> last reply, in cores",
            ", ".join(f"{k} {v}" for k, v in f.cpu_cores.items()),
        ),
        ("HAProxy marked DOWN after 00:00", "; ".join(f.marked_down) or "none"),
        (
            "event-loop lag max, per server",
            ", ".join(f"{k} {v} ms" for k, v in f.loop_lag_max_ms.items()),
        ),
        ("errors", json.dumps(f.errors) if f.errors else "none"),
        ("setup errors", json.dumps(f.setup_errors) if f.setup_errors else "none"),
    ]
    return table_text("midnight rush", f.machine, rows)


def main(argv: Sequence[str] | None = None) -> Figures:
    ap = arguments(__doc__, "300 players, 30 s before midnight")
    ap.add_argument("--lead", type=float, default=None, help="seconds from start to midnight")
    ap.add_argument("--solver-budget", type=float, default=RushConfig.solver_budget_s)
    ap.add_argument(
        "--no-old-games",
        action="store_true",
        help="players have no old-day game open (nothing to close at midnight): a control",
    )
    a = ap.parse_args(argv)
    players, addresses = sizes(a, RushConfig.players)
    cfg = RushConfig(
        players=players,
        addresses=addresses,
        lead_s=a.lead or (30.0 if a.quick else RushConfig.lead_s),
        solver_budget_s=a.solver_budget,
        old_games=not a.no_old_games,
    )
    return run_bench("midnight_rush", a, lambda where: rush(cfg, where), table)


if __name__ == "__main__":
    main()
