"""History and the replay viewer (`#/history`, `#/replay/...`, issue #27) in headless Chromium.

The server of this module starts 25 s before midnight (UTC) of 2030-06-15, so a game played
at once belongs to a day that is over, and closed, a few seconds later: the replay is refused
while the day runs, then steps through the server's views by buttons, slider and keys."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from engine import from_view
from engine.words import log_words
from tests.support.loopthread import LoopThread
from tests.support.procs import ServerProcess
from tests.support.wsclient import Client
from tests.web.browser import T0_MS, WebServer, open_player, server_flags

DAY = "2030-06-15"
VARIANT = "triple-triangle"
MIDNIGHT_MS = T0_MS + 12 * 3600 * 1000


@pytest.fixture(scope="module")
def late_server(tmp_path_factory: pytest.TempPathFactory, secret: str) -> Iterator[WebServer]:
    """The server with its clock at 23:59:35 on 2030-06-15."""
    flags = list(server_flags(secret))
    i = flags.index("--clock-offset-ms")
    flags[i + 1] = str(int(flags[i + 1]) + MIDNIGHT_MS - T0_MS - 25_000)
    data: Path = tmp_path_factory.mktemp("late") / "data"
    with ServerProcess(data, tuple(flags)) as srv:
        yield WebServer(f"http://127.0.0.1:{srv.port}", secret, srv)


async def play(url: str, token: str, n: int) -> tuple[str, list[str]]:
    """Today's Tri Peaks for the page's player: at least ``n`` legal moves (plays before
    draws) up to one that can be undone, the undo, then resign."""
    c = await Client.connect(url, binary=False)
    await c.hello(token=token, versions=(6,))
    g = await c.request("daily.start", variant=VARIANT)
    played: list[str] = []
    while True:
        now = await c.request("game.get", game_id=g["game_id"])
        if len(played) >= n and now["view"]["can_undo"]:  # a draw cannot be undone
            break
        legal = [str(m) for m in from_view(now["view"]).legal_moves()]
        move = next((m for m in legal if m != "d"), legal[0])
        reply = await c.request("move", game_id=g["game_id"], move=move, expected_seq=len(played))
        assert reply["type"] == "moved", reply
        played.append(move)
    undo = await c.request("undo", game_id=g["game_id"], expected_seq=len(played))
    assert undo["type"] == "moved", undo
    assert (await c.request("resign", game_id=g["game_id"]))["type"] == "finished"
    await c.close()
    return str(g["game_id"]), [*played, "undo"]


def api_status(http: str, path: str) -> int:
    try:
        with urllib.request.urlopen(http + path) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


def board_cards(page: Page) -> list[str]:
    return sorted(
        str(n.get_attribute("data-card")) for n in page.locator(".board [data-card]").all()
    )


def view_cards(view: Any) -> list[str]:
    """The face-up cards a view names (what its board must show, no more)."""
    found: list[str] = []
    for entry in view.get("tableau", []):
        if isinstance(entry, str) and entry != "??":
            found.append(entry)
    if view.get("foundation"):
        found.append(view["foundation"][-1])  # the pile's top card
    return sorted(found)


def test_a_closed_days_game_is_replayed_step_by_step(
    browser: Browser, late_server: WebServer
) -> None:
    ida = open_player(browser, late_server.http, "ida")
    page = ida.page
    token = str(page.evaluate("localStorage.getItem('solitaire.token')"))
    with LoopThread() as loop:
        game_id, moves = loop.run(play(late_server.http.replace("http", "ws") + "/ws", token, 3))

    # While the day runs the replay is refused: no board, no hidden card early.
    page.goto(f"{late_server.http}/#/replay/{game_id}")
    expect(page.locator("p.error")).to_contain_text("once its day is over")
    expect(page.locator(".board")).to_have_count(0)
    page.goto(f"{late_server.http}/#/history/{VARIANT}")
    row = page.locator(f'tr[data-date="{DAY}"]')
    expect(row).to_contain_text("Resigned")
    expect(row).to_contain_text("after the day")

    # After midnight the day is closed (every game of it settled) and the game replays.
    deadline = time.monotonic() + 60  # polled once a second: the API is rate limited
    while api_status(late_server.http, f"/api/v1/games/{game_id}/replay") != 200:
        assert time.monotonic() < deadline, "the day was not closed in time"
        time.sleep(1)
    page.reload()
    replay_link = page.locator(f'tr[data-date="{DAY}"] a[data-replay]')
    expect(replay_link).to_have_text("Replay")
    replay_link.click()
    expect(page).to_have_url(re.compile(r"#/replay/"))
    expect(page.locator("[data-step]")).to_have_text(f"The deal · {len(moves)} moves in all")
    expect(page.locator('[data-nav="history"]')).to_have_attribute("aria-current", "page")
    expect(page.locator(".gamebar a[data-player]")).to_have_text("ida")
    with urllib.request.urlopen(f"{late_server.http}/api/v1/games/{game_id}/replay") as r:
        steps = json.load(r)["steps"]
    expect(page.locator('[data-step-to="back"]')).to_be_disabled()

    def at(i: int) -> None:
        # Moves in card words, as the server words them (never the terminal's notation).
        label = "The deal" if i == 0 else f"Move {i} of {len(moves)}: {steps[i]['text']}"
        expect(page.locator("[data-step]")).to_contain_text(label)
        expect(page.locator("#replay-step")).to_have_value(str(i))
        assert board_cards(page) == view_cards(steps[i]["view"]), i  # drawn with the label

    assert [step["text"] for step in steps[1:]] == log_words(
        VARIANT, late_server.seed(VARIANT), moves
    )
    assert steps[-1]["text"] == "Undo (counts as a move)"
    at(0)
    page.click('[data-step-to="forward"]')
    at(1)
    page.keyboard.press("ArrowRight")  # keys step too
    at(2)
    page.keyboard.press("End")
    at(len(moves))
    expect(page.locator('[data-step-to="forward"]')).to_be_disabled()
    # The undo took the last move back: the board of the move before it again.
    assert view_cards(steps[-1]["view"]) == view_cards(steps[-3]["view"])
    page.keyboard.press("ArrowLeft")
    at(len(moves) - 1)
    page.keyboard.press("Home")
    at(0)
    page.locator("#replay-step").fill("2")  # the slider
    at(2)
    page.click('[data-move-index="1"]')  # a move in the list
    at(1)
    expect(page.locator('[data-move-index="1"]')).to_have_attribute("aria-current", "step")
    ida.shot("replay")

    # The same game by date and variant (your own), and a link that can be shared.
    page.goto(f"{late_server.http}/#/replay/{DAY}/{VARIANT}")
    expect(page.locator("[data-step]")).to_have_text(f"The deal · {len(moves)} moves in all")
    other = open_player(browser, late_server.http, "jon", viewport=(390, 800))  # a phone
    other.page.goto(f"{late_server.http}/#/replay/{game_id}")
    expect(other.page.locator("[data-step]")).to_have_text(f"The deal · {len(moves)} moves in all")
    assert other.page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    other.shot("phone-replay")
    other.close()
    ida.close()
