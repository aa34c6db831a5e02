"""The CLI rejoins the player's race from `welcome.race` after the client was closed during
it (run as a subprocess against a real server)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.cliplayer import MakePlayer
from tests.support.procs import ROOT, ServerProcess
from tests.support.wsclient import Client


@pytest.mark.asyncio
async def test_race_without_a_variant_rejoins_the_race_under_way(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    player = make_player(server.url)
    made = player.run("--name", "rejoin_cli", "--json", "daily", "fourteen-out", "--show")
    assert made.code == 0, made.err
    tokens = json.loads((player.config / "solitaire" / "tokens.json").read_text())
    token = tokens[server.url]["token"]
    # The player queues and is matched from a first client that then goes away.
    me, other = await Client.connect(server.url), await Client.connect(server.url)
    await me.hello(token=token, versions=(1, 2, 3))
    await other.hello(name="rejoin_ws", versions=(1, 2, 3))
    await me.request("race.queue", variant="fourteen-out")
    await other.request("race.queue", variant="fourteen-out")
    mine = await me.push("race.update")
    race_id = mine["race"]["race_id"]
    await me.close()
    proc = await asyncio.create_subprocess_exec(
        *player.argv("--json", "race", "--moves", "-"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env=player.env(),
    )
    try:
        started = await other.push("race.started", timeout=20)
        assert proc.stdin is not None
        proc.stdin.write(b"resign\n")
        proc.stdin.close()
        await other.request("resign", game_id=started["game_id"])
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        await other.close()
    assert proc.returncode == 0, err.decode()
    assert "rejoining it" in err.decode() and race_id in err.decode()
    doc = json.loads(out)
    assert doc["command"] == "race" and doc["race_id"] == race_id and doc["finished"]
    assert {r["name"] for r in doc["standings"]} == {"rejoin_cli", "rejoin_ws"}
