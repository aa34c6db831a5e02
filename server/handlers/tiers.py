"""Tiers per day, catch-up games and the month calendar (protocol version 8, `TIER_ROUTES`).

The medium tier of a (variant, day) is the daily game (``d.`` id, the daily board, the
history); easy, hard and expert are games of their own (``t.`` ids, a board each), certified
ahead by `server.games.deals.DailyDeals.prepare_tiers_ahead`, never on a request. A past day
of the current month, from the day the player's account was created (UTC) on, can be played
as a catch-up game of any tier the player did not start on the day (``c.`` ids): on no board,
in no history, its result marked ``catchup``; a won tier gives the month's crowns either way
(`server.players.crowns`). A catch-up game plays the day's catch-up deal of its tier, not the
day's own deal (whose seed is public once the day closes): certified in the background like
the tiers, secret until the month is closed.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Mapping, Sequence

import protocol as p
from engine import VARIANT_IDS
from server.boards.leaderboard import board_expire_at
from server.games.daily import utc_date
from server.games.deals import DayTiers, Deal, TierDeal
from server.games.monthindex import MonthGame
from server.games.service import LiveGame
from server.games.store import GameRecord
from server.players.crowns import BADGES, badge_for
from server.redis import keys
from server.runtime.errors import NotFound, SolverBusy
from server.services import Services
from server.transport.router import Router
from server.transport.session import Session

__all__ = ["TIER_ROUTES", "calendar_get", "day_tiers", "games_of_day", "start_tier_game"]


def _month_days(year: int, month: int) -> list[dt.date]:
    return [dt.date(year, month, d) for d in range(1, calendar.monthrange(year, month)[1] + 1)]


def same_month(a: dt.date, b: dt.date) -> bool:
    return (a.year, a.month) == (b.year, b.month)


async def _tier_seed(
    s: Services, variant: str, date: dt.date, tier: str, *, today: bool
) -> tuple[int, int | None]:
    """(seed, par) of a tier's deal of ``date``; never certifies (`NotFound` when the tier
    has no deal that day, `SolverBusy` while today's tiers are being certified)."""
    deals = s.deals
    if tier == keys.DAILY_TIER:
        if today or not deals.certify:  # today's is computed ahead; uncertified costs nothing
            deal: Deal | None = await deals.get(variant, date)
        else:
            deal = await deals.peek(variant, date)
        if deal is None:
            raise NotFound(f"no {tier} deal of {variant} on {date.isoformat()}")
        return deal.seed, deal.par
    found = await deals.tiers_for_request(variant, date)
    if found is None:
        if today:
            raise SolverBusy(
                f"the {date.isoformat()} tiers of {variant} are still being certified; "
                "retry in a minute"
            )
        raise NotFound(f"no tiers of {variant} were dealt on {date.isoformat()}")
    tier_deal = found.deals.get(tier)
    if tier_deal is None:
        raise NotFound(
            f"no {tier} deal of {variant} on {date.isoformat()}: none was found "
            "in the certification's budget (docs/deals.md)"
        )
    return tier_deal.seed, tier_deal.par


async def start_tier_game(
    session: Session, variant: str, tier: str, date_text: str | None
) -> tuple[LiveGame, int | None]:
    """`daily.start` with a ``tier`` or a ``date`` (version 8): the game and its par."""
    s = session.services
    me = session.require_player()
    pid = me.id
    today = utc_date(s.clock.now_ms())
    date = dt.date.fromisoformat(date_text) if date_text else today
    if date == today:
        seed, par = await _tier_seed(s, variant, date, tier, today=True)
        if tier == keys.DAILY_TIER:
            return await s.games.start_daily(variant, date, pid, seed), par
        return await s.games.start_tier(variant, date, pid, tier, seed), par
    if date > today or not same_month(date, today):
        raise p.BadRequest(
            f"catch-up games are for the past days of this month ({today:%Y-%m}); "
            f"{date.isoformat()} is not one"
        )
    joined = utc_date(me.created_at_ms)
    if date < joined:
        raise p.BadRequest(
            f"catch-up games are open from the day you joined ({joined.isoformat()}) on; "
            f"{date.isoformat()} is before it"
        )
    # One attempt per tier and day: a tier started on its day answers that game, a catch-up
    # game started before answers itself with its own deal (resume).
    ids = [keys.tier_game_id(variant, date, pid, tier, catchup=c) for c in (False, True)]
    existing = next((r for r in await s.store.get_many(ids) if r is not None), None)
    if existing is not None:
        live = await s.games.current(existing.game_id, pid)
        par = await game_par(s, live.record)
    else:
        seed, par = await _catchup_seed(s, variant, date, tier)
        live = await s.games.start_tier(variant, date, pid, tier, seed, catchup=True)
    if s.games.day_over(live) and not live.record.finished:  # closed lazily when read
        live = await s.games.close_day(live.record.game_id, pid, me.name)
    return live, par


async def _catchup_seed(
    s: Services, variant: str, date: dt.date, tier: str
) -> tuple[int, int | None]:
    """(seed, par) of the day's catch-up deal of a tier: of its own secret sequence, never
    the day's published deal; never certified here (`SolverBusy` until the background pass
    has stored it, `NotFound` when the tier has none)."""
    found = await s.deals.tiers_for_request(variant, date, catchup=True)
    if found is None:
        raise SolverBusy(
            f"the {date.isoformat()} catch-up deals of {variant} are still being certified; "
            "retry later"
        )
    tier_deal = found.deals.get(tier)
    if tier_deal is None:
        raise NotFound(
            f"no {tier} catch-up deal of {variant} on {date.isoformat()}: none was found in "
            "the certification's budget (docs/deals.md)"
        )
    return tier_deal.seed, tier_deal.par


def _catchup_deal(found: DayTiers | None, tier: str, seed: int) -> TierDeal | None:
    """The catch-up deal a catch-up game of ``seed`` plays; None for a game dealt before the
    day had catch-up deals (it kept the day's own deal, and its par)."""
    tier_deal = found.deals.get(tier) if found else None
    return tier_deal if tier_deal is not None and tier_deal.seed == seed else None


async def _par(s: Services, variant: str, date: dt.date, tier: str) -> int | None:
    if tier == keys.DAILY_TIER:
        deal = await s.deals.peek(variant, date)
        return deal.par if deal else None
    found = await s.deals.peek_tiers(variant, date)
    tier_deal = found.deals.get(tier) if found else None
    return tier_deal.par if tier_deal else None


async def game_par(s: Services, record: GameRecord) -> int | None:
    """The par of a daily, tier or catch-up game's deal."""
    tier = record.tier or keys.DAILY_TIER
    if record.catchup:
        found = await s.deals.peek_tiers(record.variant, record.date, catchup=True)
        deal = _catchup_deal(found, tier, record.seed)
        if deal is not None:
            return deal.par
    return await _par(s, record.variant, record.date, tier)


def _state(record: GameRecord, now: int) -> str:
    r = record.result
    if r is not None:
        return "won" if r.won else "lost"
    return "lost" if now >= record.day_end_ms else "playing"


async def day_tiers(
    s: Services,
    pid: str,
    dates: Sequence[dt.date],
    today: dt.date,
    variants: Sequence[str] = VARIANT_IDS,
    *,
    played: bool = True,
    only: Sequence[MonthGame] | None = None,
    known: Mapping[MonthGame, GameRecord] | None = None,
    dealt: bool = True,
) -> dict[dt.date, tuple[p.DayTier, ...]]:
    """Each variant's tiers of each of ``dates`` with the player's state in each.
    ``played=False``: the player has no game yet (created by this very `hello`), so none
    of the 48 records a day is read (a pipeline of HGETALLs that cost a new player's
    `welcome` more server CPU than 10 moves: docs/performance.md). ``only``: the
    only games that may exist (the month index's), the only records read. ``known``: the
    records of every game the player has of ``dates``, read already (`games_of_day`; none:
    the cells every player without games shares). ``dealt=False``: the days' deals have all
    expired (`_deals_gone`), none is read."""
    now = s.clock.now_ms()
    shown = [d for d in dates if d <= today]
    pairs = [(v, d) for d in shown for v in variants] if dealt else []
    deals, tiers = await s.deals.peek_days(pairs)
    catchups = await s.deals.peek_catchup_days([(v, d) for v, d in pairs if d < today])
    # No record to read (a new player; a returning one whose index names no game of
    # ``dates``, as on their first visit of the day): the same cells for all (`_Unplayed`).
    unplayed = not played or (known is not None and not known)
    if unplayed:
        key = (tuple(dates), today, tuple(variants), s.deals.certify)
        dealt_now = tuple(x.get(d) for d in pairs for x in (deals, tiers, catchups))
        if (hit := _UNPLAYED.get(key, dealt_now)) is not None:
            return hit
    wanted = list(only) if only is not None else _possible_games(shown, variants)
    records: dict[tuple[str, dt.date, str, bool], GameRecord] = {}
    if known is not None:
        records = {(g.variant, g.date, g.tier, g.catchup): r for g, r in known.items()}
    elif played and wanted:
        found = await s.store.get_many([g.game_id(pid) for g in wanted])
        for g, record in zip(wanted, found, strict=True):
            if record is not None:
                records[(g.variant, g.date, g.tier, g.catchup)] = record
    out: dict[dt.date, tuple[p.DayTier, ...]] = {}
    for d in dates:
        cells: list[p.DayTier] = []
        for v in variants:
            for t in keys.TIER_NAMES:
                if d > today:
                    cells.append(p.DayTier(variant=v, tier=t, state="upcoming"))
                    continue
                cells.append(
                    _cell(
                        s,
                        (v, d, t),
                        today,
                        now,
                        records,
                        deals.get((v, d)),
                        tiers.get((v, d)),
                        catchups.get((v, d)),
                    )
                )
        out[d] = tuple(cells)
    if unplayed:
        _UNPLAYED.keep(key, dealt_now, out)
    return out


class _Unplayed:
    """The tier cells of a player without games (a new player's `welcome`), as last built.

    Without records a cell depends only on the day, the variants, whether deals are certified
    and the deals found (`DailyDeals` keeps each one as a single object until it changes), so
    one build serves every new player of the day: it cost a `hello` about 60 µs of server CPU
    (24 cells, 48 possible games), a quarter of its handler (docs/performance.md, issue #30).
    The deals are compared by identity: a deal or tier certified since, another day or another
    app's deals (tests run several in one process) build afresh. The cells are frozen
    messages, shared by the replies."""

    __slots__ = ("_cells", "_found", "_key")

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._found: tuple[object, ...] = ()
        self._cells: dict[dt.date, tuple[p.DayTier, ...]] = {}

    def get(
        self, key: tuple[object, ...], found: tuple[object, ...]
    ) -> dict[dt.date, tuple[p.DayTier, ...]] | None:
        if key != self._key or len(found) != len(self._found):
            return None
        if any(a is not b for a, b in zip(found, self._found, strict=True)):
            return None
        return dict(self._cells)  # the caller's own dict; the tuples are shared

    def keep(
        self,
        key: tuple[object, ...],
        found: tuple[object, ...],
        cells: dict[dt.date, tuple[p.DayTier, ...]],
    ) -> None:
        for day in self._cells.values():  # replaced: no `welcome` will carry them again
            p.forget_plain(day)
        self._key, self._found, self._cells = key, found, dict(cells)
        for day in cells.values():  # each new player's `welcome` carries today's
            p.keep_plain(day)


_UNPLAYED = _Unplayed()


async def games_of_day(s: Services, pid: str, day: dt.date) -> dict[MonthGame, GameRecord]:
    """The player's tier games of ``day`` (ranked and catch-up) with their records: those
    the month index names (`MonthIndex.read_day`); a day it has not marked is scanned once
    (its 48 possible games) and marked, so a returning player's every later `welcome` of the
    day reads the index and the games played only."""
    months = s.store.months
    games = await months.read_day(pid, day)
    wanted = sorted(games, key=_order) if games is not None else _possible_games([day], VARIANT_IDS)
    found = await s.store.get_many([g.game_id(pid) for g in wanted])
    records = {g: r for g, r in zip(wanted, found, strict=True) if r is not None}
    if games is None:
        await months.backfill(pid, day.year, day.month, records, day=day)
    return records


def _possible_games(dates: Sequence[dt.date], variants: Sequence[str]) -> list[MonthGame]:
    """Every tier game a player may have of ``dates``: ranked and catch-up, 48 a day."""
    return [
        MonthGame(d, v, t, c)
        for d in dates
        for v in variants
        for t in keys.TIER_NAMES
        for c in (False, True)
    ]


async def _month_games(
    s: Services,
    pid: str,
    days: Sequence[dt.date],
    joined: dt.date,
    today: dt.date,
    variants: Sequence[str],
) -> list[MonthGame]:
    """The player's games of a month's ``days`` (from their month index: those
    they started), for `calendar.get`. Nothing is read for a month whose days are all before
    the account or after today, or whose games have expired; a month the index has not
    marked is scanned once (games started before the index existed) and marked."""
    lo, hi = max(days[0], joined), min(days[-1], today)
    year, month = days[0].year, days[0].month
    if lo > hi or s.store.months.expire_at(year, month) * 1000 <= s.clock.now_ms():
        return []
    games = await s.store.months.read(pid, year, month)
    if games is None:
        span = [lo + dt.timedelta(days=i) for i in range((hi - lo).days + 1)]
        scanned = _possible_games(span, VARIANT_IDS)
        found = await s.store.get_many([g.game_id(pid) for g in scanned])
        games = frozenset(g for g, r in zip(scanned, found, strict=True) if r is not None)
        await s.store.months.backfill(pid, year, month, games)
    return [g for g in sorted(games, key=_order) if lo <= g.date <= hi and g.variant in variants]


def _deals_gone(s: Services, last_day: dt.date) -> bool:
    """Whether every deal of a month up to ``last_day`` has expired: a deal is kept
    `DailyDeals.retention_s` (the retention and 2 days) from when it was dealt, the last
    by the day after the month (a catch-up deal dealt on its last day)."""
    gone_at = board_expire_at(last_day + dt.timedelta(days=3), s.config.leaderboard_retention_days)
    return s.clock.now_ms() >= gone_at * 1000


def _order(g: MonthGame) -> tuple[dt.date, str, str, bool]:
    return g.date, g.variant, g.tier, g.catchup


def _cell(
    s: Services,
    key: tuple[str, dt.date, str],
    today: dt.date,
    now: int,
    records: dict[tuple[str, dt.date, str, bool], GameRecord],
    deal: Deal | None,
    found: DayTiers | None,
    catchups: DayTiers | None = None,
) -> p.DayTier:
    variant, date, tier = key
    par: int | None
    if tier == keys.DAILY_TIER:
        par = deal.par if deal else None
        known, absent = deal is not None, False
    else:
        tier_deal = found.deals.get(tier) if found else None
        par = tier_deal.par if tier_deal else None
        known, absent = found is not None, found is not None and tier_deal is None
    for catchup in (False, True):
        record = records.get((variant, date, tier, catchup))
        if record is not None:
            if catchup and (own := _catchup_deal(catchups, tier, record.seed)) is not None:
                par = own.par  # else dealt before catch-up deals: the day's own deal
            return p.DayTier(
                variant=variant,
                tier=tier,
                state=_state(record, now),
                catchup=catchup,
                game_id=record.game_id,
                par=par,
            )
    if date < today and same_month(date, today):  # open to catch-up: its own deals
        catchup_deal = catchups.deals.get(tier) if catchups else None
        par = catchup_deal.par if catchup_deal else None
        if catchups is None:  # still being certified (uncertified: dealt by the first start)
            state = "pending" if s.deals.certify else "not_played"
        else:
            state = "not_played" if catchup_deal else "absent"
        return p.DayTier(variant=variant, tier=tier, state=state, par=par)
    if absent:
        state = "absent"
    elif known or not s.deals.certify:
        state = "not_played"  # uncertified deals are dealt on request, at no cost
    elif date == today:
        state = "pending"
    else:
        state = "absent"
    return p.DayTier(variant=variant, tier=tier, state=state, par=par)


async def calendar_get(session: Session, req: p.CalendarGet) -> p.ServerMessage:
    me = session.require_player()
    pid = me.id
    if not session.speaks(p.TIERS):
        raise p.ProtocolError(
            f"'calendar.get' needs protocol version {p.TIERS}", code=p.ErrorCode.UNKNOWN_TYPE
        )
    s = session.services
    today = utc_date(s.clock.now_ms())
    if req.month is None:
        year, month = today.year, today.month
    else:
        year, month = int(req.month[:4]), int(req.month[5:])
    if req.variant is not None and req.variant not in VARIANT_IDS:
        raise NotFound(f"unknown variant {req.variant!r}; one of: {', '.join(VARIANT_IDS)}")
    variants = VARIANT_IDS if req.variant is None else (req.variant,)
    days = _month_days(year, month)
    joined = utc_date(me.created_at_ms)  # no catch-up before the account existed
    games = await _month_games(s, pid, days, joined, today, variants)
    dealt = not _deals_gone(s, days[-1])
    cells = await day_tiers(s, pid, days, today, variants, only=games, dealt=dealt)
    crowns = sum((await s.store.crowns.of_month(pid, year, month)).values())
    badge = badge_for(crowns)
    return p.Calendar(
        id=req.id,
        month=f"{year:04d}-{month:02d}",
        today=today.isoformat(),
        days=tuple(
            p.CalendarDay(
                date=d.isoformat(),
                catchup_open=joined <= d < today and same_month(d, today),
                variants=tuple(
                    p.VariantDay(
                        variant=v,
                        tiers=tuple(
                            p.TierCell(tier=c.tier, state=c.state, catchup=c.catchup or None)
                            for c in cells[d]
                            if c.variant == v
                        ),
                    )
                    for v in variants
                ),
            )
            for d in days
        ),
        crowns=crowns,
        badge=badge.value if badge else None,
        thresholds=tuple(n for _, n in BADGES),
    )


#: The calendar (`calendar.get`); `daily.start`'s tiers are in `server.handlers.games`.
TIER_ROUTES = Router().on(p.CalendarGet, calendar_get)
