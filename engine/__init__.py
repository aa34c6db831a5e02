"""The solitaire rules engine: six variants, seeded deals, moves, undo and player views.

Pure Python with no I/O. Typical use::

    from engine import new_game
    game = new_game("fourteen-out", seed=42)
    for move in game.legal_moves(): ...
    result = game.apply("3 7")        # raises IllegalMove, leaving the game untouched
    game.view()                        # what the player may see

The modules a move runs through are compiled to C by mypyc when the package is installed
(`setup.py`; the source here is what is compiled); `COMPILED` says whether they are.

Exceptions::

    EngineError
     ├── IllegalMove (also ValueError)
     ├── UnknownVariant (also ValueError)
     ├── OutOfSync (a player's copy disagrees with the server: resync)
     └── SolverLineError (a solver's line does not do what it claims: a solver bug)
"""

from . import game as _game_module
from .cards import Card, card, parse_card
from .deals import DealRng, shuffled_cards
from .errors import EngineError, IllegalMove, OutOfSync, SolverLineError, UnknownVariant
from .game import HIDDEN, Game, Outcome, OverState, OverStepper, OverTask, Termination
from .moves import UNDO, Move, MoveResult, Reveal, Transfer
from .state import GameState, PairingState, PileState, TableauState, TriPeaksState, full_state
from .variants import VARIANT_IDS, VARIANTS, from_view, new_game, variant

#: True when the rule modules run compiled by mypyc (`setup.py`), False when they run as Python.
COMPILED: bool = not _game_module.__file__.endswith(".py")

__all__ = [
    "COMPILED",
    "HIDDEN",
    "UNDO",
    "VARIANTS",
    "VARIANT_IDS",
    "Card",
    "DealRng",
    "EngineError",
    "Game",
    "GameState",
    "IllegalMove",
    "Move",
    "MoveResult",
    "OutOfSync",
    "Outcome",
    "OverState",
    "OverStepper",
    "OverTask",
    "PairingState",
    "PileState",
    "Reveal",
    "SolverLineError",
    "TableauState",
    "Termination",
    "Transfer",
    "TriPeaksState",
    "UnknownVariant",
    "card",
    "from_view",
    "full_state",
    "new_game",
    "parse_card",
    "shuffled_cards",
    "variant",
]
