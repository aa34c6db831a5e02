"""Protocols 6 and 7 in the browser: the page speaks the newest version only, shows the variants as
the server's `welcome.variant_info` describes them (no table of its own), and sends only the
game ids the server gave it (`welcome.daily`, `daily.start`), never ones it built."""

from __future__ import annotations

import json

from playwright.sync_api import Browser, WebSocketRoute, expect

from tests.web.browser import Player, WebServer, register

SERVED_NAME = "Fourteen Out, as served"
SERVED_GOAL = "Clear the table: the server says so."


def served(message: str | bytes) -> str | bytes:
    """The server's frame, with the welcome's Fourteen Out descriptor renamed."""
    text = message if isinstance(message, str) else message.decode()
    msg = json.loads(text)
    if msg.get("type") != "welcome":
        return message
    for info in msg["variant_info"]:
        if info["id"] == "fourteen-out":
            info.update(name=SERVED_NAME, goal=SERVED_GOAL, clear=99)
    return json.dumps(msg)


def test_the_page_shows_the_servers_descriptors_and_only_ids_it_was_given(
    browser: Browser, web_server: WebServer
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    player = Player(context, page)
    page.on("websocket", player.sockets)
    page.on("pageerror", lambda exc: player.errors.append(str(exc)))

    def route(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()
        server.on_message(lambda m: ws.send(served(m)))
        ws.on_message(server.send)

    try:
        page.route_web_socket("**/ws", route)
        page.goto(web_server.http + "/")
        register(player, "dora6")
        hello = player.sent_requests()[0]
        assert hello["type"] == "hello" and hello["versions"] == [10]
        welcome = next(json.loads(f) for f in player.frames if '"welcome"' in f)
        assert welcome["version"] == 10 and len(welcome["variant_info"]) == 6
        deal = page.locator('.deal[data-variant="fourteen-out"]')
        expect(deal.locator("h2")).to_have_text(SERVED_NAME)
        expect(deal).to_contain_text(SERVED_GOAL)
        tri = page.locator('.deal[data-variant="triple-triangle"]')
        expect(tri.locator("h2")).to_have_text("Tri Peaks")
        expect(page.locator('.deal[data-state="new"]')).to_have_count(6)
        # A new player has no games: nothing to fetch, and no id made up to try.
        assert "game.get" not in {r["type"] for r in player.sent_requests()}

        deal.locator("a.primary").click()
        page.wait_for_selector(".board.pairing")
        expect(page.locator(".gamebar h1")).to_contain_text(SERVED_NAME)
        expect(page.locator('[data-stat="points"]')).to_have_text("Cleared 0 / 99")
        expect(page.locator(".keys")).not_to_contain_text("D draw")  # no stock in this game
        undo = page.locator('[data-action="undo"]')
        expect(undo).to_have_attribute("title", "Undo (U): counts as a move")  # RULINGS.md
        started = next(json.loads(f) for f in player.frames if json.loads(f).get("type") == "game")
        page.click('[data-nav="daily"]')
        expect(deal).to_have_attribute("data-state", "playing")
        asked = {r["game_id"] for r in player.sent_requests() if r["type"] == "game.get"}
        assert asked == {started["game_id"]}
        assert player.errors == []
    finally:
        context.close()
