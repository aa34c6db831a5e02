"""Watching races in headless Chromium (`#/races`, `#/watch/ID`, `#/race/ID`, issue #27).

`ann` races in the browser (a private room; her address becomes the race's link) against
`ben`, a protocol client. A cold watch link opened in a browser without a player watches
anonymously (the public API's stream); `cat`, on the live list before the race starts, sees
it come at the list's refresh and watches it over the WebSocket; both see ben's move 3 s late
and no card the racers have not seen; once the race is over the watch pages show the result,
and `dan` opens the race's link cold."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Browser, Page, expect

from tests.support.lookahead import move_that_goes_on
from tests.support.loopthread import LoopThread
from tests.support.wsclient import Client
from tests.web.browser import WebServer, open_player, resign


def cards_on(page: Page, scope: str = "") -> set[str]:
    return {str(n.get_attribute("data-card")) for n in page.locator(f"{scope} [data-card]").all()}


def cards_of(view: Any) -> set[str]:
    """Every card a racer's view names (what a spectator may ever be shown of it)."""
    found: set[str] = set()

    def walk(x: Any) -> None:
        if isinstance(x, str) and re.fullmatch(r"(?:10|[2-9AJQK])[CDHS]", x):
            found.add(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(view)
    return found


def test_a_race_is_watched_from_the_list_a_cold_link_and_its_result(
    browser: Browser, web_server: WebServer
) -> None:
    http = web_server.http
    ann = open_player(browser, http, "ann")
    page = ann.page
    page.click('[data-nav="race"]')
    page.click('[data-action="create"]')
    expect(page.locator("[data-code]")).to_have_text(re.compile(r"^[A-Z0-9]{4,8}$"))
    code = page.inner_text("[data-code]")
    # The race room's address is the race's own: a link to share and reload.
    expect(page).to_have_url(re.compile(r"#/race/\d{8}-[A-Za-z0-9_]+$"))
    race_id = page.url.rsplit("/", 1)[1]

    with LoopThread() as loop:
        ben = loop.run(Client.connect(http.replace("http", "ws") + "/ws", binary=False))
        loop.run(ben.hello(name="ben", versions=(6,)))
        assert loop.run(ben.request("race.join", code=code))["type"] == "race.room"
        # cat opens the live races before the race starts: none yet, then it comes by itself.
        cat = open_player(browser, http, "cat")
        cat.page.click('[data-nav="races"]')
        expect(cat.page.locator("[data-empty]")).to_be_visible()
        page.click('[data-action="start"]')
        started = loop.run(ben.push("race.started", timeout=20))
        expect(page.locator('[data-stat="moves"]')).to_be_visible()
        expect(page).to_have_url(f"{http}/#/race/{race_id}")

        # A cold link in a browser without a player: watched at once, anonymously.
        anon_ctx = browser.new_context(viewport={"width": 390, "height": 800})  # a phone
        anon = anon_ctx.new_page()
        errors: list[str] = []
        anon.on("pageerror", lambda exc: errors.append(str(exc)))
        anon.goto(f"{http}/#/watch/{race_id}")
        expect(anon.locator("h1")).to_have_text("Watching · Fourteen Out")
        expect(anon.locator("form.welcome")).to_have_count(0)
        expect(anon.locator("[data-board-of]")).to_have_count(2)
        expect(anon.locator('[data-action="choose-name"]')).to_be_visible()
        share = anon.locator("input[data-share]")
        expect(share).to_have_value(re.compile(f"/#/watch/{race_id}$"))
        assert anon.evaluate("document.documentElement.scrollWidth <= window.innerWidth")

        # cat's list shows it at its next refresh (every 5 s); cat watches over the WebSocket.
        item = cat.page.locator(f'li[data-race-id="{race_id}"]')
        expect(item).to_contain_text("Fourteen Out")
        expect(item.locator('a[data-player="ann"]')).to_be_visible()
        expect(item.locator('a[data-player="ben"]')).to_be_visible()
        item.get_by_role("link", name="Watch").click()
        expect(cat.page).to_have_url(f"{http}/#/watch/{race_id}")
        expect(cat.page.locator('[data-nav="races"]')).to_have_attribute("aria-current", "page")
        expect(cat.page.locator("[data-spectators]")).to_have_text("· 2 watching")
        expect(anon.locator("[data-spectators]")).to_have_text("· 2 watching")
        expect(page.locator("[data-spectators]")).to_have_text("2 watching")  # ann sees it

        # ben moves: both watchers see his board move on (3 s late), with his progress.
        view = started["view"]
        move = move_that_goes_on(view)  # a random deal: he resigns after it
        moved = loop.run(ben.request("move", game_id=started["game_id"], move=move, with_view=True))
        assert moved["type"] == "moved", moved
        ben_board = f'[data-board-of="{ben.player_id}"]'
        for watcher in (anon, cat.page):
            expect(watcher.locator(f"{ben_board} h2")).to_contain_text("1 moves")
            expect(watcher.locator('tr[data-racer="ben"] td').nth(2)).to_have_text("1")
        # No card but those the racers' own boards show (a held-back card is a back).
        racers_see = cards_of(view) | cards_of(moved.get("view")) | cards_on(page, ".board")
        for watcher in (anon, cat.page):
            assert cards_on(watcher, ".watchboards") <= racers_see
        cat.shot("watch")

        # A racer's name opens their profile; back to the race.
        cat.page.click('tr[data-racer="ann"] a[data-player="ann"]')
        expect(cat.page.locator("h1")).to_have_text("ann")
        cat.page.go_back()
        expect(cat.page.locator("h1")).to_have_text("Watching · Fourteen Out")

        # The race ends: the watch pages become its result, linked by the race's address.
        resign(ann)
        assert loop.run(ben.request("resign", game_id=started["game_id"]))["type"] == "finished"
        for watcher in (anon, cat.page):
            expect(watcher.locator("h1")).to_have_text("Race result · Fourteen Out")
            expect(watcher.locator("[data-race-status]")).to_have_text("The race is over.")
            # Both gave up: every watcher is told so (`resigned`, protocol 10), not "stuck".
            for racer in ("ann", "ben"):
                expect(watcher.locator(f'tr[data-racer="{racer}"] [data-state]')).to_have_text(
                    re.compile(r"^resigned at \d+/52$")
                )
        expect(page.locator('[data-racer="ben"] [data-state]')).to_have_text(
            re.compile(r"^resigned at \d+/52$")
        )
        expect(anon.locator("input[data-share]")).to_have_value(re.compile(f"/#/race/{race_id}$"))
        # ann leaves her finished race for a new one: the address is the lobby's again.
        page.get_by_role("button", name="New race").click()
        expect(page).to_have_url(f"{http}/#/race")
        expect(page.locator('[data-action="queue"]')).to_be_visible()
        # Watching never made the race cat's own: cat's Race page is the lobby.
        cat.page.click('[data-nav="race"]')
        expect(cat.page.locator('[data-action="queue"]')).to_be_visible()
        # The live races page lists it among the finished races, linked to its result.
        cat.page.click('[data-nav="races"]')
        done = cat.page.locator(f'[data-finished] li[data-race-id="{race_id}"]')
        expect(done.locator("a").first).to_have_attribute("href", f"#/race/{race_id}")
        expect(done.locator('a[data-player="ben"]')).to_be_visible()
        loop.run(ben.close())

    dan = open_player(browser, http, "dan")
    dan.page.goto(f"{http}/#/race/{race_id}")
    expect(dan.page.locator("h1")).to_have_text("Race result · Fourteen Out")
    rows = dan.page.locator("table.standings tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first.locator("td").first).to_have_text("1")
    expect(dan.page.locator(f"{ben_board} h2")).to_contain_text("1 moves")
    # ann, a racer, opens her finished race's link: its standings, not a spectator's seat.
    page.goto(f"{http}/#/daily")
    page.goto(f"{http}/#/race/{race_id}")
    expect(page.locator("h1")).to_have_text("Race result · Fourteen Out")
    expect(page.locator("table.standings tbody tr")).to_have_count(2)

    # Without a player any other page asks for a name.
    anon.goto(f"{http}/#/daily")
    expect(anon.locator("form.welcome")).to_be_visible()
    assert errors == []
    anon_ctx.close()
    for p in (ann, cat, dan):
        p.close()
