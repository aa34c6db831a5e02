"""Instructions the server executes per move, counted by valgrind (callgrind): a figure that
does not depend on what else runs on the machine.

CPU time per move (`server_bench.py`'s cpu section) is the issue's measure, but on a shared
2-core machine it moves by ±10 % with the other processes (caches, preemption), more than a
change of a few µs a move. Instructions retired do not: the same run on the same deals counts
the same instructions within ~0.5 %, however loaded the machine. This benchmark runs the
server under `valgrind --tool=callgrind --instr-atstart=no` (its embedded redis-server and
the load generator run natively), plays a warm-up window, switches counting on
(`callgrind_control -i on`), plays the measured window (the cpu section's mixed load of the
six variants, fixed deals, CLI-style or browser-style client), dumps the counts and divides
the instructions by the moves and requests the server's /metrics counted in the window.

    python benchmarks/instr_bench.py [--ref REV ...] [--players N] [--games N]
        [--client cli|browser] [--date YYYY-MM-DD] [--json FILE] [--keep DIR]

``--ref REV`` runs the same windows on the server as committed at REV too (`git archive`
into a temporary directory), alternately, so a change is measured against its base in one
run: both use this venv's compiled engine and codec (a change to those needs its own build).
Under valgrind the server runs about 50x slower: a window of 24 players x 1 game of each
variant (~2,600 moves) takes a minute or two. Instructions are not time (a syscall or a
cache miss costs more than its instructions); compare a change's CPU time in
`server_bench.py` too, where the machine allows it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load import cpumeter, procs, scripts
from benchmarks.load.lightgen import GenConfig, Generator, scripts_for
from engine import VARIANT_IDS

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATE = dt.date(2026, 1, 15)
SECRET = "bench"


@dataclass(frozen=True)
class Count:
    """One measured window: instructions, and what the server's /metrics counted."""

    tree: str
    instructions: int
    moves: int
    requests: int
    errors: int

    @property
    def per_move(self) -> float:
        return self.instructions / self.moves if self.moves else 0.0

    @property
    def per_request(self) -> float:
        return self.instructions / self.requests if self.requests else 0.0


def _server_flags(date: dt.date) -> tuple[str, ...]:
    offset = scripts.clock_offset_ms(date, time.time_ns() // 1_000_000)
    retention = max(90, (dt.datetime.now(dt.UTC).date() - date).days + 30)
    return (
        *procs.BENCH_FLAGS,
        "--clock-offset-ms",
        str(offset),
        "--leaderboard-retention-days",
        str(retention),
        "--loop-lag-interval-ms",
        "0",  # its timer would tick 50x as often per move under valgrind
    )


def _window(port: int, plays: GenConfig) -> None:
    gen = Generator(plays).start()
    try:
        got = gen.wait()
    finally:
        gen.release()
    if got.errors:
        raise RuntimeError(f"the window had errors: {dict(got.errors)} {got.error_examples[:2]}")


def _plays(
    port: int, args: argparse.Namespace, table: dict[str, list[scripts.Script]]
) -> GenConfig:
    start_at = time.time() + 1.0
    return GenConfig(
        host="127.0.0.1",
        port=port,
        scripts=scripts_for(dict(table)),
        variants=tuple(VARIANT_IDS),
        players=args.players,
        processes=1,
        protocol=args.protocol,
        games=args.games,
        start_at=start_at,
        deadline=start_at + 1800.0,
        tag=secrets.token_hex(2),
        client=args.client,
    )


def callgrind_total(dump: Path) -> int:
    """The instruction total of a callgrind output file."""
    for line in dump.read_text().splitlines():
        m = re.match(r"totals:\s+(\d+)", line)  # ("summary" is 0 when counting starts late)
        if m:
            return int(m.group(1))
    raise RuntimeError(f"no totals in {dump}")


def callgrind_wrapper(out: Path) -> tuple[str, ...]:
    """The command a process runs under to be counted: callgrind, counting off until
    `callgrind_control` ``-i on``, its counts dumped to ``out`` (and ``out.N``)."""
    return (
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
        "--trace-children=no",
    )


def callgrind_control(pid: int, *args: str) -> None:
    """``callgrind_control ARGS PID``: counting on (``-i on``), off, or a dump (``-d``)."""
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True)


def measure(
    tree: Path, label: str, args: argparse.Namespace, table: dict[str, list[scripts.Script]]
) -> Count:
    """The server of ``tree`` under callgrind: a warm-up window, then the measured one."""
    work = Path(tempfile.mkdtemp(prefix="instr-"))
    wrapper = callgrind_wrapper(work / "callgrind.out")
    port = procs.free_port()
    srv = procs.start_server(
        port,
        work / "data",
        flags=_server_flags(args.date),
        log=work / "server.log",
        wrapper=wrapper,
        root=tree,
        ready_timeout=600.0,
    )
    try:
        _window(port, _plays(port, args, table))  # warm-up: caches, deals, code paths
        before = cpumeter.scrape(port)
        callgrind_control(srv.pid, "-i", "on")
        _window(port, _plays(port, args, table))
        callgrind_control(srv.pid, "-i", "off")
        after = cpumeter.scrape(port)
        callgrind_control(srv.pid, "-d")
        dumps = sorted(work.glob("callgrind.out*"), key=lambda p: p.stat().st_mtime)
        instructions = sum(callgrind_total(d) for d in dumps if d.stat().st_size)
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            for d in dumps:
                if d.stat().st_size:
                    shutil.copy(d, args.keep / f"{label.replace('/', '_')}-{d.name}")
    finally:
        srv.stop(timeout=120.0)
        shutil.rmtree(work, ignore_errors=True)

    def delta(name: str) -> int:
        return round(cpumeter.total(after, name) - cpumeter.total(before, name))

    return Count(
        label,
        instructions,
        delta("solitaire_moves_total"),
        delta("solitaire_messages_total"),
        delta("solitaire_errors_total"),
    )


def _archive(ref: str) -> Path:
    """The tree as committed at ``ref``, in a temporary directory."""
    where = Path(tempfile.mkdtemp(prefix="instr-ref-"))
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, check=True, capture_output=True)
    subprocess.run(["tar", "x"], cwd=where, input=archive.stdout, check=True)
    return where


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", action="append", default=[], help="also measure this commit")
    ap.add_argument("--players", type=int, default=24)
    ap.add_argument("--games", type=int, default=1, help="whole games per player")
    ap.add_argument("--client", choices=("cli", "browser"), default="cli")
    ap.add_argument("--protocol", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=1, help="alternated rounds")
    ap.add_argument("--date", type=dt.date.fromisoformat, default=DEFAULT_DATE)
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--keep", type=Path, help="copy each window's callgrind file here (callgrind_annotate)"
    )
    args = ap.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("valgrind is not installed: apt-get install -y valgrind")
    table = scripts.build(SECRET.encode(), args.date, VARIANT_IDS)
    trees = [(Path(ROOT), "this tree"), *((_archive(r), r) for r in args.ref)]
    counts: list[Count] = []
    print(
        f"instructions per move under callgrind: {args.players} players x {args.games} game(s)"
        f" of each variant, {args.client}-style client, deals of {args.date}"
    )
    try:
        for _ in range(args.rounds):
            for tree, label in trees:
                c = measure(tree, label, args, table)
                counts.append(c)
                print(
                    f"  {label:<12} {c.per_move:>9,.0f} instructions/move "
                    f"{c.per_request:>9,.0f} /request  ({c.moves:,} moves, {c.requests:,} "
                    f"requests, {c.errors} errors)",
                    flush=True,
                )
    finally:
        for tree, _ in trees[1:]:
            shutil.rmtree(tree, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps([asdict(c) for c in counts], indent=2))


if __name__ == "__main__":
    main()
