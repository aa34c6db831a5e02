"""A lean `moved` carries what a client without the rules needs (issue #27): the move in card
words, what it changed in the view, and the foundation moves safe to play; hints and refused
moves speak cards as people write them. Real WebSockets, real Redis, the real server."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

import protocol as p
from engine import VARIANT_IDS, from_view
from engine.patches import apply_patch
from engine.views import as_events, as_view
from engine.words import move_text, played_text, safe_moves
from tests.support.app import App
from tests.support.wsclient import Client

RULES_FREE = ("rules_free",)
CARD_CODE = re.compile(r"\b(10|[2-9AJQK])[CDHS]\b")


async def daily(c: Client, variant: str) -> dict[str, Any]:
    g = await c.request("daily.start", variant=variant)
    assert g["type"] == "game", g
    return g


@pytest.mark.parametrize("variant", VARIANT_IDS)
async def test_the_changes_of_each_move_turn_the_old_view_into_the_new(
    race_app: App, variant: str
) -> None:
    c = await race_app.client(
        f"follow{VARIANT_IDS.index(variant)}", versions=(6,), features=RULES_FREE
    )
    g = await daily(c, variant)
    view, seq, rng = g["view"], g["seq"], random.Random(variant)
    said: list[str] = []
    for _ in range(12):
        copy = from_view(as_view(view))
        legal = list(copy.legal_moves())
        undo = view["can_undo"] and rng.random() < 0.25
        if not legal and not undo:
            break
        if undo:
            r = await c.request("undo", game_id=g["game_id"], expected_seq=seq)
        else:
            r = await c.request(
                "move", game_id=g["game_id"], move=str(rng.choice(legal)), expected_seq=seq
            )
        assert r["type"] == "moved" and "view" not in r, r
        assert r["text"] and not CARD_CODE.search(r["text"]), r["text"]
        if undo:
            assert r["text"] == "Undo (counts as a move)"
        view = apply_patch(view, r["changes"])
        seq = r["seq"]
        said.append(r["text"])
        fresh = await c.request("game.get", game_id=g["game_id"])
        assert view == fresh["view"], (variant, r["move"])
        assert view["moves"] == seq
        assert fresh["log_text"] == said, "a reload lists the moves as they were said"
        if r["finished"]:
            break


async def test_safe_moves_are_the_engines_for_the_players_view(race_app: App) -> None:
    c = await race_app.client("safe", versions=(6,), features=RULES_FREE)
    g = await daily(c, "triple-deck")
    view, seq, offered, rng = g["view"], g["seq"], 0, random.Random(5)
    for _ in range(60):
        copy = from_view(as_view(view))
        legal = [m for m in copy.legal_moves() if m.dst != "f"]  # leave the Aces to be offered
        if not legal:
            break
        move = str(rng.choice(legal))
        r = await c.request("move", game_id=g["game_id"], move=move, expected_seq=seq)
        view, seq = apply_patch(view, r["changes"]), r["seq"]
        mine = from_view(as_view(view))
        expected = [{"move": str(m), "text": move_text(mine.view(), m)} for m in safe_moves(mine)]
        assert r["safe"] == expected
        fresh = await c.request("game.get", game_id=g["game_id"])
        assert fresh["safe"] == expected, "a reloaded game lists them too"
        for s in r["safe"]:
            assert s["text"].endswith("to the foundation")
        offered += len(r["safe"])
        if offered:
            played = await c.request(
                "move", game_id=g["game_id"], move=r["safe"][0]["move"], expected_seq=seq
            )
            assert played["type"] == "moved" and played["text"] == r["safe"][0]["text"]
            break
    assert offered, "a Triple Deck daily offers its Aces within 60 moves"


async def test_a_refused_move_names_cards_with_suit_symbols(race_app: App) -> None:
    c = await race_app.client("refused", versions=(6,), features=RULES_FREE)
    g = await daily(c, "triple-triangle")
    copy = from_view(as_view(g["view"]))
    legal = {str(m) for m in copy.legal_moves()}
    bad = next(
        str(k + 1)
        for k, card in enumerate(g["view"]["tableau"])
        if card not in (None, "??") and str(k + 1) not in legal
    )
    r = await c.request("move", game_id=g["game_id"], move=bad, expected_seq=0)
    assert r["type"] == "error" and r["code"] == "illegal_move", r
    reason = r["message"].split(": ", 1)[1]
    assert "is not one rank above or below" in reason
    assert re.search(r"[♣♦♥♠]", reason) and not CARD_CODE.search(reason), reason


async def test_a_hint_comes_in_card_words(race_app: App) -> None:
    c = await race_app.client("hintwords", versions=(6,), features=RULES_FREE)
    g = await daily(c, "fourteen-out")
    assert g["hint_penalty_ms"] == 30_000  # what each hint adds, as the page shows it
    h = await c.request("hint", game_id=g["game_id"], timeout=30)
    assert h["move"], h
    a, b = (g["view"]["piles"][int(p) - 1][-1] for p in h["move"].split())
    symbol = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
    words = " + ".join(x[:-1] + symbol[x[-1]] for x in (a, b))
    assert h["text"] == words


async def test_easthaven_says_the_suit_of_each_foundation(race_app: App) -> None:
    c = await Client.connect(race_app.url)
    w = await c.hello(name="suits", versions=(6,), features=RULES_FREE)
    info = {v["id"]: v for v in w["variant_info"]}
    assert info["triple-easthaven"]["foundation_suits"] == "CCCDDDHHHSSS"
    assert "foundation_suits" not in info["triple-deck"]
    assert w["features"] == ["rules_free"]


async def test_a_client_that_does_not_ask_gets_none_of_it(race_app: App) -> None:
    """The extras go only to a client that asked (`hello.features`): a client that does not
    know them (the terminal client, an older build that refuses unknown fields) gets the
    messages as before, and they decode with the strict decoder of this build."""
    c = await Client.connect(race_app.url)
    w = await c.hello(name="plain", versions=(6,), features=("no_such_feature",))
    assert w["features"] == [], "unknown features are ignored"
    info = {v["id"]: v for v in w["variant_info"]}
    assert "foundation_suits" not in info["triple-easthaven"]
    plain = await race_app.client("plainer", versions=(6,))
    for client in (c, plain):
        g = await daily(client, "triple-deck")
        assert {"log_text", "safe", "hint_penalty_ms"}.isdisjoint(g), g
        move = str(next(iter(from_view(as_view(g["view"])).legal_moves())))
        r = await client.request("move", game_id=g["game_id"], move=move, expected_seq=0)
        assert r["type"] == "moved" and {"text", "changes", "safe"}.isdisjoint(r), r
        h = await client.request("hint", game_id=g["game_id"], timeout=30)
        assert h["type"] == "hint" and "text" not in h, h
        for msg in (g, r, h):
            assert p.decode_server(json.dumps(msg))  # strict: no field it does not know
    # The same player's page then lists that move in words (replayed from the stored log).
    page = await Client.connect(race_app.url)
    await page.hello(token=plain.token, versions=(6,), features=RULES_FREE)
    fresh = await page.request("game.get", game_id=g["game_id"])
    assert fresh["log_text"] == [played_text(as_view(fresh["view"]), as_events(r["events"]))]
