"""Simulated clients of a chaos run: daily players, racers (of the queue and of private
rooms) and spectators, through the balancer.

Each client plays like a careful real one: it always sends ``expected_seq`` (so a retry can
never play a move twice), resynchronises with ``game.get`` after any error, and on a lost
connection reconnects through the balancer with its token and carries on. Everything it sends
and receives goes into the shared `History`.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import itertools
import json
import random
import time
from typing import Any

import websockets

from engine import from_view
from tests.support.chaos.history import BoardSeen, History, Kind, Op, Outcome, RaceSeen

VERSIONS = [4]
VARIANT = "fourteen-out"  # what racers race
REQUEST_TIMEOUT = 5.0


class Lost(Exception):
    """The connection is gone (or a reply never came): reconnect."""


class Conn:
    """One WebSocket; a pending request fails with `Lost` as soon as the socket closes."""

    def __init__(self, ws: websockets.ClientConnection) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.pushes: list[dict[str, Any]] = []
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, url: str) -> Conn:
        try:
            ws = await asyncio.wait_for(websockets.connect(url, max_size=2**22), 3.0)
        except (OSError, TimeoutError, websockets.WebSocketException) as exc:
            raise Lost(str(exc)) from None
        return cls(ws)

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                msg = json.loads(frame)
                fut = self.replies.pop(msg["id"], None) if "id" in msg else None
                if fut is not None and not fut.done():
                    fut.set_result(msg)
                else:
                    self.pushes.append(msg)
        except websockets.WebSocketException:
            pass
        finally:
            for fut in self.replies.values():
                if not fut.done():
                    fut.set_exception(Lost("closed"))
            self.replies.clear()

    async def request(self, type_: str, **fields: Any) -> dict[str, Any]:
        if self.reader.done():
            raise Lost("closed")
        rid = next(self.ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[rid] = fut
        try:
            await self.ws.send(json.dumps({"type": type_, "id": rid, **fields}))
            return await asyncio.wait_for(fut, REQUEST_TIMEOUT)
        except (websockets.WebSocketException, TimeoutError, OSError) as exc:
            raise Lost(str(exc)) from None
        finally:
            self.replies.pop(rid, None)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(), 2.0)
        self.reader.cancel()


class Client(abc.ABC):
    """What every simulated client shares: identity, connection, history."""

    def __init__(self, name: str, url: str, history: History, rng: random.Random) -> None:
        self.name, self.url, self.history, self.rng = name, url, history, rng
        self.token = ""
        self.conn: Conn | None = None
        self.stopping = False

    async def connect(self) -> dict[str, Any]:
        """Connect through the balancer and say hello (with the token once there is one)."""
        while True:
            try:
                self.conn = await Conn.open(self.url)
                who = {"token": self.token} if self.token else {"name": self.name}
                welcome = await self.conn.request("hello", versions=VERSIONS, **who)
            except Lost:
                await asyncio.sleep(0.3)
                continue
            if welcome.get("type") != "welcome":
                await self.conn.close()
                await asyncio.sleep(0.5)
                continue
            self.token = self.token or welcome.get("token", "")
            self.history.session(self.name).successes.append(time.monotonic())
            return welcome

    def lost(self) -> None:
        self.history.session(self.name).disconnects.append(time.monotonic())

    async def op(self, kind: Kind, msg_type: str, **fields: Any) -> tuple[Op, dict[str, Any]]:
        """Send one request and record it; raises `Lost` (recorded as such) on a lost reply."""
        assert self.conn is not None
        op = Op(
            self.name,
            kind,
            time.monotonic(),
            game_id=str(fields.get("game_id", "")),
            move=str(fields.get("move", "")),
            expected_seq=fields.get("expected_seq"),
        )
        self.history.ops.append(op)
        try:
            reply = await self.conn.request(msg_type, **fields)
        except Lost:
            op.done_at = time.monotonic()
            raise
        op.done_at = time.monotonic()
        if reply.get("type") == "error":
            op.outcome, op.code = Outcome.ERROR, str(reply.get("code"))
        else:
            op.outcome = Outcome.OK
            self.history.session(self.name).successes.append(op.done_at)
            if isinstance(reply.get("seq"), int):
                op.seq = reply["seq"]
            if isinstance(reply.get("view"), dict):
                op.view = reply["view"]
            op.game_id = op.game_id or str(reply.get("game_id", ""))
        return op, reply

    async def pace(self) -> None:
        await asyncio.sleep(self.rng.uniform(0.15, 0.5))

    @abc.abstractmethod
    async def run(self) -> None:
        """Play until `stopping`, reconnecting whenever the connection is lost."""


class DailyPlayer(Client):
    """Plays today's deal of each variant in turn with random legal moves, and now and then
    looks at the game from a second connection (another tab, the phone), which the balancer
    may send to another process: what it reads must not be older than what was acknowledged.
    """

    def __init__(
        self, name: str, url: str, history: History, rng: random.Random, variants: list[str]
    ) -> None:
        super().__init__(name, url, history, rng)
        self.todo = list(variants)
        self.tab: Conn | None = None

    async def peek(self, game_id: str) -> None:
        """``game.get`` from the second connection (opened on first use, again when lost)."""
        try:
            if self.tab is None or self.tab.reader.done():
                self.tab = await Conn.open(self.url)
                welcome = await self.tab.request("hello", versions=VERSIONS, token=self.token)
                if welcome.get("type") != "welcome":
                    return
            main, self.conn = self.conn, self.tab
            try:
                await self.op(Kind.GET, "game.get", game_id=game_id)
            finally:
                self.conn = main
        except Lost:
            self.tab = None

    async def run(self) -> None:
        while not self.stopping and self.todo:
            await self.connect()
            try:
                await self._play()
            except Lost:
                self.lost()
            finally:
                assert self.conn is not None
                await self.conn.close()
        if self.tab is not None:
            await self.tab.close()

    async def _play(self) -> None:
        while not self.stopping and self.todo:
            variant = self.todo[0]
            op, game = await self.op(Kind.START, "daily.start", variant=variant)
            if op.outcome is not Outcome.OK:
                await asyncio.sleep(0.5)
                continue
            await self._game(game)
            self.todo.pop(0)

    async def _game(self, game: dict[str, Any]) -> None:
        game_id, seq, view = game["game_id"], game["seq"], game["view"]
        finished, stuck = bool(game.get("finished")), 0
        while not finished and not self.stopping:
            moves = [str(m) for m in from_view(view).legal_moves()]
            if not moves:  # the server is still deciding that the game is over
                stuck += 1
                if stuck > 20:
                    return
                await asyncio.sleep(0.3)
            else:
                op, reply = await self.op(
                    Kind.MOVE,
                    "move",
                    game_id=game_id,
                    move=self.rng.choice(moves),
                    expected_seq=seq,
                    with_view=True,
                )
                if op.outcome is Outcome.OK:
                    seq, view, finished = reply["seq"], reply["view"], reply["finished"]
                    if self.rng.random() < 0.25:
                        await self.peek(game_id)
                    await self.pace()
                    continue
                await asyncio.sleep(0.2)
            op, reply = await self.op(Kind.GET, "game.get", game_id=game_id)
            if op.outcome is Outcome.OK:
                seq, view, finished = reply["seq"], reply["view"], reply["finished"]


class Racer(Client):
    """Queues for head-to-head races again and again and plays them with random moves."""

    async def run(self) -> None:
        while not self.stopping:
            welcome = await self.connect()
            try:
                await self._races(welcome.get("race"))
            except Lost:
                self.lost()
            finally:
                assert self.conn is not None
                await self.conn.close()

    def _seen(self, race: dict[str, Any]) -> RaceSeen:
        seen = self.history.races.get(race["race_id"])
        if seen is None:
            seen = self.history.races[race["race_id"]] = RaceSeen(race["race_id"])
        if self.name not in seen.racers:
            seen.racers.append(self.name)
        if race.get("ends_at"):
            seen.ends_at_ms = int(race["ends_at"])
        return seen

    async def _races(self, active: dict[str, Any] | None) -> None:
        assert self.conn is not None
        while not self.stopping:
            if active is None:
                op, _ = await self.op(Kind.RACE_QUEUE, "race.queue", variant=VARIANT)
                if op.outcome is not Outcome.OK:
                    await asyncio.sleep(0.5)
                    continue
            race = await self._matched(active)
            if race is None:
                continue
            await self._race(race)
            active = None

    async def _matched(self, active: dict[str, Any] | None) -> dict[str, Any] | None:
        """The race once dealt (with its game id), from the pushes or `race.get`."""
        assert self.conn is not None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not self.stopping:
            if active is not None:
                op, reply = await self.op(Kind.RACE_GET, "race.get", race_id=active["race_id"])
                if op.outcome is Outcome.OK and reply["race"].get("game_id"):
                    return dict(reply["race"])
            for push in self.conn.pushes:
                race = push.get("race")
                if push.get("type") == "race.update" and race and race.get("game_id"):
                    self.conn.pushes.clear()
                    return dict(race)
            if self.conn.reader.done():
                raise Lost("closed")
            await asyncio.sleep(0.1)
        return None

    async def _race(self, race: dict[str, Any]) -> None:
        assert self.conn is not None
        seen = self._seen(race)
        game_id = race["game_id"]
        while not self.stopping:
            for push in self.conn.pushes:
                event = push.get("event") or {}
                if push.get("type") == "race.event" and event.get("kind") == "finished":
                    seen.finished_seen_at = seen.finished_seen_at or time.monotonic()
                    return
                if push.get("type") == "race.update" and push["race"].get("status") == "finished":
                    seen.finished_seen_at = seen.finished_seen_at or time.monotonic()
                    return
            self.conn.pushes.clear()
            op, game = await self.op(Kind.GET, "game.get", game_id=game_id)
            if op.outcome is not Outcome.OK:
                await asyncio.sleep(0.3)  # not started yet, or the store is away
                continue
            if game["finished"]:
                await asyncio.sleep(0.5)  # done; wait for the race to end
                continue
            moves = [str(m) for m in from_view(game["view"]).legal_moves()]
            if moves:
                await self.op(
                    Kind.MOVE,
                    "move",
                    game_id=game_id,
                    move=self.rng.choice(moves),
                    expected_seq=game["seq"],
                    with_view=True,
                )
            await self.pace()


class RoomHost(Racer):
    """Creates a private room again and again, hands its code to its guest (`codes`), starts
    the race once the guest is in, and races it. A room left waiting (the guest lost, a
    reply lost) is closed and another made."""

    def __init__(
        self, name: str, url: str, history: History, rng: random.Random, codes: asyncio.Queue[str]
    ) -> None:
        super().__init__(name, url, history, rng)
        self.codes = codes

    async def _races(self, active: dict[str, Any] | None) -> None:
        if active is not None and active.get("status") == "open":
            await self.op(Kind.RACE_LEAVE, "race.leave")  # a room from before: closed
            active = None
        while not self.stopping:
            if active is None:
                active = await self._room()
                if active is None:
                    await asyncio.sleep(0.5)
                    continue
            race = await self._matched(active)
            active = None
            if race is not None:
                await self._race(race)

    async def _room(self) -> dict[str, Any] | None:
        """A room made, joined by the guest and started; None when that failed (closed)."""
        op, room = await self.op(Kind.RACE_CREATE, "race.create", variant=VARIANT, size=2)
        if op.outcome is not Outcome.OK:
            await self.op(Kind.RACE_LEAVE, "race.leave")  # in one already (a lost reply)
            return None
        race_id, code = room["race"]["race_id"], room["race"]["code"]
        self.codes.put_nowait(code)
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline and not self.stopping:
            op, got = await self.op(Kind.RACE_GET, "race.get", race_id=race_id)
            if op.outcome is Outcome.OK and len(got["race"]["racers"]) >= 2:
                op, _ = await self.op(Kind.RACE_START, "race.start", race_id=race_id)
                if op.outcome is Outcome.OK or op.code == "conflict":  # conflict: started
                    return {"race_id": race_id}
                break
            await asyncio.sleep(0.3)
        await self.op(Kind.RACE_LEAVE, "race.leave")
        return None


class RoomGuest(Racer):
    """Joins its host's rooms by code (`codes`) and races them."""

    def __init__(
        self, name: str, url: str, history: History, rng: random.Random, codes: asyncio.Queue[str]
    ) -> None:
        super().__init__(name, url, history, rng)
        self.codes = codes

    async def _races(self, active: dict[str, Any] | None) -> None:
        while not self.stopping:
            if active is None:
                try:
                    code = await asyncio.wait_for(self.codes.get(), 1.0)
                except TimeoutError:
                    continue
                op, room = await self.op(Kind.RACE_JOIN, "race.join", code=code)
                if op.outcome is not Outcome.OK:
                    continue
                active = {"race_id": room["race"]["race_id"]}
            race = await self._matched(active)
            active = None
            if race is None:  # never started: out of the room
                await self.op(Kind.RACE_LEAVE, "race.leave")
                continue
            await self._race(race)


class Spectator(Client):
    """Watches the running races a few seconds at a time (`race.list`, `race.watch`, the
    delayed boards, `race.unwatch`), keeping every board it is shown in the history: the
    checker compares each with the racer's stored game (never a card the racer could not
    see, nor a position past a card another racer still playing had not seen)."""

    def __init__(self, name: str, url: str, history: History, rng: random.Random) -> None:
        super().__init__(name, url, history, rng)
        #: The watched race: whether it is over, and the racers told to have stopped playing.
        self._ended = False
        self._stopped: set[str] = set()

    async def run(self) -> None:
        while not self.stopping:
            await self.connect()
            try:
                await self._watch()
            except Lost:
                self.lost()
            finally:
                assert self.conn is not None
                await self.conn.close()

    def _board(self, race_id: str, board: dict[str, Any]) -> None:
        view, seq = board.get("view"), board.get("seq")
        if isinstance(view, dict) and isinstance(seq, int):
            self.history.boards.append(
                BoardSeen(
                    self.name,
                    race_id,
                    str(board["player_id"]),
                    seq,
                    view,
                    at=time.monotonic(),
                    stopped=tuple(sorted(self._stopped)),
                    final=self._ended,
                )
            )

    def _drain(self) -> None:
        assert self.conn is not None
        for push in self.conn.pushes:
            event = push.get("event") or {}
            if push.get("type") == "race.event":
                if event.get("kind") == "finished":
                    self._ended = True
                elif event.get("kind") == "forfeit" or (
                    event.get("kind") == "progress" and event.get("finished")
                ):
                    self._stopped.add(str(event.get("player_id")))
            if push.get("type") == "race.spectate":
                self._board(str(push["race_id"]), push["board"])
        self.conn.pushes.clear()

    async def _watch(self) -> None:
        assert self.conn is not None
        while not self.stopping:
            op, listing = await self.op(Kind.RACE_LIST, "race.list")
            races = listing.get("races") if op.outcome is Outcome.OK else None
            if not races:
                await asyncio.sleep(0.5)
                continue
            race_id = str(self.rng.choice(races)["race_id"])
            op, watching = await self.op(Kind.WATCH, "race.watch", race_id=race_id)
            if op.outcome is not Outcome.OK:
                await asyncio.sleep(0.5)
                continue
            race = watching.get("race") or {}
            self._ended = race.get("status") == "finished"
            self._stopped = {
                str(r["player_id"])
                for r in race.get("racers", ())
                if r.get("finished") or r.get("forfeited")
            }
            for board in watching.get("boards", ()):
                self._board(race_id, board)
            until = time.monotonic() + self.rng.uniform(2.0, 5.0)
            while time.monotonic() < until and not self.stopping:
                self._drain()
                if self.conn.reader.done():
                    raise Lost("closed")
                await asyncio.sleep(0.2)
            self._drain()
            await self.op(Kind.UNWATCH, "race.unwatch", race_id=race_id)
