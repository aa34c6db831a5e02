"""Fixtures for the CLI tests: a real server subprocess (with its embedded Redis) and a
helper running the `solitaire` CLI as a subprocess with its own config directory."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A `python -m server` subprocess; `restart()` keeps its port and data dir."""

    port: int
    data_dir: Path
    extra: tuple[str, ...] = ()
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def start(self) -> None:
        cmd = [sys.executable, "-m", "server", "--port", str(self.port), "--data-dir",
               str(self.data_dir), "--no-certify", "--log-level", "WARNING", *self.extra]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("server did not become healthy")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(free_port(), tmp_path_factory.mktemp("server-data"))
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@dataclass
class Player:
    """One player: the CLI run with its own XDG config dir (so its own token)."""

    config: Path
    server_url: str | None = None

    def env(self) -> dict[str, str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(self.config),
               "COLUMNS": "80", "TERM": "dumb", "NO_COLOR": "1"}
        env.pop("SOLITAIRE_SERVER", None)
        return env

    def argv(self, *args: str) -> list[str]:
        server = ["--server", self.server_url] if self.server_url else []
        return [sys.executable, "-m", "clients.cli", *server, *args]

    def run(self, *args: str, stdin: str = "", timeout: float = 30) -> Run:
        proc = subprocess.run(self.argv(*args), input=stdin, capture_output=True, text=True,
                              cwd=ROOT, env=self.env(), timeout=timeout)
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(self.argv(*args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=ROOT, env=self.env())


@pytest.fixture
def make_player(tmp_path: Path) -> Any:
    count = iter(range(1000))

    def make(server_url: str | None) -> Player:
        return Player(tmp_path / f"config{next(count)}", server_url)

    return make
