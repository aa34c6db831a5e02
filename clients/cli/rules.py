"""The terminal client's help: the rules and notation (from `engine.rules`) and its commands."""

from __future__ import annotations

import re
import textwrap
from typing import Final

from engine import VARIANT_IDS, VARIANTS
from engine.guide import HINT, UNDO, guide
from engine.rules import NOTATION, RULES, rules_text

__all__ = ["COMMANDS", "NOTATION", "RULES", "reflow", "rules_markdown", "rules_text"]

COMMANDS: Final = """\
Commands
  undo     take back the last move (not after a move that revealed a card)
  moves    list the legal moves
  hint     ask the server for a move (counts as a hint and adds a time penalty)
  resign   end the game now and record the result
  help     this text
  quit     leave; the game can be resumed later"""


def _paragraphs(text: str) -> list[str]:
    """The engine's hard-wrapped lines joined into sentences: a line that starts in lower case
    (or with a digit after a comma) goes on the previous one. Indented lines (the move
    notation) and blank lines stay as they are."""
    out: list[str] = []
    for line in text.splitlines():
        joins = (
            out
            and line
            and not line.startswith(" ")
            and out[-1]
            and not out[-1].startswith(" ")
            and (line[0].islower() or line[0] == "(" or not out[-1].rstrip().endswith((".", ":")))
        )
        if joins:
            out[-1] = f"{out[-1].rstrip()} {line.strip()}"
        else:
            out.append(line)
    return out


def reflow(text: str, width: int) -> str:
    """A rules text wrapped to `width` columns as sentences, not cut where the engine's text
    happens to break (indented notation lines keep their layout, wrapped under themselves)."""
    lines: list[str] = []
    for para in _paragraphs(text):
        if not para.strip():
            lines.append("")
            continue
        indent = re.match(r" *(\S+ ?\S* +)?", para) if para.startswith(" ") else None
        hang = " " * len(indent.group(0)) if indent and indent.group(1) else ""
        lines.extend(
            textwrap.wrap(para, width, subsequent_indent=hang, break_on_hyphens=False) or [""]
        )
    return "\n".join(lines)


def rules_markdown() -> str:
    """docs/rules.md: every variant's rules and notation, from the engine's rules text, and
    how to play it in the browser (`engine.guide`)."""
    parts = [
        "# Rules",
        "",
        "<!-- Generated from engine/rules.py and engine/guide.py by "
        "clients.cli.rules.rules_markdown(); tests/clients/test_cli_terminal.py keeps it in "
        "step. -->",
        "",
        "The rules of the six variants as the terminal client (`solitaire rules VARIANT`) shows",
        "them, with its move notation, and how to play each in the browser (its Rules page says",
        "the same rules in words for clicking and tapping, with pictures). Every move counts,",
        "`undo` included; a move that revealed a card (turned one face up, drew or dealt from",
        "the stock) cannot be undone.",
    ]
    for variant in VARIANT_IDS:
        summary, _, notation = rules_text(variant).partition("\n\nMoves\n")
        parts += ["", f"## {VARIANTS[variant].title} (`{variant}`)", ""]
        parts += [f"{line}  " for line in _paragraphs(summary)]
        parts += ["", "Moves:", "", "```", notation.rstrip(), "```"]
        parts += ["", "In the browser:", ""]
        parts += [f"- {sentence}" for sentence in (*guide(variant).play, UNDO, HINT)]
    return "\n".join(parts).rstrip() + "\n"
