"""Accessibility in the browser: every page of the client passes axe-core (run in the page by
the `axe-playwright-python` package) with no serious or critical violation, at desktop and
phone width, in the default and the high-contrast theme; the settings panel's themes (high
contrast, a four-colour deck) are applied, kept and follow `prefers-contrast: more`.

`make screenshots` refreshes docs/screenshots from here too: every page at both widths."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from playwright.sync_api import Browser, Page, expect

from engine import VARIANT_IDS
from tests.web.axe import assert_accessible, report, violations
from tests.web.browser import Player, WebServer, open_player, register, shot, winning_line

PHONE = (390, 844)
DESKTOP = (1280, 800)


@dataclass(frozen=True)
class Screen:
    """A page of the client: its address, what shows it has loaded, its screenshot name."""

    name: str
    hash: str
    ready: str
    clicks: tuple[str, ...] = ()  # then these (a tab, a dialog's buttons) are clicked


SCREENS = (
    Screen("daily", "#/daily", '.deal[data-state="new"] >> nth=5'),
    Screen("game-pairing", "#/play/fourteen-out", '[data-key="p1"]'),
    Screen("game-tripeaks", "#/play/triple-triangle", "[data-stock]"),
    Screen("game-tableau", "#/play/triple-deck", "[data-stock]"),
    Screen("game-easthaven", "#/play/triple-easthaven", "[data-stock]"),
    Screen(
        "game-rules-dialog", "#/play/fourteen-out", "dialog.dialog", ('button:text-is("Rules")',)
    ),
    Screen("leaderboard", "#/boards/fourteen-out", "table.ranking, .boardbody .paging"),
    Screen(
        "leaderboard-races",
        "#/boards/fourteen-out",
        '[data-board="rating"][aria-selected="true"]',
        ('[data-board="rating"]',),
    ),
    Screen("race-lobby", "#/race", '[data-action="queue"]'),
    *(Screen(f"rules-{v}", f"#/rules/{v}", f'[data-rules="{v}"]') for v in VARIANT_IDS),
    Screen("settings", "#/settings", "section.settings form"),
    Screen(
        "game-result",
        "#/play/fourteen-out",
        '[data-result="points"]',
        ('[data-action="resign"]', 'dialog.dialog button:text-is("Resign")'),
    ),
    Screen("race-room", "#/race", "[data-code]", ('[data-action="create"]',)),
    Screen("profile", "#/daily", "section.profile section.panel", ("#who",)),
    Screen("history", "#/history/fourteen-out", "section.history h1"),
    Screen("races", "#/races", "section.races h1"),
    Screen("free", "#/free", "section.freeplay h1"),
    Screen("account", "#/account", "table.devices tbody tr"),
    Screen("calendar", "#/calendar", "table.calendar"),
)


def snap(page: Page, name: str) -> None:
    """Every page is rendered; docs/screenshots keeps both widths of the standard theme and
    the desktop width of the high-contrast one (`make screenshots`)."""
    if name.endswith("-contrast-phone"):
        assert page.screenshot(full_page=True).startswith(b"\x89PNG"), name
    else:
        shot(page, name)


def visit(player: Player, http: str, screen: Screen) -> None:
    page = player.page
    page.goto(f"{http}/{screen.hash}")
    for selector in screen.clicks:
        page.locator(selector).first.click()
    page.locator(screen.ready).first.wait_for()
    page.wait_for_load_state("networkidle")


@pytest.mark.parametrize(
    ("theme", "viewport"),
    [("standard", DESKTOP), ("standard", PHONE), ("contrast", DESKTOP), ("contrast", PHONE)],
    ids=["desktop", "phone", "contrast-desktop", "contrast-phone"],
)
def test_every_page_passes_axe(
    browser: Browser, web_server: WebServer, theme: str, viewport: tuple[int, int]
) -> None:
    """The welcome form, the daily list, a game of each layout family (and the rules dialog of
    a game), both leaderboards, the race lobby, every variant's rules and the settings: no
    serious or critical axe-core violation, in either theme, at either width."""
    player = open_player(browser, web_server.http, None, viewport)
    page = player.page
    deck = "two" if theme == "standard" else "four"
    page.evaluate(
        "s => localStorage.setItem('solitaire.settings', JSON.stringify(s))",
        {"theme": theme, "deck": deck},
    )
    page.reload()
    suffix = ("" if theme == "standard" else "-contrast") + ("-phone" if viewport == PHONE else "")
    try:
        page.locator("form.welcome").wait_for()
        expect(page.locator("html")).to_have_attribute("data-theme", theme)
        assert_accessible(page, "welcome")
        snap(page, f"page-welcome{suffix}")
        register(player, f"axe-{theme[:3]}-{viewport[0]}")
        failures: list[str] = []
        for screen in SCREENS:
            visit(player, web_server.http, screen)
            found = violations(page)
            if found:
                failures.append(f"{screen.name}:\n{report(found)}")
            snap(page, f"page-{screen.name}{suffix}")
            if page.locator("dialog.dialog").count():
                page.keyboard.press("Escape")  # a dialog stays over the next screen otherwise
                expect(page.locator("dialog.dialog")).to_have_count(0)
        assert failures == [], "\n".join(failures)
    finally:
        player.close()


def colour(page: Page, selector: str, prop: str = "color") -> str:
    return str(page.locator(selector).first.evaluate(f"n => getComputedStyle(n).{prop}", None))


def test_four_colour_deck_and_high_contrast_are_chosen_and_kept(
    browser: Browser, web_server: WebServer
) -> None:
    """Settings: the four-colour deck gives each suit its own colour on the board, the
    high-contrast theme darkens the table; both are kept across a reload."""
    player = open_player(browser, web_server.http, "quad")
    page = player.page
    try:
        page.goto(f"{web_server.http}/#/play/fourteen-out")
        page.locator('[data-key="p1"]').wait_for()
        two = {s: colour(page, f".card.suit-{s}") for s in "SHDC"}
        assert two["S"] == two["C"] and two["H"] == two["D"], two  # the classic two colours

        page.get_by_role("link", name="Settings").click()
        page.get_by_label("Four colours").check()
        expect(page.locator("html")).to_have_attribute("data-deck", "four")
        page.get_by_label("High contrast").check()
        expect(page.locator("html")).to_have_attribute("data-theme", "contrast")
        stored = page.evaluate("() => JSON.parse(localStorage.getItem('solitaire.settings'))")
        assert stored == {"theme": "contrast", "deck": "four"}

        page.reload()
        page.goto(f"{web_server.http}/#/play/fourteen-out")
        page.locator('[data-key="p1"]').wait_for()
        expect(page.locator("html")).to_have_attribute("data-deck", "four")
        four = {s: colour(page, f".card.suit-{s}") for s in "SHDC"}
        assert len(set(four.values())) == 4, four
        assert four == {
            "S": "rgb(0, 0, 0)",
            "H": "rgb(164, 0, 12)",
            "D": "rgb(0, 48, 168)",
            "C": "rgb(0, 92, 28)",
        }
        assert colour(page, "body", "backgroundColor") == "rgb(0, 0, 0)"

        page.get_by_role("link", name="Settings").click()
        page.get_by_label("Standard").check()
        page.get_by_label("Two colours").check()
        expect(page.locator("html")).to_have_attribute("data-theme", "standard")
        assert colour(page, "body", "backgroundColor") == "rgb(29, 107, 67)"  # the felt
    finally:
        player.close()


def test_the_theme_follows_the_devices_contrast_preference(
    browser: Browser, web_server: WebServer
) -> None:
    """`prefers-contrast: more` brings the high-contrast theme unless the player chose one."""
    context = browser.new_context(contrast="more")
    page = context.new_page()
    try:
        page.goto(web_server.http + "/")
        expect(page.locator("html")).to_have_attribute("data-theme", "contrast")
        assert colour(page, "body", "backgroundColor") == "rgb(0, 0, 0)"
        page.evaluate(
            "() => localStorage.setItem('solitaire.settings', '{\"theme\": \"standard\"}')"
        )
        page.reload()
        expect(page.locator("html")).to_have_attribute("data-theme", "standard")
        page.emulate_media(contrast="no-preference")
        page.evaluate("() => localStorage.removeItem('solitaire.settings')")
        page.reload()
        expect(page.locator("html")).to_have_attribute("data-theme", "standard")
        page.emulate_media(contrast="more")  # a change while the page is open applies at once
        expect(page.locator("html")).to_have_attribute("data-theme", "contrast")
    finally:
        context.close()


def test_settings_are_chosen_with_the_keyboard_alone(
    browser: Browser, web_server: WebServer
) -> None:
    """The settings screen is reached and used by keyboard: Tab to the link, Enter, arrow keys
    between the choices (each applies at once), as a person without a pointer would."""
    player = open_player(browser, web_server.http, "keys")
    page = player.page
    try:
        page.locator('.deal[data-state="new"] >> nth=5').wait_for()
        page.locator(".topbar .brand").focus()  # the first stop of the page's tab order
        tabs = 0
        while page.evaluate("() => document.activeElement.dataset.nav") != "settings":
            page.keyboard.press("Tab")  # through the top bar to the Settings link
            tabs += 1
            assert tabs <= 10, "the Settings link is not in the top bar's tab order"
        page.keyboard.press("Enter")
        theme = page.get_by_label("As the device asks")
        expect(theme).to_be_visible()
        # Past the rest of the top bar (your name, linked to your profile), the first radio
        # group takes the focus on its checked radio.
        for _ in range(2):
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement.name") == "theme":
                break
        expect(theme).to_be_focused()
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown")
        expect(page.get_by_label("High contrast")).to_be_checked()
        expect(page.locator("html")).to_have_attribute("data-theme", "contrast")
        page.keyboard.press("Tab")  # the deck's group
        expect(page.get_by_label("Two colours")).to_be_focused()
        page.keyboard.press("ArrowDown")
        expect(page.locator("html")).to_have_attribute("data-deck", "four")
    finally:
        player.close()


def test_keyboard_play_in_the_high_contrast_theme(browser: Browser, web_server: WebServer) -> None:
    """Full keyboard play stays with the themes: Tab from the top of the page reaches the
    board, arrows and Enter play a pair, U undoes it; the focused card shows a 4 px ring."""
    player = open_player(browser, web_server.http, "keyb")
    page = player.page
    try:
        page.evaluate(
            "() => localStorage.setItem('solitaire.settings', "
            "JSON.stringify({theme: 'contrast', deck: 'four'}))"
        )
        page.goto(f"{web_server.http}/#/play/fourteen-out")
        page.reload()
        page.locator('[data-key="p1"]').wait_for()
        expect(page.locator("html")).to_have_attribute("data-theme", "contrast")
        page.locator(".topbar .brand").focus()
        for _ in range(40):  # Tab through the bar and the game's buttons into the board
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement.dataset.key || ''").startswith("p"):
                break
        focused = page.evaluate("() => document.activeElement.dataset.key")
        assert focused == "p1", focused
        ring = page.evaluate("() => getComputedStyle(document.activeElement).outlineWidth")
        assert ring == "4px"
        a, b = map(int, winning_line("fourteen-out", web_server.seed("fourteen-out"))[0].split())
        for _ in range(a - 1):
            page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
        for _ in range(b - a):
            page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
        player.wait_moves(1)
        page.keyboard.press("u")  # undo, which counts as a move
        player.wait_moves(2)
        expect(page.locator(f'[data-key="p{a}"]')).to_be_visible()
    finally:
        player.close()
