"""Server CPU per finished daily game beside a move's (issue #30), end to end over WebSockets.

A real server process (`python -m server`, the benchmark flags of `benchmarks.load.procs`, on
its own redis-server) and ``--players`` real WebSocket clients (`tests.support.wsclient`),
``--concurrency`` at a time: each says hello and starts its Triple Deck daily game (not
measured), then plays ``--moves`` draws (``d``), then finishes the game (``finish``: the
scored variant's end). The server's CPU (utime + stime from ``/proc``, 10 ms ticks) is read
around the moves and around the finishes: CPU per move and per finish, and their ratio. The
fair-play screen is on unless ``--no-screen`` (the clients wait a second before their first
move and play few moves: no result is held, the count of held ones is printed). Run from the
repo root: ``python benchmarks/finish_bench.py [--players N] [--moves N] [--no-screen]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load import procs
from tests.support.wsclient import Client

T = TypeVar("T")
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """A process's CPU so far (user + system)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


async def pool(items: Iterable[T], concurrency: int, job: Callable[[T], Awaitable[None]]) -> None:
    it = iter(items)

    async def worker() -> None:
        for x in it:
            await job(x)

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def measure(url: str, pid: int, players: int, moves: int, concurrency: int) -> str:
    games: list[tuple[Client, str]] = []
    held: list[bool] = []

    async def start(i: int) -> None:
        c = await Client.connect(url)
        await c.hello(f"fin{i:05d}", versions=(6,))
        g = await c.request("daily.start", variant="triple-deck")
        games.append((c, str(g["game_id"])))

    async def play(game: tuple[Client, str]) -> None:
        c, gid = game
        for seq in range(moves):
            r = await c.request("move", game_id=gid, move="d", expected_seq=seq)
            if r["type"] != "moved":
                raise RuntimeError(f"move refused: {r}")

    async def finish(game: tuple[Client, str]) -> None:
        c, gid = game
        r = await c.request("finish", game_id=gid)
        if r["type"] != "finished":
            raise RuntimeError(f"finish refused: {r}")
        held.append(r["result"].get("rank") is None)

    try:
        await pool(range(players), concurrency, start)
        await asyncio.sleep(1.0)
        before_moves = cpu_seconds(pid)
        await pool(games, concurrency, play)
        after_moves = cpu_seconds(pid)
        await asyncio.sleep(1.0)  # the idle second's CPU is printed: background work
        before_finishes = cpu_seconds(pid)
        await pool(games, concurrency, finish)
        after_finishes = cpu_seconds(pid)
    finally:
        for c, _ in games:
            await c.ws.close()
    per_move = (after_moves - before_moves) / (players * moves) * 1e6
    per_finish = (after_finishes - before_finishes) / players * 1e6
    idle_ms = (before_finishes - after_moves) * 1e3
    return (
        f"server CPU per move {per_move:.0f} us, per finish {per_finish:.0f} us "
        f"({per_finish / per_move:.1f}x); held {sum(held)}/{len(held)}; {players} players, "
        f"{moves} moves each, {concurrency} at a time; idle second {idle_ms:.0f} ms"
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--players", type=int, default=1000)
    ap.add_argument("--moves", type=int, default=4)
    ap.add_argument("--concurrency", type=int, default=20)
    ap.add_argument("--no-screen", action="store_true", help="run the server without the screen")
    args = ap.parse_args(argv)
    flags: tuple[str, ...] = procs.BENCH_FLAGS
    if not args.no_screen:
        flags = tuple(f for f in flags if f != "--no-fair-play-screen")
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        redis_server = procs.RedisServer(d / "redis").start()
        try:
            port = procs.free_port()
            server = procs.start_server(
                port, d / "data", redis_url=redis_server.url, flags=flags, log=d / "server.log"
            )
            try:
                print(
                    asyncio.run(
                        measure(server.url, server.pid, args.players, args.moves, args.concurrency)
                    )
                )
            finally:
                server.stop()
        finally:
            redis_server.stop()


if __name__ == "__main__":
    main()
