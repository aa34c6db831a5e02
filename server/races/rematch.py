"""Rematches (protocol 7): after a race is over, one of its racers asks for another.

`Rematches.ask` opens a private room (`RaceService.create_room`: casual like every private
room, counted against the asker's rooms per hour, the one-rating-per-pair-per-day rule
untouched) for the race's variant and size, and offers it to the race's other racers: a
``race.rematch_offer`` push on each one's player channel (`pubsub.PlayerPush`), to their
sessions speaking version 7, wherever they are. One rematch room per race: a second racer
asking joins the first one's room. The others accept with ``race.join`` and the offer's code,
or decline (`decline`): the asker hears ``race.rematch_declined``; once every invited racer
has declined, or the offer expired (`OFFER_MS`) with nobody in the room but the asker
(`sweep`, run by the race clock), the room is closed as if its creator left it.

Keys (`server.redis.keys`, all under ``{rooms}``): ``rematch:<race_id>`` the race's rematch
room, ``offer:<room id>`` the offer (hash: of, by, invited, expires_at, one ``d:<pid>``
field per racer who declined), ``offers`` the open offers by expiry.
"""

from __future__ import annotations

import asyncio
from typing import Final, cast

import redis.asyncio

import protocol as p
from server.races.model import RaceStatus
from server.races.service import RaceService
from server.redis import keys, pubsub
from server.runtime.clock import Clock
from server.runtime.errors import Conflict, NotFound, translate_redis_errors

__all__ = ["OFFER_MS", "Rematches"]

#: How long the other racers have to take a rematch offer.
OFFER_MS: Final = 60_000
#: How long the rematch records of a race are kept (a race is kept 7 days).
KEEP_MS: Final = 7 * 86_400_000


class Rematches:
    """Rematch rooms and their offers. ``redis`` must use ``decode_responses=True``."""

    def __init__(self, races: RaceService, redis: redis.asyncio.Redis, clock: Clock) -> None:
        self._races = races
        self._r = redis
        self._clock = clock

    @translate_redis_errors
    async def ask(self, pid: str, name: str, race_id: str) -> str:
        """The rematch room of ``race_id`` for its racer ``pid``: made now and offered to the
        others, or the one another racer made (joined). NotFound for a race the player was
        not in, Conflict for a race not over or a rematch already under way."""
        old = await self._races.load(race_id)
        if pid not in old.names():
            raise NotFound("no such race of yours")
        if old.status is not RaceStatus.FINISHED:
            raise Conflict("the race is not over yet")
        for _ in range(2):
            room_id = cast(str | None, await self._r.get(keys.rematch_room(race_id)))
            if room_id is not None:
                return await self._join(pid, name, room_id)
            room_id = await self._races.create_room(pid, name, old.variant, max(2, len(old.racers)))
            if await self._r.set(keys.rematch_room(race_id), room_id, nx=True, px=KEEP_MS):
                await self._offer(old.pids(), pid, name, race_id, room_id, old.variant)
                return room_id
            await self._races.leave(pid)  # another racer's room came first: join theirs
        raise Conflict("the rematch kept changing; ask again")

    async def _join(self, pid: str, name: str, room_id: str) -> str:
        try:
            room = await self._races.load(room_id)
        except NotFound:
            room = None
        if room is None or room.status is not RaceStatus.OPEN or room.code is None:
            raise Conflict("the rematch of that race is over or under way already")
        if pid not in room.names():
            await self._races.join_room(pid, name, room.code)
        return room_id

    async def _offer(
        self, pids: list[str], by: str, name: str, race_id: str, room_id: str, variant: str
    ) -> None:
        room = await self._races.load(room_id)
        assert room.code is not None  # a private room has its code
        expires = self._clock.now_ms() + OFFER_MS
        invited = [q for q in pids if q != by]
        key = keys.rematch_offer(room_id)
        async with self._r.pipeline(transaction=False) as pipe:
            pipe.hset(
                key,
                mapping={
                    "of": race_id,
                    "by": by,
                    "invited": " ".join(invited),
                    "expires_at": expires,
                },
            )
            pipe.pexpire(key, KEEP_MS)
            await pipe.execute()
        await self._r.zadd(keys.rematch_offers(), {room_id: expires})
        offer = p.RematchOffer(
            race_id=room_id,
            rematch_of=race_id,
            variant=variant,
            code=room.code,
            player_id=by,
            name=name,
            expires_at=expires,
        )
        await self._publish({q: offer for q in invited})

    async def _publish(self, pushes: dict[str, pubsub.PlayerPushBody]) -> None:
        # Separate PUBLISHes, sent together: a Redis Cluster pipeline refuses PUBLISH.
        await asyncio.gather(
            *(
                self._r.publish(
                    keys.player_channel(q),
                    pubsub.encode(pubsub.PlayerPush(player_id=q, push=push)),
                )
                for q, push in pushes.items()
            )
        )

    @translate_redis_errors
    async def decline(self, pid: str, name: str, room_id: str) -> None:
        """``pid`` declines the rematch offered in ``room_id``: its asker is told; the room
        is closed once every invited racer declined. NotFound when nothing was offered to
        ``pid`` there (a malformed room id too, as `RaceStore.load` answers it), Conflict when
        the rematch has started or ``pid`` is in the room."""
        if not keys.valid_race_id(room_id):
            raise NotFound("no rematch was offered to you in that room")
        offer = cast(dict[str, str], await self._r.hgetall(keys.rematch_offer(room_id)))
        invited = offer.get("invited", "").split()
        if pid not in invited:
            raise NotFound("no rematch was offered to you in that room")
        room = await self._races.load(room_id)
        if room.status is not RaceStatus.OPEN:
            raise Conflict("too late: the rematch is under way or over")
        if pid in room.names():
            raise Conflict("you are in that room: leave it with race.leave")
        await self._r.hset(keys.rematch_offer(room_id), f"d:{pid}", "1")
        by = offer["by"]
        await self._publish({by: p.RematchDeclined(race_id=room_id, player_id=pid, name=name)})
        declined = {f[2:] for f in offer if f.startswith("d:")} | {pid}
        if declined >= set(invited):
            await self._close(room_id, by)

    async def _close(self, room_id: str, by: str) -> None:
        """Close a rematch room nobody took (its asker leaves it, which closes it)."""
        await self._r.zrem(keys.rematch_offers(), room_id)
        room = await self._races.load(room_id)
        if room.status is RaceStatus.OPEN and set(room.names()) <= {by}:
            await self._races.leave(by)

    @translate_redis_errors
    async def sweep(self) -> list[str]:
        """Close the rematch rooms whose offer expired with nobody but their asker in them
        (the race clock runs this); returns their ids. An offer taken stays as it is."""
        now = self._clock.now_ms()
        due = cast(list[str], await self._r.zrangebyscore(keys.rematch_offers(), 0, now))
        closed = []
        for room_id in due:
            by = cast(str | None, await self._r.hget(keys.rematch_offer(room_id), "by"))
            try:
                room = await self._races.load(room_id)
            except NotFound:
                room = None
            open_alone = room is not None and room.status is RaceStatus.OPEN
            if by and open_alone and room is not None and set(room.names()) <= {by}:
                await self._races.leave(by)
                closed.append(room_id)
            await self._r.zrem(keys.rematch_offers(), room_id)
        return closed
