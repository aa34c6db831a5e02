"""A game's result in the words of each protocol version, and `game.finished` pushes.

A game found over after its last move was acknowledged (`GameService.on_finished`) is pushed
to the player's sessions here that speak version 2 (the others learn it on their next
request), and the other processes are told (`pubsub.GameEnded`), which push it to the
player's sessions they hold (`Announcer.finished_elsewhere`). The app registers both once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Protocol

import redis.asyncio

import protocol as p
from protocol.events import FLAGGED
from server.boards.leaderboard import BoardRef, Entry
from server.games.service import GameService, LiveGame
from server.players.registry import Player
from server.redis import keys, pubsub
from server.runtime.errors import raise_if_cancelled

__all__ = ["Announcer", "Window", "push_finished", "result_of", "windows", "with_entry"]

log = logging.getLogger(__name__)


class Window(Protocol):
    """A player's session as the announcer sees it (`server.transport.session.Window`)."""

    @property
    def player(self) -> Player | None: ...

    @property
    def version(self) -> int | None: ...

    def speaks(self, version: int) -> bool: ...

    def send(self, message: p.ServerMessage) -> None: ...


class _Boards(Protocol):
    async def rank(self, board: BoardRef, player_id: str) -> Entry | None: ...


def result_of(live: LiveGame, entry: Entry | None, version: int | None) -> p.GameResult | None:
    """The game's result for a session speaking ``version``: a result the fair-play screen
    holds has no rank (it is on no board) and, from version 5 on, ``status: "flagged"``."""
    r = live.record.result
    if r is None:
        return None
    flagged = live.record.flagged
    catchup = live.record.catchup
    return p.GameResult(
        won=r.won,
        over=r.over,
        cleared=r.cleared,
        score=r.score,
        time_ms=r.time_ms,
        moves=r.moves,
        resigned=r.resigned,
        rank=entry.rank if entry and entry.rank and not flagged and not catchup else None,
        hints=r.hints,
        status=FLAGGED if flagged and (version or 0) >= p.FAIR_PLAY else None,
        catchup=True if catchup and (version or 0) >= p.TIERS else None,
    )


async def with_entry(
    games: GameService, boards: _Boards, live: LiveGame
) -> tuple[LiveGame, Entry | None]:
    """A finished game as reviewed now, and its board entry (None for a game in play, and
    for a free game, which is on no board)."""
    if not live.record.finished or live.record.kind == "free":
        return live, None
    live = await games.reviewed(live)
    if live.record.catchup:  # on no board
        return live, None
    board = BoardRef.daily(live.record.variant, live.record.date, live.record.tier)
    return live, await boards.rank(board, live.record.player_id)


def windows(sessions: Iterable[Window], player_id: str) -> list[Window]:
    """The player's sessions here that are pushed `game.finished` (version 2 on)."""
    return [
        s
        for s in sessions
        if s.player is not None and s.player.id == player_id and s.speaks(p.LEAN_MOVES)
    ]


def push_finished(sessions: Iterable[Window], live: LiveGame, entry: Entry | None) -> None:
    for session in sessions:
        result = result_of(live, entry, session.version)
        if result is not None:
            session.send(p.GameFinished(game_id=live.record.game_id, seq=live.seq, result=result))


class Announcer:
    """Tells a player's sessions, here and on the other processes, of a game that ended
    after its reply. ``sessions``: the sessions of this process now."""

    def __init__(
        self,
        games: GameService,
        boards: _Boards,
        redis: redis.asyncio.Redis,
        instance: str,
        sessions: Callable[[], Iterable[Window]],
    ) -> None:
        self.games = games
        self.boards = boards
        self.redis = redis
        self.instance = instance
        self.sessions = sessions

    async def finished_here(self, live: LiveGame, entry: Entry) -> None:
        """The `GameService.on_finished` listener."""
        record = live.record
        push_finished(windows(self.sessions(), record.player_id), live, entry)
        ended = pubsub.GameEnded(record.player_id, record.game_id, self.instance)
        try:
            await self.redis.publish(keys.player_channel(record.player_id), pubsub.encode(ended))
        except Exception:  # Redis away: the player's other windows learn it on their next read
            raise_if_cancelled()
            log.warning("cannot tell the other processes that %s ended", record.game_id)

    async def finished_elsewhere(self, msg: pubsub.GameEnded) -> None:
        """The `RaceFanout.on_game_ended` listener: another process found a game over after
        its reply; the player's version 2+ sessions here get ``game.finished`` as there."""
        mine = windows(self.sessions(), msg.player_id)
        if not mine:
            return
        live = await self.games.current(msg.game_id, msg.player_id)
        if live.record.finished:
            push_finished(mine, *await with_entry(self.games, self.boards, live))
