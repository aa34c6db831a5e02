"""The browser's month calendar (protocol 8): the days of the month with each variant's tiers
as the server states them, a tier started from its cell, a past day's as a catch-up game, and
the crowns of the month. Headless Chromium against the real server subprocess."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from tests.web.browser import TIMEOUT_MS, WebServer, open_player, shot

TODAY, PAST = "2030-06-15", "2030-06-03"


def test_the_calendar_starts_tiers_and_catch_up_games(
    browser: Browser, web_server: WebServer
) -> None:
    player = open_player(browser, web_server.http, "cal_amy")
    page = player.page
    try:
        page.click('nav a[data-nav="calendar"]')
        page.wait_for_selector("table.calendar", timeout=TIMEOUT_MS)
        expect(page.locator("table.calendar tbody tr")).to_have_count(30)
        expect(page.locator("p.crowns")).to_contain_text("0 crowns this month")
        today = page.locator(f'tr[data-date="{TODAY}"]')
        hard = today.locator('[data-variant="fourteen-out"][data-tier="hard"]')
        expect(hard).to_have_attribute("data-state", "not_played")
        later = page.locator('tr[data-date="2030-06-16"] [data-tier="easy"]').first
        expect(later).to_have_attribute("data-state", "upcoming")
        assert later.evaluate("n => n.tagName") == "SPAN", "a day to come cannot be played"
        shot(page, "calendar")
        hard.click()
        page.wait_for_url("**/#/game/t.hard.fourteen-out.*", timeout=TIMEOUT_MS)
        player.wait_moves(0)  # the game is on screen (its load done) before we leave it
        page.goto(web_server.http + "/#/calendar")
        page.wait_for_selector(f'tr[data-date="{TODAY}"]', timeout=TIMEOUT_MS)
        hard = page.locator(
            f'tr[data-date="{TODAY}"] [data-variant="fourteen-out"][data-tier="hard"]'
        )
        expect(hard).to_have_attribute("data-state", "playing")
        # The player joined today: earlier days of the month are no catch-up of theirs,
        # shown as such (the server says `catchup_open: false`), not offered.
        past = page.locator(
            f'tr[data-date="{PAST}"] [data-variant="triple-triangle"][data-tier="easy"]'
        )
        expect(past).to_have_attribute("data-state", "not_played")
        assert past.evaluate("n => n.tagName") == "SPAN", "a day before joining cannot be played"
        expect(page.locator(f'tr[data-date="{PAST}"] th small')).to_have_count(0)
        starts = [r for r in player.sent_requests() if r["type"] == "daily.start"]
        assert {(r["variant"], r["tier"], r.get("date")) for r in starts} == {
            ("fourteen-out", "hard", None),
        }
    finally:
        player.close()
