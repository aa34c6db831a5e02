"""Fixtures for the CLI tests: a real server subprocess (with its embedded Redis) and a
helper running the `solitaire` CLI as a subprocess with its own config directory.

Fixtures:
    server       (module)   a `tests.support.procs.ServerProcess` with the default flags
    make_player  (function) ``make_player(server_url) -> Player``, each with its own config
                 (`tests.support.cliplayer`)
    named_player (function) ``named_player(name) -> Player``: a new player on ``server``,
                 registered as ``name`` by the CLI (``--name NAME me``), its token stored
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cliplayer import MakePlayer, NamedPlayer, Player
from tests.support.procs import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with ServerProcess(tmp_path_factory.mktemp("server") / "data") as srv:
        yield srv


@pytest.fixture
def make_player(tmp_path: Path) -> MakePlayer:
    count = iter(range(1000))

    def make(server_url: str | None) -> Player:
        return Player(tmp_path / f"config{next(count)}", server_url)

    return make


@pytest.fixture
def named_player(server: ServerProcess, make_player: MakePlayer) -> NamedPlayer:
    def named(name: str) -> Player:
        player = make_player(server.url)
        run = player.run("--name", name, "me")
        assert run.code == 0, run.err
        return player

    return named
