"""Server CPU per game, apart from its moves (issue #30: Fourteen Out's 17-move games).

    python benchmarks/per_game_bench.py [--cycles N] [--rounds N] [--variant V] [--players N]
        [--idle N]

Every daily game of `server_bench.py`'s load carries a WebSocket connection of its own (a new
player each time), a `hello` that registers the player, a `daily.start` and a finish or
`resign`. This measures those costs apart, with the server `server_bench.py` runs (its
flags: `--no-certify`, no limits per address, its deals' day): ``--players`` clients loop
over ``--cycles`` cycles of each kind, and the server's CPU time (utime+stime, /proc) over
a kind's cycles, divided by them, is its cost per cycle:

* ``conn``  connect (TCP, upgrade) and close;
* ``hello`` the same with a `hello` (a new player) in between;
* ``start`` and a `daily.start` of ``--variant`` after it;
* ``game``  and a `resign` of that game after it;
* ``back``  connect, a returning player's `hello` (with the token of a player registered
  before the round, who said `hello` once already today) and close: a player's every
  later visit of the day.

The differences are the µs per `hello`, per `daily.start` and per `resign` (each with its
request's decoding and its reply's encoding and send), and a returning player's `hello`
(``back`` less ``conn``) beside a new player's. ``--idle N`` keeps N more players
connected (each said `hello`) throughout, idle: a cost that grows with the connections open
(a scan of them per close, say) shows as the cycles' cost growing with N. The kinds
alternate within a round; each figure is the median of ``--rounds`` rounds. Compare two
trees only in alternated runs made in the same minutes
(``PYTHONPATH=TREE python TREE/benchmarks/per_game_bench.py``).

``--callgrind`` counts instructions instead of CPU time, a figure the machine's load does not
move (`benchmarks/instr_bench.py` does the same for moves): each kind's cycles run against a
server of their own under valgrind's callgrind, counting switched on after a warm-up and a
pause (the start-up's background work under valgrind's 50x slowdown would otherwise fall into
the window), and the bare aiohttp echo's ``conn`` cycle is counted beside ours. Its figures
still carry the server's timers (sweeps) for the window's length: compare runs of the same
``--cycles``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import aiohttp
import msgpack  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import protocol  # noqa: E402
from benchmarks.instr_bench import (  # noqa: E402
    callgrind_control,
    callgrind_total,
    callgrind_wrapper,
)
from benchmarks.load import cpumeter, procs  # noqa: E402
from benchmarks.load.cpubench import CpuBench, CpuOptions  # noqa: E402
from engine import VARIANT_IDS  # noqa: E402

KINDS = ("conn", "hello", "start", "game", "back")
#: The kinds a `--callgrind` run counts (``back`` needs its players registered first).
COUNTED = KINDS[:4]


async def _cycle(
    session: aiohttp.ClientSession, url: str, who: dict[str, str], kind: str, variant: str
) -> str | None:
    """One cycle of ``kind`` as the player ``who`` (a new ``name`` or a returning ``token``);
    the token a `hello` answered."""
    async with session.ws_connect(url, autoping=False) as ws:
        if kind == "conn":
            return None
        rid = 0

        async def ask(msg: dict[str, Any]) -> dict[str, Any]:
            nonlocal rid
            rid += 1
            msg["id"] = rid
            await ws.send_bytes(msgpack.packb(msg))
            while True:
                reply: dict[str, Any] = msgpack.unpackb((await ws.receive()).data)
                if reply.get("id") == rid:
                    return reply

        version = max(protocol.SUPPORTED_VERSIONS)
        r = await ask({"type": "hello", "versions": [version], **who})
        if r["type"] != "welcome":
            raise RuntimeError(f"hello: {r}")
        if kind in ("hello", "back"):
            return cast(str | None, r.get("token"))
        r = await ask({"type": "daily.start", "variant": variant})
        if r["type"] != "game":
            raise RuntimeError(f"daily.start: {r}")
        if kind == "game":
            r = await ask({"type": "resign", "game_id": r["game_id"]})
            if r["type"] != "finished":
                raise RuntimeError(f"resign: {r}")
        return None


def _names(cycles: int, tag: str) -> list[dict[str, str]]:
    return [{"name": f"G{tag}{i:x}"[:20]} for i in range(cycles)]


async def _phase(
    url: str, kind: str, whos: list[dict[str, str]], players: int, variant: str
) -> list[str | None]:
    """Every cycle of ``whos``, by ``players`` clients at once; the tokens of the hellos."""
    numbers: Iterator[int] = iter(range(len(whos)))
    tokens: list[str | None] = [None] * len(whos)

    async def player() -> None:
        async with aiohttp.ClientSession() as session:
            for i in numbers:
                tokens[i] = await _cycle(session, url, whos[i], kind, variant)

    await asyncio.gather(*(player() for _ in range(players)))
    return tokens


async def _returning(url: str, a: argparse.Namespace, tag: str) -> list[dict[str, str]]:
    """``a.cycles`` players registered, each back once already today (its day scanned)."""
    tokens = await _phase(url, "hello", _names(a.cycles, tag), a.players, a.variant)
    whos = [{"token": t} for t in tokens if t is not None]
    await _phase(url, "back", whos, a.players, a.variant)
    return whos


async def _idle_player(
    session: aiohttp.ClientSession, url: str, name: str, ready: asyncio.Queue[bool]
) -> None:
    """A player who says `hello`, then only answers the server's pings until cancelled."""
    async with session.ws_connect(url) as ws:  # autoping: the heartbeat's pings answered
        version = max(protocol.SUPPORTED_VERSIONS)
        hello = {"type": "hello", "id": 1, "versions": [version], "name": name}
        await ws.send_bytes(msgpack.packb(hello))
        welcomed = msgpack.unpackb((await ws.receive()).data)["type"] == "welcome"
        await ready.put(welcomed)
        async for _ in ws:
            pass


async def _measure(
    url: str,
    a: argparse.Namespace,
    per_cycle: dict[str, list[float]],
    redis_per_cycle: dict[str, list[float]],
    pids: tuple[int, int],
) -> None:
    """Warm up, then each round's kinds in turn, with ``a.idle`` idle players connected."""
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        ready: asyncio.Queue[bool] = asyncio.Queue()
        tag = secrets.token_hex(2)
        idle = [
            asyncio.create_task(_idle_player(session, url, f"I{tag}{i:x}", ready))
            for i in range(a.idle)
        ]
        try:
            for _ in idle:
                if not await ready.get():
                    raise RuntimeError("an idle player's hello was refused")
            await _rounds(url, a, per_cycle, redis_per_cycle, pids)
        finally:
            for task in idle:
                task.cancel()
            await asyncio.gather(*idle, return_exceptions=True)


async def _rounds(
    url: str,
    a: argparse.Namespace,
    per_cycle: dict[str, list[float]],
    redis_per_cycle: dict[str, list[float]],
    pids: tuple[int, int],
) -> None:
    await _phase(url, "game", _names(200, "w" + secrets.token_hex(2)), a.players, a.variant)
    srv, red = pids
    for r in range(a.rounds):
        for kind in KINDS:
            tag = f"{kind[0]}{r}{secrets.token_hex(2)}"
            if kind == "back":
                whos = await _returning(url, a, tag)
            else:
                whos = _names(a.cycles, tag)
            s0, r0 = cpumeter.cpu_seconds(srv), cpumeter.cpu_seconds(red)
            await _phase(url, kind, whos, a.players, a.variant)
            s1, r1 = cpumeter.cpu_seconds(srv), cpumeter.cpu_seconds(red)
            per_cycle[kind].append((s1 - s0) / a.cycles * 1e6)
            redis_per_cycle[kind].append((r1 - r0) / a.cycles * 1e6)


def _callgrind_window(kind: str, a: argparse.Namespace, tmp: Path, echo: bool = False) -> float:
    """Instructions per ``kind`` cycle of a server (or the echo) under callgrind."""
    work = tmp / f"{'echo' if echo else 'ours'}-{kind}"
    work.mkdir()
    wrapper = callgrind_wrapper(work / "callgrind.out")
    port = procs.free_port()
    if echo:
        cmd = [*wrapper, sys.executable, "-m", "benchmarks.load.echo_server", "--port", str(port)]
        srv = procs.Proc(cmd, port, work / "log")
        srv.wait_ready(timeout=600.0)
    else:
        flags = CpuBench(CpuOptions(tmp=work, quick=True)).server_flags()
        flags = (*flags, "--loop-lag-interval-ms", "0")  # its timer would tick 50x as often
        srv = procs.start_server(
            port, work / "data", flags=flags, wrapper=wrapper, log=work / "log", ready_timeout=600.0
        )
    try:
        url = f"http://127.0.0.1:{port}/ws"
        asyncio.run(
            _phase(url, kind, _names(100, "w" + secrets.token_hex(2)), a.players, a.variant)
        )
        time.sleep(20.0)  # the server's start-up work, 50x slower under valgrind, settles
        callgrind_control(srv.pid, "-i", "on")
        tag = kind[0] + secrets.token_hex(3)
        asyncio.run(_phase(url, kind, _names(a.cycles, tag), a.players, a.variant))
        callgrind_control(srv.pid, "-i", "off")
        callgrind_control(srv.pid, "-d")
    finally:
        srv.stop(timeout=120.0)
    dumps = [d for d in work.glob("callgrind.out*") if d.stat().st_size]
    return sum(callgrind_total(d) for d in dumps) / int(a.cycles)


def _callgrind(a: argparse.Namespace) -> None:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("valgrind is not installed: apt-get install -y valgrind")
    with tempfile.TemporaryDirectory(prefix="pergame-cg-") as tmp:
        count = {k: _callgrind_window(k, a, Path(tmp)) for k in COUNTED}
        echo = _callgrind_window("conn", a, Path(tmp), echo=True)
    print(f"server instructions per cycle under callgrind ({a.cycles} cycles, {a.variant}):")
    for k in COUNTED:
        print(f"  {k:<6} {count[k]:12,.0f}")
    print(f"  echo's conn {echo:12,.0f} (the bare aiohttp echo)")
    print(
        f"per game: connection {count['conn']:,.0f}, hello {count['hello'] - count['conn']:,.0f}, "
        f"daily.start {count['start'] - count['hello']:,.0f}, "
        f"resign {count['game'] - count['start']:,.0f}, total {count['game']:,.0f}"
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--cycles", type=int, default=1500, help="cycles of each kind per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--players", type=int, default=20, help="concurrent clients")
    ap.add_argument("--variant", choices=VARIANT_IDS, default="fourteen-out")
    ap.add_argument("--idle", type=int, default=0, help="idle players kept connected")
    ap.add_argument(
        "--callgrind", action="store_true", help="count instructions (valgrind) instead of CPU"
    )
    a = ap.parse_args(argv)
    if a.callgrind:
        _callgrind(a)
        return
    per_cycle: dict[str, list[float]] = {k: [] for k in KINDS}
    redis_per_cycle: dict[str, list[float]] = {k: [] for k in KINDS}
    with tempfile.TemporaryDirectory(prefix="pergame-") as tmp:
        flags = CpuBench(CpuOptions(tmp=Path(tmp), quick=True)).server_flags()
        srv = procs.start_server(procs.free_port(), Path(tmp) / "data", flags=flags)
        try:
            redis_pid = cpumeter.child_named(srv.pid, "redis-server")
            if redis_pid is None:
                raise RuntimeError("no redis-server child of the server found")
            url = f"http://127.0.0.1:{srv.port}/ws"
            procs.raise_fd_limit(a.idle + 2 * a.players + 256)
            asyncio.run(_measure(url, a, per_cycle, redis_per_cycle, (srv.pid, redis_pid)))
        finally:
            srv.stop()
    med = {k: sorted(v)[len(v) // 2] for k, v in per_cycle.items()}
    red = {k: sorted(v)[len(v) // 2] for k, v in redis_per_cycle.items()}
    idle = f", {a.idle} idle players connected" if a.idle else ""
    print(f"server CPU µs per cycle ({a.cycles} cycles x {a.rounds} rounds, {a.variant}{idle}):")
    for k in KINDS:
        runs = " ".join(f"{x:.0f}" for x in per_cycle[k])
        print(f"  {k:<6} {med[k]:6.0f}  (rounds: {runs}; redis-server {red[k]:.0f})")
    print(
        f"per game: connection {med['conn']:.0f}, hello {med['hello'] - med['conn']:.0f}, "
        f"daily.start {med['start'] - med['hello']:.0f}, resign {med['game'] - med['start']:.0f}, "
        f"total {med['game']:.0f} µs; "
        f"a returning player's hello {med['back'] - med['conn']:.0f} µs; "
        f"load average {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
