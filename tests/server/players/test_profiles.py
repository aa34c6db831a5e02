"""Profiles over real WebSockets on a manual clock: streaks across UTC midnight, recent
results with their exports, looking players up, and history recovered from the outbox."""

from __future__ import annotations

import datetime as dt
from typing import Any

import redis.asyncio

from server.boards.leaderboard import Leaderboard
from server.games.daily import DAY_MS
from server.players.profiles import Profiles
from server.redis import keys
from server.runtime.clock import ManualClock
from tests.support.app import App
from tests.support.races import SETTINGS, build
from tests.support.wsclient import Client

V = "fourteen-out"


async def play_daily(c: Client, variant: str = V) -> str:
    """Start today's game and resign it: a finished daily game. Its id."""
    game = await c.request("daily.start", variant=variant)
    assert game["type"] == "game", game
    done = await c.request("resign", game_id=game["game_id"])
    assert done["type"] == "finished", done
    return str(game["game_id"])


def daily(profile: dict[str, Any], variant: str = V) -> dict[str, Any]:
    [stats] = [d for d in profile["daily"] if d["variant"] == variant]
    assert isinstance(stats, dict)
    return stats


async def test_a_streak_across_utc_midnight(race_app: App) -> None:
    c = await race_app.client("streaker")
    race_app.clock.advance(DAY_MS // 2 - 60_000)  # 23:59 UTC
    first = await play_daily(c)
    me = await c.request("profile.get")
    assert me["type"] == "profile" and me["me"] is True and me["name"] == "streaker"
    assert (daily(me)["streak"], daily(me)["longest_streak"], daily(me)["played"]) == (1, 1, 1)

    race_app.clock.advance(120_000)  # 00:01 the next day: yesterday's streak is still alive
    assert await race_app.services.day_closer.sweep(dt.date(2030, 6, 15))  # its ranks are final
    me = await c.request("profile.get")
    assert daily(me)["streak"] == 1
    second = await play_daily(c)
    me = await c.request("profile.get")
    stats = daily(me)
    assert (stats["streak"], stats["longest_streak"], stats["played"], stats["won"]) == (2, 2, 2, 0)
    assert stats["won_streak"] == 0 and stats["percentile"] == 100
    assert [r["game_id"] for r in me["recent"]] == [second, first]
    old, new = me["recent"][1], me["recent"][0]
    assert old["replayable"] and (old["rank"], old["total"], old["percentile"]) == (1, 1, 100)
    assert not new["replayable"] and "rank" not in new  # today is not over
    export = await c.request("game.export", game_id=old["game_id"])
    assert export["type"] == "game.export" and export["variant"] == V

    race_app.clock.advance(2 * DAY_MS)  # a day missed: the streak is broken
    stats = daily(await c.request("profile.get"))
    assert (stats["streak"], stats["longest_streak"]) == (0, 2)


async def test_other_players_by_id_and_name(race_app: App) -> None:
    a = await race_app.client("Looker")
    b = await race_app.client("Looked")
    await play_daily(b, "triple-triangle")
    by_id = await a.request("profile.get", player_id=b.player_id)
    by_name = await a.request("profile.get", name="looked")  # names match in any case
    assert by_id["player_id"] == by_name["player_id"] == b.player_id
    assert by_id["me"] is False and by_id["name"] == "Looked"
    assert [d["variant"] for d in by_id["daily"]] == ["triple-triangle"]
    assert by_id["races"] == []
    assert (await a.request("profile.get", name="nobody"))["code"] == "not_found"
    assert (await a.request("profile.get", player_id="nope"))["code"] == "not_found"
    both = await a.request("profile.get", name="Looked", player_id=b.player_id)
    assert both["code"] == "bad_request"


async def test_history_pages(race_app: App) -> None:
    c = await race_app.client("pager")
    ids = []
    for _ in range(5):
        ids.append(await play_daily(c))
        race_app.clock.advance(DAY_MS)
    page = await c.request("history.get", variant=V, limit=2)
    assert page["type"] == "history" and [e["game_id"] for e in page["entries"]] == ids[:2:-1]
    seen = [e["game_id"] for e in page["entries"]]
    while "next_before" in page:
        page = await c.request("history.get", variant=V, limit=2, before=page["next_before"])
        seen += [e["game_id"] for e in page["entries"]]
    assert seen == ids[::-1]
    assert all(e["replayable"] for e in (await c.request("history.get", variant=V))["entries"])
    other = await race_app.client("reader")
    theirs = await other.request("history.get", variant=V, player_id=c.player_id, limit=1)
    assert [e["game_id"] for e in theirs["entries"]] == ids[-1:]
    assert (await c.request("history.get", variant="nope"))["code"] == "not_found"
    assert (await c.request("history.get", variant=V, limit=0))["code"] == "bad_request"


async def test_a_result_whose_history_write_was_lost_is_recorded_on_read(
    race_app: App, redis_client: redis.asyncio.Redis
) -> None:
    c = await race_app.client("crashy")
    game_id = await play_daily(c)
    # The state a process dying between the finish script and the history script leaves:
    # the game finished on the board, in the player's outbox, not in the history.
    for name in ("days", "won", "res", "rank", "stats"):
        await redis_client.delete(f"sol:{keys.history_tag(c.player_id)}:{name}:{V}")
    await redis_client.sadd(keys.history_pending(c.player_id), game_id)
    me = await c.request("profile.get")
    assert daily(me)["played"] == 1 and [r["game_id"] for r in me["recent"]] == [game_id]
    assert await redis_client.scard(keys.history_pending(c.player_id)) == 0
    again = await c.request("profile.get")  # recorded once
    assert daily(again)["played"] == 1


async def test_a_forfeit_counts_once_on_the_profile(
    redis_client: redis.asyncio.Redis, clock: ManualClock
) -> None:
    parts = build(redis_client, clock)
    inboxes = [await parts.inbox(n) for n in ("stayer", "leaver", "other")]
    pids = [ib.player.id for ib in inboxes if ib.player]
    race_id = await parts.races.create_room(pids[0], "stayer", V, 3)
    code = (await parts.races.load(race_id)).code
    assert code is not None
    for pid, name in zip(pids[1:], ("leaver", "other"), strict=True):
        await parts.races.join_room(pid, name, code)
    await parts.races.start_room(pids[0], race_id)
    clock.advance(SETTINGS.countdown_ms + SETTINGS.grace_ms + 1)
    await parts.races.mark_seen(race_id, [pids[0], pids[2]])
    await parts.referee.tick(race_id)
    await parts.referee.tick(race_id)  # decided once
    assert (await parts.races.load(race_id)).forfeited == {pids[1]}
    profiles = Profiles(
        parts.races.games.store, Leaderboard(redis_client), parts.races.boards, parts.players, clock
    )
    leaver = await parts.players.get(pids[1])
    assert leaver is not None
    profile = await profiles.profile(1, leaver, leaver)
    assert [(r.variant, r.forfeits, r.rating) for r in profile.races] == [(V, 1, None)]
