"""Fixtures for the CLI tests: a real server subprocess (with its embedded Redis) and a
helper running the `solitaire` CLI as a subprocess with its own config directory.

Fixtures:
    server       (module)   a `tests.support.procs.ServerProcess` with the default flags
    make_player  (function) ``make_player(server_url) -> Player``, each with its own config
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.procs import ROOT, ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with ServerProcess(tmp_path_factory.mktemp("server") / "data") as srv:
        yield srv


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
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "XDG_CONFIG_HOME": str(self.config),
            "COLUMNS": "80",
            "TERM": "dumb",
            "NO_COLOR": "1",
        }
        env.pop("SOLITAIRE_SERVER", None)
        return env

    def argv(self, *args: str) -> list[str]:
        server = ["--server", self.server_url] if self.server_url else []
        return [sys.executable, "-m", "clients.cli", *server, *args]

    def run(self, *args: str, stdin: str = "", timeout: float = 30) -> Run:
        proc = subprocess.run(
            self.argv(*args),
            input=stdin,
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=self.env(),
            timeout=timeout,
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.argv(*args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=self.env(),
        )


@pytest.fixture
def make_player(tmp_path: Path) -> Any:
    count = iter(range(1000))

    def make(server_url: str | None) -> Player:
        return Player(tmp_path / f"config{next(count)}", server_url)

    return make
