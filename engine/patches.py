"""What a move changed in its player's view, as data a client without the rules applies.

`view_patch(view, result)` takes the view after a move and the move's result and returns the
parts of the view the move changed (always the summary fields: ``won``, ``over``, ``score``,
``cleared``, ``moves``, ``can_undo``). A client holding the view from before the move gets
the view after it with `apply_patch`: a value replaces the view's value; a map ``{"3": x}``
for a list sets its entries by index (from 0), and its ``"length"`` cuts or extends the list
first. No rule is needed to apply it, and it holds nothing the view does not hold (the
player's own view: hidden cards stay hidden). An undo, or a move whose places are not
known here, patches the whole view.

Places as in the move events: a pile's number, ``s`` (stock), ``w`` (waste), ``f``
(foundation or, in the pairing games, the discard). Compiled (setup.py): it runs with every
lean reply to the browser.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, cast

from .views import (
    EASTHAVEN_VARIANTS,
    PAIRING_VARIANTS,
    TRIPEAKS_VARIANTS,
    TRIPLE_DECK_VARIANTS,
    Event,
    View,
    json_map,
    pairing_view,
    tableau_view,
    tripeaks_view,
    triple_deck_view,
)

#: The view fields every patch carries.
SUMMARY: Final = ("won", "over", "score", "cleared", "moves", "can_undo")


def _tail(items: list[str], added: int) -> dict[str, object]:
    """An index patch for a list that gained `added` cards at its end (or lost some)."""
    patch: dict[str, object] = {"length": len(items)}
    for i in range(max(0, len(items) - added), len(items)):
        patch[str(i)] = items[i]
    return patch


def _whole(view: View) -> dict[str, object]:
    return {k: v for k, v in json_map(view).items() if k != "variant"}


def view_patch(view: View, events: Sequence[Event]) -> dict[str, object]:
    """The parts of `view` (the view after the move) that the move's `events`
    (`MoveResult.events()`) changed."""
    places: set[str] = set()
    added: dict[str, int] = {}
    up: set[str] = set()
    down = False
    for e in events:
        if e["type"] == "undo":
            return _whole(view)
        if e["type"] == "move":
            places.update((e["from"], e["to"]))
            added[e["to"]] = added.get(e["to"], 0) + len(e["cards"])
            if e["to"] == "f":
                up.update(e["cards"])
            down = down or e["from"] == "f"
        elif e["type"] == "reveal":
            places.add(e["at"])
        else:
            places.update(("s", "w"))
    body = json_map(view)
    patch: dict[str, object] = {k: body[k] for k in SUMMARY}
    variant = view["variant"]
    if variant in PAIRING_VARIANTS:
        pv = pairing_view(view)
        piles: dict[str, object] = {}
        for place in places:
            if place == "f":
                patch["discard"] = pv["discard"]
            elif place.isdigit() and 1 <= int(place) <= len(pv["piles"]):
                piles[str(int(place) - 1)] = pv["piles"][int(place) - 1]
            else:
                return _whole(view)
        if piles:
            patch["piles"] = piles
        return patch
    if variant in TRIPEAKS_VARIANTS:
        tp = tripeaks_view(view)
        tableau: dict[str, object] = {}
        for place in places:
            if place == "s":
                patch["stock"] = tp["stock"]
            elif place == "f":
                patch["foundation"] = _tail(tp["foundation"], added.get("f", 0))
            elif place.isdigit() and 1 <= int(place) <= len(tp["tableau"]):
                tableau[str(int(place) - 1)] = tp["tableau"][int(place) - 1]
            else:
                return _whole(view)
        if tableau:
            patch["tableau"] = tableau
        return patch
    if variant in TRIPLE_DECK_VARIANTS or variant in EASTHAVEN_VARIANTS:
        tv = tableau_view(view)
        tpiles: dict[str, object] = {}
        for place in places:
            if place == "s":
                patch["stock"] = tv["stock"]
            elif place == "w" and variant in TRIPLE_DECK_VARIANTS:
                patch["waste"] = _tail(triple_deck_view(view)["waste"], added.get("w", 0))
            elif place == "f":
                patch["foundations"] = _foundations(tv["foundations"], up, down)
            elif place.isdigit() and 1 <= int(place) <= len(tv["piles"]):
                tpiles[str(int(place) - 1)] = tv["piles"][int(place) - 1]
            else:
                return _whole(view)
        if tpiles:
            patch["piles"] = tpiles
        return patch
    return _whole(view)


def _foundations(foundations: list[list[str]], up: set[str], down: bool) -> dict[str, object]:
    """The foundations a move to or from them may have changed: those topped by the card it
    put up (identical cards of other decks make more than one candidate; each is sent whole),
    or all of them when a card came back down."""
    return {str(j): f for j, f in enumerate(foundations) if down or (f and f[-1] in up)}


def apply_patch(view: Mapping[str, object], patch: Mapping[str, object]) -> dict[str, object]:
    """The view a patch leaves (a new map; `view` is not changed). The browser does the same."""
    out = dict(view)
    for key, value in patch.items():
        old = out.get(key)
        if isinstance(value, dict) and isinstance(old, list):
            items = list(cast("list[object]", old))
            entries = cast("dict[str, object]", value)
            length = entries.get("length")
            if isinstance(length, int):
                items = items[:length] + [None] * max(0, length - len(items))
            for k, v in entries.items():
                if k != "length":
                    items[int(k)] = v
            out[key] = items
        else:
            out[key] = value
    return out


__all__ = ["SUMMARY", "apply_patch", "view_patch"]
