"""The typed shapes of the engine's JSON values: views, full states, results and move events.

These are `TypedDict`s, so the values stay the plain JSON-able dicts the wire carries (no
conversion, no copy) while mypy checks every key read or written. One shape per game family:

* pairing (Fourteen Out, Triple Fourteens): `PairingView`, `PairingStateJson`;
* Tri Peaks (Triple Triangle): `TriPeaksView`, `TriPeaksStateJson`;
* tableau games: Triple Deck and Triple Deck with Kings (with a waste) `TripleDeckView`,
  `TripleDeckStateJson`; Triple Easthaven `EasthavenView`, `EasthavenStateJson`.

`View` and `StateJson` are their unions, discriminated by `variant` (a `Literal` per family):
``if view["variant"] in TRIPLE_DECK_VARIANTS:`` narrows a `View` to a `TripleDeckView`, and so
do the `*_view` functions (which raise ValueError for another family's view). `Event` is the
closed union of the move events (`MoveResult.events()`), discriminated by `type`.

At a boundary with an engine-agnostic carrier (the protocol holds views and events as opaque
JSON maps): `json_map` hands a typed value over as a plain map (the same object), and
`as_view` / `as_events` take back what a server's engine produced (trusted, unchecked here:
`from_view` checks a view as it reads it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, Literal, TypedDict, cast

# -- variant ids by family --------------------------------------------------------------------

PairingVariant = Literal["fourteen-out", "triple-fourteens"]
TriPeaksVariant = Literal["triple-triangle"]
TripleDeckVariant = Literal["triple-deck", "triple-deck-kings"]
EasthavenVariant = Literal["triple-easthaven"]
TableauVariant = TripleDeckVariant | EasthavenVariant

PAIRING_VARIANTS: Final[tuple[PairingVariant, ...]] = ("fourteen-out", "triple-fourteens")
TRIPEAKS_VARIANTS: Final[tuple[TriPeaksVariant, ...]] = ("triple-triangle",)
TRIPLE_DECK_VARIANTS: Final[tuple[TripleDeckVariant, ...]] = ("triple-deck", "triple-deck-kings")
EASTHAVEN_VARIANTS: Final[tuple[EasthavenVariant, ...]] = ("triple-easthaven",)

# -- result -----------------------------------------------------------------------------------


class ResultJson(TypedDict):
    """`Game.result()`; also part of every view and full state."""

    won: bool
    over: bool
    score: int
    cleared: int
    moves: int


# -- views: what a player may see -------------------------------------------------------------


class PileView(TypedDict):
    """A tableau pile in a view: how many cards are face down, and the face-up ones."""

    down: int
    up: list[str]


class PairingViewBody(TypedDict):
    """What `PairingGame._view_json` adds to a view."""

    piles: list[list[str]]  # every card face up, bottom first
    discard: int  # cards removed


class TriPeaksViewBody(TypedDict):
    """What `TriPeaks._view_json` adds to a view."""

    tableau: list[str | None]  # 28 positions: a card, "??" face down, None once played
    stock: int  # cards left
    foundation: list[str]  # bottom first


class TableauViewBody(TypedDict):
    """What a tableau game's `_view_json` adds to a view (Triple Easthaven's whole body)."""

    piles: list[PileView]
    stock: int  # cards left
    foundations: list[list[str]]  # each bottom first


class TripleDeckViewBody(TableauViewBody):
    """What `TripleDeck._view_json` adds to a view."""

    waste: list[str]  # bottom first, fully visible


class PairingView(PairingViewBody, ResultJson):
    variant: PairingVariant
    can_undo: bool


class TriPeaksView(TriPeaksViewBody, ResultJson):
    variant: TriPeaksVariant
    can_undo: bool


class TripleDeckView(TripleDeckViewBody, ResultJson):
    variant: TripleDeckVariant
    can_undo: bool


class EasthavenView(TableauViewBody, ResultJson):
    variant: EasthavenVariant
    can_undo: bool


TableauView = TripleDeckView | EasthavenView
View = PairingView | TriPeaksView | TripleDeckView | EasthavenView
ViewBody = PairingViewBody | TriPeaksViewBody | TableauViewBody

# -- full states: hidden cards included (server and audit use only) ---------------------------


class OrientedCard(TypedDict):
    """A card with its orientation: ``{"card": "10H", "up": true}``."""

    card: str
    up: bool


class PairingStateBody(TypedDict):
    piles: list[list[OrientedCard]]
    discard: list[str]  # the removed cards, pile by pile


class TriPeaksStateBody(TypedDict):
    tableau: list[OrientedCard | None]  # None once played
    stock: list[str]  # the next card to leave first
    foundation: list[str]


class TableauStateBody(TypedDict):
    piles: list[list[OrientedCard]]
    stock: list[str]  # the next card to leave first
    foundations: list[list[str]]


class TripleDeckStateBody(TableauStateBody):
    waste: list[str]


class PairingStateJson(PairingStateBody, ResultJson):
    variant: PairingVariant
    seed: int | None  # None for a player's copy built from a view


class TriPeaksStateJson(TriPeaksStateBody, ResultJson):
    variant: TriPeaksVariant
    seed: int | None


class TripleDeckStateJson(TripleDeckStateBody, ResultJson):
    variant: TripleDeckVariant
    seed: int | None


class EasthavenStateJson(TableauStateBody, ResultJson):
    variant: EasthavenVariant
    seed: int | None


StateJson = PairingStateJson | TriPeaksStateJson | TripleDeckStateJson | EasthavenStateJson
StateBody = PairingStateBody | TriPeaksStateBody | TableauStateBody

# -- move events ------------------------------------------------------------------------------

#: Cards that went from one place to another (``from`` is a keyword: functional syntax).
MoveEvent = TypedDict(
    "MoveEvent", {"type": Literal["move"], "cards": list[str], "from": str, "to": str}
)


class RevealEvent(TypedDict):
    """A card turned face up at a place; `card` is None on a copy that cannot know it."""

    type: Literal["reveal"]
    card: str | None
    at: str


class UndoEvent(TypedDict):
    type: Literal["undo"]


class RecycleEvent(TypedDict):
    """Triple Deck's waste turned back into the stock."""

    type: Literal["recycle"]
    cards: int


Event = UndoEvent | MoveEvent | RecycleEvent | RevealEvent

# -- narrowing --------------------------------------------------------------------------------


def pairing_view(view: View) -> PairingView:
    """`view` as a pairing view; ValueError when it is another family's."""
    if view["variant"] in PAIRING_VARIANTS:
        return view
    raise ValueError(f"not a pairing view: {view['variant']!r}")


def tripeaks_view(view: View) -> TriPeaksView:
    """`view` as a Tri Peaks view; ValueError when it is another family's."""
    if view["variant"] in TRIPEAKS_VARIANTS:
        return view
    raise ValueError(f"not a Tri Peaks view: {view['variant']!r}")


def tableau_view(view: View) -> TableauView:
    """`view` as a tableau game's view; ValueError when it is another family's."""
    if view["variant"] in TRIPLE_DECK_VARIANTS or view["variant"] in EASTHAVEN_VARIANTS:
        return view
    raise ValueError(f"not a tableau view: {view['variant']!r}")


def triple_deck_view(view: View) -> TripleDeckView:
    """`view` as a Triple Deck view; ValueError when it is another family's."""
    if view["variant"] in TRIPLE_DECK_VARIANTS:
        return view
    raise ValueError(f"not a Triple Deck view: {view['variant']!r}")


# -- boundaries with untyped JSON -------------------------------------------------------------

JsonDoc = View | StateJson | ResultJson | Event


def json_map(doc: JsonDoc) -> dict[str, object]:
    """A typed value as the plain JSON map an engine-agnostic carrier holds (the same object)."""
    return cast("dict[str, object]", doc)


def json_maps(docs: Iterable[JsonDoc]) -> tuple[dict[str, object], ...]:
    """Typed values (events) as a tuple of plain JSON maps (the same objects)."""
    return cast("tuple[dict[str, object], ...]", tuple(docs))


def as_view(doc: Mapping[str, object]) -> View:
    """A view received as JSON: `Game.view()` output of a server's engine (trusted; the same
    object). `from_view` checks it as it reads it."""
    return cast("View", doc)


def as_events(docs: Iterable[Mapping[str, object]]) -> list[Event]:
    """Events received as JSON: `MoveResult.events()` of a server's engine (trusted)."""
    return [cast("Event", d) for d in docs]


__all__ = [
    "EASTHAVEN_VARIANTS",
    "PAIRING_VARIANTS",
    "TRIPEAKS_VARIANTS",
    "TRIPLE_DECK_VARIANTS",
    "EasthavenStateJson",
    "EasthavenVariant",
    "EasthavenView",
    "Event",
    "JsonDoc",
    "MoveEvent",
    "OrientedCard",
    "PairingStateBody",
    "PairingStateJson",
    "PairingVariant",
    "PairingView",
    "PairingViewBody",
    "PileView",
    "RecycleEvent",
    "ResultJson",
    "RevealEvent",
    "StateBody",
    "StateJson",
    "TableauStateBody",
    "TableauVariant",
    "TableauView",
    "TableauViewBody",
    "TriPeaksStateBody",
    "TriPeaksStateJson",
    "TriPeaksVariant",
    "TriPeaksView",
    "TriPeaksViewBody",
    "TripleDeckStateBody",
    "TripleDeckStateJson",
    "TripleDeckVariant",
    "TripleDeckView",
    "TripleDeckViewBody",
    "UndoEvent",
    "View",
    "ViewBody",
    "as_events",
    "as_view",
    "json_map",
    "json_maps",
    "pairing_view",
    "tableau_view",
    "tripeaks_view",
    "triple_deck_view",
]
