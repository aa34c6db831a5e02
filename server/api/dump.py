"""`python -m server.api.dump --from DATE --to DATE --out DIR`: a range of closed days' open
data to files (``results-DATE.ndjson.gz``, the very bytes ``/api/v1/days/DATE/results.ndjson.gz``
serves; docs/api.md). ``make dump-days FROM=... TO=...`` runs it.

Redis is ``--redis-url`` (``REDIS_URL``), else the embedded Redis of a server running on
``--data-dir`` (``SOLITAIRE_DATA_DIR``). A day not closed yet is skipped with a message.
Exit status: 0 every day written, 1 some day skipped, 2 usage, 3 no Redis.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

import redis.exceptions

from server.api.opendata import Sources, all_closed, day_results_gz
from server.boards.leaderboard import Leaderboard
from server.games.store import GameStore
from server.redis.connect import connect
from server.redis.embedded import EmbeddedRedis
from server.runtime.errors import StoreUnavailable

__all__ = ["dump_days", "main", "run"]

#: The most days one run dumps (a typo in a year should not hang the command).
MAX_DAYS = 400


def _parser(env: Mapping[str, str]) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m server.api.dump",
        description="Write closed days' results (open data) to results-DATE.ndjson.gz files.",
    )
    p.add_argument("--from", dest="first", type=dt.date.fromisoformat, required=True)
    p.add_argument("--to", dest="last", type=dt.date.fromisoformat, default=None)
    p.add_argument("--out", type=Path, default=Path("."), help="directory (default .)")
    p.add_argument("--redis-url", default=env.get("REDIS_URL") or None)
    p.add_argument("--data-dir", type=Path, default=Path(env.get("SOLITAIRE_DATA_DIR", "./data")))
    return p


async def dump_days(
    src: Sources, first: dt.date, last: dt.date, out_dir: Path, log: TextIO
) -> tuple[list[Path], list[dt.date]]:
    """Write each closed day of ``first..last``; (the files written, the days skipped)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    skipped: list[dt.date] = []
    day = first
    while day <= last:
        if await all_closed(src.redis, day):
            path = out_dir / f"results-{day.isoformat()}.ndjson.gz"
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(await day_results_gz(src, day))
            tmp.replace(path)
            written.append(path)
            print(f"{path}", file=log)
        else:
            skipped.append(day)
            print(f"{day.isoformat()}: not closed (no data, or a game may still change)", file=log)
        day += dt.timedelta(days=1)
    return written, skipped


async def run(argv: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    args = _parser(env).parse_args(list(argv))
    last = args.last or args.first
    if last < args.first or (last - args.first).days >= MAX_DAYS:
        print(f"--to must be on or after --from, at most {MAX_DAYS} days", file=sys.stderr)
        return 2
    url = args.redis_url or f"unix://{EmbeddedRedis(args.data_dir).socket_path}"
    client = connect(url)
    try:
        store = GameStore(client)
        src = Sources(client, store, Leaderboard(client))
        _, skipped = await dump_days(src, args.first, last, args.out, sys.stdout)
    except (StoreUnavailable, redis.exceptions.ConnectionError, OSError) as exc:
        print(f"cannot reach Redis at {url}: {exc}", file=sys.stderr)
        return 3
    finally:
        await client.aclose()
    return 1 if skipped else 0


def main() -> int:
    return asyncio.run(run(sys.argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
