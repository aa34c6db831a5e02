"""docs/protocol.md stays true: every JSON example decodes, the hex dumps are exact."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import get_args

import msgpack  # type: ignore[import-untyped]
import pytest

import protocol as p
from engine import VARIANT_IDS, new_game
from tests.support.docmoves import Deal, moved_fields

DOC = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", DOC, re.S)
JSON_EXAMPLES = [body for lang, body in BLOCKS if lang == "json"]


def decode_any(frame: str | bytes) -> p.Struct:
    try:
        return p.decode(frame)
    except p.ProtocolError:  # a reply (some share their request's type)
        return p.decode_server(frame)


def test_every_message_type_has_an_example() -> None:
    types = {json.loads(body)["type"] for body in JSON_EXAMPLES}
    assert types >= set(p.CLIENT_MESSAGES) | set(p.SERVER_MESSAGES)


@pytest.mark.parametrize("body", JSON_EXAMPLES)
def test_json_example_decodes(body: str) -> None:
    msg = decode_any(body)
    assert decode_any(msgpack.packb(json.loads(body))) == msg


def test_hex_dumps_match_the_json_examples() -> None:
    dumps = 0
    for (lang, body), (next_lang, next_body) in itertools.pairwise(BLOCKS):
        if lang != "json" or next_lang != "text" or not re.fullmatch(r"[0-9a-f \n]+", next_body):
            continue
        msg = p.decode(body)
        assert p.encode_request(msg, True) == bytes.fromhex(next_body)
        dumps += 1
    assert dumps >= 3


def test_session_transcript_requests_decode() -> None:
    lines = [line[2:] for line in DOC.splitlines() if line.startswith("→ ")]
    assert len(lines) >= 4
    for line in lines:
        p.decode(line)


def test_version_ranges_are_what_the_server_takes() -> None:
    """Every statement of how many versions `hello`/`signin.redeem` may list, and which the
    server speaks, is the decoder's (a `hello` table said 1..8 while 16 were taken)."""
    spec = next(m for m in get_args(p.fields.Versions) if isinstance(m, p.fields.ListOf))
    bounds = f"{spec.min_len}..{spec.max_len}"
    stated = re.findall(r"`versions` \| array of (\d+\.\.\d+) integers", DOC)
    assert len(stated) >= 3 and set(stated) == {bounds}
    assert f"(`versions`, {spec.min_len} to {spec.max_len} integers)" in DOC
    spoken = sorted(p.SUPPORTED_VERSIONS)
    listed = ", ".join(map(str, spoken[:-1])) + f" and {spoken[-1]}"
    assert f"The current protocol version is **{p.PROTOCOL_VERSION}**" in DOC
    assert f"the server speaks **{listed}**" in DOC
    assert f"# Wire protocol (version {p.PROTOCOL_VERSION})" in DOC
    hello = {"type": "hello", "id": 1, "name": "alice"}
    assert p.decode(json.dumps({**hello, "versions": list(range(1, spec.max_len + 1))}))
    with pytest.raises(p.BadRequest):
        p.decode(json.dumps({**hello, "versions": list(range(1, spec.max_len + 2))}))


ENGINE_NOTE = re.compile(r"<!-- engine: (\{.*?\}) -->\n```json\n(.*?)```", re.S)
#: Fields of a `moved` example the engine does not decide (the request's, the clock's).
NOT_THE_ENGINES = {"type", "id", "game_id", "elapsed_ms", "view", "result"}


def test_every_moved_example_is_what_the_engine_makes() -> None:
    """Each `moved` example names its deal (an engine seed) and the moves before it in the
    comment above it; rebuilt as the server builds the reply, it is the same: a Fourteen Out
    pair is two `move` events to `f`, not one from pile to pile (what the doc once said)."""
    noted = ENGINE_NOTE.findall(DOC)
    moved = [body for body in JSON_EXAMPLES if json.loads(body)["type"] == "moved"]
    assert len(noted) == len(moved) >= 3, "a `moved` example without its engine comment"
    variants = set()
    for note, body in noted:
        deal: Deal = json.loads(note)
        example = json.loads(body)
        lean = "view" not in example
        made = moved_fields(deal, example["move"], lean=lean)
        assert {k: v for k, v in example.items() if k not in NOT_THE_ENGINES} == made, note
        variants.add(deal["variant"])
    assert "fourteen-out" in variants


def test_the_engine_check_catches_a_wrong_example() -> None:
    deal = Deal(variant="fourteen-out", seed=0, before=[])
    wrong = [{"type": "move", "cards": ["7D"], "from": "3", "to": "7"}]
    assert moved_fields(deal, "3 7", lean=False)["events"] != wrong


def notation_rows() -> list[tuple[str, str]]:
    """(variant, canonical move) of each row of protocol.md's "Move notation" table."""
    section = DOC.split("### Move notation", 1)[1].split("\n\n", 3)[2]
    rows: list[tuple[str, str]] = []
    variants: list[str] = []
    for line in section.splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0]:
            variants = re.findall(r"`([a-z-]+)`", cells[0])
        rows += [(v, move) for v in variants for move in re.findall(r"`([^`]+)`", cells[1])]
    return rows


def test_the_move_notation_table_is_the_engines() -> None:
    """Every move of the table parses, for every variant of its row, to itself (canonical);
    every variant has a row."""
    rows = notation_rows()
    assert {v for v, _ in rows} == set(VARIANT_IDS) and len(rows) >= 18
    for variant, move in rows:
        assert str(new_game(variant, 1).parse_move(move)) == move, (variant, move)


def test_the_sample_session_moves_as_the_engine_does() -> None:
    """§8's `moved` replies are those of Fourteen Out's engine seed 0, as its text says."""
    moved = [
        json.loads(line[2:])
        for line in DOC.splitlines()
        if line.startswith('← {"type":"moved"')  # the others hold views written {…}
    ]
    assert moved and "the engine's seed 0 of Fourteen Out" in DOC
    deal = Deal(variant="fourteen-out", seed=0, before=[])
    for reply in moved:
        made = moved_fields(deal, reply["move"], lean=False)
        assert {k: reply[k] for k in made} == made
