"""The history page's paging (`#/history/VARIANT`, issue #27) in headless Chromium.

The server runs in-process on a manual clock (`tests.support.app.serve`, on an embedded
Redis, in a thread of its own): one player resigns Fourteen Out on each of 12 days, then the
page shows them 10 a page, newest first, Older and Newer by mouse and keyboard."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.support.app import T0_MS, App
from tests.support.loopthread import LoopThread, served_in_thread
from tests.support.wsclient import Client

DAY_MS = 86_400_000
DAYS = 12
TODAY = dt.date(2030, 6, 15)


@pytest.fixture(scope="module")
def manual_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[App, LoopThread]]:
    with served_in_thread(
        tmp_path_factory, b"history paging", T0_MS - (DAYS - 1) * DAY_MS
    ) as served:
        yield served


async def a_game_a_day(app: App) -> str:
    """pia resigns today's Fourteen Out on each of the last `DAYS` days; her token."""
    token = ""
    for back in range(DAYS - 1, -1, -1):
        app.clock.set(T0_MS - back * DAY_MS)
        c = await Client.connect(app.url, binary=False)
        if token:
            await c.hello(token=token, versions=(6,))
        else:
            await c.hello(name="pia", versions=(6,))
            token = c.token
        g = await c.request("daily.start", variant="fourteen-out")
        assert g["type"] == "game", g
        assert (await c.request("resign", game_id=g["game_id"]))["type"] == "finished"
        await c.close()
    return token


def test_history_pages_older_and_newer(
    browser: Browser, manual_app: tuple[App, LoopThread]
) -> None:
    app, loop = manual_app
    token = loop.run(a_game_a_day(app), 60)
    context = browser.new_context()
    context.add_init_script(f"localStorage.setItem('solitaire.token', {token!r});")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{app.http}/#/history/fourteen-out")
    expect(page.locator("#who")).to_have_text("pia")
    rows = page.locator("table.ranking tbody tr")
    expect(rows).to_have_count(10)
    newest = [(TODAY - dt.timedelta(days=i)).isoformat() for i in range(DAYS)]
    assert [r.get_attribute("data-date") for r in rows.all()] == newest[:10]
    expect(rows.first).to_contain_text("Resigned")
    expect(page.locator('[data-page="newer"]')).to_be_disabled()

    older = page.locator('[data-page="older"]')
    older.focus()
    page.keyboard.press("Enter")  # by keyboard
    expect(rows).to_have_count(2)
    assert [r.get_attribute("data-date") for r in rows.all()] == newest[10:]
    expect(page.locator('[data-page="older"]')).to_be_disabled()
    expect(page.locator(".paging")).to_contain_text("page 2")
    page.click('[data-page="newer"]')
    expect(rows).to_have_count(10)
    assert rows.first.get_attribute("data-date") == TODAY.isoformat()

    # Another variant: nothing played there.
    page.select_option("#h-variant", "triple-triangle")
    expect(page).to_have_url(f"{app.http}/#/history/triple-triangle")
    expect(page.locator(".history p.muted")).to_contain_text("No finished Tri Peaks game yet.")
    context.close()
    assert errors == []
