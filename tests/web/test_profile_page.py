"""The profile page (`#/player/NAME`, issue #27) in headless Chromium: reached by a name on a
leaderboard, it shows the player's streaks, bests, race stats and last 30 days from
`profile.get`; your own name in the top bar opens yours; it reads at phone width; a player's
rated races are listed, each a link to the race's result."""

from __future__ import annotations

import json
import re

from playwright.sync_api import Browser, expect

from tests.support.loopthread import LoopThread
from tests.support.wsclient import Client
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


async def race_and_resign(url: str) -> str:
    """kim and lou, protocol clients, race from the queue (rated) and both resign: the race id."""
    racers = []
    for name in ("kim", "lou"):
        c = await Client.connect(url, binary=False)
        await c.hello(name=name, versions=(6,))
        racers.append(c)
    for c in racers:  # one address: matched once the same-address wait (15 s) is over
        assert (await c.request("race.queue", variant="fourteen-out", size=2))["type"] in (
            "race.queued",
            "race.room",
        )
    started = [await c.push("race.started", timeout=40) for c in racers]
    for c, s in zip(racers, started, strict=True):
        assert (await c.request("resign", game_id=s["game_id"]))["type"] == "finished"
    end = await racers[0].push("race.event", timeout=20, race_id=started[0]["race_id"])
    while end["event"]["kind"] != "finished":
        end = await racers[0].push("race.event", timeout=20, race_id=started[0]["race_id"])
    for c in racers:
        await c.close()
    return str(started[0]["race_id"])


def test_a_profile_lists_the_players_races_each_linked_to_its_result(
    browser: Browser, web_server: WebServer
) -> None:
    with LoopThread() as loop:
        race_id = loop.run(race_and_resign(web_server.http.replace("http", "ws") + "/ws"), 90)
    viewer = open_player(browser, web_server.http, "max")
    page = viewer.page
    page.goto(f"{web_server.http}/#/player/kim")
    expect(page.locator('.profile tr[data-variant="fourteen-out"] [data-rating]')).to_have_text(
        re.compile(r"^\d+$")
    )
    latest = page.locator(f'li[data-race-id="{race_id}"]')
    expect(latest).to_contain_text("Fourteen Out")
    expect(latest).to_contain_text("of 2")
    latest.get_by_role("link").click()
    expect(page).to_have_url(f"{web_server.http}/#/race/{race_id}")
    expect(page.locator("h1")).to_have_text("Race result · Fourteen Out")
    expect(page.locator('table.standings a[data-player="lou"]')).to_be_visible()
    viewer.close()


def test_a_profile_shows_crowns_and_badges_by_month(
    browser: Browser, web_server: WebServer
) -> None:
    """Protocol 8: the profile asks for and shows the player's crowns and badge per month
    (`profile.months`, server-side exactness in tests/server/games/test_tiers.py); a player
    with none is told how to earn them."""
    ivy = open_player(browser, web_server.http, "ivy")
    page = ivy.page
    try:
        page.click("#who")
        panel = page.locator('section[aria-labelledby="p-months"]')
        expect(panel.locator("h2")).to_have_text("Crowns and badges")
        expect(panel).to_contain_text("No crowns yet: win a tier of the daily challenge")
        replies = [json.loads(f) for f in ivy.frames if '"profile"' in f]
        assert any(r.get("type") == "profile" and r.get("months") == [] for r in replies)
    finally:
        ivy.close()
