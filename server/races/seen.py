"""Which cards of a shared race deal each racer has seen, to show spectators only the states
of a racer's game whose cards every racer still playing has seen (docs/fairplay.md, "Races:
nothing before the start, nothing to spectators").

All racers of a race play one deal, so a card one racer has turned up (a stock draw, a
face-down card turned) may be another racer's next card: a spectator shown it, or shown a move
onto it, could tell them. The multi-deck variants hold identical cards (three 9C), so a card is
known by where it was dealt (its *label*), not by its text. A `Sightings` follows one racer's
game move by move: its labels move with the cards (every move takes cards from the top of one
place and puts them on top of others; the full state before and after says which), and every
label ever face up is `seen` (`after` says which labels a move turned up first). Labels are
given in the same order to every racer's fresh deal, so a label names the same physical card
in every racer's game. Pure computation, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from engine import Game
from engine.views import json_map

__all__ = ["STOCK", "Sightings", "TrackingError"]

#: The stock's name among the places; its cards leave (and come back) top first.
STOCK = "s"

#: A place: its cards bottom first, each a (text, face up) pair.
Place = list[tuple[str, bool]]


class TrackingError(ValueError):
    """A move changed the places in a way no move does: the labels cannot follow it."""


def places_of(state: Mapping[str, object]) -> dict[str, Place]:
    """The places of a full state (`Game.to_json`), by name, each bottom first: piles ``p<i>``,
    Tri Peaks positions ``t<i>``, the stock ``s`` (face down), the waste ``w``, foundations
    ``f<i>`` (Tri Peaks' one ``f``), the pairing games' discard ``d``. Fixed order per
    variant: piles and positions in their order first."""
    out: dict[str, Place] = {}
    for i, pile in enumerate(cast(list[list[Mapping[str, object]]], state.get("piles", []))):
        out[f"p{i}"] = [(str(c["card"]), bool(c["up"])) for c in pile]
    tableau = cast(list[Mapping[str, object] | None], state.get("tableau", []))
    for i, pos in enumerate(tableau):
        out[f"t{i}"] = [] if pos is None else [(str(pos["card"]), bool(pos["up"]))]
    if "stock" in state:  # written next card first: bottom first is reversed
        out[STOCK] = [(t, False) for t in reversed(cast(list[str], state["stock"]))]
    if "waste" in state:
        out["w"] = [(t, True) for t in cast(list[str], state["waste"])]
    if "foundation" in state:
        out["f"] = [(t, True) for t in cast(list[str], state["foundation"])]
    for i, f in enumerate(cast(list[list[str]], state.get("foundations", []))):
        out[f"f{i}"] = [(t, True) for t in f]
    if isinstance(state.get("discard"), list):
        out["d"] = [(t, True) for t in cast(list[str], state["discard"])]
    return out


class Sightings:
    """One racer's game as labels: where each dealt card is now, and which were ever face up.

    `start` with the fresh deal's game, then `after` each move played on it (the game after
    the move, and whether it was an undo)."""

    def __init__(self, game: Game) -> None:
        places = places_of(json_map(game.to_json()))
        self.labels: dict[str, list[int]] = {}
        self.text: list[str] = []  # label -> the card's text
        for name, cards in places.items():
            self.labels[name] = []
            for text, _ in cards:
                self.labels[name].append(len(self.text))
                self.text.append(text)
        self.seen: set[int] = set()
        self._undo: list[dict[str, list[int]]] = []
        self._see(places)
        #: Labels face up in the fresh deal: seen by everyone from the start.
        self.dealt_up: frozenset[int] = frozenset(self.seen)
        #: Whether the deal hides anything (the pairing games hide nothing).
        self.hides = len(self.seen) < len(self.text)

    def _see(self, places: Mapping[str, Place]) -> frozenset[int]:
        new: set[int] = set()
        for name, cards in places.items():
            for label, (_, up) in zip(self.labels[name], cards, strict=True):
                if up and label not in self.seen:
                    new.add(label)
        self.seen |= new
        return frozenset(new)

    def after(self, game: Game, undo: bool) -> frozenset[int]:
        """Follow one move (`undo`: the last one taken back) played on the game: the labels
        it turned face up for the first time. A deal that hides nothing (the pairing games)
        needs no following: every card was seen."""
        if not self.hides:
            return frozenset()
        places = places_of(json_map(game.to_json()))
        if undo:
            if not self._undo:
                raise TrackingError("an undo with no move to take back")
            self.labels = self._undo.pop()
        else:
            self._undo.append({k: list(v) for k, v in self.labels.items()})
            self.labels = self._moved(places)
        if [self.text[x] for x in self.labels.get(STOCK, [])] != [
            t for t, _ in places.get(STOCK, [])
        ]:
            raise TrackingError("the stock does not match its labels")
        return self._see(places)

    def _moved(self, places: Mapping[str, Place]) -> dict[str, list[int]]:
        labels = {k: list(v) for k, v in self.labels.items()}
        pool: list[int] = []
        losers: list[str] = []
        gainers: list[tuple[str, list[str]]] = []
        for name, cards in places.items():
            old = [self.text[x] for x in labels[name]]
            new = [t for t, _ in cards]
            k = min(len(old), len(new))
            if old[:k] != new[:k]:
                raise TrackingError(f"{name} changed below its top")
            if len(old) > k:
                losers.append(name)
                pool += labels[name][k:]
                del labels[name][k:]
            elif len(new) > k:
                gainers.append((name, new[k:]))
        if len(losers) > 1:
            raise TrackingError(f"cards from {losers} at once")
        # Cards leave the stock top first, and a turned-over waste becomes it top first.
        if STOCK in losers or any(name == STOCK for name, _ in gainers):
            pool.reverse()
        for name, texts in gainers:
            taken, pool = pool[: len(texts)], pool[len(texts) :]
            if [self.text[x] for x in taken] != texts:
                raise TrackingError(f"{name} got other cards than left their places")
            labels[name] += taken
        if pool:
            raise TrackingError("cards left their places for nowhere")
        return labels
