"""The faults of a chaos run: a schedule drawn from a seed, then carried out.

A schedule is a list of `Fault`s at offsets from the start of the run, never two at once
(each ends, its process restarted or resumed, before the next begins), so a failing seed
replays the same faults in the same order.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from tests.support.balancer import Balancer
from tests.support.chaos.store import ChaosRedis
from tests.support.procs import ServerProcess


class Action(StrEnum):
    KILL = "kill"  # SIGKILL a server process, restart it after `hold`
    PAUSE = "pause"  # SIGSTOP it for `hold`, then SIGCONT
    DRAIN = "drain"  # drain it at the balancer, SIGTERM it, restart it after `hold`
    REDIS = "redis"  # SIGKILL Redis (a master, on a cluster), restart it after `hold`


@dataclass(frozen=True, slots=True)
class Fault:
    at: float  # seconds from the start of the run
    action: Action
    target: int  # the server's index (unused for REDIS)
    hold: float  # seconds until the process is back

    def __str__(self) -> str:
        who = "redis" if self.action is Action.REDIS else f"s{self.target + 1}"
        return f"{self.at:5.1f}s {self.action} {who} for {self.hold:.1f}s"


def schedule(seed: int, duration: float, servers: int = 3) -> list[Fault]:
    """Faults from the seed: one every 4-8 s after a 3 s calm start, each action in turn
    shuffled so a short run still sees every kind."""
    rng = random.Random(seed)
    out: list[Fault] = []
    at = 3.0
    kinds: list[Action] = []
    while True:
        if not kinds:
            kinds = list(Action)
            rng.shuffle(kinds)
        action = kinds.pop()
        hold = rng.uniform(1.0, 4.0) if action is not Action.REDIS else rng.uniform(0.5, 2.0)
        if at + hold > duration:
            return out
        out.append(Fault(round(at, 1), action, rng.randrange(servers), round(hold, 1)))
        at += hold + rng.uniform(4.0, 8.0)


async def carry_out(
    faults: list[Fault],
    servers: list[ServerProcess],
    redis: ChaosRedis,
    lb: Balancer,
    log: Callable[[str], None],
) -> None:
    """Apply the schedule in real time from now; every process is running when it returns."""
    start = time.monotonic()
    for fault in faults:
        await asyncio.sleep(max(0.0, start + fault.at - time.monotonic()))
        log(str(fault))
        srv = servers[fault.target]
        if fault.action is Action.KILL:
            srv.kill()
            await asyncio.sleep(fault.hold)
            await asyncio.to_thread(srv.start)
        elif fault.action is Action.PAUSE:
            pid = srv.popen.pid
            os.kill(pid, signal.SIGSTOP)
            await asyncio.sleep(fault.hold)
            os.kill(pid, signal.SIGCONT)
        elif fault.action is Action.DRAIN:
            name = f"servers/s{fault.target + 1}"
            await asyncio.to_thread(lb.command, f"set server {name} state drain")
            await asyncio.sleep(0.5)
            await asyncio.to_thread(srv.stop)
            await asyncio.sleep(fault.hold)
            await asyncio.to_thread(srv.start)
            await asyncio.to_thread(lb.command, f"set server {name} state ready")
        else:
            redis.kill(fault.target)
            await asyncio.sleep(fault.hold)
            await asyncio.to_thread(redis.restart, fault.target)
