"""axe-core in the page under test, through the `axe-playwright-python` package (dev extra):
`assert_accessible(page, name)` fails on any serious or critical violation (issue #27). A new
page's test can call it; tests/web/test_a11y.py runs it on every page of the client."""

from __future__ import annotations

from typing import TypedDict, cast

import pytest
from playwright.sync_api import Page

try:
    from axe_playwright_python.sync_playwright import Axe
except ImportError:  # pragma: no cover - the dev extra is missing
    pytest.fail(
        "axe-playwright-python is missing: pip install -e '.[dev]' (or `make test`)",
        pytrace=False,
    )

#: axe-core's impact levels that fail a test (issue #27: no serious or critical violation).
FAILING = ("serious", "critical")


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
