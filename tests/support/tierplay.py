"""Tiers and catch-up games played over the protocol in server tests: a player who joined on a
given day (catch-up opens from the account's first UTC day), a tier started, a game won by the
solver's line."""

from __future__ import annotations

import datetime as dt
from typing import Any

from engine import from_view
from engine.solvers import WINNABLE, solve
from server.games.daily import day_start_ms
from server.redis import keys
from tests.support.app import App
from tests.support.wsclient import Client

V8 = (1, 2, 3, 4, 5, 6, 7, 8)
HOUR_MS = 3_600_000


def at(date: dt.date, hour: float) -> int:
    """Server ms `hour` hours into `date` (UTC)."""
    return day_start_ms(date) + int(hour * HOUR_MS)


async def joined_player(
    app: App, name: str, joined: dt.date, versions: tuple[int, ...] = V8
) -> Client:
    """A new player whose account was created at the start of `joined`, signed in again so the
    server reads that date."""
    c = await Client.connect(app.url)
    await c.hello(name=name, versions=versions)
    await app.services.redis.hset(keys.player(c.player_id), "created_at_ms", at(joined, 0))
    await c.close()
    again = await Client.connect(app.url)
    await again.hello(token=c.token, versions=versions)
    return again


async def start_tier(
    c: Client, variant: str, tier: str, date: dt.date | None = None
) -> dict[str, Any]:
    """`daily.start` of a tier (of `date`: a catch-up game); the `game` reply."""
    fields: dict[str, Any] = {"variant": variant, "tier": tier}
    if date is not None:
        fields["date"] = date.isoformat()
    g = await c.request("daily.start", **fields)
    assert g["type"] == "game", g
    return g


async def win_by_solver(c: Client, g: dict[str, Any]) -> dict[str, Any]:
    """Play the solver's winning line from the game's view (a variant that shows every card),
    at machine speed from the game's seq; the last `moved`."""
    result = solve(from_view(g["view"]), max_nodes=300_000)
    assert result.verdict == WINNABLE, g["game_id"]
    reply: dict[str, Any] = {}
    for seq, move in enumerate(result.solution, start=g["seq"]):
        reply = await c.request("move", game_id=g["game_id"], move=str(move), expected_seq=seq)
        assert reply["type"] == "moved", reply
    assert reply["finished"] and reply["result"]["won"], reply
    return reply
