"""Fixtures of the browser tests: one server and one headless Chromium per test module.

Chromium is Debian's (`/usr/bin/chromium`), driven by Playwright; no browser is downloaded.
The server runs as a subprocess (`python -m server`, embedded Redis) with its clock shifted to
2030-06-15 12:00 UTC and a daily secret whose deals the tests can win (`browser.pick_secret`).

Every wait follows the page: Playwright's auto-waiting `expect(...)` and actions, all with
`browser.TIMEOUT_MS` (set here for `expect`, whose own default of 5 s is short on a loaded
machine), never a fixed sleep.

Fixtures:
    browser     (module)    a headless Chromium
    web_server  (module)    the server: `http` root, `secret` and its `process`
    secret      (session)   the daily secret the servers deal with
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from tests.support.procs import ServerProcess
from tests.web.browser import (
    CHROMIUM,
    INSTALL_HINT,
    TIMEOUT_MS,
    WebServer,
    pick_secret,
    server_flags,
)

expect.set_options(timeout=TIMEOUT_MS)


@pytest.fixture(scope="session")
def secret() -> str:
    return pick_secret()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: {INSTALL_HINT}", pytrace=False)
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory, secret: str) -> Iterator[WebServer]:
    data: Path = tmp_path_factory.mktemp("web") / "data"
    with ServerProcess(data, server_flags(secret)) as srv:
        yield WebServer(f"http://127.0.0.1:{srv.port}", secret, srv)
