"""Free play (protocol 7): an unranked random deal of any variant, through the real server on
a real Redis; and the fair-play property that a free deal is never a daily (or race) deal."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import redis.asyncio

from engine import VARIANT_IDS
from server.games.daily import daily_seed
from server.games.deals import lasts_a_move, offers_a_move
from server.games.free import FREE_SEED_BASE, free_seed
from server.redis import keys
from tests.support.app import serve, unthrottled_config
from tests.support.lookahead import move_that_goes_on
from tests.support.wsclient import Client

V7 = (5, 6, 7)
HOUR_MS = 3_600_000
DAY_MS = 86_400_000


async def test_a_free_game_is_played_like_any_but_ranked_nowhere(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with serve(unthrottled_config(redis_url, tmp_path, b"free")) as app:
        me = await Client.connect(app.url)
        await me.hello(name="freddy", versions=V7)
        game = await me.request("free.start", variant="fourteen-out")
        assert game["type"] == "game" and game["free"] is True, game
        gid = game["game_id"]
        assert gid.startswith("f.") and game["seq"] == 0 and not game["finished"]
        daily = await me.request("daily.start", variant="fourteen-out")
        assert "free" not in daily, "a daily game is not free"
        assert daily["view"] != game["view"], "a free deal is not today's daily deal"
        # Its seed is of the free space (never a daily or race seed), kept in Redis only.
        k = keys.parse_game_id(gid)
        seed = int(await redis_client.hget(k.game, "seed") or 0)
        assert seed >= FREE_SEED_BASE
        assert seed != daily_seed(b"free", "fourteen-out", dt.date(2030, 6, 15))
        assert all(str(seed) not in str(frame) for frame in me.seen), "the seed stays secret"

        # Played through the engine: a legal move, an illegal one, undo, a hint.
        move = move_that_goes_on(game["view"])  # a random deal: its first move may end it
        moved = await me.request("move", game_id=gid, move=move, expected_seq=0)
        assert moved["type"] == "moved" and moved["seq"] == 1
        bad = await me.request("move", game_id=gid, move="1 1", expected_seq=1)
        assert bad["code"] == "illegal_move"
        assert (await me.request("undo", game_id=gid, expected_seq=1))["seq"] == 2
        hint = await me.request("hint", game_id=gid)
        assert hint["type"] == "hint", hint
        # Another device (or a reconnect) resumes it by id, the next day too: no day end.
        app.clock.advance(DAY_MS)
        again = await Client.connect(app.url)
        await again.hello(token=me.token, versions=V7)
        resumed = await again.request("game.get", game_id=gid)
        assert (resumed["seq"], resumed["free"]) == (2, True)
        assert (await again.request("move", game_id=gid, move=move))["seq"] == 3
        done = await again.request("resign", game_id=gid)
        assert done["type"] == "finished" and done["result"]["resigned"]
        assert "rank" not in done["result"], "on no board"
        # Nowhere ranked: yesterday's board holds only the daily game (once resigned), the
        # player's history has no free game.
        await me.request("resign", game_id=daily["game_id"])
        top = await me.request("leaderboard.top", variant="fourteen-out", date="2030-06-15")
        assert top["total"] == 1 and top["entries"][0]["moves"] == 0, top
        history = await me.request("history.get", variant="fourteen-out")
        assert len(history["entries"]) == 1, history
        # A client of an older version can neither start one nor see it marked.
        old = await Client.connect(app.url)
        await old.hello(token=me.token, versions=(5, 6))
        assert (await old.request("free.start", variant="fourteen-out"))["code"] == ("unknown_type")
        assert "free" not in await old.request("game.get", game_id=gid)
        assert (await me.request("free.start", variant="klondike"))["code"] == "not_found"
        for c in (me, again, old):
            await c.close()


async def test_free_games_are_limited_per_account_and_hour(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    cfg = unthrottled_config(redis_url, tmp_path, b"free", free_games_per_hour=3)
    async with serve(cfg) as app:
        me = await Client.connect(app.url)
        await me.hello(name="greedy", versions=V7)
        other = await Client.connect(app.url)
        await other.hello(name="modest", versions=V7)
        ids = set()
        for variant in ("fourteen-out", "triple-triangle", "triple-deck"):
            game = await me.request("free.start", variant=variant)
            assert game["variant"] == variant
            ids.add(game["game_id"])
        assert len(ids) == 3
        refused = await me.request("free.start", variant="fourteen-out")
        assert refused["code"] == "limit_reached", refused
        assert (await other.request("free.start", variant="fourteen-out"))["type"] == "game"
        for gid in ids:  # the ones started stay playable
            assert (await me.request("game.get", game_id=gid))["type"] == "game"
        app.clock.advance(HOUR_MS)
        assert (await me.request("free.start", variant="fourteen-out"))["type"] == "game"
        await me.close()
        await other.close()


def test_free_seeds_never_meet_daily_or_race_seeds() -> None:
    """Daily and race seeds are 53-bit; free seeds start at 2**53: no free deal can be a
    day's deal (a player cannot practise today's daily in free play) nor a race's."""
    secret = b"any secret"
    day = dt.date(2030, 6, 15)
    dailies = {
        daily_seed(secret, f"{v}#{i}" if i else v, day + dt.timedelta(days=d))
        for v in VARIANT_IDS
        for d in range(30)
        for i in range(3)
    }
    assert max(dailies) < FREE_SEED_BASE
    frees = {free_seed(v) for v in VARIANT_IDS for _ in range(5)}
    assert min(frees) >= FREE_SEED_BASE and len(frees) == len(VARIANT_IDS) * 5


def test_a_free_deal_that_every_first_move_ends_is_never_dealt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As a race's: a deal offering moves that each end the game (about one Fourteen Out
    deal in 240) is drawn again (`lasts_a_move`)."""
    dead, alive = 7_176_226_555_442_964_361, 1_146_967_894_172_290_159
    assert offers_a_move("fourteen-out", dead) and not lasts_a_move("fourteen-out", dead)
    assert lasts_a_move("fourteen-out", alive)
    drawn = iter([dead - FREE_SEED_BASE, alive - FREE_SEED_BASE])
    monkeypatch.setattr("server.games.free.secrets.randbelow", lambda n: next(drawn))
    assert free_seed("fourteen-out") == alive
