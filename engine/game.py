"""The machinery every variant shares: moves, validation, undo by snapshot, results and views.

A variant is a subclass that sets the class attributes and fills in the hooks (`_deal`,
`_snapshot`, `_restore`, `_generate`, `_reason`, `_do`, `_is_over`, `_state_json`, `_view_json`,
`_load_view`, `full_state`; optionally `_undo_snapshot`). Nothing here branches on a variant's
name.

Undo snapshots are typed (`engine.snapshots`: one closed union of tagged tuples, narrowed by
tag), so mypy checks every snapshot a family's hooks record and restore.

The end of a game: `over` and `won` answer the questions, `outcome()` is the typed answer
(None while the game goes on, else an `Outcome` with its `Termination`, python-chess style),
and `result()` is the same as the JSON map the wire carries. Whether a game is over is kept as
one `OverState` (unjudged, judged live, judged over, or deferred: see `defer_over`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar, Protocol, cast

from .cards import Card, parse_card
from .deals import shuffled_cards
from .errors import IllegalMove, OutOfSync
from .moves import UNDO, Move, MoveResult, Reveal, parse_text
from .snapshots import Snapshot
from .state import GameState
from .views import ResultJson, StateBody, StateJson, View, ViewBody

HIDDEN = "??"  # how a face-down card is written in a view


class Termination(Enum):
    """How a game ended (python-chess's `Termination`)."""

    #: Every card cleared: the variant's goal reached.
    WON = "won"
    #: Not won, and no move can change the outcome any more (no legal move, or only moves
    #: that shuttle cards back and forth).
    DEAD_END = "dead end"


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a game (`Game.outcome()`): how it ended and what it scored."""

    termination: Termination
    score: int
    cleared: int
    moves: int

    @property
    def won(self) -> bool:
        return self.termination is Termination.WON

    def to_json(self) -> ResultJson:
        """The outcome as the wire carries it (`Game.result()` of a finished game)."""
        return {
            "won": self.won,
            "over": True,
            "score": self.score,
            "cleared": self.cleared,
            "moves": self.moves,
        }


class OverState(Enum):
    """What a game knows about whether it is over (one value instead of a three-state flag
    plus a deferral mark). Every move leaves `UNJUDGED` or `LIVE`; `DEFERRED` lasts until
    the next move or verdict."""

    #: Not judged since the last move: `over` judges it (`_is_over`) when asked.
    UNJUDGED = "unjudged"
    #: Judged (or known) not over.
    LIVE = "live"
    #: Judged over, or told so (`settle_over`, a view that says so).
    OVER = "over"
    #: Not judged, but `over` answers "not over" without judging (`defer_over`).
    DEFERRED = "deferred"


class Game:
    """One game of a variant: the full state when dealt from a seed, a player's copy when built
    from a view (hidden cards are then `None`)."""

    id: ClassVar[str]
    title: ClassVar[str]
    decks: ClassVar[int] = 1
    ranks: ClassVar[range] = range(1, 14)
    #: True when the ranking quantity is the foundation score rather than the cards cleared.
    scored: ClassVar[bool] = False
    #: True when a player may have to end the game themselves (shuttle moves never run out).
    may_finish: ClassVar[bool] = False

    seed: int | None
    moves: int

    def __init__(self, seed: int | None = None) -> None:
        """Deal `seed`; None leaves an empty game that `from_view` (or a copy) fills in."""
        self.seed = seed
        self.moves = 0
        # One entry per applied move: the snapshot before it, or None when it cannot be undone.
        self._history: list[Snapshot | None] = []
        self._verdict = OverState.UNJUDGED
        if seed is not None:
            self._deal(shuffled_cards(self.id, seed, self.decks, self.ranks))

    # -- construction from a view -------------------------------------------------------------

    @classmethod
    def from_view(cls, view: View) -> Game:
        """A player's copy built from `view()` output: moves can be listed and pre-checked."""
        if view.get("variant") != cls.id:
            raise ValueError(f"view is for {view.get('variant')!r}, not {cls.id!r}")
        game = cls(None)
        game.moves = int(view.get("moves", 0))
        # The server's verdict stands: a copy cannot always judge it (Triple Deck's hidden stock).
        game._verdict = OverState.OVER if view.get("over") else OverState.UNJUDGED
        game._load_view(view)
        return game

    # -- queries ------------------------------------------------------------------------------

    @property
    def total_cards(self) -> int:
        return self.decks * 4 * len(self.ranks)

    @property
    def over(self) -> bool:
        """True once the game has ended: won, or no move can change it any more."""
        verdict = self._verdict
        if verdict is OverState.UNJUDGED:
            self.settle_over(self.won or self._is_over())
            return self._verdict is OverState.OVER
        return verdict is OverState.OVER

    @property
    def won(self) -> bool:
        raise NotImplementedError

    @property
    def cleared(self) -> int:
        """Cards cleared: removed, played to the foundation pile or onto foundations."""
        raise NotImplementedError

    @property
    def score(self) -> int:
        """The variant's score; equal to `cleared` except for the Triple Deck games."""
        return self.cleared

    @property
    def points(self) -> int:
        """The quantity the leaderboards rank by after won/not won."""
        return self.score if self.scored else self.cleared

    def legal_moves(self) -> Iterator[Move]:
        """The legal moves, generated lazily."""
        if self.over:
            return iter(())
        return self._generate()

    def is_legal(self, move: Move) -> bool:
        return self._why_illegal(move) is None

    def can_undo(self) -> bool:
        return bool(self._history) and self._history[-1] is not None and not self.over

    def seal(self) -> None:
        """The game was finished (won, over, resigned or closed): forget the undo snapshots,
        which nothing can use any more (`can_undo` is False from now on). They are most of a
        game's objects, so a server that keeps finished games at hand keeps little."""
        self._history.clear()

    def outcome(self) -> Outcome | None:
        """How the game ended, or None while it goes on (python-chess's `Board.outcome`)."""
        if not self.over:
            return None
        termination = Termination.WON if self.won else Termination.DEAD_END
        return Outcome(termination, self.score, self.cleared, self.moves)

    def result(self) -> ResultJson:
        """The standing as the wire carries it: `outcome().to_json()` once the game is over,
        and the same map with `won` and `over` false while it goes on."""
        return {
            "won": self.won,
            "over": self.over,
            "score": self.score,
            "cleared": self.cleared,
            "moves": self.moves,
        }

    # -- moves --------------------------------------------------------------------------------

    def parse_move(self, text: str) -> Move:
        """Parse a move typed by a person or read from a log, resolved against this position.

        Short forms are completed (`3 5` gets the card count that makes it legal); the returned
        move is canonical. Raises IllegalMove when the text is not a move of this variant.
        """
        return self._canonical(parse_text(text), text)

    def apply(self, move: Move | str) -> MoveResult:
        """Validate and play a move; raises IllegalMove (state untouched) when it is not legal."""
        if isinstance(move, str):
            move = self.parse_move(move)
        reason = self._why_illegal(move)
        if reason is not None:
            raise IllegalMove(move, reason)
        was_live = self._verdict is OverState.LIVE
        before = self._undo_snapshot(move)
        result = self._do(move)
        self._history.append(None if result.revealed_hidden else before)
        self.moves += 1
        live = self._stays_live(move, result, was_live)
        self._verdict = OverState.LIVE if live else OverState.UNJUDGED
        return result

    def undo(self) -> MoveResult:
        """Take back the last move unless it revealed hidden information; counts as a move."""
        if self.over:
            raise IllegalMove(UNDO, "the game is over")
        if not self._history:
            raise IllegalMove(UNDO, "there is no move to undo")
        snapshot = self._history[-1]
        if snapshot is None:
            raise IllegalMove(UNDO, "the last move revealed hidden cards and cannot be undone")
        self._history.pop()
        self._restore(snapshot)
        self.moves += 1
        self._verdict = OverState.UNJUDGED
        return MoveResult(UNDO, undo=True)

    def play(self, text: str) -> MoveResult:
        """Apply one line of a move log: a move in text notation or `undo`."""
        if text.strip().lower() == UNDO:
            return self.undo()
        return self.apply(text)

    def replay(self, lines: Iterable[str]) -> None:
        """Play a log of moves this engine accepted before (a stored game) without judging at
        each step whether the game had ended: it had not, since the next move was accepted.
        Raises IllegalMove for a line that is not legal; `over` is judged afresh afterwards."""
        for line in lines:
            self.defer_over()  # not over (the move was accepted), but not judged either
            self.play(line)

    def follow(
        self, text: str, reveals: Sequence[Reveal] = (), *, over: bool | None = None
    ) -> MoveResult:
        """Play on a player's copy a move the server accepted, learning the cards it revealed.

        `reveals` are the server's reveal events of that move, in order; `over` is the server's
        verdict afterwards and replaces the copy's own (a copy cannot always judge it). Raises
        IllegalMove when the copy cannot play the move (an undo whose snapshot it never had)
        and OutOfSync when the copy's outcome differs from the server's: resync from a view.
        """
        if text.strip().lower() == UNDO:
            result = self.undo()
        else:
            move = self.parse_move(text)
            reason = self._why_illegal(move)
            if reason is not None:
                raise IllegalMove(move, reason)
            self._learn(move, reveals)
            result = self.apply(move)
            if [(r.card, r.at) for r in result.reveals] != [(r.card, r.at) for r in reveals]:
                raise OutOfSync(f"the copy's move {move} revealed other cards than the server's")
        if over is not None:
            self.settle_over(over)
        return result

    def _why_illegal(self, move: Move) -> str | None:
        if self.over:
            return "the game is over"
        return self._reason(move)

    # -- serialisation ------------------------------------------------------------------------

    # The family's part comes from its hook, typed and checked there; the union of the families'
    # shapes cannot be built generically, hence the casts (the variant ids are typed per family).

    def to_json(self) -> StateJson:
        """The full state, hidden cards included (server and audit use only)."""
        return cast(
            "StateJson",
            {"variant": self.id, "seed": self.seed, **self._state_json(), **self.result()},
        )

    def view(self) -> View:
        """What the player may see: face-down cards and the stock order replaced by counts."""
        return cast(
            "View",
            {"variant": self.id, **self._view_json(), **self.result(), "can_undo": self.can_undo()},
        )

    # -- hooks for variants -------------------------------------------------------------------

    def _deal(self, cards: list[Card]) -> None:
        raise NotImplementedError

    def _snapshot(self) -> Snapshot:
        raise NotImplementedError

    def _restore(self, snapshot: Snapshot) -> None:
        """Take back `snapshot`, one of this game's own (ValueError for another family's)."""
        raise NotImplementedError

    def _undo_snapshot(self, move: Move) -> Snapshot:
        """What `_restore` needs to take back the legal `move`, taken just before it is played.

        The default is the full `_snapshot()`; a variant may record only what `move` changes,
        as long as `_restore` of the result restores the position before `move` exactly."""
        return self._snapshot()

    def _generate(self) -> Iterator[Move]:
        raise NotImplementedError

    def _canonical(self, move: Move, text: str) -> Move:
        return move

    def _reason(self, move: Move) -> str | None:
        """Why `move` is illegal here, or None when it is legal."""
        raise NotImplementedError

    def _do(self, move: Move) -> MoveResult:
        raise NotImplementedError

    def _is_over(self) -> bool:
        raise NotImplementedError

    def _stays_live(self, move: Move, result: MoveResult, was_live: bool) -> bool:
        """True when the position after the legal `move` (played, with `result`) is certainly
        not over, known without judging it; `was_live` says the position before was judged
        not over (a verdict, not a deferral). The default knows nothing: `over` judges afresh."""
        return False

    def _state_json(self) -> StateBody:
        """The family's part of `to_json()` (without variant, seed and the result)."""
        raise NotImplementedError

    def _view_json(self) -> ViewBody:
        """The family's part of `view()` (without variant, the result and can_undo)."""
        raise NotImplementedError

    def _load_view(self, view: View) -> None:
        """Fill a copy from the family's part of a view (`from_view` checked the variant)."""
        raise NotImplementedError

    def full_state(self) -> GameState:
        """The full state as a typed, immutable value, hidden cards included (server, audit and
        solvers only; `engine.state`). Each family returns its own type; ValueError for a
        player's copy built from a view (it does not know the hidden cards)."""
        raise TypeError(f"no full state for {type(self).__name__}")

    def _learn(self, move: Move, reveals: Sequence[Reveal]) -> None:
        """Put the cards `move` is about to reveal into this copy's hidden places (`follow`).

        The default is for variants without hidden cards."""
        if reveals:
            raise OutOfSync(f"{self.id} has no hidden cards to reveal")

    # -- the game-over check in slices --------------------------------------------------------

    def settle_over(self, over: bool) -> None:
        """Record a game-over verdict found by an `over_search` run to its end elsewhere:
        `over` returns it until the next move."""
        self._verdict = OverState.OVER if over else OverState.LIVE

    def defer_over(self) -> None:
        """Until the next move, `over` answers "not over" without judging, while a caller that
        must not wait (the server) runs `over_search()`, which still searches this position."""
        self._verdict = OverState.DEFERRED

    @property
    def over_state(self) -> OverState:
        """What the game knows about whether it is over, without judging it."""
        return self._verdict

    @property
    def _over_known(self) -> bool:
        """A verdict on this position is cached (not merely deferred)."""
        verdict = self._verdict
        return verdict is OverState.LIVE or verdict is OverState.OVER

    def over_search(self) -> OverStepper:
        """`over`, computed in slices for a caller that must not block (the server's event
        loop): call `step(max_nodes)` until it returns a bool. Variants whose check is cheap
        decide here; Triple Easthaven returns a resumable search."""
        if not self._over_known:
            self.settle_over(self.won or self._is_over())
        return OverDecided(self.over)


class OverTask(Protocol):
    """The rest of a game-over check as plain picklable data: `run` decides it in one go, with
    no budget, in whatever process it was sent to."""

    def run(self) -> bool: ...


class OverStepper(Protocol):
    """A game-over check in slices: `step` returns `over`, or None while undecided; `task`
    hands what is left to another process (the server's search workers)."""

    def step(self, max_nodes: int) -> bool | None: ...

    def task(self) -> OverTask: ...


class OverDecided:
    """An `OverStepper` (and its `OverTask`) already decided."""

    __slots__ = ("verdict",)

    def __init__(self, verdict: bool) -> None:
        self.verdict = verdict

    def step(self, max_nodes: int) -> bool | None:
        return self.verdict

    def task(self) -> OverDecided:
        return self

    def run(self) -> bool:
        return self.verdict

    def __reduce__(self) -> tuple[type[OverDecided], tuple[bool]]:
        return OverDecided, (self.verdict,)


def card_text(card: Card | None) -> str:
    """How a face-up card is written in a view: a player's copy built with `from_view` turns
    cards it cannot know (None), which it writes as face down (`HIDDEN`), as the view it was
    built from would, never as "None"."""
    return HIDDEN if card is None else card.text


def card_or_hidden(text: str | None) -> Card | None:
    """Read a card written in a view; `??` (face down) reads as None."""
    if text is None or text == HIDDEN:
        return None
    return parse_card(text)


#: 1-based pile tokens -> 0-based indexes, for up to 99 piles (Tri Peaks has the most: 28
#: tableau places): one dict lookup on the move path instead of parsing digits.
_PILE_INDEX: dict[str, int] = {str(n): n - 1 for n in range(1, 100)}


def pile_number(token: str, piles: int) -> int | None:
    """The 0-based index of a 1-based pile token, or None when it is not one."""
    i = _PILE_INDEX.get(token)
    return i if i is not None and i < piles else None
