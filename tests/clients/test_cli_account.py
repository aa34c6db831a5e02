"""`solitaire signin-code`, `solitaire signin CODE` and `solitaire free VARIANT` against a
real server (protocol 7), output checked at 80 columns."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from tests.support.cliplayer import MakePlayer, NamedPlayer
from tests.support.procs import ServerProcess
from tests.support.wsclient import Client


def fits_80(text: str) -> bool:
    return all(len(line) <= 80 for line in text.splitlines())


def test_a_code_signs_a_second_terminal_in_as_the_same_player(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    home, laptop = make_player(server.url), make_player(server.url)
    me = home.run("--json", "--name", "signy", "me")
    assert me.code == 0, me.err
    pid = me.json()["player_id"]
    shown = home.run("signin-code")
    assert shown.code == 0, shown.err
    assert fits_80(shown.out), shown.out
    code = re.search(r"Sign-in code: ([2-9A-Z]{4}-[2-9A-Z]{4})", shown.out)
    assert code is not None, shown.out
    assert home.token() not in shown.out, "no token shown"

    signed = laptop.run("--profile", "work", "signin", code.group(1).lower())
    assert signed.code == 0, signed.err
    assert "Signed in as signy" in signed.out and fits_80(signed.out)
    same = laptop.run("--json", "--profile", "work", "me")
    assert same.code == 0, same.err
    assert same.json()["player_id"] == pid, "the laptop is the same player"
    # The first stored player of a server is also its default one.
    assert laptop.run("--json", "me").json()["player_id"] == pid
    # A profile holding a player is never overwritten (its token would be lost).
    taken = laptop.run("--profile", "work", "signin", "ABCD-EFGH")
    assert taken.code == 2 and "signed in under profile work" in taken.err
    # The code was used up.
    again = make_player(server.url).run("signin", code.group(1))
    assert again.code == 2 and "wrong, used or expired" in again.err
    bad = make_player(server.url).run("signin", "not-a-code")
    assert bad.code == 2 and "not a sign-in code" in bad.err
    # --json prints the code for scripts.
    doc = home.run("--json", "signin-code").json()
    assert doc["command"] == "signin-code" and len(doc["code"]) == 9


def test_free_play_deals_an_unranked_game_and_resumes_it(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    player = make_player(server.url)
    first = player.run("--json", "--name", "freeplay", "free", "fourteen-out", "--show")
    assert first.code == 0, first.err
    doc = first.json()
    assert doc["free"] is True and doc["game_id"] != ""
    assert doc["legal_moves"], "a free deal always offers a move"
    move = doc["legal_moves"][0]
    played = player.run(
        "--json", "free", "fourteen-out", "--resume", doc["game_id"], stdin=f"{move}\n"
    )
    assert played.code == 0, played.err
    shown = player.run("free", "fourteen-out", "--resume", doc["game_id"], "--show")
    assert shown.code == 0, shown.err
    assert "Free play - unranked" in shown.out and fits_80(shown.out), shown.out
    again = player.run("--json", "free", "fourteen-out", "--resume", doc["game_id"], "--show")
    assert again.json()["seq"] == 1
    other = player.run("--json", "free", "fourteen-out", "--show").json()
    assert other["game_id"] != doc["game_id"], "each free game is a new deal"
    board = player.run("--json", "leaderboard", "fourteen-out").json()
    assert all(e["name"] != "freeplay" for e in board["entries"])
    daily = player.run("--json", "daily", "fourteen-out", "--show").json()
    wrong = player.run("free", "fourteen-out", "--resume", daily["game_id"], "--show")
    assert wrong.code == 2 and "not a free game" in wrong.err


def test_rematch_of_a_race_one_was_not_in_is_refused(
    named_player: NamedPlayer,
) -> None:
    player = named_player("rematchy")
    r = player.run("rematch", "20300615-abcdef012345")
    assert r.code == 1 and "race" in r.err.lower(), r.err


@pytest.mark.asyncio
async def test_rematch_races_the_same_opponent_again(
    server: ServerProcess, named_player: NamedPlayer
) -> None:
    player = named_player("rematch_cli")
    me, other = await Client.connect(server.url), await Client.connect(server.url)
    await me.hello(token=player.token(), versions=(7,))
    await other.hello(name="rematch_ws", versions=(7,))
    room = await other.request("race.create", variant="fourteen-out", size=2)
    race_id = room["race"]["race_id"]
    await me.request("race.join", code=room["race"]["code"])
    await other.request("race.start", race_id=race_id)
    for c in (me, other):
        started = await c.push("race.started", timeout=20)
        await c.request("resign", game_id=started["game_id"])
    while (await other.push("race.update", timeout=20))["race"]["status"] != "finished":
        pass
    await me.close()
    proc = await player.start("--json", "rematch", race_id, "--moves", "-")
    try:
        offer = await other.push("race.rematch_offer", timeout=20)
        assert offer["rematch_of"] == race_id and offer["name"] == "rematch_cli"
        joined = await other.request("race.join", code=offer["code"])
        assert len(joined["race"]["racers"]) == 2
        started = await other.push("race.started", timeout=20)  # the CLI started its room
        assert started["race_id"] == offer["race_id"]
        assert proc.stdin is not None
        proc.stdin.write(b"resign\n")
        proc.stdin.close()
        await other.request("resign", game_id=started["game_id"])
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        await other.close()
    assert proc.returncode == 0, err.decode()
    doc = json.loads(out)
    assert doc["command"] == "race" and doc["race_id"] == offer["race_id"]
    assert {r["name"] for r in doc["standings"]} == {"rematch_cli", "rematch_ws"}
