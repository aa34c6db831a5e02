"""redis-server CPU per finished daily game's history record, in isolation (issue #30).

    python benchmarks/history_record_bench.py [--players N] [--days N] [--repeats N]
        [--variants NAME ...] [--won FRACTION]

A fresh embedded redis-server (`server.redis.embedded.EmbeddedRedis`: the product's settings,
AOF everysec) per run; ``--days`` rounds each record one day's result for every one of
``--players`` players through `History.record_soon` and its `Batcher` (one pipeline a round,
as a busy server's finishes batch), a fraction ``--won`` of them won (crowns on half of
those: the won daily game's script). Around the rounds: redis-server's own CPU (``INFO cpu``,
user + sys, µs) per record and ``INFO commandstats`` calls per record. Variants are sources
of the record scripts put in the store's place for the run, alternated, median of
``--repeats`` runs (min-max):

* ``landed``: `server.players.history`'s scripts (one HMGET and one HSET of the stats hash,
  the newest kept day from the played run's end);
* ``before``: the scripts before that change (a read and a write per field group, HINCRBY
  counts, a ZRANGE for the newest day), kept here to price the change.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import random
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import redis.asyncio  # noqa: E402

from server.players import history as hist  # noqa: E402
from server.players.history import DailyResult, History  # noqa: E402
from server.redis.batch import LuaScript  # noqa: E402
from server.redis.embedded import EmbeddedRedis, connect  # noqa: E402

_BEFORE_RUNS = """
local function has(set, d) return redis.call('ZSCORE', set, d) ~= false end
local function run(set, stats, p, d)
  local f = redis.call('HMGET', stats, p .. 's', p .. 'e', p .. 'long')
  local s, e, long = tonumber(f[1]), tonumber(f[2]), tonumber(f[3] or '0')
  local len
  if e == nil or d > e then
    if e ~= nil and d == e + 1 then e = d else s = d; e = d end
    len = e - s + 1
  else
    local lo, hi = d, d
    while has(set, lo - 1) do lo = lo - 1 end
    while has(set, hi + 1) do hi = hi + 1 end
    if hi == e then s = math.min(s, lo); len = e - s + 1 else len = hi - lo + 1 end
  end
  if len > long then long = len end
  redis.call('HSET', stats, p .. 's', s, p .. 'e', e, p .. 'long', long)
end
"""
_BEFORE_BODY = """
local day, won = tonumber(ARGV[1]), ARGV[2] == '1'
redis.call('SREM', KEYS[6], ARGV[4])
if redis.call('HSETNX', KEYS[3], day, ARGV[3]) == 0 then return 0 end
redis.call('ZADD', KEYS[1], day, day)
redis.call('HINCRBY', KEYS[5], 'played', 1)
run(KEYS[1], KEYS[5], 'p', day)
local score = tonumber(ARGV[5])
local best = redis.call('HGET', KEYS[5], 'best_score')
if not best or score > tonumber(best) then redis.call('HSET', KEYS[5], 'best_score', score) end
if won then
  redis.call('ZADD', KEYS[2], day, day)
  redis.call('HINCRBY', KEYS[5], 'won', 1)
  run(KEYS[2], KEYS[5], 'w', day)
  local t = tonumber(ARGV[6])
  local bt = redis.call('HGET', KEYS[5], 'best_time')
  if not bt or t < tonumber(bt) then redis.call('HSET', KEYS[5], 'best_time', t) end
end
local newest = tonumber(redis.call('ZRANGE', KEYS[1], -1, -1)[1])
local cutoff = newest - tonumber(ARGV[7])
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff)
if #old > 0 then
  redis.call('HDEL', KEYS[3], unpack(old))
  redis.call('HDEL', KEYS[4], unpack(old))
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff)
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', cutoff)
end
return 1
"""
_BEFORE_CROWNS = """
if redis.call('HSETNX', KEYS[7], ARGV[8], ARGV[9]) == 1 then
  redis.call('ZINCRBY', KEYS[8], ARGV[9], ARGV[10])
end
"""


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    record: str
    crowned: str


VARIANTS = (
    Variant("landed", hist._RECORD_LUA, hist._RECORD_CROWNED_LUA),
    Variant("before", _BEFORE_RUNS + _BEFORE_BODY, _BEFORE_RUNS + _BEFORE_CROWNS + _BEFORE_BODY),
)


@dataclass(frozen=True, slots=True)
class Run:
    cpu_us: float
    calls: dict[str, float]


async def _cpu_us(r: redis.asyncio.Redis) -> float:
    info = await r.info("cpu")
    return (float(info["used_cpu_user"]) + float(info["used_cpu_sys"])) * 1e6


async def _measure(r: redis.asyncio.Redis, v: Variant, players: int, days: int, won: float) -> Run:
    h = History(r)
    h._record = LuaScript.of(v.record)
    h._record_crowned = LuaScript.of(v.crowned)
    rng = random.Random(7)  # the same results for every variant
    start = dt.date(2030, 1, 1)
    plan = [
        [
            (rng.random() < won, rng.random() < 0.5, rng.randint(5_000, 900_000))
            for _ in range(players)
        ]
        for _ in range(days)
    ]
    await r.config_resetstat()
    before = await _cpu_us(r)
    for n, day in enumerate(plan):
        date = start + dt.timedelta(days=n)
        futures = []
        for i, (w, crowned, t) in enumerate(day):
            res = DailyResult(
                variant="klondike",
                date=date,
                player_id=f"p{i}",
                won=w,
                resigned=not w,
                cleared=52 if w else 20,
                score=t % 700,
                points=t % 700,
                time_ms=t,
                moves=120,
                hints=0,
                finished_at_ms=1_893_456_000_000 + n * 86_400_000,
            )
            crowns = ("gold", 3) if w and crowned else None
            futures.append(h.record_soon(res, crowns=crowns, game_id=f"g{n}-{i}"))
        await asyncio.gather(*futures)
    cpu = await _cpu_us(r) - before
    stats = await r.info("commandstats")
    n_records = players * days
    calls = {
        k.removeprefix("cmdstat_"): int(f["calls"]) / n_records
        for k, f in stats.items()
        if k not in ("cmdstat_info", "cmdstat_config")
    }
    return Run(cpu / n_records, calls)


async def _one_run(v: Variant, players: int, days: int, won: float) -> Run:
    with tempfile.TemporaryDirectory(prefix="hrb-") as tmp:
        emb = EmbeddedRedis(Path(tmp) / "data")
        url = await emb.start()
        r = connect(url)
        try:
            return await _measure(r, v, players, days, won)
        finally:
            await r.aclose()
            await emb.stop()


async def main_async(a: argparse.Namespace) -> None:
    variants = tuple(v for v in VARIANTS if not a.variants or v.name in a.variants)
    runs: dict[str, list[Run]] = {v.name: [] for v in variants}
    for _ in range(a.repeats):
        for v in variants:
            runs[v.name].append(await _one_run(v, a.players, a.days, a.won))
    print(
        f"redis-server CPU per history record: {a.players} players x {a.days} days, "
        f"{a.won:.0%} won; median of {a.repeats} alternated runs (min-max)"
    )
    for v in variants:
        cpus = [x.cpu_us for x in runs[v.name]]
        calls = runs[v.name][-1].calls
        inner = sum(n for c, n in calls.items() if c not in ("evalsha", "eval", "script"))
        shown = ", ".join(f"{c} {n:.2f}" for c, n in sorted(calls.items()))
        print(
            f"{v.name:<8} {statistics.median(cpus):6.2f} µs ({min(cpus):.2f}-{max(cpus):.2f}); "
            f"{inner:.2f} inner commands a record\n         {shown}"
        )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", type=int, default=64, help="records a round (one pipeline)")
    p.add_argument("--days", type=int, default=150, help="rounds (days)")
    p.add_argument("--repeats", type=int, default=5, help="alternated runs per variant")
    p.add_argument("--won", type=float, default=0.6, help="fraction of won days")
    p.add_argument("--variants", nargs="*", help="only these variants")
    asyncio.run(main_async(p.parse_args(argv)))


if __name__ == "__main__":
    main()
