"""Races in tests: the race units wired by hand on a real Redis with in-memory connections
(`build`), and for the app over WebSockets the same race timings (`race_config`) and
`start_race`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import redis.asyncio

import protocol as p
from engine import from_view
from server.boards.leaderboard import Leaderboard
from server.config import Config
from server.games.service import GameService
from server.games.store import GameStore
from server.players.registry import Player, PlayerRegistry
from server.races.clock import RaceClock
from server.races.fanout import RaceFanout
from server.races.matchmaking import Matchmaking
from server.races.ratings import RaceBoards
from server.races.referee import RaceReferee
from server.races.service import RaceService, RaceSettings
from server.races.store import RaceStore
from server.runtime.clock import ManualClock
from tests.support.app import App
from tests.support.wsclient import Client

SETTINGS = RaceSettings(
    countdown_ms=1_000, time_limit_ms=60_000, grace_ms=5_000, fill_wait_ms=2_000
)


@dataclass(eq=False)
class Inbox:
    """A connection as the race units see it: a player and the messages sent to it."""

    player: Player | None
    sent: list[p.ServerMessage] = field(default_factory=list)

    def send(self, message: p.ServerMessage) -> None:
        self.sent.append(message)

    def of(self, cls: type[p.ServerMessage]) -> list[p.ServerMessage]:
        return [m for m in self.sent if isinstance(m, cls)]


@dataclass
class RaceParts:
    clock: ManualClock
    players: PlayerRegistry
    store: RaceStore
    races: RaceService
    referee: RaceReferee
    fanout: RaceFanout
    race_clock: RaceClock
    matchmaking: Matchmaking

    async def inbox(self, name: str) -> Inbox:
        pid, _ = await self.players.create(name)
        return Inbox(await self.players.get(pid))

    async def matched(self, variant: str, *racers: Inbox) -> str:
        """A race the queue made of `racers` (rated, unlike a private room), dealt and in its
        countdown: each queues for a race of their number, the last one completes it."""
        race_id = None
        for ib in racers:
            assert ib.player is not None
            _, race_id = await self.races.queue(ib.player.id, ib.player.name, variant, len(racers))
        assert race_id is not None
        return race_id


def build(client: redis.asyncio.Redis, clock: ManualClock) -> RaceParts:
    games = GameService(GameStore(client), clock, race_time_limit_ms=SETTINGS.time_limit_ms)
    players = PlayerRegistry(client, clock)
    store = RaceStore(client, 3_600_000)
    boards = RaceBoards(client, 30)
    races = RaceService(store, boards, games, players, clock, SETTINGS)
    referee = RaceReferee(
        store,
        games,
        Leaderboard(client),
        boards,
        clock,
        SETTINGS.grace_ms,
        countdown_ms=SETTINGS.countdown_ms,
        time_limit_ms=SETTINGS.time_limit_ms,
    )
    fanout = RaceFanout(client, races, clock)
    return RaceParts(
        clock,
        players,
        store,
        races,
        referee,
        fanout,
        RaceClock(fanout, races, referee, clock),
        Matchmaking(races, fanout),
    )


def race_config(redis_url: str, data_dir: Path) -> Config:
    """The app's config with the race timings of `SETTINGS` and a lax rate limit."""
    return replace(
        Config(),
        redis_url=redis_url,
        data_dir=data_dir,
        daily_secret=b"s",
        race_countdown_ms=SETTINGS.countdown_ms,
        race_time_limit_ms=SETTINGS.time_limit_ms,
        race_grace_ms=SETTINGS.grace_ms,
        race_fill_wait_ms=SETTINGS.fill_wait_ms,
        rate_limit=1000.0,
        rate_burst=1000,
        address_bytes_rate=0.0,
    )


async def start_race(app: App, *clients: Client) -> list[dict[str, Any]]:
    """Advance past the countdown and collect each racer's race.started push."""
    app.clock.advance(SETTINGS.countdown_ms)
    return [await c.push("race.started") for c in clients]


async def clear_a_card(
    c: Client, game_id: str, limit: int = 100, clock: ManualClock | None = None, gap_ms: int = 0
) -> int:
    """A real attempt (docs/fairplay.md: a card cleared; draws alone are none): the racer
    plays, each time, a legal move that clears a card on its own copy of the game, else a
    stock draw, else the first legal move, until a card is cleared (`clock` advanced `gap_ms`
    before each move: a human pace). Returns the moves played."""
    for played in range(1, limit + 1):
        if clock is not None:
            clock.advance(gap_ms)
        got = await c.request("game.get", game_id=game_id)
        assert got["type"] == "game", got
        game = from_view(got["view"])
        moves = [str(m) for m in game.legal_moves()]
        assert moves, f"no legal move left and no card cleared in {game_id}"
        move = "d" if "d" in moves else moves[0]
        for m in moves:
            copy = from_view(got["view"])
            try:
                copy.apply(m)
            except Exception:  # a copy with hidden cards may not judge every move
                continue
            if copy.cleared > game.cleared:
                move = m
                break
        reply = await c.request("move", game_id=game_id, move=move)
        assert reply["type"] == "moved", reply
        if reply["finished"]:
            return played
        after = await c.request("game.get", game_id=game_id)
        if from_view(after["view"]).cleared > 0:
            return played
    raise AssertionError(f"no card cleared in {limit} moves of {game_id}")
