"""A catch-up game in headless Chromium (protocol 8): a player who joined five days ago opens
a past day's tier from the calendar; its header and result say "catch-up" and its result is
on no board. The server runs in-process on a manual clock (`tests.support.app.serve`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.support.app import T0_MS, App
from tests.support.loopthread import LoopThread, served_in_thread
from tests.support.wsclient import Client

DAY_MS = 86_400_000
TODAY, JOINED, PAST = "2030-06-15", "2030-06-10", "2030-06-12"


@pytest.fixture(scope="module")
def manual_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[App, LoopThread]]:
    with served_in_thread(tmp_path_factory, b"catch-up page", T0_MS - 5 * DAY_MS) as served:
        yield served


async def joined_days_ago(app: App) -> str:
    """cat registers on JOINED; the clock then moves to TODAY. Her token."""
    c = await Client.connect(app.url, binary=False)
    await c.hello(name="cat")
    token = c.token
    await c.close()
    app.clock.set(T0_MS)
    return token


def test_a_catch_up_game_says_so_in_its_header_and_result(
    browser: Browser, manual_app: tuple[App, LoopThread]
) -> None:
    app, loop = manual_app
    token = loop.run(joined_days_ago(app), 60)
    context = browser.new_context()
    context.add_init_script(f"localStorage.setItem('solitaire.token', {token!r});")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{app.http}/#/calendar")
        expect(page.locator("#who")).to_have_text("cat")
        before = page.locator('tr[data-date="2030-06-09"] [data-tier="easy"]').first
        expect(before).to_have_attribute("data-shown", "closed")
        cell = page.locator(
            f'tr[data-date="{PAST}"] [data-variant="fourteen-out"][data-tier="easy"]'
        )
        expect(cell).to_have_attribute("data-shown", "not_played")
        cell.click()
        page.wait_for_url("**/#/game/c.easy.fourteen-out.*")
        expect(page.locator("[data-game-label]")).to_have_text(f" easy · catch-up of {PAST}")
        page.click('[data-action="resign"]')
        page.locator("dialog.dialog").get_by_role("button", name="Resign").click()
        result = page.locator("dialog.dialog")
        expect(result.locator('[data-result="label"]')).to_have_text(
            f"Fourteen Out · easy · catch-up of {PAST}"
        )
        expect(result.locator('[data-result="rank"]')).to_have_text("catch-up: on no board")
    finally:
        context.close()
    assert errors == []
