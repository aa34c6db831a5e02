"""``python -m benchmarks.load.uvserver ARGS``: the server (same flags) on a uvloop event loop."""

from __future__ import annotations

import asyncio
import sys

import uvloop
from aiohttp import web

from server.__main__ import main


def run() -> None:
    loop = uvloop.new_event_loop()
    asyncio.set_event_loop(loop)
    original = web.run_app

    def run_app(*args: object, **kwargs: object) -> None:
        original(*args, loop=loop, **kwargs)  # type: ignore[arg-type]

    web.run_app = run_app  # type: ignore[assignment]
    main(sys.argv[1:])


if __name__ == "__main__":
    run()
