"""The server's entry point (`server.__main__`)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from server.__main__ import new_event_loop
from server.config import Config


def test_event_loop_choice() -> None:
    plain = new_event_loop(Config())
    assert type(plain).__module__.startswith("asyncio")
    plain.close()
    uv = new_event_loop(replace(Config(), uvloop=True))
    assert type(uv).__module__.startswith("uvloop")  # uvloop is a dependency on CPython/Linux
    assert isinstance(uv, asyncio.AbstractEventLoop)
    uv.close()
    assert Config.from_args(["--uvloop", "--daily-secret", "x"]).uvloop
