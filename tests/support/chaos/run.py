"""One chaos run: the topology, the clients, the faults, the settle phase and the check."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from engine import VARIANT_IDS
from server.boards.leaderboard import BoardRef, Leaderboard, encode_rank_key
from server.games.store import GameStore
from server.races.model import RaceStatus, RecentRace
from server.races.ratings import RECENT_MAX, Rating
from server.races.store import RaceStore
from server.redis import keys
from server.redis.connect import connect
from server.runtime.errors import NotFound
from tests.support.balancer import Balancer
from tests.support.chaos.checker import (
    BoardEntry,
    Ledgers,
    RatedResult,
    RecentItem,
    Report,
    StoredGame,
    StoredRace,
    StoredRating,
    check,
)
from tests.support.chaos.history import History
from tests.support.chaos.nemesis import Fault, carry_out, schedule
from tests.support.chaos.store import start_redis
from tests.support.chaos.workload import (
    VARIANT,
    Client,
    Conn,
    DailyPlayer,
    Lost,
    Racer,
    RoomGuest,
    RoomHost,
    Spectator,
)
from tests.support.procs import ServerProcess, pinned_day

#: The day every process deals: noon, far from a rollover.
NOON = dt.datetime(2030, 6, 15, 12, tzinfo=dt.UTC)
#: A race's end may be repaired by another process about 15 s after the one ending it died.
RACE_SLACK_MS = 20_000


@dataclass(frozen=True, slots=True)
class ChaosConfig:
    seed: int
    duration: float = 30.0  # seconds of faults and play
    players: int = 5
    racers: int = 4
    room_pairs: int = 1  # a host and a guest racing each other in private rooms
    spectators: int = 2
    settle: float = 6.0  # seconds of play after the last fault, for everyone to resume
    race_wait: float = 10.0  # at most this long after the run for started races to be due
    countdown_ms: int = 500
    time_limit_ms: int = 12_000
    grace_ms: int = 2_000
    cluster: bool = False  # a local three-master Redis Cluster instead of one Redis


@dataclass(slots=True)
class ChaosResult:
    config: ChaosConfig
    report: Report
    faults: list[Fault]
    history: History
    log: list[str] = field(default_factory=list)


async def run(cfg: ChaosConfig, workdir: Path, say: Callable[[str], None] = print) -> ChaosResult:
    log: list[str] = []

    def note(line: str) -> None:
        log.append(line)
        say(line)

    redis = await asyncio.to_thread(start_redis, workdir, cfg.cluster)
    flags = (
        *pinned_day(NOON),
        "--race-countdown-ms",
        str(cfg.countdown_ms),
        "--race-time-limit-ms",
        str(cfg.time_limit_ms),
        "--race-grace-ms",
        str(cfg.grace_ms),
    )
    servers: list[ServerProcess] = []
    lb: Balancer | None = None
    history = History()
    faults = schedule(cfg.seed, cfg.duration)
    try:
        for i in range(3):
            srv = ServerProcess(workdir / f"s{i + 1}", flags, redis_url=redis.url)
            servers.append(await asyncio.to_thread(srv.start))
        lb = Balancer(workdir / "lb", [f"127.0.0.1:{s.port}" for s in servers]).start()
        await asyncio.to_thread(lb.wait_states, {"s1": "UP", "s2": "UP", "s3": "UP"})
        rng = random.Random(cfg.seed)
        clients: list[Client] = [
            DailyPlayer(f"chaos-p{i}", lb.url, history, random.Random(rng.random()), variants)
            for i, variants in enumerate(_variant_orders(rng, cfg.players))
        ]
        clients += [
            Racer(f"chaos-r{i}", lb.url, history, random.Random(rng.random()))
            for i in range(cfg.racers)
        ]
        for i in range(cfg.room_pairs):
            codes: asyncio.Queue[str] = asyncio.Queue()
            clients.append(
                RoomHost(f"chaos-h{i}", lb.url, history, random.Random(rng.random()), codes)
            )
            clients.append(
                RoomGuest(f"chaos-g{i}", lb.url, history, random.Random(rng.random()), codes)
            )
        clients += [
            Spectator(f"chaos-s{i}", lb.url, history, random.Random(rng.random()))
            for i in range(cfg.spectators)
        ]
        tasks = [asyncio.create_task(c.run()) for c in clients]
        started = time.monotonic()
        note(f"seed {cfg.seed}: {len(faults)} faults over {cfg.duration:.0f} s")

        def fault(line: str) -> None:
            history.faults.append((time.monotonic(), line))
            note(line)

        await carry_out(faults, servers, redis, lb, fault)
        await asyncio.sleep(max(0.0, started + cfg.duration - time.monotonic()) + cfg.settle)
        for c in clients:
            c.stopping = True
        _, pending = await asyncio.wait(tasks, timeout=10)
        for t in pending:
            t.cancel()
        run_end = time.monotonic()
        races, now_ms = await _races(lb.url, history, cfg)
        games = await _games(redis.url, history)
        ledgers = await _ledgers(redis.url, history, games)
        report = check(
            history,
            games,
            races,
            now_ms=now_ms,
            grace_ms=cfg.grace_ms,
            race_slack_ms=RACE_SLACK_MS,
            run_end=run_end,
            resume_window=cfg.settle / 2,
            ledgers=ledgers,
        )
        report.figures["races judged"] = sum(
            now_ms >= r.ends_at_ms + cfg.grace_ms + RACE_SLACK_MS for r in races.values()
        )
        return ChaosResult(cfg, report, faults, history, log)
    finally:
        if lb is not None:
            lb.stop()
        for srv in servers:
            await asyncio.to_thread(srv.stop)
        await asyncio.to_thread(redis.stop)


def _variant_orders(rng: random.Random, players: int) -> list[list[str]]:
    out = []
    for _ in range(players):
        order = list(VARIANT_IDS)
        rng.shuffle(order)
        out.append(order)
    return out


async def _races(url: str, history: History, cfg: ChaosConfig) -> tuple[dict[str, StoredRace], int]:
    """Every race the racers saw, read through the balancer once due (or after `race_wait`)."""
    deadline = time.monotonic() + cfg.race_wait
    conn = await Conn.open(url)
    try:
        welcome = await conn.request("hello", versions=[4], name="chaos-judge")
        if welcome.get("type") != "welcome":
            raise RuntimeError(f"the judge was refused: {welcome}")
        now_ms = int(welcome["server_time"])
        while True:
            races: dict[str, StoredRace] = {}
            for race_id in history.races:
                reply = await conn.request("race.get", race_id=race_id)
                if reply.get("type") == "race.room":
                    race = reply["race"]
                    now_ms = int(race["server_time"])
                    ends_at = int(race.get("ends_at") or 0)
                    races[race_id] = StoredRace(race_id, race["status"], ends_at)
            unfinished_not_due = [
                r
                for r in races.values()
                if r.status != "finished" and now_ms < r.ends_at_ms + cfg.grace_ms + RACE_SLACK_MS
            ]
            if not unfinished_not_due or time.monotonic() > deadline:
                return races, now_ms
            await asyncio.sleep(1.0)
    except Lost as exc:
        raise RuntimeError(f"the judge lost its connection: {exc}") from None
    finally:
        await conn.close()


async def _games(redis_url: str, history: History) -> dict[str, StoredGame]:
    client = connect(redis_url)
    store = GameStore(client)
    out: dict[str, StoredGame] = {}
    played = {op.game_id for op in history.ops if op.game_id}
    watched = {keys.race_game_id(b.race_id, b.player_id) for b in history.boards}
    try:
        for game_id in sorted(played | watched):
            with contextlib.suppress(NotFound):
                record, moves = await store.load(game_id)
                result = record.result
                out[game_id] = StoredGame(
                    game_id,
                    record.kind,
                    record.variant,
                    record.date.isoformat(),
                    record.seed,
                    tuple(moves),
                    record.finished,
                    rank_key=(
                        encode_rank_key(
                            result.won,
                            result.points,
                            result.time_ms,
                            result.moves,
                            result.hints > 0,
                        )
                        if result is not None
                        else None
                    ),
                    finished_at_ms=record.finished_at_ms,
                )
    finally:
        await client.aclose()
    return out


async def _ledgers(redis_url: str, history: History, games: dict[str, StoredGame]) -> Ledgers:
    """The races' results and the racers' ratings (every race the run's races' racers were
    rated by too), and the daily boards of the days played, read from Redis."""
    client = connect(redis_url)
    store = GameStore(client)
    races = RaceStore(client, 3_600_000)
    try:
        results: dict[str, tuple[RatedResult, ...]] = {}
        ratings: dict[str, StoredRating] = {}
        unsettled: set[str] = set()
        todo = sorted(history.races)
        while todo:
            race_id = todo.pop()
            if race_id in results or race_id in unsettled:
                continue
            try:
                race = await races.load(race_id)
            except NotFound:
                continue
            if race.status is not RaceStatus.FINISHED or race.results is None:
                unsettled.add(race_id)
                continue
            results[race_id] = tuple(
                RatedResult(r.player_id, r.rating, r.rating_change) for r in race.results
            )
            for pid in race.pids():
                if pid in ratings:
                    continue
                raw_stats = cast(str | None, await client.hget(keys.rating_stats(VARIANT), pid))
                raw_recent = cast(
                    list[str], await client.lrange(keys.rating_recent(VARIANT, pid), 0, -1)
                )
                recent = tuple(
                    RecentItem(i.race_id, i.rating_before, i.rating_after)
                    for i in map(RecentRace.loads, raw_recent)
                )
                ratings[pid] = StoredRating(
                    pid, Rating.load(raw_stats).shown, Rating.fresh().shown, recent, RECENT_MAX
                )
                todo += [i.race_id for i in recent if i.race_id not in results]
        boards: dict[tuple[str, str], tuple[BoardEntry, ...]] = {}
        board = Leaderboard(client, store.entries)
        for variant, date in sorted(
            {(g.variant, g.date) for g in games.values() if g.kind == "daily"}
        ):
            day = dt.date.fromisoformat(date)
            await board.top(BoardRef.daily(variant, day), 0, 1)  # settles entries owed
            rows = cast(
                list[tuple[str, float]],
                await client.zrange(keys.daily_board(variant, day), 0, -1, withscores=True),
            )
            boards[(variant, date)] = tuple(
                BoardEntry(
                    variant,
                    date,
                    member.partition(":")[2],
                    int(score),
                    int(member.partition(":")[0]),
                )
                for member, score in rows
            )
        return Ledgers(results, ratings, boards, frozenset(unsettled))
    finally:
        await client.aclose()


def summary(result: ChaosResult) -> str:
    """The run as a table: each property and its violations, then the run's figures."""
    on = "a 3-master Redis Cluster" if result.config.cluster else "one Redis"
    lines = [f"chaos seed {result.config.seed}, {result.config.duration:.0f} s, on {on}", ""]
    lines += ["| property | violations |", "|---|---|"]
    for prop, count in result.report.by_property().items():
        lines.append(f"| {prop} | {count} |")
    lines += ["", "| figure | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in result.report.figures.items()]
    lines += ["", "faults:", *(f"  {f}" for f in result.faults)]
    if result.report.violations:
        shown = result.report.violations[:40]
        lines += ["", "violations:", *(f"  {v.prop.name}: {v.detail}" for v in shown)]
    return "\n".join(lines)
