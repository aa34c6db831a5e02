"""Hints, revealed seeds and move-log export: what the solver and the end of a day allow."""

from __future__ import annotations

from typing import Annotated

from protocol.events import Reply
from protocol.fields import (
    MOVE,
    Count,
    DateText,
    GameId,
    JsonMap,
    ListOf,
    MoveText,
    Text,
    TierName,
    VariantName,
)
from protocol.messages import ClientMessage
from protocol.schema import fields_of, struct

MoveList = Annotated[tuple[str, ...], ListOf(MOVE, 0, 20_000)]
SeedMap = Annotated[dict[str, object], JsonMap()]


@struct
class Hint(ClientMessage, type="hint"):
    """One move on a winning line from the current position of a daily game (not in races).
    Each hint given is counted on the result and adds the hint penalty to its time."""

    game_id: GameId


@struct
class HintReply(Reply, type="hint"):
    """``move`` is absent when the solver knows no winning line from here (not counted)."""

    game_id: GameId
    hints: Count
    penalty_ms: Count
    move: MoveText | None = None
    #: The move in words (``7♥ + 7♣``), added without a version.
    text: Text | None = None


@struct
class DailySeeds(ClientMessage, type="daily.seeds"):
    """The seeds of a day that is over, so anyone can re-deal and replay its results
    (``tier``, version 8: that tier's deals; absent or ``medium``: the daily deals)."""

    date: DateText
    tier: TierName | None = None


@struct
class SeedsReply(Reply, type="daily.seeds"):
    """``seeds`` maps variant ids to seeds (integers)."""

    date: DateText
    seeds: SeedMap
    tier: TierName | None = None  # version 8: as asked


@struct
class GameExport(ClientMessage, type="game.export"):
    """The move log of any finished game whose day is over (daily) or whose race ended."""

    game_id: GameId


@struct
class ExportReply(Reply, type="game.export"):
    """Everything ``python -m engine replay VARIANT --seed SEED`` needs to audit a result."""

    game_id: GameId
    variant: VariantName
    seed: Count
    moves: MoveList
    date: DateText | None = None


for _cls in (Hint, HintReply, DailySeeds, SeedsReply, GameExport, ExportReply):
    fields_of(_cls)
