"""The six variants by id."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .easthaven import TripleEasthaven
from .errors import UnknownVariant
from .game import Game
from .pairing import FourteenOut, TripleFourteens
from .tripeaks import TriPeaks
from .tripledeck import TripleDeck, TripleDeckKings
from .views import as_view

VARIANTS: Final[dict[str, type[Game]]] = {
    cls.id: cls
    for cls in (
        FourteenOut,
        TripleFourteens,
        TriPeaks,
        TripleDeck,
        TripleDeckKings,
        TripleEasthaven,
    )
}
VARIANT_IDS: Final = tuple(VARIANTS)


def variant(variant_id: str) -> type[Game]:
    """The game class of a variant id; raises UnknownVariant."""
    try:
        return VARIANTS[variant_id]
    except KeyError:
        raise UnknownVariant(variant_id) from None


def new_game(variant_id: str, seed: object) -> Game:
    """Deal a new game: a pure function of (variant id, seed). Raises ValueError for a seed
    that is not an integer in 0..2**64-1.

    `seed` is checked here rather than typed `int`: compiled (setup.py), an `int` parameter
    would turn True into 1 and refuse other values with a TypeError, so the two builds would
    answer a bad seed differently; and `Game(None)` is an empty game, not a deal."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer in 0..2**64-1, got {seed!r}")
    return variant(variant_id)(seed)


def from_view(view: Mapping[str, object]) -> Game:
    """A player's copy of a game, built from a view: `Game.view()` output, typed (`View`) or as
    received in JSON."""
    return variant(str(view.get("variant"))).from_view(as_view(dict(view)))
