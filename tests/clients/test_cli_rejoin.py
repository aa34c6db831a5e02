"""The CLI rejoins the player's race from `welcome.race` after the client was closed during
it (run as a subprocess against a real server)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.cliplayer import MakePlayer, Player, resign_race
from tests.support.procs import ServerProcess
from tests.support.wsclient import Client


async def cli_and_rival(
    server: ServerProcess, make_player: MakePlayer, name: str, rival: str
) -> tuple[Player, Client, Client]:
    """A CLI player ``name`` (registered by the CLI), a protocol client with its token, and
    a protocol client of a new player ``rival``."""
    player = make_player(server.url)
    made = player.run("--name", name, "--json", "daily", "fourteen-out", "--show")
    assert made.code == 0, made.err
    me, other = await Client.connect(server.url), await Client.connect(server.url)
    await me.hello(token=player.token(), versions=(1, 2, 3))
    await other.hello(name=rival, versions=(1, 2, 3))
    return player, me, other


async def matched(me: Client, other: Client) -> str:
    """Both queue for a head-to-head Fourteen Out race; its id once matched."""
    await me.request("race.queue", variant="fourteen-out")
    await other.request("race.queue", variant="fourteen-out")
    return str((await me.push("race.update"))["race"]["race_id"])


@pytest.mark.asyncio
async def test_race_without_a_variant_rejoins_the_race_under_way(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    # The player queues and is matched from a first client that then goes away.
    player, me, other = await cli_and_rival(server, make_player, "rejoin_cli", "rejoin_ws")
    race_id = await matched(me, other)
    await me.close()
    proc = await player.start("--json", "race", "--moves", "-")
    try:
        out, err = await resign_race(proc, other)
    finally:
        await other.close()
    assert proc.returncode == 0, err
    assert "rejoining it" in err and race_id in err
    doc = json.loads(out)
    assert doc["command"] == "race" and doc["race_id"] == race_id and doc["finished"]
    assert {r["name"] for r in doc["standings"]} == {"rejoin_cli", "rejoin_ws"}


@pytest.mark.asyncio
async def test_race_with_a_variant_moves_on_from_a_race_whose_game_is_over(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    """A racer who resigned, with an idle rival keeping that race running, races again (the
    cheater review's F7): the CLI queues, says the race goes on without them, and plays the
    new race alone, whatever the old one still pushes."""
    player, me, idle = await cli_and_rival(server, make_player, "moveon_cli", "moveon_idle")
    old = await matched(me, idle)
    started = await me.push("race.started", timeout=20)
    assert (await me.request("resign", game_id=started["game_id"]))["type"] == "finished"
    await me.close()
    third = await Client.connect(server.url)
    await third.hello(name="moveon_third", versions=(1, 2, 3))
    proc = await player.start("--json", "race", "fourteen-out", "--moves", "-")
    try:
        await third.request("race.queue", variant="fourteen-out")
        out, err = await resign_race(proc, third)
    finally:
        await third.close()
        await idle.close()
    assert proc.returncode == 0, err
    assert "goes on without you" in err and old in err and "rejoining" not in err
    doc = json.loads(out)
    assert doc["race_id"] != old and doc["finished"]
    assert {r["name"] for r in doc["standings"]} == {"moveon_cli", "moveon_third"}


@pytest.mark.asyncio
async def test_a_room_that_refuses_says_so_after_a_race_whose_game_is_over(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    """Review F3: out of a race (their game over), a player's `race --join CODE` of a full
    room was refused with `conflict` after the server had let them leave that race; the CLI
    took it for "still in that race", printed "rejoining it" and waited for a race it no
    longer followed until its time limit. It says the room's refusal and stops."""
    player, me, idle = await cli_and_rival(server, make_player, "fullroom_cli", "fullroom_idle")
    host, guest = await Client.connect(server.url), await Client.connect(server.url)
    try:
        await matched(me, idle)
        started = await me.push("race.started", timeout=20)
        assert (await me.request("resign", game_id=started["game_id"]))["type"] == "finished"
        await me.close()
        await host.hello(name="fullroom_host", versions=(1, 2, 3))
        await guest.hello(name="fullroom_guest", versions=(1, 2, 3))
        room = await host.request("race.create", variant="fourteen-out", size=2)
        assert (await guest.request("race.join", code=room["race"]["code"]))["type"] == "race.room"
        done = await asyncio.to_thread(player.run, "race", "--join", room["race"]["code"])
    finally:
        for c in (idle, host, guest):
            await c.close()
    assert done.code != 0 and "the room is full" in done.err, done.err
    assert "rejoining" not in done.err


@pytest.mark.asyncio
async def test_joining_the_room_one_waits_in_again_rejoins_it(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    """`race --join CODE` of the very room the player waits in (the server answers the
    room: already in) is a rejoin, not a race left behind whose news is then ignored."""
    player, me, host = await cli_and_rival(server, make_player, "sameroom_cli", "sameroom_host")
    room = await host.request("race.create", variant="fourteen-out", size=2)
    code, race_id = room["race"]["code"], room["race"]["race_id"]
    assert (await me.request("race.join", code=code))["type"] == "race.room"
    await me.close()
    proc = await player.start("--json", "race", "--join", code, "--moves", "-")
    said = b""
    try:
        assert proc.stderr is not None
        while b"rejoining it" not in said:  # the CLI has asked and decided: start the room
            said += await asyncio.wait_for(proc.stderr.readline(), 20)
        assert (await host.request("race.start", race_id=race_id))["type"] == "race.room"
        out, err = await resign_race(proc, host)
    finally:
        await host.close()
    assert proc.returncode == 0, err
    err = said.decode() + err
    assert "rejoining it" in err and "goes on without you" not in err, err
    doc = json.loads(out)
    assert doc["race_id"] == race_id and doc["finished"]
