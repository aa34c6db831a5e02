"""A server stopped by SIGTERM stops cleanly, and a new data dir starts quietly.

Run as a process on a fresh data dir with deal certification on (the default): SIGTERM
while the day's deals and tiers are being certified once logged `ERROR asyncio: unhandled
exception during asyncio.run() shutdown ... StoreUnavailable ... redis.sock`, the embedded
Redis having stopped before the certification released its lock (server/app.py now stops
every task that writes to Redis first); and the day closer logged 42 lines, one per empty
variant and day of its look-back, before anyone played.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.support.procs import ServerProcess

FLAGS = ("--no-fair-play-screen", "--log-level", "INFO")


def wait_for(log: Path, text: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = log.read_text(encoding="utf-8", errors="replace")
        if text in out:
            return out
        time.sleep(0.05)
    raise AssertionError(f"{text!r} not logged within {timeout} s:\n{out[-3000:]}")


@pytest.mark.parametrize(
    ("logged", "then_s"),
    [
        # Tri Peaks's deal is certified third; Triple Deck's, next, takes seconds.
        ("triple-triangle 2030-06-15: certified", 0.0),
        # Tomorrow's Easthaven deal is the last deal: the tiers are certified next.
        ("triple-easthaven 2030-06-16: certified", 1.0),
    ],
    ids=["deals", "tiers"],
)
def test_sigterm_during_certification_logs_no_error(
    tmp_path: Path, logged: str, then_s: float
) -> None:
    srv = ServerProcess(tmp_path / "data", FLAGS).start()
    try:
        wait_for(srv.log, logged)
        time.sleep(then_s)
        srv.popen.send_signal(signal.SIGTERM)
        assert srv.popen.wait(timeout=30) == 0
    finally:
        srv.stop()
    out = srv.log.read_text(encoding="utf-8")
    assert " ERROR " not in out and "Traceback" not in out, out[-3000:]
    assert "WARNING" not in out, out[-3000:]
    closed = [line for line in out.splitlines() if "server.games.rollover" in line]
    assert len(closed) == 1, closed
    assert (
        "closed 42 daily days with no game in them (6 variants, 2030-06-08 to 2030-06-14)"
        in (closed[0])
    )
