"""The browser client in headless Chromium against a real server and Redis.

The tests of this module share one server, one browser and the player `alice`, and run in
file order: alice registers, plays two daily games to the end, finishes a third, reads the
leaderboards, then races `bob`. `make screenshots` saves every screen to docs/screenshots/.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import websockets.sync.client
from playwright.sync_api import Browser, Page, expect

from engine import new_game
from engine.guide import guide
from engine.words import log_words
from tests.support.lookahead import line_that_goes_on
from tests.web.browser import (
    DATE,
    Player,
    WebServer,
    add_results,
    click_move,
    dom_cards,
    hidden_cards,
    open_player,
    play_line,
    register,
    resign,
    seen_cards,
    start_room_race,
    value,
    visible_cards,
    winning_line,
)


@pytest.fixture(scope="module")
def alice(browser: Browser, web_server: WebServer) -> Iterator[Player]:
    player = open_player(browser, web_server.http, None)
    yield player
    player.close()


def test_first_visit_asks_a_name_and_lists_the_days_deals(alice: Player) -> None:
    page = alice.page
    expect(page.locator("form.welcome")).to_be_visible()
    alice.shot("welcome")
    page.fill('input[name="name"]', "x")  # too short: the browser refuses it before sending
    page.click('form.welcome button[type="submit"]')
    expect(page.locator("form.welcome")).to_be_visible()
    register(alice, "alice")
    expect(page.locator(".deal")).to_have_count(6)
    expect(page.locator('.deal[data-state="new"]')).to_have_count(6)
    expect(page.locator("h1")).to_contain_text(DATE.isoformat())
    assert page.evaluate("localStorage.getItem('solitaire.token')")
    alice.shot("daily")


def test_an_illegal_move_snaps_back_with_the_reason(alice: Player) -> None:
    page = alice.page
    page.click('.deal[data-variant="fourteen-out"] a.primary')
    page.wait_for_selector(".board.pairing")
    tops = _pairing_tops(page)
    a, b = next(
        (i, j) for i in tops for j in tops if i < j and value(tops[i]) + value(tops[j]) != 14
    )
    page.click(f'[data-key="p{a}"]')
    expect(page.locator(f'[data-key="p{a}"]')).to_have_class(re.compile("selected"))
    page.click(f'[data-key="p{b}"]')
    expect(page.locator(".hint.error")).to_contain_text("14")
    # Said once, in the game's status line: no toast repeating it.
    reason = page.inner_text(".hint.error")
    assert page.inner_text("body").count(reason) == 1
    expect(page.locator(".toast")).to_have_count(0)
    expect(page.locator(".card.selected")).to_have_count(0)
    assert alice.moves() == 0
    alice.shot("illegal-move")


def test_fourteen_out_daily_won_by_keyboard_drag_and_clicks(
    alice: Player, web_server: WebServer
) -> None:
    page = alice.page
    game = new_game("fourteen-out", web_server.seed("fourteen-out"))
    line = winning_line("fourteen-out", web_server.seed("fourteen-out"))
    # First move by keyboard: focus the first card, arrow to the second pile's, Enter on each.
    a, b = map(int, line[0].split())
    page.focus('[data-key="p1"]')
    for _ in range(a - 1):
        page.keyboard.press("ArrowRight")
    expect(page.locator(f'[data-key="p{a}"]')).to_be_focused()
    page.keyboard.press("Enter")
    for _ in range(b - a):
        page.keyboard.press("ArrowRight")
    expect(page.locator(f'[data-key="p{b}"]')).to_be_focused()
    page.keyboard.press("Space")
    alice.wait_moves(1)
    game.apply(line[0])
    # Second move by drag and drop, one top card onto the other.
    a, b = map(int, line[1].split())
    page.drag_and_drop(f'[data-key="p{a}"]', f'[data-key="p{b}"]')
    alice.wait_moves(2)
    game.apply(line[1])
    expect(page.locator(".movelist li")).to_have_count(2)
    alice.shot("game-fourteen-out")
    play_line(alice, game, line[2:])
    assert game.won
    # Each move is one lean request and its lean reply: no view asked for, no `game.get`.
    sent = alice.sent_requests()
    first = next(i for i, r in enumerate(sent) if r["type"] == "move")
    moves = [r for r in sent[first:] if r["type"] == "move"]
    assert len(moves) >= len(line) and all("with_view" not in r for r in moves)
    assert "game.get" not in {r["type"] for r in sent[first:]}
    replies = [json.loads(f) for f in alice.frames]
    moved = [r for r in replies if r.get("type") == "moved"]
    assert len(moved) == len(line) and not any("view" in r for r in moved)
    dialog = page.locator("dialog.dialog")
    expect(dialog).to_contain_text("You won!")
    expect(dialog.locator('[data-result="rank"]')).to_have_text("#1 of 1")
    expect(dialog.locator("textarea.share")).to_have_value(
        re.compile(
            r"Solitaire daily 2030-06-15 · Fourteen Out\nWon · 52/52 cleared · .* · 26 moves"
        )
    )
    alice.shot("result")
    dialog.get_by_role("button", name="Daily deals").click()
    deal = page.locator('.deal[data-variant="fourteen-out"]')
    expect(deal).to_have_attribute("data-state", "done")


def test_tri_peaks_daily_resumes_after_reload_and_never_shows_a_hidden_card(
    alice: Player, web_server: WebServer
) -> None:
    page = alice.page
    seed = web_server.seed("triple-triangle")
    game = new_game("triple-triangle", seed)
    line = winning_line("triple-triangle", seed)
    page.goto(page.url.split("#")[0] + "#/daily")  # wherever the previous test left the page

    def no_hidden_card() -> None:
        hidden = hidden_cards(game)
        in_dom, in_frames = seen_cards(alice, "triple-triangle")
        assert in_dom & hidden == set()
        assert in_frames & hidden == set()

    page.click('.deal[data-variant="triple-triangle"] a.primary')
    page.wait_for_selector(".board.tripeaks")
    assert len(hidden_cards(game)) == 41  # 18 face down, 23 in the stock
    no_hidden_card()
    half = len(line) // 2
    play_line(alice, game, line[:half], no_hidden_card)
    alice.shot("game-tri-peaks")
    url = page.url
    listed = page.locator(".movelist li").all_inner_texts()
    assert listed == log_words("triple-triangle", seed, line[:half])  # in card words
    # The move list comes from the server (`game.log`), not from what this page remembers.
    page.evaluate("""() => Object.keys(localStorage)
        .filter((k) => k.startsWith("solitaire.moves."))
        .forEach((k) => localStorage.removeItem(k))""")
    page.reload()
    page.wait_for_selector(".board.tripeaks")
    expect(page).to_have_url(url)
    alice.wait_moves(half)
    expect(page.locator(".movelist li")).to_have_count(half)
    assert page.locator(".movelist li").all_inner_texts() == listed
    page.click('[data-action="hint"]')
    expect(page.locator(".hint")).to_contain_text("+0:30 on your time")
    expect(page.locator(".hint")).to_contain_text(re.compile(r"Hint: (\S+ to the foundation|Draw)"))
    expect(page.locator('[data-stat="hints"]')).to_have_text("Hints 1 (+0:30)")
    expect(page.locator(".card.hinted")).not_to_have_count(0)
    alice.shot("hint")
    play_line(alice, game, line[half:], no_hidden_card)
    assert game.won
    dialog = page.locator("dialog.dialog")
    expect(dialog).to_contain_text("You won!")
    expect(dialog.locator("textarea.share")).to_have_value(re.compile(r"1 hint"))
    dialog.get_by_role("button", name="See the board").click()


def test_triple_deck_moves_by_clicks_then_finishes(alice: Player, web_server: WebServer) -> None:
    page = alice.page
    game = new_game("triple-deck", web_server.seed("triple-deck"))
    page.goto(page.url.split("#")[0] + "#/daily")
    page.click('.deal[data-variant="triple-deck"] a.primary')
    page.wait_for_selector(".board.tableau")
    expect(page.locator(".board .card.back").first).to_be_visible()
    assert page.locator(".board .card.back[data-card]").count() == 0
    played: list[str] = []
    while len([m for m in played if m != "d"]) < 4 and len(played) < 80:
        # Draw until a card can go somewhere, then play it by clicks (foundations first).
        moves = sorted(
            (str(m) for m in game.legal_moves() if str(m) != "d"),
            key=lambda m: not m.endswith(" f"),
        )
        move = moves[0] if moves else "d"
        click_move(alice, "triple-deck", move)
        played.append(move)
        alice.wait_moves(len(played))
        game.apply(move)
        dom = dom_cards(alice)
        assert len(dom) >= 7 and dom - visible_cards(game) == Counter()  # nothing unseen shown
    assert len([m for m in played if m != "d"]) == 4, played
    expect(page.locator(".movelist li")).to_have_count(len(played))
    expect(page.locator('[data-stat="points"]')).to_have_text(f"Score {game.score} / 936")
    alice.shot("game-triple-deck")
    page.get_by_role("button", name="Finish").click()
    page.locator("dialog.dialog").get_by_role("button", name="Finish").click()
    dialog = page.locator("dialog.dialog")
    expect(dialog.locator("h2")).to_have_text("Finished")
    expect(dialog.locator('[data-result="points"]')).to_have_text(
        f"{game.score} point{'' if game.score == 1 else 's'}"
    )
    # Where the server speaks protocol 3 the game is finished (`finish`), not resigned.
    frames = [json.loads(f) for f in alice.frames]
    version = [f["version"] for f in frames if f.get("type") == "welcome"][-1]
    ended = [f for f in frames if f.get("type") == "finished"][-1]
    assert ended["result"]["resigned"] is (version < 3)
    assert ended["result"]["score"] == game.score
    dialog.get_by_role("button", name="Daily deals").click()
    expect(page.locator('.deal[data-state="done"]')).to_have_count(3)
    expect(page.locator('.deal[data-variant="triple-deck"]')).to_contain_text("Finished")
    alice.shot("daily-status")


def test_triple_easthaven_moves_by_clicks(alice: Player, web_server: WebServer) -> None:
    page = alice.page
    game = new_game("triple-easthaven", web_server.seed("triple-easthaven"))
    page.goto(web_server.http + "/#/play/triple-easthaven")
    page.wait_for_selector(".board.v-triple-easthaven")
    played: list[str] = []
    while len(set(played) - {"d"}) < 6 and len(played) < 60:
        # A move not played yet (foundation cards and long runs first), else deal a row.
        moves = [str(m) for m in game.legal_moves() if str(m) != "d" and str(m) not in played]
        moves.sort(
            key=lambda m: (not m.startswith("f"), -int(m.split()[2]) if len(m.split()) == 3 else 0)
        )
        move = moves[0] if moves else "d"
        click_move(alice, "triple-easthaven", move)
        played.append(move)
        alice.wait_moves(len(played))
        game.apply(move)
        dom = dom_cards(alice)
        assert len(dom) >= 12 and dom - visible_cards(game) == Counter()
    assert len(set(played) - {"d"}) == 6, played
    expect(page.locator('[data-stat="points"]')).to_have_text(f"Cleared {game.cleared} / 156")
    alice.shot("game-triple-easthaven")


def test_leaderboard_shows_top_around_me_and_my_rank(alice: Player, web_server: WebServer) -> None:
    page = alice.page
    page.goto(web_server.http + "/#/daily")
    page.click('.deal[data-variant="triple-triangle"] >> text=Leaderboard')
    row = page.locator("table.ranking tbody tr.me")
    expect(row).to_contain_text("alice")
    expect(row.locator("td").first).to_have_text("1")
    expect(page.locator("[data-myrank]")).to_have_text("Your rank: #1 of 1")
    expect(page.locator(".summary")).to_contain_text("Tri Peaks · 2030-06-15")
    alice.shot("leaderboard")
    page.click('[data-mode="around"]')
    expect(page.locator(".paging")).to_contain_text("around you")
    expect(page.locator("table.ranking tbody tr.me")).to_have_count(1)


def test_leaderboard_pages(alice: Player, web_server: WebServer) -> None:
    add_results(web_server.http, "fourteen-out", [f"resigner{i:02}" for i in range(21)])
    page = alice.page
    page.goto(web_server.http + "/#/boards/fourteen-out")
    rows = page.locator("table.ranking tbody tr")
    expect(rows).to_have_count(20)
    expect(page.locator(".paging")).to_contain_text("1–20 of 22")
    expect(rows.first).to_contain_text("alice")  # the only win ranks first
    page.get_by_role("button", name="Next ›").click()
    expect(page.locator(".paging")).to_contain_text("21–22 of 22")
    expect(rows).to_have_count(2)
    expect(rows.first.locator("td").first).to_have_text("21")
    expect(page.get_by_role("button", name="Next ›")).to_be_disabled()
    page.get_by_role("button", name="‹ Previous").click()
    expect(page.locator(".paging")).to_contain_text("1–20 of 22")


def test_rules_are_written_for_clicking_and_tapping(alice: Player) -> None:
    page = alice.page
    page.click('[data-nav="rules"]')
    page.click(".rules .tabs >> text=Triple Easthaven")
    rules = page.locator('[data-rules="triple-easthaven"]')
    expect(rules).to_contain_text(guide("triple-easthaven").play[0])
    expect(rules).not_to_contain_text(
        "f8H 5"
    )  # the terminal's notation (tests/web/test_rules_page.py)
    alice.shot("rules")


def test_two_browsers_race_each_other(
    browser: Browser, web_server: WebServer, alice: Player
) -> None:
    bob = open_player(browser, web_server.http, "bob")
    try:
        a, b = alice.page, bob.page
        a.click('[data-nav="race"]')
        a.click('[data-action="create"]')
        code = a.locator("[data-code]")
        expect(code).to_have_text(re.compile(r"[A-Z0-9]{4,8}"))
        bob.page.click('[data-nav="race"]')
        b.fill('input[aria-label="Room code"]', "ZZZZ")
        b.click('[data-action="join"]')
        expect(b.locator(".toast.error")).to_have_text(
            "No open room has that code. Check it with the room's creator."
        )
        b.fill('input[aria-label="Room code"]', code.inner_text())
        b.click('[data-action="join"]')
        expect(a.locator(".racers li")).to_have_count(2)
        alice.shot("race-room")
        a.click('[data-action="start"]')
        expect(a.locator('[data-race="countdown"] [data-countdown]')).to_have_text(
            re.compile(r"\d|Go!")
        )
        alice.shot("race-countdown")
        for page in (a, b):
            page.wait_for_selector(".board.pairing")
        expect(a.locator('[data-stat="hints"]')).to_have_count(0)  # no hints in races
        # Someone watches: the racers see how many do.
        race_id = a.evaluate("localStorage.getItem('solitaire.race')")
        with websockets.sync.client.connect(web_server.process.url) as spectator:

            def ask(msg: dict[str, Any]) -> dict[str, Any]:
                spectator.send(json.dumps(msg))
                while True:
                    reply: dict[str, Any] = json.loads(spectator.recv(timeout=10))
                    if reply.get("id") == msg["id"]:
                        return reply

            assert (
                ask({"type": "hello", "id": 1, "versions": [3], "name": "carol_watch"})["type"]
                == "welcome"
            )
            assert (
                ask({"type": "race.watch", "id": 2, "race_id": race_id})["type"] == "race.watching"
            )
            for page in (a, b):
                expect(page.locator("[data-spectators]")).to_have_text("1 watching")
        # Alice plays two pairs; bob sees her progress live. The race deal is random: the
        # pairs are chosen so that her game goes on after them (a pair that ended it would
        # stop her clock and make her "stuck", not "resigned at", below).
        started = next(f for f in map(json.loads, alice.frames) if f.get("type") == "race.started")
        line = line_that_goes_on(started["view"], 2)
        assert line, "a race deal always has a first move that keeps the game in play"
        for n, pair in enumerate(line, 1):
            tops = _pairing_tops(a)
            i, j = map(int, pair.split())
            assert value(tops[i]) + value(tops[j]) == 14, (pair, tops)  # the page shows it
            click_move(alice, "fourteen-out", pair)
            alice.wait_moves(n)
            expect(b.locator('[data-racer="alice"] [data-progress]')).to_have_text(str(2 * n))
        bob.shot("race-running")
        # The clocks show a second or more (each ticks on its page's timer: polled, as a
        # loaded machine may run a page's timer late).
        for page in (a, b):
            page.wait_for_function(
                "() => { const t = document.querySelector('.game .clock')?.textContent || '';"
                " const m = t.match(/(\\d+):(\\d+)/); return !!m && (+m[1] * 60 + +m[2]) >= 1; }"
            )
        shown = {p: _seconds(p.inner_text(".game .clock")) for p in (a, b)}
        for player in (bob, alice):
            resign(player)
        for page in (a, b):
            expect(page.locator("[data-race-result]")).to_be_visible()
            # The clocks stop where they stood, never back; nobody who lost is "finished".
            assert _seconds(page.inner_text(".game .clock")) >= shown[page]
            # Both resigned, and both pages say so of both racers (`resigned`, protocol 10):
            # never "stuck" (nor a vague "ended") for a resignation.
            for racer in ("alice", "bob"):
                expect(page.locator(f'[data-racer="{racer}"] [data-state]')).to_have_text(
                    re.compile(r"^resigned at \d+/52$")
                )
            expect(page.locator("[data-state]", has_text="finished")).to_have_count(0)
            # A private room is casual (docs/fairplay.md): places, no rating.
            expect(page.locator('[data-racer="alice"] [data-rating]')).to_have_text("unrated")
        expect(a.locator("[data-race-result]")).to_have_text("You won the race!")
        alice.shot("race-result")
        a.click('[data-nav="boards"]')
        a.click('[data-board="rating"]')
        expect(a.locator("[data-myrank]")).to_have_text("You are not on this board yet.")
        expect(a.locator("table.ranking tbody tr")).to_have_count(0)
        alice.shot("leaderboard-races")
    finally:
        bob.close()


def test_a_racer_whose_game_is_over_races_again_while_the_race_goes_on(
    browser: Browser, web_server: WebServer
) -> None:
    """Cheater review F7: a rival who never moves kept a racer who had resigned out of every
    race until the time limit. The page offers a new race once one's own game is over; the
    race left behind goes on, and its news no longer takes the page back to it."""
    dana = open_player(browser, web_server.http, "dana")
    erin = open_player(browser, web_server.http, "erin")
    fay = open_player(browser, web_server.http, "fay")
    try:
        d, e = dana.page, erin.page
        start_room_race(d, e)
        for page in (d, e):
            page.wait_for_selector(".board.pairing")
        old_race = e.evaluate("localStorage.getItem('solitaire.race')")
        resign(erin)  # dana plays on (idle): the race runs
        e.click('[data-action="new-race"]')
        # Erin races fay in a room of her own ("already in race" before).
        start_room_race(e, fay.page)
        expect(e.locator(".toast.error")).to_have_count(0)
        e.wait_for_selector(".board.pairing")
        new_race = e.evaluate("localStorage.getItem('solitaire.race')")
        assert new_race != old_race
        resign(dana)  # the race left behind ends now
        expect(d.locator("[data-race-result]")).to_be_visible()
        expect(d.locator('[data-racer="erin"] [data-state]')).to_have_text(
            re.compile(r"^resigned at \d+/52$")
        )
        # Erin's page stays in her new race, even when dana offers the old one's rematch.
        d.click('[data-action="rematch"]')
        offer = e.locator("[data-rematch-offer]")
        expect(offer).to_contain_text("dana asks for a rematch")
        offer.locator('[data-action="accept-rematch"]').click()
        expect(e.locator(".toast.error")).to_have_text("You are already queued or in another race.")
        expect(e.locator("[data-race-result]")).to_have_count(0)
        expect(e.locator(".board.pairing")).to_be_visible()
        assert e.evaluate("localStorage.getItem('solitaire.race')") == new_race
    finally:
        for player in (dana, erin, fay):
            player.close()


def _seconds(clock: str) -> int:
    """ "1:05" -> 65."""
    minutes, seconds = clock.split(":")[-2:]
    return int(minutes) * 60 + int(seconds)


def _pairing_tops(page: Page) -> dict[int, str]:
    """Pile number -> its top card, as the page shows them."""
    tops: dict[int, str] = {}
    for node in page.locator(".board.pairing .pile > .card[data-card]:last-child").all():
        key = node.get_attribute("data-key")
        card = node.get_attribute("data-card")
        if key and card:
            tops[int(key[1:])] = card
    return tops
