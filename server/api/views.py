"""The API's JSON bodies: typed shapes (docs/api.md, openapi.json) built from the services'
own types. Nothing here reads Redis; no seed of an open day and no card ever goes in."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import TypedDict

from engine import variant as variant_of
from server.boards.leaderboard import Entry
from server.races.model import RecentRace
from server.races.ratings import RatingRow

__all__ = [
    "BoardEntryJson",
    "BoardJson",
    "DayDealJson",
    "DayJson",
    "DayTierJson",
    "DayTiersJson",
    "RaceBoardJson",
    "RaceBoardRowJson",
    "RecentRaceJson",
    "ReplayJson",
    "ReplayStepJson",
    "VariantTiersJson",
    "board_entry",
    "plain",
    "race_board_row",
    "recent_race",
]


def plain(value: object) -> object:
    """A protocol struct (a frozen dataclass) as plain JSON data: absent optionals left out,
    tuples as lists, enums as their values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, object] = {}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if v is not None:
                out[f.name] = plain(v)
        return out
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    return value


class DayDealJson(TypedDict):
    variant: str
    title: str
    par: int | None
    #: "moves" (a winning line's length) or "score" (the best score found)
    par_kind: str
    certified: bool
    #: Only once the day is closed.
    seed: int | None


class DayJson(TypedDict):
    date: str
    closed: bool
    #: When the day ends (ms since the epoch): no move of its games after it.
    ends_at: int
    deals: list[DayDealJson]


class BoardEntryJson(TypedDict):
    rank: int
    name: str
    won: bool
    cleared: int
    score: int
    time_ms: int
    moves: int
    hints: int
    finished_at: int


class BoardJson(TypedDict):
    variant: str
    date: str
    #: The board's tier ("medium": the daily game's board).
    tier: str
    closed: bool
    par: int | None
    total: int
    offset: int
    limit: int
    entries: list[BoardEntryJson]


class DayTierJson(TypedDict):
    tier: str
    #: "dealt" (its deal exists), "pending" (today's, still being certified) or "absent"
    #: (none was found in the certification's budget, or nothing was dealt that day).
    state: str
    #: Crowns a win of it gives (`server.players.crowns.CROWNS`).
    crowns: int
    par: int | None
    certified: bool
    #: Only once the day is closed.
    seed: int | None
    #: The seed of the day's catch-up deal of the tier (catch-up games play it, not the
    #: day's own deal): only once the day's month is closed (no catch-up game of it is left).
    catchup_seed: int | None


class VariantTiersJson(TypedDict):
    variant: str
    title: str
    par_kind: str
    tiers: list[DayTierJson]


class DayTiersJson(TypedDict):
    date: str
    closed: bool
    ends_at: int
    variants: list[VariantTiersJson]


class RaceBoardRowJson(TypedDict):
    rank: int
    name: str
    rating: int
    wins: int
    losses: int
    played: int


class RaceBoardJson(TypedDict):
    variant: str
    board: str
    date: str | None
    total: int
    offset: int
    limit: int
    entries: list[RaceBoardRowJson]


class RecentRaceJson(TypedDict):
    race_id: str
    variant: str
    finished_at: int
    racers: int
    place: int
    won: bool
    rating_before: int
    rating_after: int


class ReplayStepJson(TypedDict):
    #: The move that led to this position (None: the deal), as logged ("undo" for an undo).
    move: str | None
    #: The same move in card words ("J♦ to the foundation"; None: the deal).
    text: str | None
    #: The board after it, as its player saw it (`Game.view()`: no face-down card, no stock).
    view: dict[str, object]


class ReplayJson(TypedDict):
    game_id: str
    variant: str
    date: str
    name: str
    won: bool
    resigned: bool
    cleared: int
    score: int
    time_ms: int
    steps: list[ReplayStepJson]


def board_entry(e: Entry) -> BoardEntryJson:
    return {
        "rank": e.rank,
        "name": e.name,
        "won": e.won,
        "cleared": e.cleared,
        "score": e.score,
        "time_ms": e.time_ms,
        "moves": e.moves,
        "hints": e.hints,
        "finished_at": e.finished_at_ms,
    }


def race_board_row(row: RatingRow, name: str) -> RaceBoardRowJson:
    return {
        "rank": row.rank,
        "name": name,
        "rating": row.rating,
        "wins": row.wins,
        "losses": row.losses,
        "played": row.played,
    }


def recent_race(r: RecentRace) -> RecentRaceJson:
    return {
        "race_id": r.race_id,
        "variant": r.variant,
        "finished_at": r.finished_at,
        "racers": r.racers,
        "place": r.place,
        "won": r.won,
        "rating_before": r.rating_before,
        "rating_after": r.rating_after,
    }


def deal_json(variant: str, par: int | None, certified: bool, seed: int | None) -> DayDealJson:
    v = variant_of(variant)
    return {
        "variant": variant,
        "title": v.title,
        "par": par,
        "par_kind": "score" if v.scored else "moves",
        "certified": certified,
        "seed": seed,
    }


def iso(date: dt.date) -> str:
    return date.isoformat()
