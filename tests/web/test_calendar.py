"""The browser's month calendar (protocol 8): the days of the month with each variant's tiers
as the server states them, a tier started from its cell, the days before the player joined
not offered as catch-up games, a tier won through the page with its crowns on the calendar
and the profile, and the crowns of the month. Headless Chromium against the real server
subprocess."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from engine import new_game
from server.games.deals import MAX_CANDIDATES, offers_a_move, tier_own_seed
from tests.web.axe import assert_accessible
from tests.web.browser import (
    DATE,
    TIMEOUT_MS,
    WebServer,
    open_player,
    play_line,
    shot,
    winning_line,
)

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
        expect(past).to_have_attribute("data-shown", "closed")
        expect(past).to_have_text("⊘")
        expect(page.locator(f'tr[data-date="{PAST}"] th small')).to_contain_text(
            "before you joined"
        )
        starts = [r for r in player.sent_requests() if r["type"] == "daily.start"]
        assert {(r["variant"], r["tier"], r.get("date")) for r in starts} == {
            ("fourteen-out", "hard", None),
        }
    finally:
        player.close()


def tier_seed(web_server: WebServer, variant: str, tier: str) -> int:
    """Today's deal of ``tier`` as the browser tests' server deals it (``--no-certify``: the
    tier's own sequence's first seed that offers a move, `DailyDeals._uncertified_tiers`)."""
    secret = web_server.secret.encode()
    for index in range(MAX_CANDIDATES):
        seed = tier_own_seed(secret, variant, DATE, tier, index)
        if offers_a_move(variant, seed):
            return seed
    raise AssertionError(f"no playable {tier} deal")


def test_a_tier_won_through_the_page_shows_on_the_calendar_and_the_profile(
    browser: Browser, web_server: WebServer
) -> None:
    """Pick the expert tier of today's Fourteen Out on the calendar, win it by clicking the
    solver's line, and see the cell marked won, the month's 4 crowns on the calendar and in
    the profile's crowns panel, and the win on the expert board of the public API."""
    variant, tier = "fourteen-out", "expert"
    seed = tier_seed(web_server, variant, tier)
    line = winning_line(variant, seed)
    assert line, "the solver wins today's expert Fourteen Out deal"
    player = open_player(browser, web_server.http, "crown_dan")
    page = player.page
    try:
        page.click('nav a[data-nav="calendar"]')
        page.wait_for_selector("table.calendar", timeout=TIMEOUT_MS)
        cell = page.locator(
            f'tr[data-date="{TODAY}"] [data-variant="{variant}"][data-tier="{tier}"]'
        )
        expect(cell).to_have_attribute("data-state", "not_played")
        expect(page.locator("p.crowns")).to_have_attribute("data-crowns", "0")
        cell.click()
        page.wait_for_url(f"**/#/game/t.{tier}.{variant}.{TODAY}.*", timeout=TIMEOUT_MS)
        player.wait_moves(0)
        game = new_game(variant, seed)
        play_line(player, game, line)
        assert game.won
        dialog = page.locator("dialog.dialog")
        expect(dialog).to_contain_text("You won!")
        page.keyboard.press("Escape")  # the result dialog closes; the calendar is in the nav
        expect(dialog).to_have_count(0)

        page.click('nav a[data-nav="calendar"]')
        cell = page.locator(
            f'tr[data-date="{TODAY}"] [data-variant="{variant}"][data-tier="{tier}"]'
        )
        expect(cell).to_have_attribute("data-state", "won")
        expect(cell).to_have_text("✓")
        assert cell.evaluate("n => n.tagName") == "SPAN", "a won tier is not played again"
        crowns = page.locator("p.crowns")
        expect(crowns).to_have_attribute("data-crowns", "4")
        expect(crowns).to_contain_text("4 crowns this month")
        expect(crowns).to_contain_text("16 more for bronze")

        page.click("#who")  # your own profile: its crowns panel
        expect(page).to_have_url(web_server.http + "/#/player/crown_dan")
        month = page.locator(f'[data-months] tr[data-month="{TODAY[:7]}"]')
        expect(month.locator("td").first).to_have_text("4")
        expect(month.locator("[data-badge]")).to_have_text("—")
        assert_accessible(page, "profile with crowns")

        # The public API says the same: the expert board, and the month's crowns.
        board = page.request.get(
            f"{web_server.http}/api/v1/days/{TODAY}/boards/{variant}?tier={tier}"
        ).json()
        assert board["tier"] == tier
        assert [(e["name"], e["won"]) for e in board["entries"]] == [("crown_dan", True)]
        profile = page.request.get(f"{web_server.http}/api/v1/players/crown_dan").json()
        assert profile["months"] == [{"month": TODAY[:7], "crowns": 4}]
        starts = [r for r in player.sent_requests() if r["type"] == "daily.start"]
        assert [(r["variant"], r["tier"], r.get("date")) for r in starts] == [(variant, tier, None)]
    finally:
        player.close()
