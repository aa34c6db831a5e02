"""The `solitaire` CLI run as a subprocess by one player with its own config directory.

`tests/clients/conftest.py`'s ``make_player`` fixture hands out `Player`s (``named_player``
ones already registered on the module's server); a test annotates the fixture as
`MakePlayer` (`NamedPlayer`). A `Player` runs the CLI to its end (`run`), started with pipes
(`popen`, `start` under asyncio) or in a pseudo-terminal (`spawn`, for pexpect), and reads
the token the CLI stored (`token`). `resign_race` ends a race between a CLI and a protocol
client.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pexpect  # type: ignore[import-untyped]

from clients.cli.config import TokenStore
from tests.support.procs import ROOT
from tests.support.wsclient import Client


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

    async def start(self, *args: str) -> asyncio.subprocess.Process:
        """The CLI started under asyncio (not waited for): stdin, stdout and stderr piped."""
        return await asyncio.create_subprocess_exec(
            *self.argv(*args),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=ROOT,
            env=self.env(),
        )

    def spawn(self, *args: str, columns: int = 80, timeout: float = 30) -> pexpect.spawn:
        """The CLI in a pseudo-terminal of 50 lines of `columns` (an xterm), for pexpect."""
        env = {**self.env(), "TERM": "xterm", "COLUMNS": str(columns), "LINES": "50"}
        return pexpect.spawn(
            sys.executable,
            self.argv(*args)[1:],
            cwd=str(ROOT),
            env=env,
            encoding="utf-8",
            timeout=timeout,
            dimensions=(50, columns),
        )

    def token(self) -> str:
        """The player token the CLI stored for its server (after a run that named one)."""
        assert self.server_url is not None, "an offline player has no token"
        identity = TokenStore(self.config / "solitaire").get(self.server_url)
        assert identity is not None, f"no token stored for {self.server_url}"
        return identity.token


async def resign_race(proc: asyncio.subprocess.Process, other: Client) -> tuple[str, str]:
    """The race `other` (a protocol client) and the CLI run as ``race ... --moves -`` (`proc`)
    were matched into starts; both resign and the CLI ends: its stdout and stderr."""
    started = await other.push("race.started", timeout=20)
    assert proc.stdin is not None
    proc.stdin.write(b"resign\n")
    proc.stdin.close()
    await other.request("resign", game_id=started["game_id"])
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    return out.decode(), err.decode()


#: ``make_player(server_url) -> Player``: a new player (own config dir) for that server, or
#: for none (offline commands).
MakePlayer = Callable[[str | None], Player]
#: ``named_player(name) -> Player``: a new player on the module's server, registered as
#: ``name`` (the CLI's ``--name NAME me`` succeeded, so its token is stored).
NamedPlayer = Callable[[str], Player]
