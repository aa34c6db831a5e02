"""The board written for people and how it feels (issue #27): moves, hints and errors in card
words, one place for an error, one lean request per move, a resync when the game changed
elsewhere, animations that respect reduced motion, the server's safe moves played as a
setting, a win celebration, a board sized to the screen, and a live region for screen
readers. A real server, a real headless Chromium."""

from __future__ import annotations

import asyncio
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from playwright.sync_api import Browser, Page, WebSocketRoute, expect

from engine import new_game
from engine.words import played_text
from tests.support.wsclient import Client
from tests.web.browser import (
    TIMEOUT_MS,
    Player,
    WebServer,
    landed,
    losing_line,
    open_player,
    play_line,
    winning_line,
)

CARD_CODE = re.compile(r"\b(10|[2-9AJQK])[CDHS]\b")
WORDS = re.compile(r"^(10|[2-9AJQK])[♣♦♥♠] \+ (10|[2-9AJQK])[♣♦♥♠]$")
#: Counts the animations the page starts (Element.animate), before the page's own scripts.
COUNT_ANIMATIONS = """
window.__animations = 0;
const animate = Element.prototype.animate;
Element.prototype.animate = function (...args) {
  window.__animations += 1;
  return animate.apply(this, args);
};
"""


def start(player: Player, http: str, variant: str) -> Page:
    page = player.page
    page.goto(f"{http}/#/play/{variant}")
    page.wait_for_selector(f".board.v-{variant} .card")
    return page


def messages(frames: list[str]) -> list[dict[str, Any]]:
    return [json.loads(f) for f in frames]


def test_one_move_is_one_request_and_one_reply_said_in_card_words(
    browser: Browser, web_server: WebServer
) -> None:
    erin = open_player(browser, web_server.http, "erin")
    try:
        page = start(erin, web_server.http, "fourteen-out")
        seed = web_server.seed("fourteen-out")
        game, line = new_game("fourteen-out", seed), winning_line("fourteen-out", seed)
        sent, received = len(erin.sent), len(erin.frames)
        play_line(erin, game, line[:1])
        back = messages(erin.frames[received:])
        assert back and back[0]["type"] == "moved" and "view" not in back[0], back
        words = back[0]["text"]
        assert WORDS.match(words), words
        expect(page.locator(".movelist li")).to_have_text([words])
        # A screen reader hears the move and where the game stands.
        live = page.locator('[data-live="moves"]')
        expect(live).to_have_attribute("aria-live", "polite")
        expect(live).to_contain_text(f"{words}. Move 1, 2 of 52 cleared.")
        # The keys that do something here: no draw key in a game without a stock.
        keys = page.inner_text(".keys")
        assert "U undo (counts as a move)" in keys and "H hint" in keys and " D " not in keys
        expect(page.locator('[data-action="undo"]')).to_have_text("Undo (+1 move)")
        # The removed cards are a count, not a card back that looks like a stock.
        assert page.locator(".discard .card.back").count() == 0
        expect(page.locator(".discard")).to_contain_text("2removed")
        # A hint in card words.
        page.click('[data-action="hint"]')
        expect(page.locator(".hint")).to_contain_text(re.compile(r"Hint: \S+ \+ \S+ \("))
        hint = page.inner_text(".hint")
        assert CARD_CODE.search(hint) is None, hint
        # One move was one request and one reply: the socket keeps order, so what the move
        # brought about was sent before the hint and answered before the hint's answer, which
        # the page shows now (no fixed wait for stragglers).
        out, back = messages(erin.sent[sent:]), messages(erin.frames[received:])
        assert [m["type"] for m in out] == ["move", "hint"] and "with_view" not in out[0], out
        assert [m["type"] for m in back] == ["moved", "hint"], back
        # The daily list counts the hint's 30 s as the game's clock does.
        page.goto(f"{web_server.http}/#/daily")
        status = page.locator('.deal[data-variant="fourteen-out"]')
        expect(status).to_contain_text(re.compile(r"Playing · 1 moves · 0:3\d"))
    finally:
        erin.close()


def test_a_hint_on_a_lost_position_says_it_counted(browser: Browser, web_server: WebServer) -> None:
    """A position the solver proves lost has no hint to give, and the answer is worth one (the
    solver sees every card): the page says so, and that it counted, with its penalty, not
    "not counted" (that is only for a search that ran out of time)."""
    hana = open_player(browser, web_server.http, "hana")
    try:
        page = start(hana, web_server.http, "fourteen-out")
        seed = web_server.seed("fourteen-out")
        line = losing_line("fourteen-out", seed)
        assert line, "today's deal has a short line to a lost position"
        play_line(hana, new_game("fourteen-out", seed), line)
        received = len(hana.frames)
        page.click('[data-action="hint"]')
        status = page.locator(".hint")
        expect(status).to_contain_text("No line wins from here")
        expect(status).to_contain_text("that counts as a hint (+0:30 on your time)")
        expect(page.locator('[data-stat="hints"]')).to_have_text("Hints 1 (+0:30)")
        expect(page.locator(".card.hinted")).to_have_count(0)
        answer = [m for m in messages(hana.frames[received:]) if m["type"] == "hint"]
        assert answer and answer[0].get("move") is None and answer[0]["hints"] == 1, answer
    finally:
        hana.close()


def test_the_board_takes_most_of_a_wide_screen(browser: Browser, web_server: WebServer) -> None:
    fay = open_player(browser, web_server.http, "fay")
    try:
        page = start(fay, web_server.http, "fourteen-out")
        boxes = [b for b in (n.bounding_box() for n in page.locator(".board .card").all()) if b]
        left = min(b["x"] for b in boxes)
        right = max(b["x"] + b["width"] for b in boxes)
        assert right - left >= 0.85 * 1280, (left, right)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
        for variant in ("triple-triangle", "triple-deck", "triple-easthaven"):
            page = start(fay, web_server.http, variant)
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, variant
            fay.shot(f"wide-{variant}")
    finally:
        fay.close()


def test_a_refused_move_is_said_once_in_card_words(browser: Browser, web_server: WebServer) -> None:
    gus = open_player(browser, web_server.http, "gus")
    try:
        page = start(gus, web_server.http, "triple-triangle")
        game = new_game("triple-triangle", web_server.seed("triple-triangle"))
        legal = {str(m) for m in game.legal_moves()}
        view: Any = game.view()
        bad = next(
            str(k + 1)
            for k, c in enumerate(view["tableau"])
            if c not in (None, "??") and str(k + 1) not in legal
        )
        page.click(f'[data-pos="{bad}"]')
        status = page.locator("[data-status].error")
        expect(status).to_contain_text("is not one rank above or below")
        reason = status.inner_text()
        assert re.search(r"[♣♦♥♠] is not one rank above or below \S+[♣♦♥♠]", reason), reason
        assert CARD_CODE.search(reason) is None
        assert page.inner_text("body").count(reason) == 1, "shown once"
        expect(page.locator(".toast")).to_have_count(0)
        assert gus.moves() == 0
    finally:
        gus.close()


def test_a_move_made_elsewhere_is_picked_up(browser: Browser, web_server: WebServer) -> None:
    """Another device plays; the page's next move is refused as stale (`conflict`), the page
    reloads the game and goes on from the server's position."""
    hal = open_player(browser, web_server.http, "hal")
    try:
        page = start(hal, web_server.http, "fourteen-out")
        seed = web_server.seed("fourteen-out")
        game, line = new_game("fourteen-out", seed), winning_line("fourteen-out", seed)
        token = page.evaluate("localStorage.getItem('solitaire.token')")
        url = web_server.http.replace("http://", "ws://") + "/ws"

        async def elsewhere() -> None:
            c = await Client.connect(url, binary=False)
            await c.hello(token=token, versions=(6,), features=("rules_free",))
            g = await c.request("daily.start", variant="fourteen-out")
            r = await c.request("move", game_id=g["game_id"], move=line[0], expected_seq=0)
            assert r["type"] == "moved", r
            await c.close()

        with ThreadPoolExecutor(1) as pool:
            pool.submit(lambda: asyncio.run(elsewhere())).result()
        game.apply(line[0])
        sent = len(hal.sent)
        a, b = map(int, line[1].split())
        page.click(f'[data-key="p{a}"]')
        page.click(f'[data-key="p{b}"]')
        hal.wait_moves(1)  # the server's position, reloaded
        types = [m["type"] for m in messages(hal.sent[sent:])]
        assert types[:2] == ["move", "game.get"], types
        expect(page.locator(".movelist li")).to_have_count(1)
        play_line(hal, game, line[1:2])
        assert hal.moves() == 2
        expect(page.locator(".movelist li")).to_have_count(2)
    finally:
        hal.close()


def test_a_gap_in_seq_is_a_resync(browser: Browser, web_server: WebServer) -> None:
    """A `moved` whose seq skips one (a move the page never heard of): the page asks
    `game.get` and shows the server's position, with no rule of its own."""
    mia = open_player(browser, web_server.http, "mia")
    try:
        page = mia.page
        sent: list[dict[str, Any]] = []
        bumped: list[dict[str, Any]] = []

        def route(ws: WebSocketRoute) -> None:
            server = ws.connect_to_server()

            def to_server(message: str | bytes) -> None:
                sent.append(json.loads(message))
                server.send(message)

            def to_page(message: str | bytes) -> None:
                msg = json.loads(message)
                if msg.get("type") == "moved" and not bumped:
                    bumped.append(msg)
                    msg["seq"] += 1  # as if a move made elsewhere came in between
                    message = json.dumps(msg)
                ws.send(message)

            ws.on_message(to_server)
            server.on_message(to_page)

        page.route_web_socket(re.compile(r".*/ws$"), route)
        page.reload()
        landed(page)  # else the late daily list may cover the game opened next
        seed = web_server.seed("triple-triangle")
        line = winning_line("triple-triangle", seed)
        start(mia, web_server.http, "triple-triangle")
        play_line(mia, new_game("triple-triangle", seed), line[:1])
        assert bumped, "the reply went through the route"
        types = [m["type"] for m in sent]
        first = types.index("move")
        assert types[first : first + 2] == ["move", "game.get"], types
        expect(page.locator(".movelist li")).to_have_text([bumped[0]["text"]])
    finally:
        mia.close()


def test_cards_glide_unless_reduced_motion_is_asked(
    browser: Browser, web_server: WebServer
) -> None:
    seed = web_server.seed("triple-triangle")
    line = winning_line("triple-triangle", seed)
    counts = {}
    for reduced in (False, True):
        who = open_player(
            browser,
            web_server.http,
            f"glide{int(reduced)}",
            reduced_motion=reduced,
            init_script=COUNT_ANIMATIONS,
        )
        try:
            start(who, web_server.http, "triple-triangle")
            play_line(who, new_game("triple-triangle", seed), line[:3])
            counts[reduced] = who.page.evaluate("window.__animations")
        finally:
            who.close()
    assert counts[False] >= 3, counts
    assert counts[True] == 0, counts


def test_winning_is_celebrated(browser: Browser, web_server: WebServer) -> None:
    ivy = open_player(browser, web_server.http, "ivy")
    try:
        page = start(ivy, web_server.http, "fourteen-out")
        seed = web_server.seed("fourteen-out")
        game, line = new_game("fourteen-out", seed), winning_line("fourteen-out", seed)
        play_line(ivy, game, line)
        party = page.locator(".celebration")
        expect(party).to_be_visible()
        expect(party).to_contain_text("You won!")
        assert party.locator(".confetti").count() > 0
        expect(page.locator('[data-live="moves"]')).to_contain_text("You won!")
        expect(page.locator("dialog.dialog")).to_contain_text("You won!")
    finally:
        ivy.close()


def test_the_setting_plays_the_servers_safe_moves(browser: Browser, web_server: WebServer) -> None:
    jo = open_player(browser, web_server.http, "joy")
    try:
        page = start(jo, web_server.http, "triple-deck")
        box = page.locator('[data-setting="auto-moves"]')
        expect(box).not_to_be_checked()
        box.check()

        def settled() -> None:
            """Until the page has nothing more to play by itself: every move it sent is
            answered, and the last answer names no safe move (the page plays the first one a
            reply names, on a timer) or ends the game. Decided by what the server said, not by
            a quiet spell, which a loaded machine's late timer outlasts."""
            deadline = time.monotonic() + TIMEOUT_MS / 1000
            while time.monotonic() < deadline:
                out = [m for m in messages(jo.sent) if m["type"] in ("move", "undo")]
                back = [m for m in messages(jo.frames) if m.get("type") in ("moved", "error")]
                last = back[-1] if back else {}
                if len(out) == len(back) and (
                    last.get("type") == "error" or not last.get("safe") or last.get("finished")
                ):
                    moved = [m for m in back if m["type"] == "moved"]
                    if moved:
                        jo.wait_moves(moved[-1]["seq"])  # and the page shows that answer
                    return
                jo.next_frame()  # a move of the page's own is on its way, then its answer
            raise AssertionError("the page did not settle")

        auto = 0
        for _ in range(30):
            page.click("[data-stock]")
            settled()
            replies = [m for m in messages(jo.frames) if m.get("type") == "moved"]
            requests = [m for m in messages(jo.sent) if m["type"] == "move"]
            auto = sum(1 for r in requests if r["move"] != "d")
            if auto >= 2:
                break
        assert auto >= 2, "thirty draws turn up no safe card"
        # Every move the page made by itself is the first safe move of the reply before it.
        for i, r in enumerate(requests):
            if r["move"] != "d":
                assert replies[i - 1]["safe"][0]["move"] == r["move"], (i, r)
        for i, reply in enumerate(replies[:-1]):
            if reply["safe"]:
                assert requests[i + 1]["move"] == reply["safe"][0]["move"]
        expect(page.locator(".movelist li", has_text="to the foundation")).to_have_count(auto)
        # Off again: a safe move is only offered, not played.
        box.uncheck()
        assert page.evaluate("localStorage.getItem('solitaire.autoMoves')") == "0"
    finally:
        jo.close()


def test_easthaven_foundations_show_their_suit_and_its_key_hint(
    browser: Browser, web_server: WebServer
) -> None:
    kim = open_player(browser, web_server.http, "kim")
    try:
        page = start(kim, web_server.http, "triple-easthaven")
        slots = page.locator(".foundations .card.slot[data-suit]")
        expect(slots).to_have_count(12)
        suits = "".join(str(s.get_attribute("data-suit")) for s in slots.all())
        assert suits == "CCCDDDHHHSSS"
        expect(slots.first).to_have_attribute("aria-label", "foundation 1, empty: clubs")
        expect(slots.first.locator(".mark")).to_have_text("♣")
        assert "D deal one card onto every pile" in page.inner_text(".keys")
        kim.shot("easthaven-suits")
    finally:
        kim.close()


def test_a_tableau_move_names_the_card_it_goes_onto(
    browser: Browser, web_server: WebServer
) -> None:
    lee = open_player(browser, web_server.http, "lee")
    try:
        page = start(lee, web_server.http, "triple-easthaven")
        seed = web_server.seed("triple-easthaven")
        game = new_game("triple-easthaven", seed)
        move = next(m for m in game.legal_moves() if m.src.isdigit() and m.dst.isdigit())
        played = game.apply(move)
        words = played_text(game.view(), played.events())
        assert re.search(r" onto (10|[2-9AJQK])[♣♦♥♠]$", words), words
        play_line(lee, new_game("triple-easthaven", seed), [str(move)])
        expect(page.locator(".movelist li")).to_have_text([words])
    finally:
        lee.close()
