"""redis-server CPU per new player (`PlayerRegistry.register`'s script), in isolation (#30).

    python benchmarks/new_player_bench.py [--players N] [--rounds N] [--repeats N]

A fresh embedded redis-server (the product's settings, AOF everysec) per run; ``--rounds``
rounds each register ``--players`` new players at once through `PlayerRegistry.register`
and its `Batcher` (one pipeline a round, a burst of sign-ups). Around the rounds:
redis-server's own CPU (``INFO cpu``, user + sys) and ``INFO commandstats`` calls per new
player. Variants, alternated, median of ``--repeats`` runs (min-max): ``landed`` (the
registry's script: the token's digest checked and written by one HSETNX) and ``before``
(its HEXISTS, then an HSET), kept here to price the change.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import redis.asyncio  # noqa: E402

from benchmarks.history_record_bench import _cpu_us  # noqa: E402
from server.players import registry  # noqa: E402
from server.players.registry import PlayerRegistry  # noqa: E402
from server.redis.batch import LuaScript  # noqa: E402
from server.redis.embedded import EmbeddedRedis, connect  # noqa: E402

_BEFORE = """
if redis.call('EXISTS', KEYS[3]) == 1 or redis.call('HEXISTS', KEYS[2], ARGV[3]) == 1 then
  return -1
end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 or redis.call('HEXISTS', KEYS[4], ARGV[6]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[4], ARGV[6], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[2])
redis.call('HSET', KEYS[3], 'name', ARGV[4], 'token_hash', ARGV[3], 'created_at_ms', ARGV[5])
return 1
"""

VARIANTS = {"landed": registry._CREATE_LUA, "before": _BEFORE}


async def _measure(r: redis.asyncio.Redis, source: str, players: int, rounds: int) -> float:
    reg = PlayerRegistry(r)
    reg._create = LuaScript.of(source)
    await r.config_resetstat()
    before = await _cpu_us(r)
    for n in range(rounds):
        await asyncio.gather(*(reg.register(f"u{n}_{i}") for i in range(players)))
    return (await _cpu_us(r) - before) / (players * rounds)


async def _one_run(source: str, players: int, rounds: int) -> float:
    with tempfile.TemporaryDirectory(prefix="npb-") as tmp:
        emb = EmbeddedRedis(Path(tmp) / "data")
        r = connect(await emb.start())
        try:
            return await _measure(r, source, players, rounds)
        finally:
            await r.aclose()
            await emb.stop()


async def main_async(a: argparse.Namespace) -> None:
    runs: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for _ in range(a.repeats):
        for name, source in VARIANTS.items():
            runs[name].append(await _one_run(source, a.players, a.rounds))
    print(
        f"redis-server CPU per new player: {a.players} a round x {a.rounds} rounds; "
        f"median of {a.repeats} alternated runs (min-max)"
    )
    for name, cpus in runs.items():
        print(f"{name:<8} {statistics.median(cpus):6.2f} µs ({min(cpus):.2f}-{max(cpus):.2f})")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", type=int, default=64, help="new players a round (one pipeline)")
    p.add_argument("--rounds", type=int, default=100)
    p.add_argument("--repeats", type=int, default=5)
    asyncio.run(main_async(p.parse_args(argv)))


if __name__ == "__main__":
    main()
