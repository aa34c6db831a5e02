"""Per-process fan-out of race messages to the connections here, and who is connected.

Every process subscribes (Redis pub/sub) to the channels of the races its connections are in,
and once to the pattern of every player's channel (a match or an announcement reaches a
player's connections wherever they are: rare messages, so every process may read them all,
instead of a SUBSCRIBE and an UNSUBSCRIBE per connection), so racers on different server
processes see each other. Messages are the typed ones of `pubsub`; each is delivered to the
connections it concerns (a race's event to that race's connections, a match to that player's).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar, runtime_checkable

import redis.asyncio

import protocol as p
import protocol.races as pr
from protocol.spoken import as_spoken
from server.players.registry import Player
from server.races.model import RaceLoader, RaceState
from server.redis import keys, pubsub
from server.runtime.clock import Clock
from server.runtime.errors import raise_if_cancelled

log = logging.getLogger(__name__)
M = TypeVar("M", bound=p.ServerMessage)
K = TypeVar("K")
V = TypeVar("V")

#: Events after which every connection of the race gets the whole race (`race.update`).
UPDATE_EVENTS = (pr.RacerJoined, pr.RacerLeft, pr.RaceCountdown, pr.RacerForfeited, pr.RaceEnded)
READ_TIMEOUT_S = 1.0


class Recipient(Protocol):
    """A connection as fan-out sees it (`connection.Connection` is one)."""

    @property
    def player(self) -> Player | None: ...

    def send(self, message: p.ServerMessage) -> None: ...


@runtime_checkable
class Versioned(Protocol):
    """A recipient that says which protocol version it speaks (a `Session`)."""

    def speaks(self, version: int) -> bool: ...


def speaks_newest(conn: object) -> bool:
    """Whether `conn` gets race messages in their newest shape (`protocol.spoken`): a session
    speaking version 10 (`resigned`) or later."""
    return isinstance(conn, Versioned) and conn.speaks(p.RESIGNED)


def spoken_to(conn: object, message: M) -> M:
    """`message` as `conn` knows it (`protocol.spoken.as_spoken`)."""
    return message if speaks_newest(conn) else as_spoken(message, None)


class RaceWatcher(Protocol):
    """Spectators of races (`server.races.spectate`): told every message on a race channel."""

    def watching(self, race_id: str) -> bool: ...

    def watched_by(self, conn: Recipient) -> bool:
        """Whether ``conn`` watches some race here."""
        ...

    async def on_message(
        self, msg: pubsub.RaceEventPublished | pubsub.SpectatorsChanged
    ) -> None: ...

    async def heartbeat(self, now_ms: int, racing: Sequence[str]) -> None:
        """About once a second (the race clock's sweep): keep this process's marks fresh and
        drop those of stopped processes, for its races and `racing` (raced here)."""
        ...


Listener = Callable[[Recipient], None]
#: Told of a game another process found over after its reply (`pubsub.GameEnded`).
GameEndedListener = Callable[[pubsub.GameEnded], Awaitable[None]]
#: Told that a token of a player died (`pubsub.SessionsRevoked`): the player's id.
RevokedListener = Callable[[str], None]
StartView = Callable[[RaceState, str, int], Awaitable[p.RaceStarted]]


class RaceFanout:
    def __init__(self, client: redis.asyncio.Redis, races: RaceLoader, clock: Clock) -> None:
        self._pubsub = client.pubsub(ignore_subscribe_messages=True)
        self._races = races
        self._clock = clock
        self._by_race: dict[str, set[Recipient]] = defaultdict(set)
        self._by_player: dict[str, set[Recipient]] = defaultdict(set)
        self._started: dict[str, set[Recipient]] = defaultdict(set)
        #: The reverse of `_by_race` and `_by_player`: the races and players of each
        #: connection, so that its close costs what it is in, not a scan of every race and
        #: every connected player (issue #30: ~0.5 ms per close at 10,000 connections).
        self._races_of: dict[Recipient, set[str]] = {}
        self._players_of: dict[Recipient, set[str]] = {}
        self._latest: dict[str, RaceState] = {}
        #: Per race followed here, each racer's latest `progress` event delivered: its
        #: version and moves (`_stale`).
        self._progress: dict[str, dict[str, tuple[int, int]]] = {}
        self._subscribed: set[str] = set()
        self._players_followed = False
        self._on_matched: list[Listener] = []
        self._on_gone: list[Listener] = []
        self._on_game_ended: list[GameEndedListener] = []
        self._on_revoked: list[RevokedListener] = []
        #: This process's name in the racers' presence marks (`RaceService.mark_seen`).
        self.instance = secrets.token_hex(6)
        #: Spectator hubs here; a race channel stays subscribed while one watches the race.
        self.watchers: list[RaceWatcher] = []

    # -- what the race clock and matchmaking see ----------------------------------------------

    def on_matched(self, listener: Listener) -> None:
        """Call `listener(conn)` when a player watched through `conn` is matched."""
        self._on_matched.append(listener)

    def on_game_ended(self, listener: GameEndedListener) -> None:
        """Await `listener(msg)` when another process found a game over after its reply."""
        self._on_game_ended.append(listener)

    def on_sessions_revoked(self, listener: RevokedListener) -> None:
        """Call `listener(player_id)` when some process killed a token of that player."""
        self._on_revoked.append(listener)

    @property
    def following_players(self) -> bool:
        """Whether the players' channels are subscribed here (from `run`'s start on)."""
        return self._players_followed

    async def follow_players(self) -> None:
        """Receive every player's channel here (matches, games ended elsewhere): once."""
        if not self._players_followed:
            await self._pubsub.psubscribe(keys.player_channel_pattern())
            self._players_followed = True

    def on_gone(self, listener: Listener) -> None:
        """Call `listener(conn)` when a connection closes."""
        self._on_gone.append(listener)

    def follows(self, conn: Recipient) -> bool:
        """Whether ``conn`` follows a race here: a racer's (a room, a running race) or a
        spectator's. Such a connection receives without sending, and is not idle for it
        (`server.app`'s idle timeout)."""
        return conn in self._races_of or any(w.watched_by(conn) for w in self.watchers)

    def races(self) -> list[str]:
        """The races some connection here is in."""
        return list(self._by_race)

    def connected_players(self, race_id: str) -> list[str]:
        """The players connected here to the race (presence)."""
        return sorted({c.player.id for c in self._by_race.get(race_id, ()) if c.player})

    def latest(self, race_id: str) -> RaceState | None:
        """The race as last loaded here, if some connection here is in it."""
        return self._latest.get(race_id)

    def remember(self, race: RaceState) -> None:
        if race.race_id in self._by_race:
            self._latest[race.race_id] = race

    # -- membership ---------------------------------------------------------------------------

    async def _subscribe(self, channel: str) -> None:
        if channel not in self._subscribed:
            self._subscribed.add(channel)
            await self._pubsub.subscribe(channel)

    async def _unsubscribe(self, channel: str) -> None:
        if channel in self._subscribed:
            self._subscribed.discard(channel)
            with contextlib.suppress(Exception):
                await self._pubsub.unsubscribe(channel)

    async def attach(self, conn: Recipient, race_id: str) -> None:
        """Send this connection the race's events from now on."""
        if conn not in self._by_race[race_id]:
            self._by_race[race_id].add(conn)
            self._races_of.setdefault(conn, set()).add(race_id)
            await self._subscribe(keys.race_channel(race_id))

    async def follow(self, race_id: str) -> None:
        """Receive the race's channel here (for spectators, who are not attached)."""
        await self._subscribe(keys.race_channel(race_id))

    async def unfollow(self, race_id: str) -> None:
        """Drop the race's channel unless a connection or a spectator here still needs it."""
        if not self._followed(race_id):
            self._progress.pop(race_id, None)
            await self._unsubscribe(keys.race_channel(race_id))

    def _followed(self, race_id: str) -> bool:
        """Whether a connection or a spectator here needs the race's channel."""
        return race_id in self._by_race or any(w.watching(race_id) for w in self.watchers)

    async def detach_from(self, conn: Recipient, race_id: str) -> None:
        """Stop sending this connection the race's events (e.g. a race found over)."""
        conns = self._by_race.get(race_id)
        if conns is None or conn not in conns:
            return
        conns.discard(conn)
        self._started[race_id].discard(conn)
        self._unlist(self._races_of, conn, race_id)
        if not conns:
            await self._forget_race(race_id)

    async def moved_on(self, pid: str, race_id: str) -> None:
        """Player ``pid`` left ``race_id``, still running, for another race (their game in it
        over): their connections here no longer get its pushes, which a client would take
        for news of the race it shows now."""
        for conn in list(self._by_race.get(race_id, ())):
            if conn.player is not None and conn.player.id == pid:
                await self.detach_from(conn, race_id)

    def follows_player(self, pid: str) -> bool:
        """Whether a connection here receives the messages to player ``pid`` (every session
        that said hello does, `watch_player`)."""
        return pid in self._by_player

    async def watch_player(self, conn: Recipient, pid: str) -> None:
        """Send this connection the messages to player `pid` (a match) from now on."""
        self._by_player[pid].add(conn)
        self._players_of.setdefault(conn, set()).add(pid)
        await self.follow_players()

    @staticmethod
    def _unlist(index: dict[K, set[V]], key: K, item: V) -> None:
        """Take ``item`` out of ``key``'s set, and the set out of ``index`` once empty."""
        items = index.get(key)
        if items is not None:
            items.discard(item)
            if not items:
                del index[key]

    async def detach(self, conn: Recipient) -> None:
        """A connection closed: stop sending to it (its racer's grace period runs from now)."""
        for listener in self._on_gone:
            listener(conn)
        pid = conn.player.id if conn.player else None
        for race_id in sorted(self._races_of.pop(conn, ())):
            conns = self._by_race.get(race_id)
            if conns is None:
                continue
            conns.discard(conn)
            self._started[race_id].discard(conn)
            if pid is not None and pid not in self.connected_players(race_id):
                with contextlib.suppress(Exception):  # Redis down: the mark lapses by itself
                    await self._races.mark_absent(race_id, pid, self.instance)
            if not conns and self._by_race.get(race_id) is conns:
                await self._forget_race(race_id)
        for watched in self._players_of.pop(conn, ()):
            self._unlist(self._by_player, watched, conn)

    async def _forget_race(self, race_id: str) -> None:
        for conn in self._by_race.pop(race_id, ()):
            self._unlist(self._races_of, conn, race_id)
        self._started.pop(race_id, None)
        self._latest.pop(race_id, None)
        await self.unfollow(race_id)

    # -- delivery -----------------------------------------------------------------------------

    async def run(self) -> None:
        """Read the subscribed channels and deliver, until cancelled (an app cleanup_ctx)."""
        try:
            while True:
                # redis-py's `get_message` may swallow a cancellation and return None: check.
                raise_if_cancelled()
                if not self._players_followed:
                    # Every process follows the players' channels from the start: a game
                    # another process ends must reach the player's connections here too.
                    try:
                        await self.follow_players()
                    except Exception:
                        raise_if_cancelled()
                        log.warning("cannot follow the players' channels yet", exc_info=True)
                        await asyncio.sleep(1.0)
                        continue
                try:
                    msg = await self._pubsub.get_message(timeout=READ_TIMEOUT_S)
                except asyncio.CancelledError:
                    raise
                except Exception:  # a Redis outage: keep trying, the race clock resyncs
                    raise_if_cancelled()
                    log.warning("race pub/sub read failed", exc_info=True)
                    await asyncio.sleep(1.0)
                    continue
                if msg is None or msg.get("type") not in ("message", "pmessage"):
                    continue
                try:
                    decoded = pubsub.decode(msg["data"])
                except pubsub.PubSubDecodeError as exc:
                    log.warning("dropped a pub/sub message on %s: %s", msg.get("channel"), exc)
                    continue
                try:
                    await self.deliver(decoded)
                except Exception:
                    raise_if_cancelled()
                    log.exception("cannot deliver race message")
        finally:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()  # type: ignore[no-untyped-call]

    async def deliver(self, msg: pubsub.PubSubMessage) -> None:
        """Hand one message to the connections here it concerns."""
        if isinstance(msg, pubsub.SpectatorsChanged):
            push = p.RaceSpectators(race_id=msg.race_id, count=msg.count)
            for conn in list(self._by_race.get(msg.race_id, ())):
                conn.send(push)
        elif isinstance(msg, pubsub.RaceEventPublished):
            race_id, event = msg.race_id, msg.event
            if isinstance(event, pr.RacerProgress) and self._stale(race_id, event, msg.version):
                return
            newest = p.RaceEvent(
                race_id=race_id, version=msg.version, event=pr.dump_race_event(event)
            )
            older = as_spoken(newest, None)  # the same for every version before 10
            for conn in list(self._by_race.get(race_id, ())):
                conn.send(newest if speaks_newest(conn) else older)
            if isinstance(event, UPDATE_EVENTS):
                await self.push_update(race_id)
            if isinstance(event, pr.RaceEnded):
                await self._forget_race(race_id)
        elif isinstance(msg, pubsub.PlayerPush):  # version 7 pushes: to the sessions speaking it
            device = msg.push.device if isinstance(msg.push, p.DeviceSignedIn) else None
            devices = isinstance(msg.push, p.DeviceSignedIn | p.SigninTriesUsed)
            version = p.DEVICES if devices else p.ACCOUNTS
            for conn in list(self._by_player.get(msg.player_id, ())):
                if not (isinstance(conn, Versioned) and conn.speaks(version)):
                    continue
                if device is not None and getattr(conn, "device", "") == device:
                    continue  # the new device itself is not told of its own sign-in
                conn.send(msg.push)
            return
        elif isinstance(msg, pubsub.SessionsRevoked):
            for revoked in self._on_revoked:
                revoked(msg.player_id)
            return
        elif isinstance(msg, pubsub.GameEnded):
            if msg.origin != self.instance:  # the deciding process pushed to its own already
                for on_ended in self._on_game_ended:
                    await on_ended(msg)
            return
        else:  # the player entered a race: every connection of theirs here follows it
            fresh = []
            for conn in list(self._by_player.get(msg.player_id, ())):
                for listener in self._on_matched:
                    listener(conn)
                if conn not in self._by_race.get(msg.race_id, ()):
                    await self.attach(conn, msg.race_id)
                    fresh.append(conn)
            await self.push_update(msg.race_id, only=fresh)
        if not isinstance(msg, pubsub.PlayerMatched):  # spectators after the racers
            for watcher in self.watchers:
                await watcher.on_message(msg)

    def _stale(self, race_id: str, event: pr.RacerProgress, version: int) -> bool:
        """Whether a racer's `progress` event is older than, or the same as, one delivered
        here already. Pub/sub may deliver a message twice (a master's failover: the new
        master's link catching up); a progress event is its racer's whole state, so a late
        older one would show the racer's earlier progress until their next move. A racer's
        events are numbered in the order of their moves (each move's is emitted in its
        append's batch), whichever process published them. Stale means at or below both the
        version and the moves delivered: a Redis that lost its latest writes (a failover, a
        crash between AOF syncs) numbers new events from a lower version again, and those
        carry the racer's moves since. Kept only for races followed here (a message still on
        its way after the last follower left would leave an entry nobody removes)."""
        if not self._followed(race_id):
            return False
        seen = self._progress.setdefault(race_id, {})
        last = seen.get(event.player_id)
        if last is not None and version <= last[0] and event.moves <= last[1]:
            return True
        seen[event.player_id] = (version, event.moves)
        return False

    async def push_update(self, race_id: str, only: list[Recipient] | None = None) -> None:
        """Send every connection of the race here (or `only` these) the whole race, as each
        may see it."""
        conns = list(self._by_race.get(race_id, ())) if only is None else only
        if not conns:
            return
        race = await self._races.load(race_id)
        self.remember(race)
        now = self._clock.now_ms()
        for conn in conns:
            me = conn.player.id if conn.player else None
            conn.send(spoken_to(conn, p.RaceUpdate(race=race.info(now, me))))

    async def send_started(self, race: RaceState, now_ms: int, view: StartView) -> None:
        """Each racer connected here gets their own start view once per connection."""
        started = self._started[race.race_id]
        names = race.names()
        for conn in list(self._by_race.get(race.race_id, ())):
            if conn in started or conn.player is None or conn.player.id not in names:
                continue
            started.add(conn)
            conn.send(await view(race, conn.player.id, now_ms))
