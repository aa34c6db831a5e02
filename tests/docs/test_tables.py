"""Every Markdown table in the docs renders whole: each row has the header's cell count.

A row with more cells than its header loses the extra ones when rendered (a description
vanished from the `tier` and `date` rows of protocol.md that way); one with fewer shifts.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DOCS = sorted([*ROOT.glob("docs/*.md"), ROOT / "README.md"])
DELIMITER = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def cells(line: str) -> int:
    """The cells of a table row as GitHub renders it: every `|` not escaped splits, inside a
    code span too (write `\\|` there)."""
    row = line.strip().removeprefix("|")
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return len(re.split(r"(?<!\\)\|", row))


def is_table_start(lines: list[str], i: int) -> bool:
    """A header row at `i`: a `|` row followed by a delimiter row."""
    return (
        lines[i].lstrip().startswith("|")
        and i + 1 < len(lines)
        and DELIMITER.match(lines[i + 1]) is not None
    )


def bad_rows(text: str) -> list[str]:
    """`line number: header cells != row cells` for each row of a table that does not fit."""
    lines = text.splitlines()
    bad: list[str] = []
    in_fence = False
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence and is_table_start(lines, i):
            want = cells(lines[i])
            if cells(lines[i + 1]) != want:
                bad.append(f"{i + 2}: delimiter has {cells(lines[i + 1])} cells, header {want}")
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                if (got := cells(lines[i])) != want:
                    bad.append(f"{i + 1}: {got} cells, header {want}: {lines[i][:60]}")
                i += 1
            continue
        i += 1
    return bad


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_every_table_row_has_the_header_cell_count(doc: Path) -> None:
    assert bad_rows(doc.read_text(encoding="utf-8")) == []


def test_a_row_with_an_extra_cell_is_found() -> None:
    table = (
        "| Field | Type |\n|---|---|\n| `tier` | tier | the tier |\n"
        "| `a\\|b` | y |\n| `x|y` | z |\n"
    )
    assert bad_rows(table) == [
        "3: 3 cells, header 2: | `tier` | tier | the tier |",
        "5: 3 cells, header 2: | `x|y` | z |",
    ]
    assert DOCS and all(doc.exists() for doc in DOCS)
