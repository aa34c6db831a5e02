"""The Rules page (#27): each variant's rules written for people who click, tap, drag or use
keys (from the server's `/rules.json`, built by `engine.guide`), with small pictures of legal
plays and "an undo counts as a move"; none of the terminal's move notation (`f8H 5`, `3 7`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from engine import VARIANT_IDS
from engine.guide import UNDO, guide
from engine.rules import NOTATION
from tests.web.browser import Player, WebServer, card_name, open_player

#: A move in the terminal's notation, as `engine.rules.NOTATION` writes them.
MOVE = re.compile(r"\b(f\d*[CDHS]? \d+|w [f\d]|\d+ \d+( \d+)?|\d+ f)\b")


def notation_moves(variant: str) -> list[str]:
    """The example moves of the terminal's notation ("3 7", "f8H 5", "d")."""
    lines = NOTATION[variant].splitlines()[1:]
    return [re.split(r"\s{2,}", line.strip())[0] for line in lines]


@pytest.fixture(scope="module")
def reader(browser: Browser, web_server: WebServer) -> Iterator[Player]:
    p = open_player(browser, web_server.http, "reader")
    yield p
    p.close()


@pytest.mark.parametrize("vid", VARIANT_IDS)
def test_each_variants_rules_are_for_people(
    reader: Player, web_server: WebServer, vid: str
) -> None:
    page = reader.page
    page.goto(f"{web_server.http}/#/rules/{vid}")
    article = page.locator(f'article[data-rules="{vid}"]')
    expect(article.locator("h2")).to_be_visible()
    expect(page.locator(f'.rules .tabs a[href="#/rules/{vid}"]')).to_have_attribute(
        "aria-current", "page"
    )
    text = article.inner_text()
    g = guide(vid)
    for sentence in (*g.about, *g.play, UNDO):
        assert sentence in text, sentence
    assert "An undo counts as a move." in text
    assert "click or tap" in text.lower()
    assert not MOVE.search(text), MOVE.search(text)
    for move in notation_moves(vid):
        assert f" {move} " not in f" {text} ", move
    assert article.locator("pre").count() == 0  # no terminal text box

    # The pictures: real card faces, named for screen readers, never counted as table cards.
    figures = article.locator("figure.picture")
    expect(figures).to_have_count(len(g.pictures))
    for i, pic in enumerate(g.pictures):
        fig = figures.nth(i)
        expect(fig.locator("figcaption")).to_have_text(pic.caption)
        labels = [c.get_attribute("aria-label") for c in fig.locator(".card").all()]
        assert labels == [card_name(c) for c in pic.cards]
        expect(fig.locator('.card[role="img"]')).to_have_count(len(pic.cards))
    expect(article.locator("[data-card]")).to_have_count(0)


def test_a_games_rules_dialog_is_the_same_text(reader: Player, web_server: WebServer) -> None:
    page = reader.page
    page.goto(f"{web_server.http}/#/play/triple-triangle")
    page.get_by_role("button", name="Rules").click()
    dialog = page.locator("dialog.dialog")
    g = guide("triple-triangle")
    expect(dialog).to_contain_text(g.about[2])
    expect(dialog).to_contain_text(g.play[0])
    expect(dialog.locator("figure.picture")).to_have_count(len(g.pictures))
    assert not MOVE.search(dialog.inner_text())
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_have_count(0)
