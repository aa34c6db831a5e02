"""CLI paths against a real server: private rooms, races in text and interactive mode with
the standings table, race boards around the player, display-name retries, a protocol version
mismatch, giving up reconnecting, and rejoining a race after the server restarts."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pexpect  # type: ignore[import-untyped]
import pytest
import redis.asyncio

import protocol
from clients.cli.__main__ import main as cli_main
from clients.cli.session import (
    EXIT_VERSION,
    RequestFailed,
    ServerSession,
    ServerUnreachable,
    SessionError,
)
from engine import Game, from_view
from server.redis import keys
from tests.support.cliplayer import MakePlayer, Player
from tests.support.lookahead import move_that_goes_on
from tests.support.procs import ROOT, ServerProcess
from tests.support.wsclient import Client

ROOM_LINE = re.compile(r"Room code: ([A-Z0-9]+)")


def spawn(player: Player, *args: str) -> pexpect.spawn:
    """The CLI in a pseudo-terminal (interactive mode, 100 columns) as ``player``."""
    return player.spawn("--ascii", *args, columns=100)


def solve_line(view: Mapping[str, object], count: int) -> list[str]:
    """``count`` legal moves in a row from the game's start (a depth-first search: the
    first legal move each time can run into a dead end on some deals of the random daily
    secret the server has here)."""

    def extend(game: Game, line: list[str]) -> list[str] | None:
        if len(line) == count:
            return line
        for move in list(game.legal_moves()):
            after = from_view(game.view())
            after.apply(move)
            found = extend(after, [*line, str(move)])
            if found is not None:
                return found
        return None

    line = extend(from_view(view), [])
    assert line is not None, f"no {count} moves in a row on this deal: {view}"
    return line


def popen_fed(player: Player, stdin: str, *args: str) -> subprocess.Popen[str]:
    """The CLI as ``player`` reading ``stdin`` from a file (all of it there from the start)."""
    feed = player.config.parent / f"{player.config.name}.stdin"
    feed.write_text(stdin)
    with feed.open() as source:
        return subprocess.Popen(
            player.argv(*args),
            stdin=source,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=player.env(),
        )


def room_code(proc: subprocess.Popen[str]) -> str:
    """Read the creator's output up to the room code line."""
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        found = ROOM_LINE.search(line)
        if found:
            return found.group(1)
    raise AssertionError(f"no room code in {seen!r} ({proc.wait()})")


def test_private_room_race_in_text_mode_then_race_boards(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    host, guest = make_player(server.url), make_player(server.url)
    # Each script is played once the race starts.
    creator = popen_fed(
        host, "resign\n", "--name", "roomhost", "race", "fourteen-out", "--create", "--moves", "-"
    )
    try:
        code = room_code(creator)
        joined = guest.run(
            "--name",
            "roomguest",
            "race",
            "--join",
            code.lower(),
            "--moves",
            "-",
            stdin="resign\n",
            timeout=60,
        )
        out, err = creator.communicate(timeout=60)
    finally:
        if creator.poll() is None:
            creator.kill()
    assert joined.code == 0, joined.err
    assert f"Joined room {code}; waiting for the start." in joined.out
    assert "Starting in" in joined.out and "roomhost" in joined.out
    assert creator.returncode == 0, err
    assert "Racers (2/8): roomhost, roomguest" in out and "Starting in" in out
    assert "resign     ok" in out  # the script's line, then the final board
    # A private room is casual (docs/fairplay.md): neither racer is on the race board.
    board = host.run("--json", "leaderboard", "fourteen-out", "--race", "--around-me")
    assert board.code == 0, board.err
    doc = board.json()
    assert (doc["kind"], doc["board"]) == ("race", "rating")
    assert doc["entries"] == []
    text = guest.run("leaderboard", "fourteen-out", "--race", "--around-me", "--limit", "4")
    assert text.code == 0, text.err
    assert "races · rating" in text.out and "(no rated races yet)" in text.out
    wins = guest.run(
        "leaderboard", "fourteen-out", "--race", "--board", "wins", "--date", "2001-01-01"
    )
    assert wins.code == 0 and "(no rated races yet)" in wins.out


def test_interactive_room_race_ends_with_the_standings_table(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    host, guest = make_player(server.url), make_player(server.url)
    child = spawn(host, "--name", "ptyhost", "race", "triple-triangle", "--create")
    joiner: subprocess.Popen[str] | None = None
    try:
        child.expect(r"Room code: (?:\x1b\[1m)?([A-Z0-9]+)")
        code = child.match.group(1)
        child.expect("type 'start' when everyone is in")
        child.sendline("start")
        child.expect("cannot start: a race needs at least two racers")
        joiner = popen_fed(
            guest,
            "resign\n",
            "--name",
            "ptyguest",
            "--json",
            "race",
            "--join",
            code,
            "--moves",
            "-",
        )
        child.expect(r"Racers \(2/8\): ptyhost, ptyguest")
        child.sendline("start")
        child.expect("Starting in")
        child.expect("Type a move, or 'help'")
        # No "move> " prompt here: the waiting room's pending read takes the first line.
        child.sendline("hint")
        child.expect("there are no hints in races")
        child.expect("move> ")
        child.sendline("resign")
        child.expect_exact("[y/N]")
        child.sendline("y")
        child.expect(r"(You|ptyguest) won the race")  # the title says who won
        child.expect("ptyhost")
        child.expect("resigned")  # protocol 10: the standings say who gave up
        child.expect(pexpect.EOF)
        out, err = joiner.communicate(timeout=60)
    finally:
        child.close()
        if joiner is not None and joiner.poll() is None:
            joiner.kill()
    assert child.exitstatus == 0
    assert joiner.returncode == 0, err
    doc = json.loads(out)
    standings = doc["standings"]
    assert {r["name"] for r in standings} == {"ptyhost", "ptyguest"}
    assert sorted(r["place"] for r in standings) == [1, 2]
    assert doc["finished"] and doc["result"]["resigned"]
    assert all(r["resigned"] for r in standings), "both resigned (protocol 10)"


def test_leaving_the_queue_before_a_match(server: ServerProcess, make_player: MakePlayer) -> None:
    child = spawn(
        make_player(server.url), "--name", "quitter", "race", "fourteen-out", "--players", "3"
    )
    try:
        child.expect(r"Waiting for opponents \(1 waiting, 3 needed\)")
        child.sendline("quit")
        child.expect("left the race before it started")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 2


def test_name_retries_until_the_server_accepts_one(
    server: ServerProcess, make_player: MakePlayer
) -> None:
    taken = make_player(server.url).run("--name", "takenname", "daily", "fourteen-out", "--show")
    assert taken.code == 0, taken.err
    refused = make_player(server.url).run("--name", "takenname", "daily", "fourteen-out", "--show")
    assert refused.code == 2 and "choose another --name" in refused.err
    bad = make_player(server.url).run("--name", "no", "daily", "fourteen-out", "--show")
    assert bad.code == 2 and "invalid --name" in bad.err
    player = make_player(server.url)
    child = spawn(player, "daily", "fourteen-out", "--show")
    try:
        child.expect("Choose a display name")
        child.sendline("x")  # too short: refused before asking the server
        child.expect("Choose a display name")
        child.sendline("takenname")  # the server's name_taken
        child.expect("choose another name")
        child.expect("Choose a display name")
        child.sendline("fresh_name")
        child.expect("Fourteen Out")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    again = player.run("--json", "daily", "fourteen-out", "--show")  # the token was stored
    assert again.code == 0 and again.json()["seq"] == 0


def test_a_version_mismatch_exits_4(
    server: ServerProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setattr(protocol, "SUPPORTED_VERSIONS", frozenset({99}))  # the client's side
    code = cli_main(
        ["--server", server.url, "--name", "futurist", "--json", "daily", "fourteen-out", "--show"]
    )
    assert code == EXIT_VERSION == 4
    doc = json.loads(capsys.readouterr().out)
    assert doc["error"]["exit_code"] == 4
    assert "speaks protocol version(s) [99]" in doc["error"]["message"]


async def test_reconnecting_gives_up_after_its_deadline(tmp_path: Path) -> None:
    srv = ServerProcess(tmp_path / "data").start()
    session = ServerSession(srv.url, name="leaver", reconnect_deadline_s=1.0)
    try:
        await session.connect()
        pong = await session.request(lambda rid: protocol.Ping(id=rid), protocol.Pong)
        assert pong.server_time > 0
        srv.stop()
        with pytest.raises(ServerUnreachable, match="gave up reconnecting after 1 s"):
            await session.request(lambda rid: protocol.Ping(id=rid), protocol.Pong)
    finally:
        await session.close()
        srv.stop()


async def test_a_queued_racer_comes_back_after_the_server_restarts(
    tmp_path: Path, make_player: MakePlayer
) -> None:
    """Waiting in the queue when the server goes away: the CLI reconnects by itself, is still
    queued (the queue is in Redis), and the race that matches it later is played."""
    srv = ServerProcess(tmp_path / "data").start()
    player = make_player(srv.url)
    proc: asyncio.subprocess.Process | None = None
    try:
        proc = await player.start(
            "--name", "patient_one", "--json", "race", "fourteen-out", "--moves", "-"
        )
        # Queued: the queue's index of who waits (in the server's Redis) holds one player.
        store = redis.asyncio.Redis.from_url(f"unix://{tmp_path / 'data' / 'redis.sock'}")
        deadline = asyncio.get_running_loop().time() + 30
        while not await store.hlen(keys.race_queue_who()):
            assert asyncio.get_running_loop().time() < deadline, "the CLI never queued"
            await asyncio.sleep(0.05)
        await store.aclose()
        await asyncio.to_thread(srv.restart)
        other = await Client.connect(srv.url)
        await other.hello(name="latecomer")
        queued = await other.request("race.queue", variant="fourteen-out")
        assert queued["type"] in ("race.queued", "race.room"), queued
        started = await other.push("race.started", timeout=60)
        await other.request("resign", game_id=started["game_id"])
        assert proc.stdin is not None
        proc.stdin.write(b"resign\n")
        await proc.stdin.drain()
        proc.stdin.close()
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        await other.close()
    finally:
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()
        srv.stop()
    assert proc.returncode == 0, err.decode() + out.decode()
    assert b"reconnected" in err
    doc = json.loads(out)
    assert doc["race_id"] == started["race_id"] and doc["finished"]
    assert {r["name"] for r in doc["standings"]} == {"patient_one", "latecomer"}


async def test_a_racer_rejoins_after_the_server_restarts(
    tmp_path: Path, make_player: MakePlayer
) -> None:
    srv = ServerProcess(tmp_path / "data").start()
    player = make_player(srv.url)
    other = await Client.connect(srv.url)
    proc: asyncio.subprocess.Process | None = None
    try:
        await other.hello(name="steady")
        assert (await other.request("race.queue", variant="fourteen-out"))["waiting"] == 1
        proc = await player.start(
            "--name", "phoenix_racer", "--json", "race", "fourteen-out", "--moves", "-"
        )
        started = await other.push("race.started", timeout=30)
        # The CLI plays one move first: once the others see its progress it is racing (not
        # still in the waiting room) when the server goes away.
        # A move after which the game goes on: the race deal is random, and a game over at
        # once would have the server refuse the later `resign` (`game_over`; CI saw it once).
        first = move_that_goes_on(started["view"])
        assert proc.stdin is not None
        proc.stdin.write(f"{first}\n".encode())
        await proc.stdin.drain()
        event = (await other.push("race.event", timeout=60))["event"]
        while event["kind"] != "progress" or event["player_id"] == other.player_id:
            event = (await other.push("race.event", timeout=60))["event"]
        assert event["moves"] == 1
        await asyncio.to_thread(srv.restart)  # both racers lose their connection
        await other.close()
        back = await Client.connect(srv.url)
        await back.hello(token=other.token)
        room = await back.request("race.get", race_id=started["race_id"])
        assert room["race"]["status"] == "running"
        proc.stdin.write(b"resign\n")
        await proc.stdin.drain()
        proc.stdin.close()
        await back.request("resign", game_id=started["game_id"])
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        await back.close()
    finally:
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()
        srv.stop()
    assert proc.returncode == 0, err.decode() + out.decode()
    assert b"reconnected" in err
    doc = json.loads(out)
    assert doc["race_id"] == started["race_id"] and doc["finished"]
    assert {r["name"] for r in doc["standings"]} == {"steady", "phoenix_racer"}
    assert [(o["move"], o["ok"]) for o in doc["outcomes"]] == [(first, True), ("resign", True)]
    assert doc["standings"][0]["name"] == "phoenix_racer"  # it cleared a pair, steady none
    assert doc["reason"] == "all finished"


@pytest.mark.parametrize("elsewhere", [1, 2])
async def test_a_game_changed_elsewhere_refreshes_the_board(
    server: ServerProcess, make_player: MakePlayer, elsewhere: int
) -> None:
    """The same player on a second device moves while the CLI's script runs: the CLI's next
    move is refused as a conflict, it refreshes its board, and the script stops there. With
    one move made elsewhere, the game is one move on as if the CLI's own had landed (a lost
    reply): the move log tells that it was not the CLI's."""
    player = make_player(server.url)
    shown = player.run(
        "--name", f"twodevices{elsewhere}", "--json", "daily", "fourteen-out", "--show"
    )
    assert shown.code == 0, shown.err
    line = solve_line(shown.json()["view"], 4)
    token = player.token()
    proc = await player.start("--json", "daily", "fourteen-out", "--moves", "-")
    device = await Client.connect(server.url)
    try:
        await device.hello(token=token)
        assert proc.stdin is not None
        proc.stdin.write(f"{line[0]}\n".encode())
        await proc.stdin.drain()
        game = await device.request("daily.start", variant="fourteen-out")
        deadline = asyncio.get_running_loop().time() + 60
        while game["seq"] < 1:  # the CLI's first move has landed
            assert asyncio.get_running_loop().time() < deadline, "the CLI never moved"
            await asyncio.sleep(0.05)
            game = await device.request("game.get", game_id=game["game_id"])
        for seq, move in ((1, line[1]), (2, line[2]))[:elsewhere]:
            moved = await device.request(
                "move", game_id=game["game_id"], move=move, expected_seq=seq
            )
            assert moved["seq"] == seq + 1
        proc.stdin.write(f"{line[3]}\n{line[3]}\n".encode())  # the CLI still thinks seq 1
        proc.stdin.close()
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        await device.close()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 1, out.decode() + err.decode()
    doc = json.loads(out)
    assert [o["ok"] for o in doc["outcomes"]] == [True, False]  # the last line never sent
    assert doc["error"] == {
        "line": 2,
        "move": line[3],
        "code": "conflict",
        "reason": "the game changed elsewhere; the board is refreshed",
    }
    assert doc["view"]["moves"] == 1 + elsewhere  # the board was refreshed from the server


def test_a_server_that_forgot_the_player(tmp_path: Path, make_player: MakePlayer) -> None:
    """The server's data was reset: the stored token is unknown. Without --name the CLI says
    what to do; with --name it starts a new player under that name."""
    srv = ServerProcess(tmp_path / "data").start()
    try:
        player = make_player(srv.url)
        assert player.run("--name", "amnesia", "daily", "fourteen-out", "--show").code == 0
        srv.stop()
        shutil.rmtree(tmp_path / "data")
        srv.start()  # same port, empty data
        lost = player.run("daily", "fourteen-out", "--show")
        assert lost.code == 1 and "does not know the stored player" in lost.err
        assert "--name NAME" in lost.err
        again = player.run("--name", "amnesia", "--json", "daily", "fourteen-out", "--show")
        assert again.code == 0, again.err
        assert again.json()["seq"] == 0
        assert player.run("--json", "daily", "fourteen-out", "--show").code == 0  # stored
    finally:
        srv.stop()


async def test_session_refusals_are_typed(server: ServerProcess) -> None:
    session = ServerSession(server.url, name="typed_session")
    welcome = await session.connect()
    assert welcome.token and session.token == welcome.token and session.connected
    with pytest.raises(RequestFailed) as missing:
        await session.request(
            lambda rid: protocol.GameGet(id=rid, game_id="d.x.2030-01-01.y"), protocol.GameState
        )
    assert missing.value.code == "not_found"
    with pytest.raises(RequestFailed, match="unexpected reply 'pong'") as odd:
        await session.request(lambda rid: protocol.Ping(id=rid), protocol.Welcome)
    assert odd.value.code == "internal"
    await session.close()
    assert not session.connected
    with pytest.raises(SessionError, match="the session is closed"):
        await session.request(lambda rid: protocol.Ping(id=rid), protocol.Pong)
    again = ServerSession(server.url, token=session.token)  # the token resumes the player
    assert (await again.connect()).player_id == welcome.player_id
    await again.close()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("leaderboard", "fourteen-out", "--limit", "0"), "the limit must be from 1 to 100"),
        (("leaderboard", "fourteen-out", "--limit", "ten"), "not an integer: 'ten'"),
        (("practice", "fourteen-out", "--seed", "-1"), "the seed must be in 0..2**64-1"),
        (("practice", "fourteen-out", "--seed", "x1"), "not an integer: 'x1'"),
    ],
)
def test_bad_numbers_are_usage_errors(
    make_player: MakePlayer, args: tuple[str, ...], says: str
) -> None:
    run = make_player("ws://127.0.0.1:9/ws").run(*args)  # refused before any connection
    assert run.code == 2 and says in run.err
