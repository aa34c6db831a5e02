"""Board rendering of every variant: face-down cards never shown, pile numbers, width."""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

import pytest
from rich.console import Console

import protocol as p
from clients.cli.render import render_board, result_line
from engine import VARIANT_IDS, new_game
from engine.views import View

TOKEN = re.compile(r"\b(?:10|[2-9AJQK])[CDHS]\b")


def render(view: View, width: int = 80) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(render_board(view, width=width, ascii=True, elapsed_ms=61_000))
    return console.export_text()


def visible_cards(view: Mapping[str, object]) -> set[str]:
    """Every card text the view itself shows (multi-deck games repeat cards)."""
    return set(TOKEN.findall(str(view)))


def hidden_cards(game_json: Mapping[str, object], view: Mapping[str, object]) -> set[str]:
    """Cards of the full state that are face down or in the stock, and not visible anywhere."""
    text = str(game_json)
    faces = set(re.findall(r"'card': '(\w+)', 'up': False", text))
    stock = game_json.get("stock")
    if isinstance(stock, list):
        faces |= set(stock)
    return faces - visible_cards(view)


def positions(view: View) -> list[int]:
    """The numbered places of a board: Tri Peaks positions or piles."""
    places: Sequence[object] = (
        view["tableau"] if view["variant"] == "triple-triangle" else view["piles"]
    )
    return [n + 1 for n, place in enumerate(places) if place is not None]


@pytest.mark.parametrize("variant", VARIANT_IDS)
@pytest.mark.parametrize("seed", [1, 2024])
def test_board_hides_face_down_cards_and_fits(variant: str, seed: int) -> None:
    game = new_game(variant, seed)
    # Play a few moves so that boards show played, revealed and emptied places too.
    for _ in range(6):
        moves = list(game.legal_moves())
        if not moves:
            break
        game.apply(moves[-1])
    view = game.view()
    text = render(view)
    shown = set(TOKEN.findall(text))
    hidden = hidden_cards(game.to_json(), view)
    assert not shown & hidden, f"face-down cards shown: {shown & hidden}"
    assert shown <= visible_cards(view)
    if view["variant"] != "triple-triangle" and any(
        p.get("down") for p in view["piles"] if isinstance(p, dict)
    ):
        assert "░░░" in text
    header = " ".join(text.splitlines())
    for n in positions(view):
        assert re.search(rf"(?<!\d){n}(?!\d)", header), f"position {n} not numbered"
    widths = [len(line) for line in text.splitlines()]
    assert max(widths) <= 80, f"{variant} board is {max(widths)} columns wide"


def test_tripeaks_hidden_rows_are_backs() -> None:
    game = new_game("triple-triangle", 7)
    text = render(game.view())
    assert text.count("░░░") == 18  # rows 1-3 face down at the deal
    assert "Stock 23" in text


def test_pairing_board_shows_all_cards_of_fourteen_out() -> None:
    game = new_game("fourteen-out", 3)
    text = render(game.view())
    assert len(TOKEN.findall(text)) == 52
    assert "cleared 0/52" in text and "time 1:01" in text


def test_symbols_and_colours() -> None:
    game = new_game("fourteen-out", 3)
    console = Console(
        width=80, record=True, file=io.StringIO(), force_terminal=True, color_system="standard"
    )
    console.print(render_board(game.view()))
    styled = console.export_text(styles=True)
    assert "♥" in styled or "♦" in styled
    assert "\x1b[1;31m" in styled  # red suits in bold red


def test_results_against_par() -> None:
    from clients.cli.render import vs_par

    assert vs_par(26, 30, True) == "+4"  # four moves over a win's par
    assert vs_par(26, 26, True) == "par"
    assert vs_par(26, 12, False) == ""  # a game not won has no moves-over-par
    assert vs_par(936, 900, True) == "-36"  # scoring games: points under the best found


def test_a_flagged_result_reads_held_for_review() -> None:
    result = p.GameResult(
        won=True, over=True, cleared=52, score=52, time_ms=311, moves=26, resigned=False
    )
    plain = result_line("fourteen-out", result).plain
    assert "held for review" not in plain
    flagged = result_line("fourteen-out", replace(result, status="flagged")).plain
    assert "held for review" in flagged and "leaderboard" in flagged
