"""What a spectator may be shown of a race (docs/fairplay.md, "Races: nothing before the
start, nothing to spectators"), for tests that play races through the real server and for the
chaos checker.

While a race runs, a spectator's board of racer R at ``seq`` must be R's own view after
``seq`` moves, and every card R had turned up by then (by label, `server.races.seen`: the
multi-deck games hold three of each card) must have been seen by every other racer still
playing. A board of an earlier position is then no help either: everything R's game told R up
to it (the cards on it, every move onto or off a card) is known to those racers already.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine import UNDO, Game, new_game
from engine.views import json_map
from server.races.seen import Sightings

__all__ = ["Replay", "board_breaks", "line_onto_unseen", "replay", "touched"]


def _norm(view: object) -> object:
    """A view as it reads on the wire (JSON: tuples as lists)."""
    return json.loads(json.dumps(view))


@dataclass(frozen=True, slots=True)
class Replay:
    """A racer's game replayed from its deal: the view and the labels seen so far after each
    number of moves (index 0: the fresh deal)."""

    variant: str
    seed: int
    moves: tuple[str, ...]
    views: tuple[object, ...]
    seen: tuple[frozenset[int], ...]

    def seen_by(self, seq: int | None = None) -> frozenset[int]:
        """The labels seen after `seq` moves (all of them: None)."""
        return self.seen[-1 if seq is None else seq]


def replay(variant: str, seed: int, moves: Sequence[str]) -> Replay:
    game = new_game(variant, seed)
    sightings = Sightings(game)
    views: list[object] = [_norm(json_map(game.view()))]
    seen = [frozenset(sightings.seen)]
    for move in moves:
        game.play(move)
        sightings.after(game, move.strip().lower() == UNDO)
        views.append(_norm(json_map(game.view())))
        seen.append(frozenset(sightings.seen))
    return Replay(variant, seed, tuple(moves), tuple(views), tuple(seen))


def board_breaks(
    view: Mapping[str, object], seq: int, racer: Replay, others: Sequence[Replay]
) -> str | None:
    """Why a spectator's live board of `racer` (its `view` after `seq` moves) breaks the rule,
    or None. `others`: the other racers still playing, as far as they can have played when the
    board was made (an upper bound is enough: they cannot have seen more)."""
    if not 0 <= seq < len(racer.views):
        return f"seq {seq} is not a position of the racer's game ({len(racer.moves)} moves)"
    if _norm(view) != racer.views[seq]:
        return f"seq {seq}: not the racer's own view after {seq} moves"
    known: frozenset[int] | None = None
    for other in others:
        known = other.seen_by() if known is None else known & other.seen_by()
    unseen = racer.seen_by(seq) - known if known is not None else frozenset()
    if unseen:
        return f"seq {seq}: after cards {sorted(unseen)} turned up, unseen by another racer"
    return None


def touched(game: Game, sightings: Sightings, move: str) -> frozenset[int]:
    """Play `move` (not an undo) and follow it: the labels it moved, and those of the cards it
    went onto (the top of each place it added cards to, before the move)."""
    before = {k: list(v) for k, v in sightings.labels.items()}
    game.play(move)
    sightings.after(game, False)
    out: set[int] = set()
    for name, after in sightings.labels.items():
        old = before.get(name, [])
        if len(after) > len(old):
            out |= set(after[len(old) :])
            if old:
                out.add(old[-1])
    return frozenset(out)


def line_onto_unseen(variant: str, seed: int, depth: int = 4) -> list[str]:
    """A short line of the deal whose last move goes onto (or moves) a card that a racer who
    has not moved has not seen: the first found, fewest moves first (draws last)."""
    frontier: list[list[str]] = [[]]
    for _ in range(depth):
        longer: list[list[str]] = []
        for line in frontier:
            game = new_game(variant, seed)
            for m in line:
                game.play(m)
            for move in sorted((str(m) for m in game.legal_moves()), key=lambda m: m == "d"):
                if move != "d":
                    probe = new_game(variant, seed)
                    track = Sightings(probe)
                    for m in line:
                        probe.play(m)
                        track.after(probe, False)
                    if touched(probe, track, move) - track.dealt_up:
                        return [*line, move]
                longer.append([*line, move])
        frontier = longer
    raise AssertionError(f"no short line of {variant} {seed} goes onto an unseen card")
