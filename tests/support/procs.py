"""Subprocesses for tests: ``python -m server`` on a free port, and the repository root.

Built on `benchmarks.load.procs` (the fault tests also use its restartable `RedisServer`), so
tests and benchmarks start servers the same way: ready once ``/readyz`` answers 200.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from benchmarks.load.procs import ROOT, Proc, free_port, start_server

__all__ = ["PINNED_AT", "QUIET", "ROOT", "ServerProcess", "free_port", "pinned_day"]

#: The flags most test servers run with: no deal certification, warnings and worse logged,
#: and no fair-play screen (their scripted players play at machine speed on purpose; the
#: screen's own tests turn it on).
QUIET = ("--no-certify", "--no-fair-play-screen", "--log-level", "WARNING")

#: The day (and secret) a test server deals when its flags name none: noon of the day every
#: in-process test's manual clock starts on. A run is then the same on every calendar day;
#: the real day once dealt a Fourteen Out game that a fault test's first-legal-move play
#: finished within four moves.
PINNED_AT = dt.datetime(2030, 6, 15, 12, tzinfo=dt.UTC)
PINNED_SECRET = "tests"
#: Taken once: servers started at different times then share one clock (a race between two
#: processes whose clocks differ by their start-up time starts before one of them counts down).
_PINNED_OFFSET_MS = int(PINNED_AT.timestamp() * 1000) - time.time_ns() // 1_000_000


def pinned_day(at: dt.datetime, secret: str = "x") -> tuple[str, ...]:
    """`QUIET` flags with a fixed daily secret and the server's clock moved to ``at`` (from
    now on): the day's deals are then the same in every run, and the day does not change
    mid-test when ``at`` is far from midnight.

    Uncertified deals from a random secret (a data dir's own) differ from run to run, and
    some have no legal move at all (about 1 in 350 Fourteen Out deals): a test that must
    play a game to its end against one fails at random. The offset is taken when this is
    called: call it just before (re)starting the server."""
    offset = int(at.timestamp() * 1000) - time.time_ns() // 1_000_000
    return (*QUIET, "--daily-secret", secret, "--clock-offset-ms", str(offset))


class ServerProcess:
    """``python -m server`` on ``port`` (a free one by default) with ``flags``.

    Its output goes to ``<data_dir>.log`` beside the data dir (the tail is shown when it fails
    to start). ``restart()`` keeps its port, data dir and clock. Use as a context manager, or
    call `start` and `stop`.

    Flags without ``--clock-offset-ms`` get the clock moved to `PINNED_AT`, and flags without
    ``--daily-secret`` get `PINNED_SECRET`, so the deals played do not depend on the day.
    Flags without ``--race-same-address-wait-ms`` get 0: every test socket comes from
    127.0.0.1, and the queue would otherwise keep two test players apart for 15 s; for the
    same reason flags without ``--race-provisional-rivals`` get 0 and ``--race-rate-same-network``
    (test players of one network, all new, would otherwise race unrated: docs/fairplay.md).
    """

    def __init__(
        self,
        data_dir: Path,
        flags: tuple[str, ...] = QUIET,
        *,
        redis_url: str | None = None,
        port: int | None = None,
    ) -> None:
        if "--clock-offset-ms" not in flags:
            flags = (*flags, "--clock-offset-ms", str(_PINNED_OFFSET_MS))
        if "--daily-secret" not in flags:
            flags = (*flags, "--daily-secret", PINNED_SECRET)
        if "--race-same-address-wait-ms" not in flags:
            flags = (*flags, "--race-same-address-wait-ms", "0")
        if "--race-provisional-rivals" not in flags:
            flags = (*flags, "--race-provisional-rivals", "0", "--race-rate-same-network")
        self.data_dir, self.flags, self.redis_url = data_dir, flags, redis_url
        self.port = port or free_port()
        self.log = data_dir.parent / f"{data_dir.name}.log"
        self._proc: Proc | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def popen(self) -> subprocess.Popen[bytes]:
        """The running child process (to signal it or wait for it)."""
        assert self._proc is not None, "not started"
        return self._proc.proc

    def start(self) -> ServerProcess:
        self._proc = start_server(
            self.port, self.data_dir, redis_url=self.redis_url, flags=self.flags, log=self.log
        )
        return self

    def stop(self) -> int | None:
        """SIGTERM (graceful), SIGKILL if that takes too long; the exit code."""
        code = self._proc.stop() if self._proc is not None else None
        self._proc = None
        return code

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        if self._proc is not None:
            self._proc.kill()
        self._proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def wait_day_closed(self, date: dt.date | str, timeout: float = 30.0) -> None:
        """Until the process says ``date`` is closed (``/api/v1/days/{date}``'s ``closed``).

        A process is ready (``/readyz``) before its background sweep (`DayCloser.run`) has
        closed the days its clock has passed: what follows a closed day (ranks in histories,
        replays, exports, seeds) is there only after that. A test that restarts a server on
        a later day and reads those waits here, not for a fixed time."""
        day = date.isoformat() if isinstance(date, dt.date) else date
        url = f"http://127.0.0.1:{self.port}/api/v1/days/{day}"
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as answer:
                    if json.load(answer)["closed"]:
                        return
            except urllib.error.URLError:  # 429 past the API's rate: ask again
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"{day} was not closed within {timeout:.0f} s")
            time.sleep(0.1)

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
