"""The profile page (`#/player/NAME`, issue #27) in headless Chromium: reached by a name on a
leaderboard, it shows the player's streaks, bests, race stats and last 30 days from
`profile.get`; your own name in the top bar opens yours; it reads at phone width."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from tests.web.browser import DATE, WebServer, add_results, open_player


def test_a_name_on_the_leaderboard_opens_the_players_profile(
    browser: Browser, web_server: WebServer
) -> None:
    add_results(web_server.http, "fourteen-out", ["fay"])  # fay resigned today's deal
    eve = open_player(browser, web_server.http, "eve")
    page = eve.page
    page.goto(web_server.http + "/#/boards/fourteen-out")
    link = page.locator('table.ranking a[data-player="fay"]')
    expect(link).to_have_attribute("href", "#/player/fay")
    link.click()
    expect(page).to_have_url(web_server.http + "/#/player/fay")
    expect(page.locator("h1")).to_have_text("fay")
    daily = page.locator('.profile tr[data-variant="fourteen-out"]').first
    expect(daily).to_contain_text("Fourteen Out")
    expect(daily).to_contain_text("0 / 1")
    expect(daily.locator("[data-streak]")).to_have_text("1 (best 1)")
    expect(daily.locator("[data-won-streak]")).to_have_text("0 (best 0)")
    recent = page.locator(f'[data-recent] tr[data-date="{DATE.isoformat()}"]')
    expect(recent).to_contain_text("Resigned")
    expect(recent).to_contain_text("day not over")
    expect(recent).to_contain_text("after the day")  # replayable once the day is closed
    expect(page.locator("text=No race yet.")).to_be_visible()
    eve.shot("profile")

    # Your own name (top bar) opens your profile, with a way to your history.
    page.click("#who")
    expect(page).to_have_url(web_server.http + "/#/player/eve")
    expect(page.locator("h1")).to_contain_text("eve (you)")
    expect(page.locator("text=No daily game finished yet.")).to_be_visible()
    page.click('a[href="#/history"]')
    expect(page.locator("h1")).to_have_text("Your history")
    expect(page.locator('[data-nav="history"]')).to_have_attribute("aria-current", "page")

    page.goto(web_server.http + "/#/player/nobody_here")
    expect(page.locator("p.error")).to_have_text("There is no player called nobody_here.")
    eve.close()


def test_the_profile_reads_at_phone_width(browser: Browser, web_server: WebServer) -> None:
    add_results(web_server.http, "triple-triangle", ["gus"])
    phone = open_player(browser, web_server.http, "hal", viewport=(390, 800))
    page = phone.page
    page.goto(web_server.http + "/#/player/gus")
    expect(page.locator('[data-recent] tr[data-variant="triple-triangle"]')).to_contain_text(
        "Tri Peaks"
    )
    # The page does not scroll sideways: wide tables scroll inside their own box.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    phone.shot("phone-profile")
    phone.close()
