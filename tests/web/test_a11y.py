"""Accessibility in the browser: every page of the client passes axe-core (run in the page by
the `axe-playwright-python` package) with no serious or critical violation, at desktop and
phone width, in the default and the high-contrast theme; the settings panel's themes (high
contrast, a four-colour deck) are applied, kept and follow `prefers-contrast: more`.

`make screenshots` refreshes docs/screenshots from here too: every page at both widths."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict, cast

import pytest
from playwright.sync_api import Browser, Page, expect

from engine import VARIANT_IDS
from tests.web.browser import Player, WebServer, open_player, register, shot

try:
    from axe_playwright_python.sync_playwright import Axe
except ImportError:  # pragma: no cover - the dev extra is missing
    pytest.fail(
        "axe-playwright-python is missing: pip install -e '.[dev]' (or `make test`)",
        pytrace=False,
    )

#: axe-core's impact levels that fail a test (issue #27: no serious or critical violation).
FAILING = ("serious", "critical")
PHONE = (390, 844)
DESKTOP = (1280, 800)


class AxeNode(TypedDict):
    target: list[str]
    html: str


class AxeViolation(TypedDict):
    id: str
    impact: str | None
    help: str
    nodes: list[AxeNode]


def violations(page: Page) -> list[AxeViolation]:
    """axe-core's serious and critical violations on the page as it stands."""
    results = Axe().run(page)
    found = cast(list[AxeViolation], results.response["violations"])
    return [v for v in found if v["impact"] in FAILING]


def report(found: list[AxeViolation]) -> str:
    return "\n".join(
        f"{v['impact']} {v['id']}: {v['help']} at {[n['target'] for n in v['nodes'][:5]]}"
        for v in found
    )


def assert_accessible(page: Page, name: str) -> None:
    found = violations(page)
    assert found == [], f"{name}:\n{report(found)}"


@dataclass(frozen=True)
class Screen:
    """A page of the client: its address, what shows it has loaded, its screenshot name."""

    name: str
    hash: str
    ready: str
    click: str | None = None  # then this (a tab, a dialog's button) is clicked


SCREENS = (
    Screen("daily", "#/daily", '.deal[data-state="new"] >> nth=5'),
    Screen("game-pairing", "#/play/fourteen-out", '[data-key="p1"]'),
    Screen("game-tripeaks", "#/play/triple-triangle", "[data-stock]"),
    Screen("game-tableau", "#/play/triple-deck", "[data-stock]"),
    Screen("game-easthaven", "#/play/triple-easthaven", "[data-stock]"),
    Screen("game-rules-dialog", "#/play/fourteen-out", "dialog.dialog", 'button:text-is("Rules")'),
    Screen("leaderboard", "#/boards/fourteen-out", "table.ranking, .boardbody .paging"),
    Screen(
        "leaderboard-races",
        "#/boards/fourteen-out",
        '[data-board="rating"][aria-selected="true"]',
        '[data-board="rating"]',
    ),
    Screen("race-lobby", "#/race", '[data-action="queue"]'),
    *(Screen(f"rules-{v}", f"#/rules/{v}", f'[data-rules="{v}"]') for v in VARIANT_IDS),
    Screen("settings", "#/settings", "section.settings form"),
)


def visit(player: Player, http: str, screen: Screen) -> None:
    page = player.page
    page.goto(f"{http}/{screen.hash}")
    if screen.click is not None:
        page.locator(screen.click).first.wait_for()
        page.locator(screen.click).first.click()
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
    page.evaluate(
        "t => localStorage.setItem('solitaire.settings', JSON.stringify({theme: t, deck: 'four'}))",
        theme,
    )
    page.reload()
    suffix = ("" if theme == "standard" else "-contrast") + ("-phone" if viewport == PHONE else "")
    try:
        page.locator("form.welcome").wait_for()
        expect(page.locator("html")).to_have_attribute("data-theme", theme)
        assert_accessible(page, "welcome")
        shot(page, f"page-welcome{suffix}")
        register(player, f"axe-{theme[:3]}-{viewport[0]}")
        failures: list[str] = []
        for screen in SCREENS:
            visit(player, web_server.http, screen)
            found = violations(page)
            if found:
                failures.append(f"{screen.name}:\n{report(found)}")
            shot(page, f"page-{screen.name}{suffix}")
            if page.locator("dialog.dialog").count():
                page.keyboard.press("Escape")  # a dialog stays over the next screen otherwise
                expect(page.locator("dialog.dialog")).to_have_count(0)
        assert failures == [], "\n".join(failures)
    finally:
        player.close()
