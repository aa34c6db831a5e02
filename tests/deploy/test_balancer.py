"""The production topology: HAProxy (deploy/haproxy.cfg, unchanged) in front of three server
processes on one Redis. Players spread over the processes, survive a crash and a drain by
reconnecting through the balancer, and the edge refuses an address over its connection limit
and cuts half-sent upgrade requests."""

from __future__ import annotations

import asyncio
import subprocess
import urllib.request
from typing import Any

import pytest
import websockets

from engine import from_view
from tests.support.balancer import CONFIG, Balancer, Topology, haproxy_binary
from tests.support.procs import ServerProcess
from tests.support.wsclient import Client

VERSION = (4,)


def connections(server: ServerProcess) -> int:
    """Open WebSocket connections on one process, from its /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=5) as r:
        body = r.read().decode()
    for line in body.splitlines():
        if line.startswith("solitaire_connections "):
            return int(float(line.split()[1]))
    raise AssertionError("no solitaire_connections gauge")


async def wait_for(predicate: Any, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


async def start_and_move(c: Client) -> tuple[str, int]:
    """Today's Fourteen Out and its first legal move: the game id and the acknowledged seq."""
    game = await c.request("daily.start", variant="fourteen-out")
    assert game["type"] == "game", game
    move = str(next(iter(from_view(game["view"]).legal_moves())))
    moved = await c.request("move", game_id=game["game_id"], move=move, expected_seq=game["seq"])
    assert moved["type"] == "moved", moved
    return game["game_id"], moved["seq"]


async def resume(url: str, old: Client, game_id: str, seq: int) -> Client:
    """Reconnect through the balancer with the old token: the game is where it was acked."""
    c = await Client.connect(url)
    await c.hello(token=old.token, versions=VERSION)
    game = await c.request("game.get", game_id=game_id)
    assert game["type"] == "game" and game["seq"] == seq, game
    nxt = list(from_view(game["view"]).legal_moves())
    if nxt:  # and it goes on from there
        moved = await c.request("move", game_id=game_id, move=str(nxt[0]), expected_seq=seq)
        assert moved["type"] == "moved" and moved["seq"] == seq + 1, moved
    return c


def test_the_deployed_configuration_is_valid() -> None:
    env = {"PATH": "/usr/sbin:/usr/bin:/bin"}
    out = subprocess.run(
        [haproxy_binary(), "-c", "-f", str(CONFIG)], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


async def test_players_spread_over_the_processes_and_survive_a_crash(
    topology: Topology,
) -> None:
    lb, servers = topology.lb, topology.servers
    clients = [await Client.connect(lb.url) for _ in range(6)]
    for i, c in enumerate(clients):
        await c.hello(name=f"spread{i}", versions=VERSION)
    counts = [connections(s) for s in servers]
    assert sum(counts) == 6 and min(counts) >= 1, counts  # leastconn: no process left out
    acked = [await start_and_move(c) for c in clients]

    victim = servers[1]
    on_victim = counts[1]
    victim.kill()  # SIGKILL: no goodbye to its clients
    await wait_for(lambda: sum(c.reader.done() for c in clients) == on_victim)
    survivors = []
    for c, (game_id, seq) in zip(clients, acked, strict=True):
        # Cut off with the process or not, every player comes back through the balancer to
        # the game as it was acknowledged (the survivors' old sockets are closed after).
        survivors.append(await resume(lb.url, c, game_id, seq))
        if not c.reader.done():
            await c.close()
    lb.wait_states({"s2": "DOWN"})
    assert connections(servers[0]) + connections(servers[2]) == len(survivors)
    for c in survivors:
        await c.close()


class DyingServer:
    """A process in the moment after its crash: its socket still takes connections, and
    each upgrade request is read and the connection closed without an answer. Its health
    check still answers 200, so the balancer keeps choosing it (it has the fewest open)."""

    def __init__(self) -> None:
        self.dropped = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"127.0.0.1:{port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if head.startswith(b"GET /readyz "):
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        else:
            self.dropped += 1
        writer.close()

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


async def test_an_upgrade_a_dying_process_dropped_goes_to_another(
    topology: Topology, tmp_path: Any
) -> None:
    """CI saw a reconnect after a SIGKILL answered 502: the dead process's socket had taken
    the upgrade request and closed with no response. The balancer sends such a request
    again to another process (`retry-on empty-response`, redispatched at once)."""
    dying = DyingServer()
    middle = await dying.start()
    live = [f"127.0.0.1:{s.port}" for s in topology.servers]
    try:
        with Balancer(tmp_path / "edge", [live[0], middle, live[2]]) as edge:
            edge.wait_states({"s1": "UP", "s2": "UP", "s3": "UP"})
            clients = []
            for i in range(6):
                c = await Client.connect(edge.url)
                await c.hello(name=f"dropped{i}", versions=VERSION)
                clients.append(c)
            assert dying.dropped >= 1  # the balancer did choose it
            assert connections(topology.servers[0]) + connections(topology.servers[2]) == 6
            for c in clients:
                await c.close()
    finally:
        await dying.stop()


async def test_a_drained_process_gets_no_new_players_and_hands_its_own_over(
    topology: Topology,
) -> None:
    lb, servers = topology.lb, topology.servers
    first = [await Client.connect(lb.url) for _ in range(3)]
    for i, c in enumerate(first):
        await c.hello(name=f"drain{i}", versions=VERSION)
    acked = [await start_and_move(c) for c in first]
    assert connections(servers[0]) == 1
    lb.command("set server servers/s1 state drain")
    lb.wait_states({"s1": "DRAIN"})
    late = [await Client.connect(lb.url) for _ in range(4)]
    for i, c in enumerate(late):
        await c.hello(name=f"late{i}", versions=VERSION)
    assert connections(servers[0]) == 1  # nobody new on the draining process
    assert connections(servers[1]) + connections(servers[2]) == 6
    servers[0].stop()  # SIGTERM: `shutdown` to its clients, then 1001
    await wait_for(lambda: sum(c.reader.done() for c in first) == 1)
    gone = next(i for i, c in enumerate(first) if c.reader.done())
    shutdown = [m for m in first[gone].seen if m.get("type") == "shutdown"]
    assert shutdown and shutdown[0]["retry_after_ms"] > 0
    assert first[gone].ws.close_code == 1001
    back = await resume(lb.url, first[gone], *acked[gone])
    for c in [*first, *late, back]:
        await c.close()


async def test_the_edge_refuses_an_address_over_its_connection_limit(
    topology: Topology, tmp_path: Any
) -> None:
    servers = [f"127.0.0.1:{s.port}" for s in topology.servers]
    with Balancer(tmp_path / "edge", servers, max_conn=3) as edge:
        edge.wait_states({"s1": "UP", "s2": "UP", "s3": "UP"})
        open_ = [await websockets.connect(edge.url) for _ in range(3)]
        with pytest.raises((OSError, websockets.InvalidHandshake, asyncio.TimeoutError)):
            extra = await asyncio.wait_for(websockets.connect(edge.url), 5)
            await extra.close()
        await open_[0].close()
        await asyncio.sleep(0.2)
        again = await websockets.connect(edge.url)  # one closed: room for one more
        for ws in [*open_[1:], again]:
            await ws.close()


async def test_the_edge_counts_and_cuts_half_sent_upgrade_requests(
    topology: Topology, tmp_path: Any
) -> None:
    """The slow client's cheat: open connections and send the upgrade request's first line
    and never the rest. A server alone holds such a socket until aiohttp's keep-alive timeout
    (75 s) and counts it against no per-address limit (it counts WebSockets, after the
    upgrade): 500 from one address held 500 descriptors. The edge counts them as connections
    of their address (the 4th here is refused) and closes each after `timeout http-request`
    (10 s, the status 408), after which the address connects again."""
    servers = [f"127.0.0.1:{s.port}" for s in topology.servers]
    with Balancer(tmp_path / "edge", servers, max_conn=3) as edge:
        edge.wait_states({"s1": "UP", "s2": "UP", "s3": "UP"})
        started = asyncio.get_running_loop().time()
        half: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        for _ in range(3):
            reader, writer = await asyncio.open_connection("127.0.0.1", edge.port)
            writer.write(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n")  # no blank line
            await writer.drain()
            half.append((reader, writer))
        # Connected is not yet accepted: the edge counts a connection once it took it (the
        # fourth could otherwise be taken first, by another of its threads).
        for _ in range(100):
            if "conn_cur=3" in edge.command("show table players"):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError(edge.command("show table players"))
        with pytest.raises((OSError, websockets.InvalidHandshake, asyncio.TimeoutError)):
            extra = await asyncio.wait_for(websockets.connect(edge.url), 5)
            await extra.close()
        answers = await asyncio.gather(*(asyncio.wait_for(r.read(), 20) for r, _ in half))
        waited = asyncio.get_running_loop().time() - started
        assert 9.0 <= waited < 15.0, waited
        assert all(a.startswith(b"HTTP/1.1 408") for a in answers), answers
        for _, writer in half:
            writer.close()
        await asyncio.sleep(0.2)
        ok = await websockets.connect(edge.url)  # the address's count went back down
        await ok.close()
