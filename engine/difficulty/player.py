"""Simulated players: greedy with noise, at several skill levels, playing from their view.

A simulated player knows what a person sees and nothing more: the legal moves of the position
(which depend only on face-up cards), how many cards each move clears or scores and whether it
turns a face-down card (both visible before the move: the count of face-down cards under a
pile is on the table). It never reads a face-down card's identity or the stock order: the
only thing it learns from a move that turned a card is what the view then shows.

At each turn it rates every legal move: 100 per point gained (cards cleared, or score for
the Triple Deck games), 30 per face-down card turned, `SHOW_VALUE` for a draw or deal from
the stock; then, among the `LOOK_AT` best-rated moves that show no card, half a point per
legal move they leave (for a move that shows a card this would read it, so it is not used).
With probability `Skill.noise` it plays a move at random instead, and it never returns
to a position it has already seen (a person does not shuttle a card back and forth); it stops
when the game is won, when every move leads back, after as many turns in a row as the deal
has cards with no move that gains points or turns a card (a person gives up too), or after
`max_moves` moves.

Time is modelled, not measured: each decision takes `Skill.base_s` seconds plus
`Skill.per_bit_s` seconds per bit of choice (Hick's law: log2 of the legal moves + 1).
"""

from __future__ import annotations

import copy
import random

from ..game import Game
from ..moves import Move
from ..snapshots import Snapshot
from ..variants import new_game
from .easthaven_player import VARIANT as EASTHAVEN
from .easthaven_player import play_easthaven
from .skill import Level, PlayOutcome, max_points
from .tripledeck_player import play as play_triple_deck

__all__ = ["Level", "PlayOutcome", "max_points", "play"]

#: How many of the best-rated moves a player weighs by the moves they leave.
LOOK_AT = 4
#: The value of a draw or deal from the stock, just below turning a face-down card: above
#: a move that only shifts cards between piles (which would otherwise win on the moves it
#: leaves, and a player would shuffle piles instead of going through the stock).
SHOW_VALUE = 29.0
#: Variants with a player of their own (`tripledeck_player.VARIANTS`).
_OWN_PLAYER = frozenset({"triple-deck", "triple-deck-kings"})


def _view_key(game: Game) -> str:
    """The position as the player's view shows it (without the move count): what "seen
    before" compares."""
    view = dict(game.view())
    view.pop("moves", None)
    view.pop("can_undo", None)
    return repr(sorted(view.items()))


class _Table:
    """The game being played, with a way to try a move and take it back.

    A move that turned a card cannot be undone through the engine (its undo snapshot is
    dropped), so the position is then restored from a copy taken at the start of the turn."""

    __slots__ = ("game", "pristine")

    def __init__(self, game: Game) -> None:
        self.game = game
        self.pristine: Game | None = None

    def start_turn(self) -> None:
        self.pristine = None

    def _take_back(self, snapshot: Snapshot, history: int, moves: int, undoable: bool) -> None:
        game = self.game
        if undoable:
            game._restore(snapshot)
            del game._history[history:]
            game.moves = moves
        else:
            assert self.pristine is not None
            self.game = copy.deepcopy(self.pristine)
        self.game.defer_over()

    def try_move(self, move: Move) -> tuple[int, int, str, bool]:
        """Play `move`, read what the view shows, take it back: (points gained, cards turned
        under a pile, the key of the position reached, whether it showed any card)."""
        game = self.game
        if self.pristine is None:
            self.pristine = copy.deepcopy(game)
        before = game.points
        snapshot = game._undo_snapshot(move)
        history = len(game._history)
        moves = game.moves
        result = game.apply(move)
        game.defer_over()  # the view must not judge the game over (Easthaven's is a search)
        undoable = game._history[-1] is not None
        gained = game.points - before
        # Cards turned face up under a pile the move took from; a deal or draw from the
        # stock shows cards too, but turns no face-down card of the layout.
        turned = len(result.reveals) if move.src.isdigit() else 0
        key = _view_key(game)
        self._take_back(snapshot, history, moves, undoable)
        return gained, turned, key, bool(result.reveals)

    def mobility(self, move: Move) -> int:
        """Legal moves after `move`, which shows no card (so this reads nothing hidden)."""
        game = self.game
        snapshot = game._undo_snapshot(move)
        history = len(game._history)
        moves = game.moves
        game.apply(move)
        game.defer_over()
        count = sum(1 for _ in game.legal_moves())
        self._take_back(snapshot, history, moves, game._history[-1] is not None)
        return count


def play(
    variant: str, seed: int, level: Level, trial: int = 0, *, max_moves: int | None = None
) -> PlayOutcome:
    """Play one deal as a simulated player; deterministic for (variant, seed, level, trial).
    The Triple Deck games have their own player (`tripledeck_player`), and so has Triple
    Easthaven, which looks a few moves ahead (`easthaven_player`)."""
    if variant == EASTHAVEN:
        return play_easthaven(seed, level, trial, max_moves=max_moves)
    if variant in _OWN_PLAYER:
        return play_triple_deck(variant, seed, level, trial, max_moves=max_moves)
    skill = level.skill
    table = _Table(new_game(variant, seed))
    game = table.game
    rng = random.Random(f"{variant}/{seed}/{skill.name}/{trial}")
    limit = max_moves if max_moves is not None else 3 * game.total_cards + 100
    seen = {_view_key(game)}
    seconds = 0.0
    stalled = 0
    full = max_points(game)
    while game.moves < limit and not game.won:
        game.defer_over()
        options = list(game.legal_moves())
        if not options:
            break
        seconds += skill.think_s(len(options))
        rated: list[tuple[float, float, Move, str]] = []
        shows: set[str] = set()  # keys of the positions reached by a move that showed cards
        table.start_turn()
        for move in options:
            gained, turned, key, revealed = table.try_move(move)
            if key in seen:
                continue
            value = 100.0 * gained + 30.0 * turned
            if revealed:
                shows.add(key)
                if not turned:  # a draw or deal from the stock: new cards to play
                    value += SHOW_VALUE
            rated.append((value, rng.random(), move, key))
        if not rated:
            break
        # Among the best-rated moves that turn no card, a few (`LOOK_AT`) are weighed by
        # the moves they leave.
        top = max(r[0] for r in rated)
        tied = sorted((r for r in rated if r[0] == top and r[3] not in shows), key=lambda r: r[1])[
            :LOOK_AT
        ]
        if len(tied) > 1:
            weighed = {r[3] for r in tied}
            rated = [r for r in rated if r[3] not in weighed] + [
                (value + 0.5 * table.mobility(move), tie, move, key)
                for value, tie, move, key in tied
            ]
        if rng.random() < skill.noise:
            _, _, move, key = rated[rng.randrange(len(rated))]
        else:
            _, _, move, key = max(rated, key=lambda r: (r[0], r[1]))
        game = table.game
        best = max(rated, key=lambda r: r[0])[0]
        stalled = 0 if best >= 30.0 else stalled + 1  # points or a turned card on offer
        if stalled > game.total_cards:
            break
        game.apply(move)
        game.defer_over()
        seen.add(key)
    return PlayOutcome(game.won, game.moves, round(seconds, 3), game.points, full)
