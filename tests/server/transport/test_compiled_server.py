"""The server modules a move and a finish run through are compiled with mypyc (setup.py's
COMPILED_MODULES, docs/performance.md): in the compiled build the running server's code is
the compiled code, in the pure build (SOLITAIRE_PURE_PYTHON=1) it is the Python source."""

from __future__ import annotations

import os
import sys
import types
from dataclasses import replace
from pathlib import Path

import redis.asyncio

import compiled_build
from server.app import SOCKETS
from server.config import Config
from server.games.service import GameService
from server.handlers import games as game_handlers
from server.transport.connection import Connection
from server.transport.session import Session
from tests.support.app import serve
from tests.support.wsclient import Client

ROOT = Path(__file__).resolve().parents[3]
PURE = bool(os.environ.get("SOLITAIRE_PURE_PYTHON"))
HOT = {
    "server/transport/connection.py",
    "server/transport/session.py",
    "server/handlers/games.py",
    "server/games/service.py",
}


def test_the_move_path_modules_are_in_the_compiled_build() -> None:
    assert set(compiled_build.compiled_modules(ROOT)) >= HOT


def test_the_server_modules_load_compiled_unless_built_pure() -> None:
    for source in compiled_build.compiled_modules(ROOT):
        if not source.startswith("server/"):
            continue
        name = source.removesuffix(".py").replace("/", ".")
        module = sys.modules.get(name) or __import__(name, fromlist=["_"])
        path = Path(module.__file__ or "")
        assert path.suffix == (".py" if PURE else ".so"), f"{name} was loaded from {path}"
    # A compiled method is a C function, not a Python one.
    for method in (Connection.handle_frame, Session.__init__, GameService.play):
        assert isinstance(method, types.FunctionType) is PURE, method
    assert isinstance(game_handlers.move, types.FunctionType) is PURE


async def test_the_running_server_moves_through_the_compiled_code(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """A real connection's object is the compiled class (or the Python one, pure), and a daily
    game plays through it."""
    config = replace(Config(), redis_url=redis_url, data_dir=tmp_path, daily_secret=b"compiled")
    async with serve(config) as app:
        client = await Client.connect(app.url)
        try:
            await client.hello(name="Compiled")
            assert app.web_app is not None
            (conn,) = app.web_app[SOCKETS]
            assert type(conn) is Connection
            assert hasattr(conn, "__dict__") is False
            assert isinstance(type(conn).reply, types.FunctionType) is PURE
            started = await client.request("daily.start", variant="fourteen-out")
            assert started["type"] == "game", started
            resigned = await client.request("resign", game_id=started["game_id"])
            assert resigned["type"] == "finished" and resigned["result"]["resigned"], resigned
        finally:
            await client.close()
