"""Protocols 7 and 9 in the browser (headless Chromium, real server and Redis): signing in on
a second browser context with a one-time code, the device list and signing a device out, free
play, and a rematch after a race."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.devices import try_redeem
from tests.support.loopthread import LoopThread
from tests.web.browser import Player, WebServer, open_player, resign, start_room_race


@pytest.fixture(scope="module")
def ann(browser: Browser, web_server: WebServer) -> Iterator[Player]:
    player = open_player(browser, web_server.http, "ann")
    yield player
    player.close()


def test_a_code_signs_a_second_browser_in_as_the_same_player(
    browser: Browser, web_server: WebServer, ann: Player
) -> None:
    page = ann.page
    page.click('[data-nav="account"]')
    page.click('[data-action="signin-code"]')
    shown = page.locator("[data-signin-code]")
    expect(shown).to_have_text(re.compile(r"^[2-9A-Z]{4}-[2-9A-Z]{4}$"))
    expect(page.locator("[data-signin-expires]")).to_have_text(re.compile(r"Expires in [45]:"))
    code = shown.inner_text()
    ann.shot("account-signin-code")

    phone = open_player(browser, web_server.http, None, viewport=(390, 800))
    try:
        p2 = phone.page
        expect(p2.locator("form.signin")).to_be_visible()
        phone.shot("welcome-signin")
        p2.fill('input[name="code"]', "ABCD-EFGH")
        p2.click('[data-action="redeem"]')
        expect(p2.locator("form.signin .error")).to_contain_text("wrong, used or expired")
        p2.fill('input[name="code"]', code.lower().replace("-", " "))
        p2.click('[data-action="redeem"]')
        p2.wait_for_selector('#who:text-is("ann")')
        expect(p2.locator(".deal")).to_have_count(6)
        mine = page.evaluate("localStorage.getItem('solitaire.token')")
        theirs = p2.evaluate("localStorage.getItem('solitaire.token')")
        assert theirs and theirs != mine, "the phone has a token of its own"
        assert theirs not in p2.url and code not in p2.url, "nothing secret in an address"
        sent = [m for m in phone.sent_requests() if m["type"] == "signin.redeem"]
        assert [m["versions"] for m in sent] == [[10], [10]]
        # Signed in by a code, the page follows games by events as after `hello`.
        assert [m.get("features") for m in sent] == [["rules_free"], ["rules_free"]]
        # Reloaded, the phone is still ann (its own token, by hello).
        p2.reload()
        p2.wait_for_selector('#who:text-is("ann")')
    finally:
        phone.close()


def test_the_account_page_lists_devices_and_signs_a_new_one_out(
    browser: Browser, web_server: WebServer
) -> None:
    """The owner sees a device signed in by a code (told at once), which on its side may not
    sign the owner out (its trial), and signs it out from the list."""
    dee = open_player(browser, web_server.http, "dee")
    phone = open_player(browser, web_server.http, None, viewport=(390, 800))
    try:
        page = dee.page
        page.click('[data-nav="account"]')
        rows = page.locator("table.devices tbody tr")
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("this device")
        page.click('[data-action="signin-code"]')
        code = page.locator("[data-signin-code]").inner_text()

        p2 = phone.page
        p2.fill('input[name="code"]', code)
        p2.click('[data-action="redeem"]')
        p2.wait_for_selector('#who:text-is("dee")')
        expect(page.locator(".toast")).to_have_count(1)  # said once, by the account page
        expect(page.locator(".toast")).to_contain_text("Sign it out below")
        expect(rows).to_have_count(2)
        newer = page.locator('table.devices tr[data-how="code"]')
        expect(newer).to_contain_text("on Linux")  # the name the phone's browser gave
        expect(newer.locator('[data-action="revoke"]')).to_be_visible()
        dee.shot("account-devices")

        # On the phone, on trial: the first device offers no "Sign out".
        p2.click('[data-nav="account"]')
        expect(p2.locator("table.devices tbody tr")).to_have_count(2)
        expect(
            p2.locator('table.devices tr[data-how="original"] [data-action="revoke"]')
        ).to_have_count(0)
        expect(p2.locator("[data-trusted-at]")).to_contain_text("newer than itself")

        newer.locator('[data-action="revoke"]').click()
        expect(rows).to_have_count(1)
        expect(p2.locator(".status")).to_contain_text("This device was signed out")
        assert p2.evaluate("localStorage.getItem('solitaire.token')") is None
        sent = [m["type"] for m in dee.sent_requests()]
        assert "devices" in sent and "device.revoke" in sent

        # On any other page the player is told too.
        page.click('[data-action="signin-code"]')
        expect(page.locator("[data-signin-code]")).not_to_have_text(code)  # a new one
        code = page.locator("[data-signin-code]").inner_text()
        page.click('[data-nav="daily"]')
        tablet = open_player(browser, web_server.http, None)
        try:
            tablet.page.fill('input[name="code"]', code)
            tablet.page.click('[data-action="redeem"]')
            tablet.page.wait_for_selector('#who:text-is("dee")')
            expect(page.locator(".toast").last).to_contain_text("Sign it out under Account")
        finally:
            tablet.close()
    finally:
        phone.close()
        dee.close()


def test_free_play_deals_an_unranked_game(ann: Player) -> None:
    page = ann.page
    page.click('[data-nav="free"]')
    page.select_option('select[name="variant"]', "fourteen-out")
    page.click('[data-action="free"]')
    expect(page.locator("[data-free]")).to_have_text("Free play — unranked")
    page.wait_for_selector(".board.pairing")
    expect(page).to_have_url(re.compile(r"#/game/f\."))
    ann.shot("free-play")
    first = page.url
    page.locator('[data-action="resign"]').click()
    page.locator("dialog.dialog").get_by_role("button", name="Resign").click()
    result = page.locator("dialog.dialog")
    expect(result.locator('[data-result="rank"]')).to_have_text("—")  # on no board
    expect(result.locator("textarea.share")).to_have_value(re.compile(r"^Solitaire free play"))
    result.get_by_role("button", name="See the board").click()
    # Another free game is another deal; the daily page is untouched.
    page.click('[data-nav="free"]')
    page.click('[data-action="free"]')
    expect(page.locator("[data-free]")).to_be_visible()
    expect(page).not_to_have_url(first)
    page.click('[data-nav="daily"]')
    expect(page.locator('.deal[data-state="new"]')).to_have_count(6)


def _race_to_the_end(a: Page, b: Page, players: tuple[Player, Player]) -> None:
    for page in (a, b):
        page.wait_for_selector(".board.pairing")
    for player in players:
        resign(player)
    for page in (a, b):
        expect(page.locator("[data-race-result]")).to_be_visible()


def test_a_rematch_is_offered_accepted_and_declined(
    browser: Browser, web_server: WebServer, ann: Player
) -> None:
    ben = open_player(browser, web_server.http, "ben")
    try:
        a, b = ann.page, ben.page
        start_room_race(a, b)
        _race_to_the_end(a, b, (ann, ben))
        first = a.evaluate("localStorage.getItem('solitaire.race')")
        # ann asks for a rematch; ben gets the offer and accepts it.
        a.click('[data-action="rematch"]')
        expect(a.locator('[data-race="open"] [data-code]')).to_have_text(re.compile(r"\w{4,8}"))
        offer = b.locator("[data-rematch-offer]")
        expect(offer).to_contain_text("ann asks for a rematch (Fourteen Out)")
        ben.shot("rematch-offer")
        offer.locator('[data-action="accept-rematch"]').click()
        expect(a.locator(".racers li")).to_have_count(2)
        second = a.evaluate("localStorage.getItem('solitaire.race')")
        assert second != first
        a.click('[data-action="start"]')
        _race_to_the_end(a, b, (ann, ben))
        # ben asks for another; ann declines: ben is told and the room closes.
        b.click('[data-action="rematch"]')
        offer = a.locator("[data-rematch-offer]")
        expect(offer).to_contain_text("ben asks for a rematch")
        offer.locator('[data-action="decline-rematch"]').click()
        expect(offer).to_have_count(0)
        expect(b.locator(".toast", has_text="ann declined the rematch.")).to_be_visible()
        expect(b.locator(".toast", has_text="The room was closed.")).to_be_visible()
        expect(b.locator('[data-action="create"]')).to_be_visible()
    finally:
        ben.close()


def test_the_page_says_when_someone_used_up_the_tries_by_its_name(
    browser: Browser, web_server: WebServer
) -> None:
    """A guesser names the player in `signin.redeem` with wrong codes (through the protocol,
    as a cheating client would) until the account's named tries are used up (5 an hour):
    the player's page, on any screen, is told in plain words that its code is void and how
    to sign in now; the live code it showed no longer works. Told once, however many more
    tries the guesser makes."""
    fay = open_player(browser, web_server.http, "fay")
    try:
        page = fay.page
        page.click('[data-nav="account"]')
        page.click('[data-action="signin-code"]')
        code = page.locator("[data-signin-code]").inner_text()
        page.click('[data-nav="daily"]')  # a screen with nothing of sign-in on it
        with LoopThread() as loop:
            for _ in range(5):
                r = loop.run(try_redeem(web_server.process, "2222-2222", name="fay"))
                assert r["code"] == "invalid_code", r
            r = loop.run(try_redeem(web_server.process, "2222-2222", name="fay"))
            assert r["code"] == "limit_reached", r
            toast = page.locator(".toast", has_text="sign-in tries")
            expect(toast).to_have_text(
                "Someone used up the sign-in tries by your name: your sign-in code is void. "
                "Ask a new one and redeem it without your name."
            )
            fay.shot("signin-tries-used")
            r = loop.run(try_redeem(web_server.process, "2222-2222", name="fay"))
            assert r["code"] == "limit_reached", r
            r = loop.run(try_redeem(web_server.process, code))  # the void code, nameless
            assert r["code"] == "invalid_code", r
        expect(toast).to_have_count(1)
        pushed = [f for f in fay.frames if json.loads(f).get("type") == "signin.tries_used"]
        assert len(pushed) == 1, pushed
    finally:
        fay.close()
