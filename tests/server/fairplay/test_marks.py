"""Marks and race boards, and `solitaire-admin` on its own embedded Redis, on real Redis."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import redis.asyncio

from engine import VARIANT_IDS
from server.fairplay.admin import run
from server.fairplay.review import ReviewDesk
from server.races.model import RaceSummary
from server.races.ratings import RaceBoards
from server.redis import keys
from server.runtime.errors import Conflict

VARIANT = "fourteen-out"
T0 = 1_907_755_200_000


def race(n: int) -> RaceSummary:
    return RaceSummary(race_id=f"20300615-mark{n:08d}", variant=VARIANT, finished_at=T0, racers=2)


async def test_a_marked_account_is_rated_but_off_the_race_boards(
    redis_client: redis.asyncio.Redis,
) -> None:
    boards = RaceBoards(redis_client, 90)
    desk = ReviewDesk(redis_client, VARIANT_IDS)
    await boards.apply(race(1), {"cheat": 1, "amy": 2})
    day = keys.race_date(race(1).race_id)
    assert await boards.add_win(VARIANT, day, "cheat", race(1).race_id)
    board = keys.rating_board(VARIANT)
    wins = keys.race_wins_board(VARIANT, day)
    assert set(await redis_client.zrange(board, 0, -1)) == {"cheat", "amy"}
    assert await redis_client.zrange(wins, 0, -1) == ["cheat"]  # its only winner so far

    audit = await desk.mark("cheat", "rita", "bot")
    assert "1 race wins" in audit.detail
    assert await redis_client.zrange(board, 0, -1) == ["amy"]
    assert await redis_client.zrange(wins, 0, -1) == []  # past wins leave too
    await boards.apply(race(2), {"cheat": 1, "amy": 2})  # still rated, still off the board
    assert await redis_client.zrange(board, 0, -1) == ["amy"]
    assert await redis_client.hget(keys.rating_stats(VARIANT), "cheat") is not None
    assert not await boards.add_win(VARIANT, day, "cheat", race(3).race_id)  # not counted
    assert await boards.add_win(VARIANT, day, "amy", race(3).race_id)
    with pytest.raises(Conflict):
        await desk.mark("cheat", "rita", "twice")  # marked once: its stash stays exact

    await desk.unmark("cheat", "rita")
    assert set(await redis_client.zrange(board, 0, -1)) == {"cheat", "amy"}
    assert (
        await redis_client.zscore(wins, "cheat") == 1
        and await redis_client.zscore(wins, "amy") == 1
    )
    assert await redis_client.ttl(wins) > 0
    shown = await redis_client.zscore(board, "cheat")
    assert shown is not None and shown > 1000  # its rating after two won races
    await desk.aclose()


async def test_admin_on_the_embedded_redis_of_a_data_dir(tmp_path: Path) -> None:
    out = io.StringIO()
    argv = ["--data-dir", str(tmp_path), "--reviewer", "ops"]
    assert await run([*argv, "mark", "p_1", "--note", "test"], env={}, out=out) == 0
    assert await run([*argv, "marked"], env={}, out=out) == 0
    assert await run([*argv, "audit"], env={}, out=out) == 0
    text = out.getvalue()
    assert "p_1" in text and "ops  mark p_1" in text and "note: test" in text
    # Refusals say why and exit 1; the reviewer defaults to $USER.
    err = io.StringIO()
    code = await run(
        ["--data-dir", str(tmp_path), "clear", "d.fourteen-out.2030-06-15.x"],
        env={"USER": "eve"},
        out=err,
    )
    assert code == 1
    code = await run(["--data-dir", str(tmp_path), "unmark", "p_1"], env={"USER": "eve"}, out=err)
    assert code == 0 and "eve  unmark p_1" in err.getvalue()
    assert await run([*argv, "clear", "not-a-game"], env={}, out=err) == 1
