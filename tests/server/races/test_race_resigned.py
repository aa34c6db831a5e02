"""Protocol version 10: a race says who resigned (``resigned``), and older versions get exactly
the frames they got before. Real WebSockets, real Redis, the app in-process."""

from __future__ import annotations

import json
from typing import Any

from tests.support.app import App
from tests.support.races import start_race
from tests.support.wsclient import Client

#: A version 9 racer's `progress` event, every field in its order: the shape before version 10.
V9_PROGRESS = ("kind", "player_id", "cleared", "score", "moves", "finished", "won", "stuck")
#: A version 9 racer's line of the `finished` event's results, in its order.
V9_RESULT = (
    "player_id",
    "name",
    "place",
    "won",
    "cleared",
    "score",
    "time_ms",
    "moves",
    "forfeited",
    "rating",
    "rating_change",
)


def compact(msg: dict[str, Any]) -> str:
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":"))


def raw_frame(c: Client, msg: dict[str, Any]) -> str:
    """The text frame that carried `msg` (decoded equal), exactly as received."""
    for frame in c.raw:
        if isinstance(frame, str) and json.loads(frame) == msg:
            return frame
    raise AssertionError(f"no frame carried {msg}")


def has_resigned(value: Any) -> bool:
    if isinstance(value, dict):
        return "resigned" in value or any(has_resigned(v) for v in value.values())
    if isinstance(value, list):
        return any(has_resigned(v) for v in value)
    return False


async def progress_of(c: Client, pid: str) -> dict[str, Any]:
    """The next `progress` event about racer `pid` that says their game is over."""
    while True:
        ev = await c.push("race.event", timeout=5)
        body = ev["event"]
        if body["kind"] == "progress" and body["player_id"] == pid and body["stuck"]:
            return ev


async def finished_event(c: Client) -> dict[str, Any]:
    ev = await c.push("race.event", timeout=10)
    while ev["event"]["kind"] != "finished":
        ev = await c.push("race.event", timeout=10)
    return ev


async def test_v10_sees_who_resigned_v9_frames_unchanged(race_app: App) -> None:
    a = await race_app.client("alice", versions=(9, 10))
    b = await race_app.client("bobby", versions=(10,))
    c = await Client.connect(race_app.url, binary=False)
    await c.hello(name="carol", versions=(8, 9))
    room = await a.request("race.create", variant="fourteen-out", size=3)
    code, race_id = room["race"]["code"], room["race"]["race_id"]
    for cl in (b, c):
        assert (await cl.request("race.join", code=code))["type"] == "race.room"
    assert (await a.request("race.start", race_id=race_id))["type"] == "race.room"
    _, sb, _ = await start_race(race_app, a, b, c)

    # bobby gives up: both other racers are told his game is over; only version 10 says how.
    assert (await b.request("resign", game_id=sb["game_id"]))["type"] == "finished"
    seen_by_a = await progress_of(a, b.player_id)
    assert seen_by_a["event"]["resigned"] is True and seen_by_a["event"]["stuck"] is True
    seen_by_c = await progress_of(c, b.player_id)
    assert list(seen_by_c["event"]) == list(V9_PROGRESS), "no new field for version 9"
    assert raw_frame(c, seen_by_c) == compact(
        {
            "type": "race.event",
            "race_id": race_id,
            "version": seen_by_a["version"],
            "event": {k: seen_by_a["event"][k] for k in V9_PROGRESS},
        }
    ), "version 9 gets byte for byte the frame it got before version 10"

    # The race's racer rows: bobby resigned, alice did not; nothing of it for version 9.
    rows = {r["name"]: r for r in (await a.request("race.get", race_id=race_id))["race"]["racers"]}
    assert rows["bobby"]["resigned"] is True and rows["bobby"]["stuck"] is True
    assert rows["alice"]["resigned"] is False and rows["carol"]["resigned"] is False
    old = await c.request("race.get", race_id=race_id, since=0)
    assert not has_resigned(old), "version 9 rows and logged events carry no `resigned`"
    assert any(e["kind"] == "progress" and e["stuck"] for e in old["events"])
    new = await b.request("race.get", race_id=race_id, since=0)
    logged = [e for e in new["events"] if e["kind"] == "progress" and e["stuck"]]
    assert logged and logged[-1]["resigned"] is True, "the event log says it to version 10"

    # Nobody else plays: the time limit ends the race. The results say who resigned.
    race_app.clock.advance(61_000)
    ended = await finished_event(a)
    results = {r["name"]: r for r in ended["event"]["results"]}
    assert results["bobby"]["resigned"] is True and not results["bobby"]["forfeited"]
    assert results["alice"]["resigned"] is False and results["carol"]["resigned"] is False
    old_end = await finished_event(c)
    assert not has_resigned(old_end)
    assert all(list(r) == list(V9_RESULT) for r in old_end["event"]["results"])
    assert raw_frame(c, old_end) == compact(
        {
            **{k: ended[k] for k in ("type", "race_id", "version")},
            "event": {
                "kind": "finished",
                "reason": "time limit",
                "results": [{k: r[k] for k in V9_RESULT} for r in ended["event"]["results"]],
            },
        }
    )
    final = (await a.request("race.get", race_id=race_id))["race"]
    assert {r["name"]: r["resigned"] for r in final["racers"]} == {
        "alice": False,
        "bobby": True,
        "carol": False,
    }
    # Every frame version 9 got in the whole race: not one `resigned`.
    assert not any(has_resigned(m) for m in c.seen)
    for cl in (a, b, c):
        await cl.close()


async def test_spectators_see_resigned_from_version_10(race_app: App) -> None:
    a = await race_app.client("dora", versions=(10,))
    b = await race_app.client("eddie", versions=(10,))
    await a.request("race.queue", variant="fourteen-out")
    await b.request("race.queue", variant="fourteen-out")
    race_id = (await a.push("race.update"))["race"]["race_id"]
    _, sb = await start_race(race_app, a, b)
    assert (await b.request("resign", game_id=sb["game_id"]))["type"] == "finished"
    await progress_of(a, b.player_id)
    new = await race_app.client("fiona", versions=(10,))
    old = await race_app.client("gusto", versions=(9,))
    watching = await new.request("race.watch", race_id=race_id)
    rows = {r["name"]: r for r in watching["race"]["racers"]}
    assert rows["eddie"]["resigned"] is True and rows["dora"]["resigned"] is False
    listed = await new.request("race.list", variant="fourteen-out")
    mine = [r for r in listed["races"] if r["race_id"] == race_id]
    assert mine and {r["name"]: r["resigned"] for r in mine[0]["racers"]}["eddie"] is True
    old_watch = await old.request("race.watch", race_id=race_id)
    assert old_watch["type"] == "race.watching" and not has_resigned(old_watch)
    assert not has_resigned(await old.request("race.list", variant="fourteen-out"))
    for cl in (a, b, new, old):
        await cl.close()


async def test_a_forfeit_is_not_a_resignation_and_a_reattach_speaks_its_version(
    race_app: App,
) -> None:
    """A racer gone beyond the grace is closed as resigned on the server, but the race says
    `forfeited`, never `resigned`; the `race.update` of a re-attaching `hello` is in the shape
    of the version that `hello` negotiated."""
    a = await race_app.client("hanna", versions=(10,))
    b = await race_app.client("ivo", versions=(10,))
    c = await race_app.client("jules", versions=(10,))
    room = await a.request("race.create", variant="fourteen-out", size=3)
    race_id = room["race"]["race_id"]
    for cl in (b, c):
        await cl.request("race.join", code=room["race"]["code"])
    await a.request("race.start", race_id=race_id)
    _, sb, _ = await start_race(race_app, a, b, c)
    assert (await b.request("resign", game_id=sb["game_id"]))["type"] == "finished"
    await progress_of(a, b.player_id)
    await c.close()
    rows: dict[str, dict[str, Any]] = {}
    for _ in range(12):  # steps shorter than a presence mark lasts, the race clock ticking
        race_app.clock.advance(2_000)
        await race_app.services.race_clock.tick(sweep=True)
        state = await a.request("race.get", race_id=race_id)
        rows = {r["name"]: r for r in state["race"]["racers"]}
        if rows["jules"]["forfeited"]:
            break
    assert rows["jules"]["forfeited"] is True and rows["jules"]["resigned"] is False
    assert rows["ivo"]["resigned"] is True and rows["hanna"]["resigned"] is False
    stored = await race_app.services.races.load(race_id)  # as Redis holds it
    assert not stored.progress_of(c.player_id).resigned, "a forfeit is stored as no resignation"
    assert stored.progress_of(b.player_id).resigned

    # ivo comes back on two devices: hello re-attaches each, in the shape of its version.
    for versions, told in (((9,), False), ((10,), True)):
        again = await Client.connect(race_app.url)
        await again.hello(token=b.token, versions=versions)
        update = await again.push("race.update")
        assert has_resigned(update) is told, versions
        if told:
            assert {r["name"]: r["resigned"] for r in update["race"]["racers"]}["ivo"] is True
        await again.close()

    race_app.clock.advance(61_000)
    ended = await finished_event(a)
    results = {r["name"]: r for r in ended["event"]["results"]}
    assert results["jules"]["forfeited"] is True and results["jules"]["resigned"] is False
    assert results["ivo"]["resigned"] is True
    for cl in (a, b):
        await cl.close()
