"""`solitaire-server`: run the WebSocket server (flags and environment: see --help)."""

from __future__ import annotations

import asyncio
import logging
import sys

from aiohttp import web

import engine
import protocol as p
from server.app import create_app
from server.config import Config
from server.runtime.gctune import tune_after_startup


def new_event_loop(config: Config) -> asyncio.AbstractEventLoop:
    """uvloop's loop when it is asked for and installed, else asyncio's."""
    if config.uvloop:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def main(argv: list[str] | None = None) -> None:
    config = Config.from_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(
        level=config.log_level_no, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    config.data_dir.mkdir(parents=True, exist_ok=True)
    loop = new_event_loop(config)
    # The page to open, not only the socket: most players start from the browser (#27).
    shown = "127.0.0.1" if config.host in ("0.0.0.0", "::", "") else config.host
    logging.getLogger(__name__).info(
        "open http://%s:%d/ in a browser (protocol on ws://%s:%d/ws; %s, engine and codec %s);"
        " data in %s; Ctrl-C stops the server",
        shown,
        config.port,
        shown,
        config.port,
        type(loop).__module__.split(".")[0],
        "compiled" if engine.COMPILED and p.COMPILED else "pure Python: see setup.py",
        config.data_dir,
    )
    # run_app turns SIGTERM/SIGINT into a graceful shutdown: on_shutdown tells clients and
    # closes their sockets, then cleanup_ctx closes Redis (and stops an embedded one).
    app = create_app(config)
    app.on_startup.append(tune_after_startup)
    web.run_app(
        app, host=config.host, port=config.port, print=None, shutdown_timeout=5.0, loop=loop
    )


if __name__ == "__main__":
    main()
