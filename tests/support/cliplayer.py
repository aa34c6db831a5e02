"""The `solitaire` CLI run as a subprocess by one player with its own config directory.

`tests/clients/conftest.py`'s ``make_player`` fixture hands out `Player`s; a test annotates
the fixture as `MakePlayer`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.procs import ROOT


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        """The run's ``--json`` output. Any: the CLI's documents differ per command, and
        the tests read them as the JSON they are."""
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

    def run(
        self, *args: str, stdin: str = "", timeout: float = 30, env: dict[str, str] | None = None
    ) -> Run:
        """Run the CLI once; `env`: variables to add to this player's environment."""
        proc = subprocess.run(
            self.argv(*args),
            input=stdin,
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**self.env(), **(env or {})},
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


#: ``make_player(server_url) -> Player``: a new player (own config dir) for that server, or
#: for none (offline commands).
MakePlayer = Callable[[str | None], Player]
