"""What a newcomer found wrong in the browser, each checked in headless Chromium against the
real server subprocess: the day's tiers on the Daily page and the tier in a game's header,
result and leaderboard; the result dialog closed by a route change; a daily list refreshed
for a game started on another device; a win with hints that says it earns no crowns; and the
layout of the welcome cards, the sign-in code field, the share box and a long move list."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Page, expect

from engine import new_game
from tests.web.axe import assert_accessible
from tests.web.browser import (
    TIMEOUT_MS,
    Player,
    WebServer,
    open_player,
    play_line,
    winning_line,
)

TODAY = "2030-06-15"
TIERS = ["easy", "medium", "hard", "expert"]


def test_the_daily_page_offers_every_tier_and_a_tier_game_says_which(
    browser: Browser, web_server: WebServer
) -> None:
    player = open_player(browser, web_server.http, "tier_tom")
    page = player.page
    try:
        intro = page.locator("[data-intro]")
        for word in ("easy", "medium", "hard", "expert", "Medium is the daily"):
            expect(intro).to_contain_text(word)
        deal = page.locator('.deal[data-variant="fourteen-out"]')
        tiers = deal.locator(".daytiers li")
        expect(tiers).to_have_count(4)
        assert [t.get_attribute("data-tier") for t in tiers.all()] == TIERS
        expect(deal.locator('li[data-tier="medium"]')).to_contain_text("Medium (the daily)")
        expect(deal.locator('li[data-tier="hard"]')).to_have_attribute("data-state", "not_played")
        expect(deal.locator('li[data-tier="hard"]')).to_contain_text("not started")
        assert_accessible(page, "daily list with tiers")

        deal.locator('li[data-tier="hard"] a').click()
        page.wait_for_url(f"**/#/game/t.hard.fourteen-out.{TODAY}.*", timeout=TIMEOUT_MS)
        player.wait_moves(0)
        expect(page.locator("[data-game-label]")).to_have_text(f" hard · {TODAY}")
        starts = [r for r in player.sent_requests() if r["type"] == "daily.start"]
        assert [(r["variant"], r.get("tier")) for r in starts] == [("fourteen-out", "hard")]
        # Its result says the tier and ranks it on the tier's board.
        page.click('[data-action="resign"]')
        page.locator("dialog.dialog").get_by_role("button", name="Resign").click()
        result = page.locator("dialog.dialog")
        expect(result.locator('[data-result="label"]')).to_have_text(
            f"Fourteen Out · hard · {TODAY}"
        )
        expect(result.locator("textarea.share")).to_have_value(
            re.compile(rf"^Solitaire hard {TODAY} · Fourteen Out\n")
        )
        expect(result.locator('[data-result="rank"]')).to_have_text("#1 of 1")
        ranks = [r for r in player.sent_requests() if r["type"] == "leaderboard.rank"]
        assert ranks[-1].get("tier") == "hard"
        result.get_by_role("button", name="Leaderboard").click()
        expect(page).to_have_url(f"{web_server.http}/#/boards/fourteen-out/hard")
        expect(page.locator("[data-board-tier]")).to_have_attribute("data-board-tier", "hard")

        # Back on the Daily page (the route again): the hard tier is lost; the daily
        # (medium) game's header says it is the daily.
        page.click('nav a[data-nav="daily"]')
        hard = page.locator('.deal[data-variant="fourteen-out"] li[data-tier="hard"]')
        expect(hard).to_have_attribute("data-state", "lost")
        page.click('.deal[data-variant="fourteen-out"] a.primary')
        page.wait_for_url(f"**/#/game/d.fourteen-out.{TODAY}.*", timeout=TIMEOUT_MS)
        expect(page.locator("[data-game-label]")).to_have_text(f" daily (medium) · {TODAY}")

        # The Leaderboards page chooses a tier; its requests carry it.
        page.goto(f"{web_server.http}/#/boards/fourteen-out")
        choice = page.locator("select[data-tier-choice]")
        expect(choice).to_have_value("medium")
        choice.select_option("hard")
        expect(page.locator("[data-board-tier]")).to_have_attribute("data-board-tier", "hard")
        expect(page.locator("p.summary")).to_contain_text("Hard")
        tops = [r for r in player.sent_requests() if r["type"] == "leaderboard.top"]
        assert tops[-1].get("tier") == "hard" and "tier" not in tops[-2]  # the daily's, then hard
        assert_accessible(page, "leaderboard with a tier choice")
        page.goto(f"{web_server.http}/#/boards/fourteen-out/expert")
        expect(page.locator("select[data-tier-choice]")).to_have_value("expert")
        expect(page.locator("[data-board-tier]")).to_have_attribute("data-board-tier", "expert")
    finally:
        player.close()


def _win_with_a_hint(player: Player, web_server: WebServer) -> None:
    page = player.page
    variant = "fourteen-out"
    seed = web_server.seed(variant)
    line = winning_line(variant, seed)
    page.goto(f"{web_server.http}/#/play/{variant}")
    player.wait_moves(0)
    page.click('[data-action="hint"]')
    expect(page.locator('[data-stat="hints"]')).to_contain_text("Hints 1")
    game = new_game(variant, seed)
    play_line(player, game, line)
    assert game.won


def test_a_win_with_hints_says_no_crowns_and_the_result_closes_on_back(
    browser: Browser, web_server: WebServer
) -> None:
    player = open_player(browser, web_server.http, "hinty_hal")
    page = player.page
    try:
        _win_with_a_hint(player, web_server)
        dialog = page.locator("dialog.dialog")
        expect(dialog).to_contain_text("You won!")
        expect(dialog.locator('[data-result="crowns"]')).to_contain_text(
            "Won with hints: no crowns"
        )
        expect(dialog.locator('[data-result="label"]')).to_have_text(
            f"Fourteen Out · daily (medium) · {TODAY}"
        )
        # The share box shows its every line (none scrolled out of sight).
        share = dialog.locator("textarea.share")
        assert share.evaluate("t => t.scrollHeight <= t.clientHeight + 1 && t.scrollTop === 0")
        assert_accessible(page, "result won with hints")
        page.get_by_role("button", name="Daily deals").click()
        expect(dialog).to_have_count(0)

        # Daily -> See result -> the browser's Back: the dialog goes with its page.
        deal = page.locator('.deal[data-variant="fourteen-out"]')
        expect(deal).to_have_attribute("data-state", "done")
        deal.locator("a", has_text="See result").click()
        expect(dialog).to_contain_text("You won!")
        page.go_back()
        expect(page.locator("section.daily")).to_be_visible()
        expect(dialog).to_have_count(0)
        # Any hash navigation too.
        page.go_forward()
        expect(dialog).to_contain_text("You won!")
        page.evaluate("location.hash = '#/settings'")
        expect(dialog).to_have_count(0)

        # The calendar's legend and the profile say why that win earned nothing.
        page.click('nav a[data-nav="calendar"]')
        expect(page.locator("[data-legend]")).to_contain_text(
            "won with hints is ✓ but earns no crowns"
        )
        expect(page.locator("p.crowns")).to_have_attribute("data-crowns", "0")
        page.click("#who")
        expect(page.locator("[data-crowns-rule]")).to_contain_text("won with hints earns no crowns")
    finally:
        player.close()


def test_the_daily_list_follows_a_game_started_on_another_device(
    browser: Browser, web_server: WebServer
) -> None:
    desk = open_player(browser, web_server.http, "two_dev")
    phone = open_player(browser, web_server.http, None, viewport=(375, 800))
    try:
        page = desk.page
        page.click('[data-nav="account"]')
        page.click('[data-action="signin-code"]')
        code = page.locator("[data-signin-code]").inner_text()
        page.click('nav a[data-nav="daily"]')
        deal = page.locator('.deal[data-variant="triple-triangle"]')
        expect(deal).to_have_attribute("data-state", "new")

        p2 = phone.page
        p2.fill('input[name="code"]', code)
        p2.click('[data-action="redeem"]')
        expect(p2.locator("#who")).to_have_text("two_dev")
        p2.goto(f"{web_server.http}/#/play/triple-triangle")
        phone.wait_moves(0)
        p2.goto(f"{web_server.http}/#/play/triple-triangle/easy")
        p2.wait_for_url("**/#/game/t.easy.triple-triangle.*", timeout=TIMEOUT_MS)

        # The desk's list has not changed by itself; the page coming back into view
        # (visibilitychange) asks the server again.
        expect(deal).to_have_attribute("data-state", "new")
        page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
        expect(deal).to_have_attribute("data-state", "playing")
        expect(deal).to_contain_text("Playing · 0 moves")
        expect(deal.locator('li[data-tier="easy"]')).to_have_attribute("data-state", "playing")
        expect(deal.locator("a.primary")).to_have_text("Resume")
        # The calendar, shown when the phone starts a tier, follows it the same way.
        page.click('nav a[data-nav="calendar"]')
        cell = page.locator(
            f'tr[data-date="{TODAY}"] [data-variant="triple-triangle"][data-tier="hard"]'
        )
        expect(cell).to_have_attribute("data-state", "not_played")
        p2.goto(f"{web_server.http}/#/play/triple-triangle/hard")
        p2.wait_for_url("**/#/game/t.hard.triple-triangle.*", timeout=TIMEOUT_MS)
        page.evaluate("window.dispatchEvent(new Event('focus'))")
        expect(cell).to_have_attribute("data-state", "playing")
        # The desk never started anything: the game came from the server by `daily.start`
        # of a game already started (it answers the game as it is).
        assert not any(r["type"] == "daily.start" and r.get("tier") for r in desk.sent_requests())
    finally:
        phone.close()
        desk.close()


def _box(page: Page, selector: str) -> tuple[float, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return round(box["x"]), round(box["width"])


def test_the_welcome_cards_line_up_and_the_code_placeholder_fits(
    browser: Browser, web_server: WebServer
) -> None:
    for width in (375, 1280):
        visitor = open_player(browser, web_server.http, None, viewport=(width, 800))
        try:
            page = visitor.page
            expect(page.locator("form.signin")).to_be_visible()
            assert _box(page, "form.welcome") == _box(page, "form.signin"), width
            fits = page.locator('input[name="code"]').evaluate(
                """i => { const s = getComputedStyle(i);
                          const c = document.createElement('canvas').getContext('2d');
                          c.font = s.font; c.letterSpacing = s.letterSpacing;
                          const room = i.clientWidth - parseFloat(s.paddingLeft)
                                       - parseFloat(s.paddingRight);
                          return c.measureText(i.placeholder).width <= room; }"""
            )
            assert fits, f"the placeholder is clipped at {width} px"
        finally:
            visitor.close()


def test_a_long_tri_peaks_move_list_keeps_every_column(
    browser: Browser, web_server: WebServer
) -> None:
    """35 moves of today's Tri Peaks fill the move list's columns, none cut off at the right
    edge (the list scrolls down, not sideways)."""
    variant = "triple-triangle"
    seed = web_server.seed(variant)
    line = winning_line(variant, seed)
    assert len(line) >= 35
    player = open_player(browser, web_server.http, "long_lee")
    page = player.page
    try:
        page.goto(f"{web_server.http}/#/play/{variant}")
        player.wait_moves(0)
        play_line(player, new_game(variant, seed), line[:35])
        moves = page.locator(".movelist")
        expect(moves.locator("li")).to_have_count(35)
        assert moves.evaluate("l => l.scrollWidth <= l.clientWidth"), "a column is cut off"
        right = moves.evaluate("l => l.getBoundingClientRect().right")
        last = page.locator(".movelist li").nth(34)
        last.scroll_into_view_if_needed()
        box = last.bounding_box()
        assert box is not None and box["x"] + box["width"] <= right + 1
        assert re.search(r"\S", last.inner_text())
    finally:
        player.close()
