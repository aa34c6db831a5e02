"""Garbage-collector settings for a long-running server process.

Everything built at start-up (modules, the app, its services) lives as long as the process,
so it is frozen out of the collector's generations: full collections then no longer walk it.
The young generation's threshold is raised because a move allocates short-lived, acyclic
objects (frames, replies, engine snapshots) that reference counting frees; with the default
of 700 allocations the collector ran every few moves for nothing (docs/performance.md).
"""

from __future__ import annotations

import gc
from typing import Final

from aiohttp import web

#: Allocations (net of deallocations) between young-generation collections.
YOUNG_THRESHOLD: Final = 20_000
#: Young and middle collections between collections of the next generation (the defaults).
OLDER_THRESHOLDS: Final = (10, 10)


def tune() -> None:
    """Freeze what exists now and raise the young-generation threshold."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)


async def tune_after_startup(app: web.Application) -> None:
    """An `on_startup` hook: runs once the app's services are built (production only; test
    processes start many apps and keep the defaults)."""
    tune()
