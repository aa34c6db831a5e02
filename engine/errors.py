"""Exceptions raised by the engine.

EngineError
 ├── IllegalMove (also ValueError)   a move that cannot be parsed or played here
 ├── UnknownVariant (also ValueError) a variant id that does not exist
 ├── OutOfSync                        a player's copy disagrees with the server's move
 └── SolverLineError                  a solver's line does not reach what the solver claims
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every error the engine raises."""


class IllegalMove(EngineError, ValueError):
    """A move that is malformed or not legal in the current position.

    The message names the move and the reason; the game is left untouched.
    """

    def __init__(self, move: object, reason: str) -> None:
        self.move_text = str(move)
        self.reason = reason
        super().__init__(f"illegal move {self.move_text!r}: {reason}")


class UnknownVariant(EngineError, ValueError):
    """A variant id that is not one of the six the engine knows."""

    def __init__(self, variant: str) -> None:
        self.variant = variant
        super().__init__(f"unknown variant {variant!r}")


class OutOfSync(EngineError):
    """A player's copy played a server's move differently (`Game.follow`): rebuild it from a
    fresh view."""


class SolverLineError(EngineError):
    """A solver returned a line that, replayed through the rules, does not win (or does not
    reach its claimed score): a solver bug, never handed to a caller as a certified line."""
