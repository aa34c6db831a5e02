"""The `moved` replies docs/protocol.md shows, rebuilt from the real engine as the server
builds them (server/handlers/games.py `_play` and `_follow`): events, the move in words
(`played_text`), what it changed in the view (`view_patch`) and the safe moves.

Each `moved` example of protocol.md follows an HTML comment naming its deal and the moves
played before it, e.g. ``<!-- engine: {"variant": "fourteen-out", "seed": 0, "before": []} -->``;
`tests/protocol/test_docs.py` rebuilds every one and compares. ``python -m
tests.support.docmoves VARIANT SEED MOVE [BEFORE...]`` prints one, to write a new example.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TypedDict

from engine import new_game
from engine.patches import view_patch
from engine.views import json_maps
from engine.words import move_text, played_text, safe_moves


class Deal(TypedDict):
    """The comment before an example: the engine deal and the moves played before it."""

    variant: str
    seed: int
    before: list[str]


def moved_fields(deal: Deal, move: str, *, lean: bool) -> dict[str, object]:
    """The fields of the server's `moved` reply to ``move`` that the engine decides:
    ``move`` (canonical), ``seq``, ``events``, ``finished``; with ``lean`` (a version 2+
    reply without the view, to a client that said ``rules_free``) ``text``, ``changes`` and
    ``safe``."""
    game = new_game(deal["variant"], deal["seed"])
    for before in deal["before"]:
        game.play(before)
    canonical = str(game.parse_move(move))
    events = game.apply(canonical).events()
    view = game.view()
    out: dict[str, object] = {
        "move": canonical,
        "seq": len(deal["before"]) + 1,
        "events": [dict(e) for e in json_maps(events)],
        "finished": bool(view["over"]),
    }
    if lean:
        out["text"] = played_text(view, events)
        out["changes"] = view_patch(view, events)
        out["safe"] = [
            {"move": str(m), "text": move_text(view, m)}
            for m in ([] if view["over"] else safe_moves(game, view))
        ]
    return out


def main(argv: Sequence[str]) -> None:
    variant, seed, move, *before = argv
    deal = Deal(variant=variant, seed=int(seed), before=list(before))
    print(json.dumps(moved_fields(deal, move, lean=True), ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1:])
