"""Certified daily deals, par and hints: the solver, run off the event loop.

The day's deal of a variant is the first seed of the day's HMAC-derived sequence that the
solver proves winnable (for the scoring Triple Deck games: the first seed, with the best score
found as par); without a proof (certification off, failed or out of time), the first seed
whose deal offers a move. Deals are computed once per (variant, day) by whichever process takes
the Redis lock; the others wait for the result in Redis. Tomorrow's deals are computed ahead.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import logging
import multiprocessing
import os
import resource
import secrets
import signal
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TypeVar, cast

import redis.asyncio

from engine import Game, OverTask, new_game, variant
from server.games.daily import daily_seed, utc_date
from server.redis import keys
from server.redis.batch import Batcher, LuaScript
from server.runtime.clock import Clock
from server.runtime.errors import (
    RateLimited,
    SolverBusy,
    StoreUnavailable,
    raise_if_cancelled,
    translate_redis_errors,
)

log = logging.getLogger(__name__)

#: Seeds tried per variant and day before settling for one the solver could not decide.
MAX_CANDIDATES = 40
#: Total certification time per variant and day, in candidate budgets.
CERTIFY_BUDGETS = 6
#: Seconds a deal's lock outlives the longest certification may take (`lock_ttl_s`).
LOCK_MARGIN_S = 60

#: Seconds a tier certification's lock lasts; its holder renews it every third of that while it
#: rates (a Triple Deck candidate takes seconds, a day's up to minutes), so a process that
#: dies frees it within this long.
TIER_LOCK_S = 300
#: Missing deals a process remembers as missing for good (about 37 months of 6 variants'
#: deals, tiers and catch-up deals; the least recently found dropped beyond).
ABSENT_KEPT = 20_000

#: Renew a lock only while it is still ours.
_RENEW_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

#: Release a lock only while it is still ours: after it expired another process may hold it.
_RELEASE_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


@dataclass(frozen=True, slots=True)
class Deal:
    """A day's deal of one variant. `seed` is secret until the day is over."""

    variant: str
    date: dt.date
    seed: int
    par: int | None  # moves of the solver's winning line, or the best score (scoring games)
    certified: bool  # proven winnable (or, for scoring games, searched for a par)
    candidate: int  # index of the seed in the day's sequence

    def dump(self) -> str:
        return json.dumps(
            {
                "seed": self.seed,
                "par": self.par,
                "certified": self.certified,
                "candidate": self.candidate,
            }
        )

    @classmethod
    def load(cls, variant_id: str, date: dt.date, raw: str | bytes) -> Deal:
        d = json.loads(raw)
        return cls(
            variant_id, date, int(d["seed"]), d["par"], bool(d["certified"]), int(d["candidate"])
        )


#: Tiers with a deal of their own each day (the medium tier is the daily deal, `Deal`).
OWN_TIERS: tuple[str, ...] = tuple(t for t in keys.TIER_NAMES if t != keys.DAILY_TIER)


@dataclass(frozen=True, slots=True)
class TierDeal:
    """A day's deal of one tier of a variant. ``seed`` is secret until the day is over."""

    variant: str
    date: dt.date
    tier: str
    seed: int
    par: int | None  # moves of the solver's winning line (None: not known)
    certified: bool  # rated in its tier by the difficulty model (`engine.difficulty`)
    score: float | None = None  # the model's difficulty score


#: Tiers of a day's catch-up deals: all four (the medium catch-up is not the daily deal).
CATCHUP_TIERS: tuple[str, ...] = keys.TIER_NAMES


@dataclass(frozen=True, slots=True)
class DayTiers:
    """A day's tier deals of one variant: easy, hard and expert (absent: no deal of that tier
    was found in the certification's budget); the medium tier is the daily `Deal`. The day's
    catch-up deals are one too, of all four tiers (``names`` = `CATCHUP_TIERS`)."""

    variant: str
    date: dt.date
    deals: dict[str, TierDeal]
    #: The tiers it deals (absent ones stored as null).
    names: tuple[str, ...] = OWN_TIERS

    def dump(self) -> str:
        return json.dumps(
            {
                t: (
                    {"seed": d.seed, "par": d.par, "certified": d.certified, "score": d.score}
                    if (d := self.deals.get(t)) is not None
                    else None
                )
                for t in self.names
            }
        )

    @classmethod
    def load(
        cls, variant_id: str, date: dt.date, raw: str | bytes, names: tuple[str, ...] = OWN_TIERS
    ) -> DayTiers:
        d = json.loads(raw)
        deals = {}
        for tier in names:
            x = d.get(tier)
            if x is not None:
                deals[tier] = TierDeal(
                    variant_id,
                    date,
                    tier,
                    int(x["seed"]),
                    None if x["par"] is None else int(x["par"]),
                    bool(x["certified"]),
                    None if x.get("score") is None else float(x["score"]),
                )
        return cls(variant_id, date, deals, names)


def tier_candidate_seed(secret: bytes, variant_id: str, date: dt.date, index: int) -> int:
    """The index-th candidate of the day's tier sequence (apart from the daily's)."""
    return daily_seed(secret, f"{variant_id}@tiers#{index}", date)


def tier_own_seed(secret: bytes, variant_id: str, date: dt.date, tier: str, index: int) -> int:
    """An uncertified tier's index-th seed (``--no-certify``: each tier its own sequence)."""
    return daily_seed(secret, f"{variant_id}@{tier}#{index}", date)


def catchup_candidate_seed(secret: bytes, variant_id: str, date: dt.date, index: int) -> int:
    """The index-th candidate of the day's catch-up sequence: apart from the daily's and the
    tiers' sequences, so a day's published seeds say nothing of its catch-up deals."""
    return daily_seed(secret, f"{variant_id}@catchup#{index}", date)


def catchup_own_seed(secret: bytes, variant_id: str, date: dt.date, tier: str, index: int) -> int:
    """An uncertified catch-up deal's index-th seed (``--no-certify``: each tier its own)."""
    return daily_seed(secret, f"{variant_id}@catchup:{tier}#{index}", date)


def catchup_days(today: dt.date) -> list[dt.date]:
    """The days whose catch-up deals the background pass certifies on ``today``: the past
    days of the month, newest first (playable now), then today (playable from tomorrow on),
    unless today is the month's last day (then it never is)."""
    past = [today - dt.timedelta(days=n) for n in range(1, today.day)]
    return past if (today + dt.timedelta(days=1)).month != today.month else [*past, today]


def _rate_tier(variant_id: str, seed: int, nodes: int) -> tuple[str | None, int | None, float]:
    """(tier, par, score) of one candidate deal (run in a solver process:
    `engine.difficulty.rate`, deterministic for its node budget). The par is the solver's
    winning line's length; none for the scoring Triple Deck games (a tier deal of theirs is
    winnable at the full score). Tier None: not certified winnable within the budget."""
    from engine.difficulty import rate

    rating = rate(variant_id, seed, max_nodes=nodes)
    if rating.tier is None:
        return None, None, float(rating.score)
    par = None if variant(variant_id).scored else int(rating.features.line_moves)
    return str(rating.tier.value), par, float(rating.score)


def _retrieved(task: asyncio.Task[Deal]) -> None:
    """Mark a deal task's failure as seen: its waiters (if any are left) get it themselves; a
    task whose waiters all went away (a closed connection, a shutdown) must not leave "Task
    exception was never retrieved" behind."""
    if not task.cancelled():
        task.exception()


def _retrieved_tiers(task: asyncio.Task[DayTiers]) -> None:
    if not task.cancelled():
        task.exception()


def candidate_seed(secret: bytes, variant_id: str, date: dt.date, index: int) -> int:
    """The index-th seed of the day's sequence (index 0 is the plain daily seed)."""
    return daily_seed(secret, variant_id if index == 0 else f"{variant_id}#{index}", date)


def offers_a_move(variant_id: str, seed: int) -> bool:
    """Whether the deal has a legal move at all: one dead from the start (about 3 in 1,000
    Fourteen Out deals) is a game over before it begins, which no player could finish."""
    return next(new_game(variant_id, seed).legal_moves(), None) is not None


def lasts_a_move(variant_id: str, seed: int) -> bool:
    """Whether some first move leaves a game that goes on (not over, a move still to make): a
    race whose every opening ends it at once is decided by the deal, not by the racers."""
    game = new_game(variant_id, seed)
    for move in game.legal_moves():
        after = new_game(variant_id, seed)
        after.apply(move)
        if not after.over and next(after.legal_moves(), None) is not None:
            return True
    return False


def first_playable(secret: bytes, variant_id: str, date: dt.date) -> tuple[int, int]:
    """(seed, index) of the day's first candidate that `offers_a_move`: the deal served when
    none is certified."""
    for index in range(MAX_CANDIDATES):
        seed = candidate_seed(secret, variant_id, date, index)
        if offers_a_move(variant_id, seed):
            return seed, index
    return candidate_seed(secret, variant_id, date, 0), 0  # never seen: 40 dead deals in a row


# -- work done in the solver processes (picklable top-level functions) ------------------------


def _certify(variant_id: str, seed: int, budget_s: float) -> tuple[str, int | None]:
    """(verdict, par) for one candidate deal."""
    from engine.solvers import solve

    result = solve(new_game(variant_id, seed), max_seconds=budget_s)
    if variant(variant_id).scored:
        return result.verdict, result.best_score
    return result.verdict, len(result.solution) if result.verdict == "winnable" else None


@dataclass(frozen=True, slots=True)
class HintAnswer:
    """A hint search's answer: a move on a winning (or, for scoring games, the best found)
    line, or None; whether the search proved that no line wins (``lost``: it knows every
    hidden card, so saying so tells the player as much as a move); and the seconds it took
    in its worker (queueing not included), which the player's hourly solver budget is
    charged, move found or not."""

    move: str | None
    lost: bool
    took_s: float


def timed_hint(game: Game, budget_s: float) -> HintAnswer:
    """Search the game's position for a hint within ``budget_s`` seconds (in a worker)."""
    from engine.solvers import IMPOSSIBLE, hinted_move, solve

    started = time.perf_counter()
    result = solve(game, max_seconds=budget_s)
    took_s = time.perf_counter() - started
    move = hinted_move(result)
    if move is not None:
        return HintAnswer(move, False, took_s)
    return HintAnswer(None, result.verdict == IMPOSSIBLE and not game.scored, took_s)


#: Address space a game-over search may use in a worker (the largest measured from play, 701,498
#: positions, needs about 300 MB); past it the search fails with MemoryError and the game stays
#: open, instead of the worker taking the machine's memory.
OVER_MEMORY_BYTES = 2 << 30


def settle_over(task: OverTask) -> tuple[bool, float]:
    """Run a game-over check to its end: (over, CPU seconds it took in this worker)."""
    started = time.process_time()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = OVER_MEMORY_BYTES if hard == resource.RLIM_INFINITY else min(hard, OVER_MEMORY_BYTES)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        return task.run(), time.process_time() - started
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


R = TypeVar("R")


#: How often a worker checks that the server that started it is still there.
ORPHAN_CHECK_S = 1.0


def _start_worker(pids: multiprocessing.SimpleQueue[int], server_pid: int) -> None:
    """A worker's initializer: tell the pool its process id (`SolverPool.worker_pids`), and
    leave once the server is gone (`_exit_when_gone`)."""
    pids.put(os.getpid())
    threading.Thread(
        target=_exit_when_gone, args=(server_pid,), name="orphan-check", daemon=True
    ).start()


def _exit_when_gone(server_pid: int) -> None:
    """End this worker once process ``server_pid`` is gone. A server killed outright (SIGKILL,
    the OOM killer) never tells its executor's workers to stop; each holds both ends of its
    own queue, so it would wait for work forever, and keeps the forkserver alive with it (a
    worker holds the forkserver's alive pipe): both stayed behind every killed server."""
    while True:
        time.sleep(ORPHAN_CHECK_S)
        if _gone(server_pid):
            os._exit(0)


def _gone(pid: int) -> bool:
    """Process ``pid`` has ended: no such process, or a zombie its parent has not reaped yet
    (Linux's /proc; elsewhere a signal 0)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except FileNotFoundError:
        return True
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):  # gone, or its id another's now
        return True
    return False


class SolverPool:
    """A small process pool so that searches never block the event loop.

    Workers are started with ``forkserver`` (``spawn`` where that is missing), never
    ``fork``: a forked worker would inherit every open client socket, and a socket the server
    closes would then stay open in the worker, leaving the client waiting for the TCP close.
    Each worker reports its process id when it starts (the executor's own table of processes
    is private), so that `close` can stop the workers of a search still running.
    """

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or max(1, min(2, (os.cpu_count() or 1)))
        self._pool: ProcessPoolExecutor | None = None
        self._pids: multiprocessing.SimpleQueue[int] | None = None
        self._known: set[int] = set()
        #: Jobs in the pool now (waiting or running), and of them the spare ones (`run_spare`).
        self.busy = 0
        self.spare_busy = 0
        #: Hints (`run_hint`) in the pool now, and the lane they wait in before it (made on
        #: first use, in the running loop).
        self.hints_busy = 0
        self._hint_lane: asyncio.Semaphore | None = None

    def spare_slots(self) -> int:
        """Spare jobs the pool runs at once: one worker is always left to the others."""
        return max(1, self.workers - 1)

    def spare_free(self) -> bool:
        """Whether a spare job (`run_spare`) would be taken now."""
        return self.spare_busy < self.spare_slots() and self.busy < self.workers

    async def run_spare(self, fn: Callable[..., R], *args: object) -> R:
        """Run ``fn`` on spare capacity only (free games' hints): at once on an idle worker
        or not at all (``SolverBusy``), at most `spare_slots` at a time. Certification and
        daily hints (`run`) then never queue behind spare jobs while a second worker exists,
        and with one worker wait at most one spare job's budget."""
        if not self.spare_free():
            raise SolverBusy(
                "the solver is busy with today's deals and daily hints; free-game hints "
                "wait for a free worker: retry in a few seconds"
            )
        self.spare_busy += 1
        try:
            return await self.run(fn, *args)
        finally:
            self.spare_busy -= 1

    async def run_hint(self, fn: Callable[..., R], *args: object) -> R:
        """Run a daily or tier game's hint behind certification: at most `spare_slots` hints
        are in the pool at a time, the others wait in this process's lane (not in the pool's
        queue), so a certification job (`run`) queues behind at most that many hints, each
        bounded by the hint budget, however many hints are asked for. A flood of hints by
        many players slows hints, never the day's certification."""
        if self._hint_lane is None:
            self._hint_lane = asyncio.Semaphore(self.spare_slots())
        async with self._hint_lane:
            self.hints_busy += 1
            try:
                return await self.run(fn, *args)
            finally:
                self.hints_busy -= 1

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            method = (
                "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
            )
            ctx = multiprocessing.get_context(method)
            self._pids = ctx.SimpleQueue()
            self._known = set()
            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=ctx,
                initializer=_start_worker,
                initargs=(self._pids, os.getpid()),
            )
        return self._pool

    def worker_pids(self) -> set[int]:
        """The process ids of the workers started so far by the current executor."""
        pids = self._pids
        while pids is not None and not pids.empty():
            self._known.add(pids.get())
        return set(self._known)

    async def run(self, fn: Callable[..., R], *args: object) -> R:
        pool = self._executor()
        self.busy += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)
        except BrokenProcessPool:
            if self._pool is pool:  # a worker died (killed, out of memory): start afresh
                self._drop()
                pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            self.busy -= 1

    def _drop(self) -> None:
        self._pool = None
        if self._pids is not None:
            self._pids.close()
        self._pids, self._known = None, set()

    def close(self) -> None:
        """Stop the workers now: a certification search may run for a minute, and shutting
        down must not wait for it (the interpreter would join the workers at exit)."""
        if self._pool is not None:
            workers = self.worker_pids()
            self._pool.shutdown(wait=False, cancel_futures=True)
            for pid in workers:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
            self._drop()


#: A hint's lock outlives its search by this much (a stuck worker frees it in the end).
HINT_LOCK_SLACK_S = 60


class HintGate:
    """One hint in flight per player (a Redis lock: across processes) and at most
    ``max_pending`` hints waiting for or in the solver per process: a flood of hints by one
    player, or by many, never queues up behind other players' hints without bound."""

    def __init__(self, client: redis.asyncio.Redis, max_pending: int, budget_s: float) -> None:
        self.r = client
        self.max_pending = max_pending
        self.lock_ms = int((budget_s + HINT_LOCK_SLACK_S) * 1000)
        #: Hints of this process waiting for or in the solver now.
        self.pending = 0

    @contextlib.asynccontextmanager
    async def slot(self, pid: str) -> AsyncIterator[None]:
        """Hold the player's hint slot while the body runs; ``RateLimited`` when the player
        has a hint in flight already, ``SolverBusy`` when the process's queue is full."""
        lock = keys.hint_lock(pid)
        if not await self._take(lock):
            raise RateLimited("a hint is already being computed for you; wait for its answer")
        try:
            if self.pending >= self.max_pending:
                raise SolverBusy("the solver is busy; retry in a few seconds")
            self.pending += 1
            try:
                yield
            finally:
                self.pending -= 1
        finally:
            with contextlib.suppress(Exception):  # else it expires by itself
                await self.r.delete(lock)

    @translate_redis_errors
    async def _take(self, lock: str) -> bool:
        return bool(await self.r.set(lock, os.getpid(), nx=True, px=self.lock_ms))


class DailyDeals:
    """The day's deals, computed once across all processes and cached here."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        clock: Clock,
        secret: bytes,
        pool: SolverPool,
        *,
        certify: bool = True,
        budget_s: float = 10.0,
        retention_days: int = 90,
        batch: Batcher | None = None,
        tier_nodes: int = 20_000,
        tier_deals: int = 60,
    ) -> None:
        self.r = client
        #: Scripts run through the shared group commit (`Services` hands it the store's).
        self.batch = batch if batch is not None else Batcher(client)
        self.clock = clock
        self.secret = secret
        self.pool = pool
        self.certify = certify
        self.budget_s = budget_s
        self.retention_s = retention_days * 86_400 + 2 * 86_400
        self._cache: dict[tuple[str, dt.date], Deal] = {}
        self._local: dict[tuple[str, dt.date], asyncio.Task[Deal]] = {}
        self._release = LuaScript.of(_RELEASE_LUA)
        self._renew = LuaScript.of(_RENEW_LUA)
        #: The tier certification's search budget per candidate deal, and its candidates.
        self.tier_nodes = tier_nodes
        self.tier_deals = tier_deals
        self._tiers: dict[tuple[str, dt.date], DayTiers] = {}
        self._tier_tasks: dict[tuple[str, dt.date], asyncio.Task[DayTiers]] = {}
        #: The days' catch-up deals (`catchup`), as the tiers.
        self._catchup: dict[tuple[str, dt.date], DayTiers] = {}
        self._catchup_tasks: dict[tuple[str, dt.date], asyncio.Task[DayTiers]] = {}
        #: What the bulk peeks found missing for good (`_missing_for_good`): not asked again.
        self._absent: OrderedDict[tuple[str, dt.date, str], None] = OrderedDict()

    async def aclose(self) -> None:
        """Stop the deal and tier computations still running (shielded from their waiters,
        they outlive a cancelled `prepare_ahead`) and wait for them: each releases its lock in
        Redis on the way out, so this runs before Redis closes (server/app.py), else the
        release fails after the shutdown and asyncio logs the task's error."""
        tasks: list[asyncio.Task[Deal] | asyncio.Task[DayTiers]] = [
            *self._local.values(),
            *self._tier_tasks.values(),
            *self._catchup_tasks.values(),
        ]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._local.clear()
        self._tier_tasks.clear()
        self._catchup_tasks.clear()

    def lock_ttl_s(self) -> int:
        """How long a deal's lock lasts: longer than its computation can take (every
        candidate's budget, then the fallback), so it does not expire under a live holder."""
        if not self.certify:
            return LOCK_MARGIN_S
        return int(self.budget_s * (CERTIFY_BUDGETS + 1)) + LOCK_MARGIN_S

    async def get(self, variant_id: str, date: dt.date) -> Deal:
        """The deal, computing it (or waiting for the process computing it) when needed."""
        cached = self._cache.get((variant_id, date))
        if cached is not None:
            return cached
        task = self._local.get((variant_id, date))
        if task is None:
            task = asyncio.create_task(self._obtain(variant_id, date))
            task.add_done_callback(_retrieved)
            self._local[(variant_id, date)] = task
        try:
            deal = await asyncio.shield(task)
        finally:
            if task.done():
                self._local.pop((variant_id, date), None)
        self._cache[(variant_id, date)] = deal
        return deal

    @translate_redis_errors
    async def _obtain(self, variant_id: str, date: dt.date) -> Deal:
        """The stored deal; computed here when no process holds the lock.

        One deal per (variant, day) across every process: the deal is written only if none is
        stored yet (``SET NX``), and the process that loses that write serves the stored deal,
        not its own. The lock only saves work; it lasts longer than a computation
        (`lock_ttl_s`) and is released only by its holder (a token compared in Lua)."""
        key = keys.daily_deal(variant_id, date)
        lock = keys.daily_deal_lock(variant_id, date)
        while True:
            raw = await self.r.get(key)
            if raw:
                return Deal.load(variant_id, date, raw)
            token = f"{os.getpid()}:{secrets.token_hex(8)}"
            if await self.r.set(lock, token, nx=True, ex=self.lock_ttl_s()):
                try:
                    # Stored since our read (its computer released the lock just before we
                    # took it): serve it rather than compute it again.
                    raw = await self.r.get(key)
                    if raw:
                        return Deal.load(variant_id, date, raw)
                    deal = await self._compute(variant_id, date)
                    if await self.r.set(key, deal.dump(), ex=self.retention_s, nx=True):
                        return deal
                    # Another process wrote the day's deal first (our lock had expired):
                    # the stored one is the day's deal, for this process too.
                    log.warning("%s %s: another process dealt first", variant_id, date)
                    continue
                finally:
                    await self.batch.eval(self._release, (lock,), (token,))
            await asyncio.sleep(0.2)  # another process is computing it

    async def _compute(self, variant_id: str, date: dt.date) -> Deal:
        if not self.certify:
            return self._uncertified(variant_id, date)
        try:
            return await self._certified(
                variant_id, date, candidate_seed(self.secret, variant_id, date, 0)
            )
        except Exception:  # a broken solver must not cost players their daily game
            log.exception(
                "%s %s: certification failed; dealing the first playable seed", variant_id, date
            )
            return self._uncertified(variant_id, date)

    def _uncertified(self, variant_id: str, date: dt.date) -> Deal:
        seed, index = first_playable(self.secret, variant_id, date)
        return Deal(variant_id, date, seed, None, False, index)

    async def _certified(self, variant_id: str, date: dt.date, first: int) -> Deal:
        if variant(variant_id).scored:
            _, best = await self.pool.run(_certify, variant_id, first, self.budget_s)
            return Deal(variant_id, date, first, best, True, 0)
        deadline = asyncio.get_running_loop().time() + self.budget_s * CERTIFY_BUDGETS
        for index in range(MAX_CANDIDATES):
            if asyncio.get_running_loop().time() > deadline:
                break
            seed = candidate_seed(self.secret, variant_id, date, index)
            verdict, par = await self.pool.run(_certify, variant_id, seed, self.budget_s)
            if verdict == "winnable":
                log.info("%s %s: certified seed #%d, par %s", variant_id, date, index, par)
                return Deal(variant_id, date, seed, par, True, index)
        log.warning(
            "%s %s: no seed proven winnable in time; dealing the first playable", variant_id, date
        )
        return self._uncertified(variant_id, date)

    async def prepare_ahead(self) -> None:
        """Compute today's and tomorrow's deals of every variant (background task)."""
        from engine import VARIANT_IDS

        today = utc_date(self.clock.now_ms())
        for date in (today, today + dt.timedelta(days=1)):
            for variant_id in VARIANT_IDS:
                try:
                    await self.get(variant_id, date)
                except StoreUnavailable:
                    log.warning("cannot prepare %s %s: Redis unavailable", variant_id, date)

    async def prepare_tiers_ahead(self, variants: Sequence[str] | None = None) -> None:
        """Certify today's and tomorrow's tiers of every variant, then the catch-up deals of
        this month's days (`catchup_days`: each once, today's a day before it is playable)
        (background task, after `prepare_ahead`: the only place tiers are certified). Without
        certification catch-up deals cost nothing and are dealt on their first use.
        ``variants``: these only (every variant by default)."""
        from engine import VARIANT_IDS

        today = utc_date(self.clock.now_ms())
        todo = [(d, False) for d in (today, today + dt.timedelta(days=1))]
        if self.certify:
            todo += [(d, True) for d in catchup_days(today)]
        for date, catchup in todo:
            what = "catch-up deals" if catchup else "tiers"
            for variant_id in VARIANT_IDS if variants is None else variants:
                try:
                    await self.tiers(variant_id, date, catchup=catchup)
                except StoreUnavailable:
                    log.warning(
                        "cannot prepare %s %s %s: Redis unavailable", variant_id, date, what
                    )
                except Exception:  # a dead worker, a bug: nothing stored, tried again later
                    raise_if_cancelled()
                    log.exception("certifying the %s %s %s failed", variant_id, date, what)

    # -- tiers --------------------------------------------------------------------------------

    def _kind(
        self, catchup: bool
    ) -> tuple[
        dict[tuple[str, dt.date], DayTiers], dict[tuple[str, dt.date], asyncio.Task[DayTiers]]
    ]:
        """The cache and the tasks of the tiers, or of the catch-up deals."""
        if catchup:
            return self._catchup, self._catchup_tasks
        return self._tiers, self._tier_tasks

    async def tiers(self, variant_id: str, date: dt.date, *, catchup: bool = False) -> DayTiers:
        """The day's tier deals (``catchup``: its catch-up deals), certifying them (or waiting
        for the process that does) when none are stored. Certification runs only from
        `prepare_tiers_ahead`; a request asks `tiers_for_request`, which never certifies."""
        cache, tasks = self._kind(catchup)
        cached = cache.get((variant_id, date))
        if cached is not None:
            return cached
        task = tasks.get((variant_id, date))
        if task is None:
            task = asyncio.create_task(self._obtain_tiers(variant_id, date, catchup))
            task.add_done_callback(_retrieved_tiers)
            tasks[(variant_id, date)] = task
        try:
            found = await asyncio.shield(task)
        finally:
            if task.done():
                tasks.pop((variant_id, date), None)
        cache[(variant_id, date)] = found
        return found

    async def tiers_for_request(
        self, variant_id: str, date: dt.date, *, catchup: bool = False
    ) -> DayTiers | None:
        """The day's tier deals (``catchup``: its catch-up deals) for a player's request: the
        stored ones, never certified here (None while the background certification has not
        stored them). Without certification (``--no-certify``) they cost nothing and are
        dealt at once."""
        found = await self.peek_tiers(variant_id, date, catchup=catchup)
        if found is None and not self.certify:
            return await self.tiers(variant_id, date, catchup=catchup)
        return found

    @translate_redis_errors
    async def peek_tiers(
        self, variant_id: str, date: dt.date, *, catchup: bool = False
    ) -> DayTiers | None:
        """The day's tier deals (``catchup``: its catch-up deals) if they have been certified,
        without certifying them."""
        cache, _ = self._kind(catchup)
        cached = cache.get((variant_id, date))
        if cached is not None:
            return cached
        key = keys.daily_catchup if catchup else keys.daily_tiers
        raw = await self.r.get(key(variant_id, date))
        if not raw:
            return None
        found = DayTiers.load(variant_id, date, raw, CATCHUP_TIERS if catchup else OWN_TIERS)
        cache[(variant_id, date)] = found
        return found

    def _missing_for_good(self, date: dt.date, kind: str) -> bool:
        """Whether a deal of ``date`` missing now can never be stored: a day's deal and tiers
        are dealt by their day, its catch-up deals within its month (a day's margin for the
        processes' clocks). Such days (months before the service, a month asked twice) cost
        the month calendar no Redis read after the first."""
        before = utc_date(self.clock.now_ms()) - dt.timedelta(days=1)
        if kind == "catchup":
            return (date.year, date.month) < (before.year, before.month)
        return date < before

    def _absent_now(self, variant_id: str, date: dt.date, kind: str) -> None:
        if self._missing_for_good(date, kind):
            self._absent[(variant_id, date, kind)] = None
            while len(self._absent) > ABSENT_KEPT:
                self._absent.popitem(last=False)

    @translate_redis_errors
    async def peek_catchup_days(
        self, days: Sequence[tuple[str, dt.date]]
    ) -> dict[tuple[str, dt.date], DayTiers]:
        """The stored catch-up deals of several (variant, day)s in one round trip (none
        certified): for the month calendar and the API's tiers."""
        absent = self._absent
        wanted = [d for d in days if d not in self._catchup and (*d, "catchup") not in absent]
        if wanted:
            async with self.r.pipeline(transaction=False) as pipe:  # slots apart: no MGET
                for variant_id, date in wanted:
                    pipe.get(keys.daily_catchup(variant_id, date))
                raws = cast(list[str | None], await pipe.execute())
            for (variant_id, date), raw in zip(wanted, raws, strict=True):
                if raw:
                    found = DayTiers.load(variant_id, date, raw, CATCHUP_TIERS)
                    self._catchup[(variant_id, date)] = found
                else:
                    self._absent_now(variant_id, date, "catchup")
        return {d: self._catchup[d] for d in days if d in self._catchup}

    @translate_redis_errors
    async def peek_days(
        self, days: Sequence[tuple[str, dt.date]]
    ) -> tuple[dict[tuple[str, dt.date], Deal], dict[tuple[str, dt.date], DayTiers]]:
        """The stored deals and tier deals of several (variant, day)s, in one round trip
        (none computed): for the month calendar."""
        absent = self._absent
        # Only what is not kept yet is read: a deal already cached stays the same object
        # (`server.handlers.tiers` shares a new player's cells while the deals do not change).
        wanted = [
            (d, kind)
            for d in days
            for kind, kept in (("deal", self._cache), ("tiers", self._tiers))
            if d not in kept and (*d, kind) not in absent
        ]
        if wanted:
            async with self.r.pipeline(transaction=False) as pipe:
                for (variant_id, date), kind in wanted:
                    if kind == "deal":
                        pipe.get(keys.daily_deal(variant_id, date))
                    else:
                        pipe.get(keys.daily_tiers(variant_id, date))
                raws = cast(list[str | None], await pipe.execute())
            for ((variant_id, date), kind), raw in zip(wanted, raws, strict=True):
                if not raw:
                    self._absent_now(variant_id, date, kind)
                elif kind == "deal":
                    self._cache[(variant_id, date)] = Deal.load(variant_id, date, raw)
                else:
                    self._tiers[(variant_id, date)] = DayTiers.load(variant_id, date, raw)
        deals = {d: self._cache[d] for d in days if d in self._cache}
        tiers = {d: self._tiers[d] for d in days if d in self._tiers}
        return deals, tiers

    @translate_redis_errors
    async def _obtain_tiers(self, variant_id: str, date: dt.date, catchup: bool) -> DayTiers:
        """As `_obtain` for the deal: one certification per (variant, day) across every
        process (the lock), the first stored result served by all (``SET NX``)."""
        if catchup:
            key, lock = (
                keys.daily_catchup(variant_id, date),
                keys.daily_catchup_lock(variant_id, date),
            )
        else:
            key, lock = keys.daily_tiers(variant_id, date), keys.daily_tiers_lock(variant_id, date)
        names = CATCHUP_TIERS if catchup else OWN_TIERS
        while True:
            raw = await self.r.get(key)
            if raw:
                return DayTiers.load(variant_id, date, raw, names)
            token = f"{os.getpid()}:{secrets.token_hex(8)}"
            if await self.r.set(lock, token, nx=True, ex=TIER_LOCK_S):
                renew = asyncio.create_task(self._keep_lock(lock, token))
                try:
                    raw = await self.r.get(key)
                    if raw:
                        return DayTiers.load(variant_id, date, raw, names)
                    found = await self._compute_tiers(variant_id, date, catchup)
                    if await self.r.set(key, found.dump(), ex=self.retention_s, nx=True):
                        return found
                    continue
                finally:
                    renew.cancel()
                    await self.batch.eval(self._release, (lock,), (token,))
            await asyncio.sleep(0.2)

    async def _keep_lock(self, lock: str, token: str) -> None:
        """Renew a held tiers lock until cancelled (the certification is done)."""
        while True:
            await asyncio.sleep(TIER_LOCK_S / 3)
            with contextlib.suppress(Exception):  # else it expires, and another may begin
                await self.batch.eval(self._renew, (lock,), (token, TIER_LOCK_S))

    async def _compute_tiers(self, variant_id: str, date: dt.date, catchup: bool) -> DayTiers:
        """`engine.difficulty.find_tiers` over the day's tier candidates, one candidate per
        solver task (hints and game-over checks take turns with it), stopping once easy,
        hard and expert each have their first deal: the same deals as one find_tiers call.
        The catch-up deals are found the same way over the day's catch-up candidates, for
        all four tiers (medium too: the daily deal's seed is published when its day ends)."""
        names = CATCHUP_TIERS if catchup else OWN_TIERS
        what = "catch-up deals" if catchup else "tiers"
        if not self.certify:
            return self._uncertified_tiers(variant_id, date, catchup)
        candidate = catchup_candidate_seed if catchup else tier_candidate_seed
        deals: dict[str, TierDeal] = {}
        try:
            for index in range(self.tier_deals):
                if len(deals) == len(names):
                    break
                seed = candidate(self.secret, variant_id, date, index)
                tier, par, score = await self.pool.run(
                    _rate_tier, variant_id, seed, self.tier_nodes
                )
                if tier in names and tier not in deals:
                    deals[tier] = TierDeal(variant_id, date, tier, seed, par, True, score)
        except KeyError as exc:  # the engine has no difficulty model for this variant
            log.warning("%s %s: no %s certified: %s", variant_id, date, what, exc)
            return DayTiers(variant_id, date, {}, names)
        missing = [t for t in names if t not in deals]
        if missing:
            log.warning(
                "%s %s: no %s deal in budget (%s)", variant_id, date, ", ".join(missing), what
            )
        return DayTiers(variant_id, date, deals, names)

    def _uncertified_tiers(self, variant_id: str, date: dt.date, catchup: bool) -> DayTiers:
        """Each tier's first playable seed of its own sequence, unrated."""
        names = CATCHUP_TIERS if catchup else OWN_TIERS
        own = catchup_own_seed if catchup else tier_own_seed
        deals = {}
        for tier in names:
            seed = own(self.secret, variant_id, date, tier, 0)
            for index in range(MAX_CANDIDATES):
                seed = own(self.secret, variant_id, date, tier, index)
                if offers_a_move(variant_id, seed):
                    break
            deals[tier] = TierDeal(variant_id, date, tier, seed, None, False)
        return DayTiers(variant_id, date, deals, names)

    @translate_redis_errors
    async def peek(self, variant_id: str, date: dt.date) -> Deal | None:
        """The deal if it has been computed, without computing it."""
        cached = self._cache.get((variant_id, date))
        if cached is not None:
            return cached
        raw = await self.r.get(keys.daily_deal(variant_id, date))
        return Deal.load(variant_id, date, raw) if raw else None

    @translate_redis_errors
    async def revealed(self, date: dt.date, tier: str | None = None) -> dict[str, int]:
        """The seeds of a day that is over (of one of its tiers: ``tier``; the daily deals
        are the medium tier); raises ValueError for today and later."""
        if date >= utc_date(self.clock.now_ms()):
            raise ValueError("seeds are revealed once the day is over (UTC)")
        from engine import VARIANT_IDS

        out = {}
        if tier is not None and tier != keys.DAILY_TIER:
            for variant_id in VARIANT_IDS:
                found = await self.peek_tiers(variant_id, date)
                tier_deal = found.deals.get(tier) if found else None
                if tier_deal is not None:
                    out[variant_id] = tier_deal.seed
            return out
        for variant_id in VARIANT_IDS:
            raw = await self.r.get(keys.daily_deal(variant_id, date))
            if raw:
                out[variant_id] = Deal.load(variant_id, date, raw).seed
        return out
