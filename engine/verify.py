"""`python -m engine verify FILE`: replay a day's published results with the engine alone.

FILE is the open data of a closed day (``/api/v1/days/DATE/results.ndjson.gz``, or a file
of `python -m server.api.dump`), gzipped or not, or ``-`` for standard input: one JSON object
a line with ``variant``, ``seed``, ``moves``, the recorded result (``won``, ``cleared``,
``score``, ``move_count``, ``time_ms``) and ``rank`` (docs/api.md). Each line's moves are
replayed from its seed; a line does not reproduce when a move is illegal or the position
reached does not give the recorded result. Ranks are checked too: within a variant they run
1, 2, 3... in the file's order, and the results are in the boards' order (won first, then
more points, less time, fewer moves). Every failing line is reported; the exit status is 0
when every line reproduces, 1 when some do not, 2 when the file cannot be read.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from .errors import IllegalMove
from .variants import VARIANT_IDS, new_game, variant

__all__ = ["Failure", "check_line", "register", "verify_lines"]

EXIT_MISMATCH = 1
EXIT_UNREADABLE = 2


@dataclass(frozen=True, slots=True)
class Failure:
    """A line that does not reproduce, and why."""

    line: int
    what: str
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}: {self.reason}"


def _order_key(d: dict[str, object], points: int) -> tuple[int, int, int, int]:
    return (
        0 if d["won"] else 1,
        -points,
        _int(d, "time_ms"),
        _int(d, "move_count"),
    )


def _int(d: dict[str, object], name: str) -> int:
    v = d.get(name)
    if not isinstance(v, int) or isinstance(v, bool):
        raise ValueError(f"{name} is not an integer")
    return v


def check_line(d: dict[str, object]) -> tuple[str | None, int]:
    """Replay one result: (why it does not reproduce or None, its points)."""
    vid = d.get("variant")
    if not isinstance(vid, str) or vid not in VARIANT_IDS:
        return f"unknown variant {vid!r}", 0
    seed = _int(d, "seed")
    moves = d.get("moves")
    if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
        return "moves is not a list of texts", 0
    game = new_game(vid, seed)
    for i, text in enumerate(moves, start=1):
        try:
            game.defer_over()  # as `Game.replay`: no search for the end after each move
            game.play(text)
        except IllegalMove as exc:
            return f"move {i} ({text!r}) is illegal: {exc.reason}", 0
    got = {
        "won": game.won,
        "cleared": game.cleared,
        "score": game.score,
        "move_count": game.moves,
    }
    wrong = [f"{k} {d.get(k)!r} recorded, {v!r} replayed" for k, v in got.items() if d.get(k) != v]
    points = game.score if variant(vid).scored else game.cleared
    return ("; ".join(wrong) if wrong else None), points


def verify_lines(lines: Iterator[bytes | str]) -> tuple[int, list[Failure]]:
    """Check every line; (how many lines were checked, the failures)."""
    failures: list[Failure] = []
    last: dict[str, tuple[int, tuple[int, int, int, int]]] = {}  # variant -> (rank, key)
    count = 0
    for number, raw in enumerate(lines, start=1):
        text = raw.decode() if isinstance(raw, bytes) else raw
        if not text.strip():
            continue
        count += 1
        what = f"line {number}"
        try:
            d = json.loads(text)
            if not isinstance(d, dict):
                raise ValueError("not a JSON object")
            what = f"{d.get('variant')} {d.get('date')} #{d.get('rank')} {d.get('name')}"
            reason, points = check_line(d)
            if reason is None:
                rank, key = _int(d, "rank"), _order_key(d, points)
                vid = str(d["variant"])
                prev_rank, prev_key = last.get(vid, (0, (0, -(1 << 62), 0, 0)))
                if rank != prev_rank + 1:
                    reason = f"rank {rank} follows rank {prev_rank}"
                elif key < prev_key:
                    reason = f"ranked below a worse result (rank {prev_rank})"
                last[vid] = (rank, key)
        except (ValueError, KeyError) as exc:
            reason = f"unreadable line: {exc}"
        if reason is not None:
            failures.append(Failure(number, what, reason))
    return count, failures


def _open(path: str) -> IO[bytes]:
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return io.BytesIO(data)


def cmd_verify(args: argparse.Namespace) -> int:
    try:
        stream = _open(args.file)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        print(f"cannot read {args.file}: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    count, failures = verify_lines(iter(stream))
    for f in failures:
        print(f"{args.file}:{f}")
    ok = count - len(failures)
    print(f"{count} results, {ok} reproduce, {len(failures)} do not", file=sys.stderr)
    return EXIT_MISMATCH if failures else 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("verify", help="replay a day's results file and report lines that differ")
    p.add_argument("file", help="results.ndjson[.gz] (docs/api.md), or - for stdin")
    p.set_defaults(func=cmd_verify)
