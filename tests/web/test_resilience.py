"""The browser client when things go wrong or get small: the server restarts, the protocol
version is refused, a phone-sized screen, a page reloaded in the middle of a race."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import websockets.sync.client
from playwright.sync_api import Browser, Route, WebSocketRoute, expect

from engine import VARIANT_IDS, new_game
from tests.support.procs import ServerProcess
from tests.web.browser import (
    PLAYED,
    WebServer,
    open_player,
    play_line,
    resign,
    server_flags,
    shot,
    value,
    winning_line,
)


def test_the_page_reconnects_after_a_server_restart_and_the_game_goes_on(
    browser: Browser, web_server: WebServer
) -> None:
    carol = open_player(browser, web_server.http, "carol")
    try:
        page = carol.page
        seed = web_server.seed("fourteen-out")
        game, line = new_game("fourteen-out", seed), winning_line("fourteen-out", seed)
        page.goto(web_server.http + "/#/play/fourteen-out")
        page.wait_for_selector(".board.pairing")
        play_line(carol, game, line[:1])
        web_server.process.stop()
        status = page.locator("#status")
        expect(status).to_be_visible()
        expect(status).to_contain_text(re.compile("restarting|Reconnecting"))
        expect(status).to_contain_text(re.compile(r"Connection lost\. Reconnecting in \d+ s"))
        carol.shot("reconnecting")
        web_server.process.start()
        expect(status).to_be_hidden()
        carol.wait_moves(1)  # the game as the server kept it, reloaded on the new connection
        play_line(carol, game, line[1:2])  # the same page plays on, on a new connection
        assert carol.moves() == 2
    finally:
        carol.close()


def test_a_refused_protocol_version_says_the_page_is_out_of_date(
    browser: Browser, web_server: WebServer
) -> None:
    context = browser.new_context()
    page = context.new_page()

    def route(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()  # the real server; only the offered versions change

        def to_server(message: str | bytes) -> None:
            text = message if isinstance(message, str) else message.decode()
            server.send(re.sub(r'"versions":\[[0-9,]*\]', '"versions":[99]', text))

        ws.on_message(to_server)

    try:
        page.route_web_socket(re.compile(r".*/ws$"), route)
        page.goto(web_server.http + "/")
        page.evaluate("t => localStorage.setItem('solitaire.token', t)", "A" * 22)
        page.reload()  # now the page says hello with a token, offering the rewritten versions
        status = page.locator("#status.fatal")
        expect(status).to_have_text("This page is out of date for the server: reload it.")
        shot(page, "version-mismatch")
    finally:
        context.close()


def start_dailies(ws_url: str, token: str, variants: Sequence[str]) -> None:
    """Start the player's daily games of `variants` elsewhere: one connection each (hello and
    daily.start, within any burst)."""
    for variant in variants:
        with websockets.sync.client.connect(ws_url) as ws:
            requests: list[dict[str, Any]] = [
                {"type": "hello", "versions": [6], "token": token},
                {"type": "daily.start", "variant": variant},
            ]
            for n, msg in enumerate(requests, start=1):
                ws.send(json.dumps({**msg, "id": n}))
                while (reply := json.loads(ws.recv(timeout=10))).get("id") != n:
                    pass
                assert reply["type"] != "error", reply


def test_a_rate_limited_request_is_explained(browser: Browser, tmp_path: Path, secret: str) -> None:
    flags = (*server_flags(secret), "--rate-limit", "0.2", "--rate-burst", "4")
    with ServerProcess(tmp_path / "data", flags) as srv:
        gina = open_player(browser, f"http://127.0.0.1:{srv.port}", "gina")
        try:  # back with five games started: hello and five game.get, more than a burst of 4
            token = gina.page.evaluate("localStorage.getItem('solitaire.token')")
            start_dailies(srv.url, token, VARIANT_IDS[:5])
            gina.page.reload()
            refused = gina.page.locator('.deal[data-state="error"]')
            expect(refused.first).to_contain_text(
                "Too many requests: slow down for a moment, then try again."
            )
            expect(gina.page.locator(".deal")).to_have_count(6)
            gina.shot("rate-limited")
        finally:
            gina.close()


def test_a_racer_who_leaves_forfeits(browser: Browser, tmp_path: Path, secret: str) -> None:
    flags = (*server_flags(secret), "--race-grace-ms", "500")
    with ServerProcess(tmp_path / "data", flags) as srv:
        http = f"http://127.0.0.1:{srv.port}"
        hana, ivan = open_player(browser, http, "hana"), open_player(browser, http, "ivan")
        try:
            hana.page.click('[data-nav="race"]')
            hana.page.click('[data-action="create"]')
            code = hana.page.locator("[data-code]")
            expect(code).to_have_text(re.compile(r"[A-Z0-9]{4,8}"))
            ivan.page.click('[data-nav="race"]')
            ivan.page.fill('input[aria-label="Room code"]', code.inner_text())
            ivan.page.click('[data-action="join"]')
            expect(hana.page.locator(".racers li")).to_have_count(2)
            hana.page.click('[data-action="start"]')
            for p in (hana, ivan):
                p.page.wait_for_selector(".board.pairing")
            ivan.close()  # gone for longer than the grace period
            expect(hana.page.locator('[data-racer="ivan"] [data-state]')).to_have_text("forfeited")
            # The race ends (no one left to race): hana's game ends with it.
            expect(hana.page.locator("[data-race-result]")).to_have_text("You won the race!")
            expect(hana.page.locator('[data-action="resign"]')).to_be_disabled()
            hana.shot("race-forfeit")
            expect(hana.page.locator('[data-racer="ivan"] td').first).to_have_text("2")
        finally:
            hana.close()
            if not ivan.page.is_closed():
                ivan.close()


def test_the_board_fits_a_phone_screen(browser: Browser, web_server: WebServer) -> None:
    dave = open_player(browser, web_server.http, "dave", viewport=(390, 844))
    try:
        page = dave.page
        for variant in (*PLAYED, "triple-easthaven"):
            page.goto(f"{web_server.http}/#/play/{variant}")
            page.wait_for_selector(f".board.v-{variant} .card")
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, (variant, overflow)
            width = page.locator(".board .card.face").first.bounding_box()
            assert width is not None and width["width"] >= 24  # still readable
            dave.shot(f"phone-{variant}")
    finally:
        dave.close()


def test_queued_racers_are_matched_and_a_reload_mid_race_resumes(
    browser: Browser, web_server: WebServer
) -> None:
    erin = open_player(browser, web_server.http, "erin")
    frank = open_player(browser, web_server.http, "frank")
    try:
        for p in (erin, frank):
            p.page.click('[data-nav="race"]')
            p.page.click('[data-action="queue"]')
        for p in (erin, frank):
            expect(p.page.locator(".board.pairing")).to_be_visible()
        page = erin.page
        tops = {
            int(str(n.get_attribute("data-key"))[1:]): str(n.get_attribute("data-card"))
            for n in page.locator(".board .pile > .card[data-card]:last-child").all()
        }
        pair = next(
            ((i, j) for i in tops for j in tops if i < j and value(tops[i]) + value(tops[j]) == 14),
            None,
        )
        if pair is not None:
            page.click(f'[data-key="p{pair[0]}"]')
            page.click(f'[data-key="p{pair[1]}"]')
            erin.wait_moves(1)
        moves = erin.moves()
        page.reload()
        page.wait_for_selector(".board.pairing")
        erin.wait_moves(moves)
        expect(page.locator('.racepanel [data-racer="frank"]')).to_be_visible()
        for p in (erin, frank):
            resign(p)
        for p in (erin, frank):
            expect(p.page.locator("[data-race-result]")).to_be_visible()
        expect(frank.page.locator('[data-racer="erin"] [data-rating]')).to_have_text(
            re.compile(r"\d+ \([+-]?\d+\)")
        )
    finally:
        erin.close()
        frank.close()


def test_an_address_opened_while_the_rules_load_is_not_covered_by_the_daily_list(
    browser: Browser, web_server: WebServer
) -> None:
    """On a slow network the first screen (the daily list) waits for `/rules.json`; a player
    who opens a profile meanwhile keeps the profile: the late daily list is dropped, not
    drawn over it."""
    player = open_player(browser, web_server.http, None)
    page = player.page
    held: list[Route] = []
    page.route("**/rules.json", lambda route: held.append(route))
    page.fill('input[name="name"]', "slow_sue")
    page.click('form.welcome button[type="submit"]')
    expect(page.locator("#who")).to_have_text("slow_sue")
    page.goto(web_server.http + "/#/player/slow_sue")
    expect(page.locator("h1")).to_contain_text("slow_sue (you)")
    assert held, "the rules are still on their way"
    for route in held:
        route.continue_()
    # The rules arrived and the page had time to draw what it would draw with them.
    page.wait_for_function(
        "() => performance.getEntriesByType('resource').some(e => e.name.endsWith('/rules.json'))"
    )
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 250)))")
    expect(page.locator("section.daily")).to_have_count(0)
    expect(page.locator("h1")).to_contain_text("slow_sue (you)")
    assert not player.errors, player.errors
    player.close()
