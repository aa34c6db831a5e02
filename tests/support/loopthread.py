"""An asyncio event loop in a thread of its own, for tests driven by Playwright's sync API
(which keeps an event loop in the test's thread): protocol clients (`tests.support.wsclient`)
live on it across steps of a test, e.g. racers who must stay connected while a page watches."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest

from server.redis.embedded import EmbeddedRedis
from server.runtime.clock import ManualClock
from tests.support.app import App, serve, unthrottled_config

T = TypeVar("T")


class LoopThread:
    """``run(coro)`` runs a coroutine on the thread's loop and returns its result."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()

    def __enter__(self) -> LoopThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def served_in_thread(
    tmp_path_factory: pytest.TempPathFactory, secret: bytes, start_ms: int
) -> Iterator[tuple[App, LoopThread]]:
    """The real app (`tests.support.app.serve`) on an embedded Redis and a manual clock set to
    `start_ms`, running on a `LoopThread`: for browser tests that move the server's clock."""
    redis = EmbeddedRedis(tmp_path_factory.mktemp("redis"))
    url = redis.start_sync()
    config = unthrottled_config(url, tmp_path_factory.mktemp("data"), secret)
    try:
        with LoopThread() as loop:
            cm = serve(config, ManualClock(start_ms))
            app = loop.run(cm.__aenter__())
            try:
                yield app, loop
            finally:
                loop.run(cm.__aexit__(None, None, None))
    finally:
        redis.stop_sync()
