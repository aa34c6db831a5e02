"""The terminal client's help: the rules and notation (from `engine.rules`) and its commands."""

from __future__ import annotations

from typing import Final

from engine.rules import NOTATION, RULES, rules_text

__all__ = ["COMMANDS", "NOTATION", "RULES", "rules_text"]

COMMANDS: Final = """\
Commands
  undo     take back the last move (not after a move that revealed a card)
  moves    list the legal moves
  hint     ask the server for a move (counts as a hint and adds a time penalty)
  resign   end the game now and record the result
  help     this text
  quit     leave; the game can be resumed later"""
