"""Every key family shares one hash slot, and every script call names keys of one slot.

Statically, over every key builder in `server.redis.keys`; and on a real three-master cluster,
by MONITORing every master while the service plays daily games, a matched race, a private
room and a queue: each EVALSHA/EVAL must name keys of a single slot, owned by the master
that ran it, and every script the services register must be among them.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import inspect
import re
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest_asyncio
import redis.asyncio
from redis.commands.core import AsyncScript
from redis.crc import key_slot

from engine import from_view
from server.config import Config
from server.redis import keys
from server.redis.batch import LuaScript
from server.runtime.clock import ManualClock
from server.runtime.metrics import Metrics
from server.services import Services
from tests.support.app import serve
from tests.support.localcluster import LocalCluster
from tests.support.lookahead import move_that_goes_on
from tests.support.races import clear_a_card, race_config, start_race
from tests.support.wsclient import Client

pytest_plugins = ["tests.support.cluster"]

DAY = dt.date(2030, 6, 15)
RACE = "20300615-abcdef123456"
SAMPLES: dict[str, object] = {
    "variant": "fourteen-out",
    "date": DAY,
    "pid": "p_1",
    "race_id": RACE,
    "code": "ABCDEF",
    "size": 4,
}
_TAG = re.compile(r"\{([^{}]+)\}")


def slot(key: str) -> int:
    return key_slot(key.encode())


def built_keys() -> dict[str, str]:
    """name -> key, for every public key builder in `server.redis.keys` (channels and SCAN
    patterns are not keys)."""
    out: dict[str, str] = {}
    for name, fn in inspect.getmembers(keys, inspect.isfunction):
        if name.startswith("_") or fn.__module__ != keys.__name__:
            continue
        params = list(inspect.signature(fn).parameters)
        if any(p not in SAMPLES for p in params):
            continue
        value = fn(*(SAMPLES[p] for p in params))
        if (
            isinstance(value, str)
            and value.startswith(keys.PREFIX)
            and "chan:" not in value
            and not value.endswith("*")
        ):
            out[name] = value
    return out


def test_every_key_has_one_hash_tag() -> None:
    found = built_keys()
    assert len(found) >= 25, sorted(found)  # the builders were found
    for name, key in found.items():
        tags = _TAG.findall(key)
        assert len(tags) == 1 and key.index("{") < key.index("}"), (name, key)


def test_keys_used_together_share_a_slot() -> None:
    found = built_keys()
    families: dict[str, list[str]] = {}
    for name, key in found.items():
        families.setdefault(_TAG.findall(key)[0], []).append(name)
    for tag, names in families.items():
        assert len({slot(found[n]) for n in names}) == 1, (tag, names)
    # A race game finishes in one script with its race's standings; a daily game in two
    # steps, each over one slot: its record and log, then its board and the board's outbox.
    r = keys.parse_game_id(keys.race_game_id(RACE, "p_1"))
    assert isinstance(r, keys.RaceGameKeys)
    assert len({slot(x) for x in (r.game, r.log, r.times, r.board, r.members, r.entries)}) == 1
    d = keys.parse_game_id(keys.daily_game_id("fourteen-out", DAY, "p_1"))
    assert isinstance(d, keys.DailyGameKeys)
    assert len({slot(x) for x in (d.game, d.log, d.times)}) == 1
    assert len({slot(x) for x in (d.board, d.members, d.entries, d.outbox)}) == 1
    # A tier game and a catch-up game: the same two steps on their own tags; a won tier's
    # crowns in one script over the player's history keys (crowns, months, the outbox).
    for game_id in (
        keys.tier_game_id("fourteen-out", DAY, "p_1", "hard"),
        keys.tier_game_id("fourteen-out", DAY, "p_1", "easy", catchup=True),
    ):
        t = keys.parse_game_id(game_id)
        assert isinstance(t, keys.DailyGameKeys) and t.tier in ("hard", "easy")
        assert len({slot(x) for x in (t.game, t.log, t.times)}) == 1
        assert len({slot(x) for x in (t.board, t.members, t.entries, t.outbox)}) == 1
    crowns = (keys.crowns("p_1", 2030, 6), keys.crown_months("p_1"), keys.history_pending("p_1"))
    assert len({slot(x) for x in crowns}) == 1
    assert slot(keys.daily_tiers("fourteen-out", DAY)) == slot(
        keys.daily_board("fourteen-out", DAY)
    )


def test_days_races_and_games_spread_over_slots() -> None:
    """Boards of different variants and days, different races, and the games of one board
    are not pinned to one slot (so not to one master)."""
    boards = {
        slot(keys.daily_board(v, DAY + dt.timedelta(d)))
        for v in ("fourteen-out", "triple-deck")
        for d in range(10)
    }
    races = {slot(keys.race(keys.new_race_id(1_907_755_200_000))) for _ in range(20)}
    assert len(boards) >= 15 and len(races) >= 15
    # One board's games, too: a hot daily board does not pin its moves to one master.
    games = {slot(keys.daily_game("fourteen-out", DAY, f"p{i}")) for i in range(20)}
    assert len(games) >= 15


def registered_scripts(services: Services) -> dict[str, AsyncScript | LuaScript]:
    """Every script object reachable from the services (redis-py's, and the `Batcher`'s
    `LuaScript`s), by the path to it."""
    found: dict[str, AsyncScript | LuaScript] = {}
    seen: set[int] = set()

    def walk(obj: object, path: str, depth: int) -> None:
        if id(obj) in seen or depth > 5:
            return
        seen.add(id(obj))
        if isinstance(obj, (AsyncScript, LuaScript)):
            found[path] = obj
            return
        if not type(obj).__module__.startswith("server."):
            return
        names = list(getattr(obj, "__dict__", {}))
        names += [n for c in type(obj).__mro__ for n in getattr(c, "__slots__", ())]
        for name in names:
            if hasattr(obj, name):
                walk(getattr(obj, name), f"{path}.{name}", depth + 1)

    walk(services, "services", 0)
    return found


class Monitors:
    """MONITOR on every master: each script call seen, with the port that ran it."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self.calls: list[tuple[int, list[str]]] = []
        self.ready = 0
        self._tasks: list[asyncio.Task[None]] = []

    async def _watch(self, port: int) -> None:
        client = redis.asyncio.Redis(host="127.0.0.1", port=port, decode_responses=True)
        try:
            async with client.monitor() as m:
                self.ready += 1
                while True:
                    info = await m.next_command()
                    words = info["command"].split(" ")
                    if info["client_type"] != "lua" and words[0].upper().startswith("EVAL"):
                        self.calls.append((port, words))
        finally:
            await client.aclose()

    async def __aenter__(self) -> Monitors:
        self._tasks = [asyncio.create_task(self._watch(n.port)) for n in self.cluster.nodes]
        while self.ready < len(self._tasks):
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.sleep(0.2)  # the last commands reach the monitors
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def play_everything(config: Config) -> None:
    """Daily games, a matched race to its end (watched), a private room, a queue left again."""
    async with serve(config) as app:
        a, b, c = [await app.client(n) for n in ("sl-ann", "sl-ben", "sl-cat")]
        for variant in ("fourteen-out", "triple-triangle"):
            g = await a.request("daily.start", variant=variant)
            move = next(iter(from_view(g["view"]).legal_moves()))
            app.clock.advance(500)
            assert (await a.request("move", game_id=g["game_id"], move=str(move)))[
                "type"
            ] == "moved"
            assert (await a.request("hint", game_id=g["game_id"]))["type"] == "hint"
            assert (await a.request("resign", game_id=g["game_id"]))["type"] == "finished"
            for kind in ("leaderboard.top", "leaderboard.around", "leaderboard.rank"):
                assert (await b.request(kind, variant=variant))["type"] != "error"
        await a.request("race.queue", variant="triple-deck", size=2)
        await b.request("race.queue", variant="triple-deck", size=2)
        sa, sb = await start_race(app, a, b)
        watching = await c.request("race.watch", race_id=sa["race_id"])  # spectators' counts
        assert watching["type"] == "race.watching", watching
        for cl, s in ((a, sa), (b, sb)):  # real attempts: the race is rated, its win counted
            await clear_a_card(cl, s["game_id"])
        for cl, s in ((a, sa), (b, sb)):
            resigned = await cl.request("resign", game_id=s["game_id"])
            assert resigned["type"] == "finished", resigned
        fin = await a.push("race.event")
        while fin["event"]["kind"] != "finished":
            fin = await a.push("race.event")
        for board in ("rating", "wins"):
            assert (await a.request("race.top", variant="triple-deck", board=board))[
                "type"
            ] == "race.board"
        assert (await a.request("race.rank", variant="triple-deck"))["type"] == "race.rank"
        room = await c.request("race.create", variant="triple-triangle")
        guest = await Client.connect(app.url)
        await guest.hello(name="sl-dan")
        assert (await guest.request("race.join", code=room["race"]["code"]))["type"] == "race.room"
        assert (await guest.request("race.leave"))["type"] == "race.left"
        assert (await c.request("race.leave"))["type"] == "race.left"
        # The registry's scripts beyond the account's creation: a token rotated, and the
        # accounts-per-address quota (on in this scenario's config).
        assert (await c.request("race.queue", variant="triple-deck"))["type"] == "race.queued"
        assert (await c.request("race.leave"))["type"] == "race.left"
        # The registry's scripts beyond an account's creation: the accounts-per-address quota
        # (on in this scenario's config) and a token rotated (protocol 5).
        five = await Client.connect(app.url)
        await five.hello(name="sl-eve", versions=(5,))
        rotated = await five.request("token.rotate")
        assert rotated["type"] != "error", rotated
        # Protocol 7: a sign-in code issued and redeemed, a free game played and finished.
        seven = await Client.connect(app.url)
        await seven.hello(name="sl-fay", versions=(7,))
        code = await seven.request("signin.code")
        device = await Client.connect(app.url)
        signed = await device.request("signin.redeem", versions=[7], code=code["code"])
        assert signed["type"] == "welcome", signed
        free = await device.request("free.start", variant="fourteen-out")
        first = move_that_goes_on(free["view"])  # a random deal: its first move may end it
        assert (await device.request("move", game_id=free["game_id"], move=first))[
            "type"
        ] == "moved"
        assert (await device.request("resign", game_id=free["game_id"]))["type"] == "finished"
        # Protocol 9: the devices listed and one signed out; named redemptions past the
        # account's tries void its live code.
        nine = await Client.connect(app.url)
        await nine.hello(token=seven.token, versions=(9,))
        listed = await nine.request("devices")
        assert listed["type"] == "devices", listed
        newer = next(d for d in listed["devices"] if d["how"] == "code")
        gone = await nine.request("device.revoke", device=newer["device"])
        assert gone["type"] == "devices", gone
        await nine.request("signin.code")
        for _ in range(6):
            guess = await Client.connect(app.url)
            await guess.request("signin.redeem", versions=[9], code="ZZZZ-ZZZZ", name="sl-fay")
            await guess.close()


@pytest_asyncio.fixture
async def services(cluster_client: redis.asyncio.Redis) -> AsyncIterator[Services]:
    yield Services.build(Config(), ManualClock(0), cluster_client, Metrics())


async def test_every_script_call_on_the_cluster_names_one_slot(
    redis_cluster: LocalCluster,
    cluster_url: str,
    cluster_client: redis.asyncio.Redis,
    services: Services,
    tmp_path: Path,
) -> None:
    scripts = registered_scripts(services)
    assert len(scripts) >= 10, scripts
    for script in scripts.values():  # on every master: every call below is an EVALSHA
        await cluster_client.script_load(
            script.source if isinstance(script, LuaScript) else script.script
        )
    config = replace(
        race_config(cluster_url, tmp_path),
        daily_secret=b"slots",
        accounts_per_address_hour=100,
        signin_attempts_per_address_hour=100,
        signin_attempts_per_account_hour=5,
        free_games_per_hour=100,
    )
    async with Monitors(redis_cluster) as seen:
        await play_everything(config)
    shas_run: set[str] = set()
    assert seen.calls
    for port, words in seen.calls:
        assert words[0].upper() == "EVALSHA", words[0]
        numkeys = int(words[2])
        named = words[3 : 3 + numkeys]
        slots = {slot(k) for k in named}
        assert len(slots) == 1, words[: 3 + numkeys]
        (only,) = slots
        assert redis_cluster.node_for_slot(only).port == port, words[: 3 + numkeys]
        shas_run.add(words[1])
    # Every script the services register ran in the scenario (and was checked above), but
    # the ones only timeouts and crashes reach; their keys are one race's (`race_tag`).
    untested = {path for path, script in scripts.items() if script.sha not in shas_run}
    assert untested <= UNREACHED, sorted(untested - UNREACHED)


#: Scripts this scenario does not reach, each over one key family (checked statically by
#: test_keys_used_together_share_a_slot): forfeits (a racer gone past the grace period; one
#: race's keys), the takeover of an end left `finishing` by a stopped process and an event
#: emitted on its own (every change now announces itself in its own script; one race's keys),
#: a past day's rank frozen into a profile (one player's history keys), and the fair-play
#: screen's read of a finishing game (the scenario's app screens nothing; one game's keys),
#: and the crowns of a won tier.
UNREACHED = {
    "services.store._screen_read",
    "services.races.store._forfeit",
    "services.races.store._forfeit_if_gone",
    "services.races.store._take_over",
    "services.races.store._emit",
    "services.store.history._final_rank",
    # A won tier's crowns (the scenario wins no game): one player's history keys, checked
    # statically above.
    "services.store.crowns._award",
    # The renewal of a tiers lock, due only while a certification rates past 100 s: one key.
    "services.deals._renew",
    # A won daily game's history with its crowns (the scenario wins no game) and a "screen
    # due" result held for a marked account (the scenario screens nothing): one player's
    # history keys, one game's keys.
    "services.store.history._record_crowned",
    "services.store.entries._hold_due",
    # A held race result listed on the review desk (the scenario screens nothing): the desk
    # and the race day's listed results, both `{fp}`.
    "services.store._hold_race_lua",
}
