"""docs/protocol.md read as data, for the tests that hold the server to it.

The document is the contract a client is written from; these helpers read its request
headings, its JSON examples, its error and close tables, its §6 field tables and the
versions it claims, so a test can drive the server from them and catch any drift.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import protocol as p

DOC = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")


def section(number: int, doc: str = DOC) -> str:
    """The text of ``## <number>.`` up to the next ``## `` heading."""
    match = re.search(rf"^## {number}\. .*?(?=^## |\Z)", doc, re.M | re.S)
    assert match is not None, f"docs/protocol.md has no section {number}"
    return match.group(0)


def documented_requests(doc: str = DOC) -> dict[str, str]:
    """request type -> reply type, from every ``### `a`, `b` → `c`; `d` → `e` `` heading."""
    pairs: dict[str, str] = {}
    for heading in re.findall(r"^### (.+)$", doc, re.M):
        for part in heading.split(";"):
            if "→" not in part:
                continue
            left, right = part.split("→", 1)
            reply = re.findall(r"`([^`]+)`", right)[0]
            for request in re.findall(r"`([^`]+)`", left):
                pairs[request] = reply
    return pairs


def documented_errors(doc: str = DOC) -> list[str]:
    return re.findall(r"^\| `([a-z_]+)` \|", section(7, doc), re.M)


def documented_closes(doc: str = DOC) -> list[int]:
    return [int(code) for code in re.findall(r"^\| (\d{4}) \(", section(1, doc), re.M)]


def claimed_versions(doc: str = DOC) -> dict[str, set[int]]:
    """Every place the document states which protocol versions exist or the server speaks:
    the title's "version N" (the current one), §3's "current protocol version is N" and
    "the server speaks ...", the rows of the §3 version table and the `versions` of the
    `unsupported_version` example. Each maps to the versions it names (the current version
    as all versions up to it)."""
    title = re.search(r"^# .*\(version (\d+)\)", doc, re.M)
    text = section(3, doc)
    current = re.search(r"current protocol version is \*\*(\d+)\*\*", text)
    speaks = re.search(r"the server speaks \*\*([^*]+)\*\*", text)
    assert title and current and speaks, "the title and §3 say which versions there are"
    refusals = [
        json.loads(body)
        for body in re.findall(r"```json\n(.*?)```", doc, re.S)
        if '"unsupported_version"' in body
    ]
    assert refusals, "§6 shows an `unsupported_version` error"
    return {
        "title": set(range(1, int(title.group(1)) + 1)),
        "§3 current version": set(range(1, int(current.group(1)) + 1)),
        "§3 the server speaks": {int(v) for v in re.findall(r"\d+", speaks.group(1))},
        "§3 version table": {int(v) for v in re.findall(r"^\| (\d+) \|", text, re.M)},
        **{
            f"the `unsupported_version` example's versions ({i})": set(r["versions"])
            for i, r in enumerate(refusals)
        },
    }


def field_tables(number: int, doc: str = DOC) -> dict[str, list[str]]:
    """The field tables of section `number`, by the heading or bold label just before each
    (```### `welcome` (reply to `hello`)``` -> ``welcome``, ``**entry** — ...`` -> ``entry``):
    the field names of each table's rows in order, a row naming several (```a`, `b```)
    giving each. A table whose first column is not ``Field`` is skipped; so is one that
    does not start its own block (the document must not split a table with a paragraph:
    the rows after it render as text)."""
    tables: dict[str, list[str]] = {}
    label: str | None = None
    rows: list[str] | None = None
    for line in [*section(number, doc).splitlines(), ""]:
        heading = re.match(r"^### `([^`]+)`", line) or re.match(r"^\*\*([^*]+)\*\*", line)
        if heading:
            label = heading.group(1)
        if line.startswith("| Field |"):
            rows = []
            continue
        if rows is not None and line.startswith("|"):
            if not line.startswith("|---"):
                rows.extend(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
            continue
        if rows is not None:
            assert label is not None and label not in tables, f"a second table for {label}"
            tables[label] = rows
            rows = None
    return tables


def stray_table_rows(doc: str = DOC) -> list[str]:
    """Table rows that do not belong to a table: a ``|`` line after a line of prose, which
    Markdown renders as text (a paragraph put in the middle of a table splits it)."""
    stray: list[str] = []
    in_code = False
    previous = ""
    for line in doc.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif (
            not in_code
            and line.startswith("|")
            and previous.strip()
            and not previous.startswith("|")
        ):
            stray.append(line)
        previous = "" if in_code else line
    return stray


def request_examples(doc: str = DOC) -> dict[str, dict[str, Any]]:
    """The first JSON example of each request type (one that decodes as a request)."""
    found: dict[str, dict[str, Any]] = {}
    for body in re.findall(r"```json\n(.*?)```", doc, re.S):
        try:
            msg = p.decode(body)
        except p.ProtocolError:
            continue  # a reply or push
        found.setdefault(msg.type, json.loads(body))
    return found


EXAMPLES = request_examples()


def example(kind: str, **override: Any) -> dict[str, Any]:
    """The document's example of request `kind`, without its id, with `override` applied
    (None removes a field)."""
    fields = {k: v for k, v in EXAMPLES[kind].items() if k not in ("type", "id")}
    fields.update(override)
    return {k: v for k, v in fields.items() if v is not None}
