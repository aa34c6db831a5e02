"""Helpers for the browser tests: a player's page, the server it talks to, card checks.

A `Player` is one browser context (its own localStorage, so its own player token) with one
page; every WebSocket frame that page receives is kept, to check that no hidden card arrives.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, WebSocket, expect

from engine import Game, new_game
from engine.solvers import solve
from server.games.daily import daily_seed
from tests.support.procs import ROOT, ServerProcess
from tests.support.wsclient import Client

CHROMIUM = Path("/usr/bin/chromium")
INSTALL_HINT = "apt-get install -y chromium   (as root; or run `make test`, which does it)"
SCREENSHOTS = ROOT / "docs" / "screenshots"
#: 2030-06-15 12:00 UTC: the server's clock is shifted here, so the daily deals are fixed.
T0_MS = 1_907_755_200_000
DATE = dt.date(2030, 6, 15)
#: Daily variants the tests play to the end: one deck, short winning lines.
PLAYED = ("fourteen-out", "triple-triangle")
#: How long any wait on the page may take: every Playwright action (the context's default) and
#: every `expect(...)` (conftest.py sets it; Playwright's own default is 5 s). Generous: the
#: tests share two loaded cores, and a wait that follows the page ends as soon as it shows.
TIMEOUT_MS = 30_000

_CARD = re.compile(r"(?:10|[2-9AJQK])[CDHS]")
_SUITS = {"C": ("♣", "clubs"), "D": ("♦", "diamonds"), "H": ("♥", "hearts"), "S": ("♠", "spades")}
_RANKS = {"A": "ace", "J": "jack", "Q": "queen", "K": "king"}
_VALUES = {"A": 1, "J": 11, "Q": 12, "K": 13}


def server_flags(secret: str) -> tuple[str, ...]:
    """Quiet, a fixed date (the daily deals do not change mid-run), a 2 s race countdown."""
    offset = T0_MS - int(time.time() * 1000)
    return (
        "--no-certify",
        "--no-fair-play-screen",  # the browser is driven at machine speed
        "--log-level",
        "WARNING",
        "--daily-secret",
        secret,
        "--clock-offset-ms",
        str(offset),
        "--race-countdown-ms",
        "2000",
    )


def pick_secret() -> str:
    """The first daily secret whose deals of `PLAYED` on `DATE` the solver proves winnable."""
    for i in range(100):
        secret = f"web-{i}"
        if all(winning_line(v, daily_seed(secret.encode(), v, DATE)) for v in PLAYED):
            return secret
    raise AssertionError("no secret with winnable deals found")


def winning_line(variant: str, seed: int) -> list[str]:
    """The solver's winning line for a deal ([] when it finds none)."""
    result = solve(new_game(variant, seed), max_seconds=10)
    return list(result.solution) if result.verdict == "winnable" else []


def losing_line(variant: str, seed: int, depth: int = 8, budget: int = 3000) -> list[str]:
    """The first line (depth first, at most ``depth`` moves) after which the game goes on
    but the solver proves it lost within 0.5 s: where a hint has no move to give. ``[]``
    when none is found among ``budget`` positions."""
    seen = 0

    def search(line: list[str]) -> list[str]:
        nonlocal seen
        seen += 1
        game = new_game(variant, seed)
        for m in line:
            game.apply(m)
        moves = [str(m) for m in game.legal_moves()]
        if line and moves and solve(game, max_seconds=0.5).verdict == "impossible":
            return line
        for m in moves:
            if len(line) >= depth or seen >= budget:
                break
            if found := search([*line, m]):
                return found
        return []

    return search([])


@dataclass
class WebServer:
    """The server under test: its HTTP root and the daily secret it deals with."""

    http: str
    secret: str
    process: ServerProcess

    def seed(self, variant: str) -> int:
        return daily_seed(self.secret.encode(), variant, DATE)


@dataclass
class Player:
    """One person in one browser context."""

    context: BrowserContext
    page: Page
    frames: list[str] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)  # frames the page sent
    errors: list[str] = field(default_factory=list)  # uncaught exceptions in the page
    socket: WebSocket | None = None  # the page's latest WebSocket

    def close(self) -> None:
        """Close the context; the page must not have thrown."""
        self.context.close()
        assert self.errors == [], self.errors

    def sockets(self, ws: WebSocket) -> None:
        self.socket = ws
        ws.on(
            "framereceived",
            lambda payload: self.frames.append(
                payload if isinstance(payload, str) else payload.decode("utf-8", "replace")
            ),
        )
        ws.on(
            "framesent",
            lambda payload: self.sent.append(
                payload if isinstance(payload, str) else payload.decode("utf-8", "replace")
            ),
        )

    def next_frame(self) -> None:
        """Until the page's socket receives its next frame (it lands in `frames`). Playwright
        hands frames over only inside its own calls: wait here, not in a sleep."""
        assert self.socket is not None, "the page has no WebSocket"
        self.socket.wait_for_event("framereceived", timeout=TIMEOUT_MS)

    def sent_requests(self) -> list[dict[str, Any]]:
        """The requests the page sent, in order."""
        return [json.loads(f) for f in self.sent]

    def shot(self, name: str) -> None:
        shot(self.page, name)

    def moves(self) -> int:
        """The move count the page shows now (once it shows one)."""
        stat = self.page.locator('[data-stat="moves"]')
        expect(stat).to_have_text(re.compile(r"^Moves \d+$"))
        return int(stat.inner_text().split()[-1])

    def wait_moves(self, n: int) -> None:
        """Until the page shows `n` moves: the server's answer to the last move is in."""
        expect(self.page.locator('[data-stat="moves"]')).to_have_text(f"Moves {n}")


#: `make screenshots` sets it: only then are docs/screenshots refreshed, so that `make test`
#: leaves the tree as it found it.
REFRESH_SCREENSHOTS = os.environ.get("SOLITAIRE_SCREENSHOTS") == "1"


def shot(page: Page, name: str) -> None:
    """Render the page as a PNG (so a screen that fails to render fails the test); saved as
    docs/screenshots/<name>.png only by `make screenshots`."""
    png = page.screenshot(full_page=True)
    assert png.startswith(b"\x89PNG"), name
    if REFRESH_SCREENSHOTS:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        (SCREENSHOTS / f"{name}.png").write_bytes(png)


def open_player(
    browser: Browser,
    http: str,
    name: str | None,
    viewport: tuple[int, int] = (1280, 800),
    *,
    reduced_motion: bool = False,
    init_script: str | None = None,
) -> Player:
    """A new browser context on the page; `name` registers a new player. `reduced_motion`:
    the reader asks for reduced motion; `init_script` runs in the page before its own."""
    context = browser.new_context(
        viewport={"width": viewport[0], "height": viewport[1]},
        reduced_motion="reduce" if reduced_motion else "no-preference",
    )
    context.set_default_timeout(TIMEOUT_MS)
    if init_script is not None:
        context.add_init_script(init_script)
    page = context.new_page()
    player = Player(context, page)
    page.on("websocket", player.sockets)
    page.on("pageerror", lambda exc: player.errors.append(str(exc)))
    page.goto(http + "/")
    if name is not None:
        register(player, name)
    return player


def register(player: Player, name: str) -> None:
    """Register `name` on the welcome form (at the site's root) and wait until the page has
    landed: the daily list is on screen. The page's first screen appears only after its rules
    are fetched; tests start from that settled page (the page itself drops a late daily list
    when another address was opened meanwhile: test_resilience.py plays that)."""
    page = player.page
    page.fill('input[name="name"]', name)
    page.click('form.welcome button[type="submit"]')
    expect(page.locator("#who")).to_have_text(name)
    landed(page)


def landed(page: Page) -> None:
    """Until the page opened at the site's root (registered, or reloaded there) shows its
    first screen, the daily list: only then may a test open another address (see
    `register`)."""
    expect(page.locator("#main section.daily .deal").first).to_be_visible()


def click_move(player: Player, variant: str, move: str) -> None:
    """Play a move in the engine's notation by clicking what a person would click."""
    page = player.page
    if move == "d":
        page.click("[data-stock]")
    elif variant == "triple-triangle":
        page.click(f'[data-pos="{move}"]')
    elif variant in ("fourteen-out", "triple-fourteens"):
        a, b = move.split()
        page.click(f'[data-key="p{a}"]')
        page.click(f'[data-key="p{b}"]')
    else:  # Triple Deck, Easthaven: pick up the source, then click the destination
        src, dst, *count = move.split()
        if src == "w":
            page.click("[data-waste]")
        elif src.startswith("f"):
            page.click(f'[data-found][data-card="{src[1:]}"]')
        else:
            n = count[0] if count else "1"  # a run is picked up by its visible top strip
            page.click(f'[data-pile="{src}"][data-count="{n}"]', position={"x": 8, "y": 6})
        if dst == "f":
            page.click("[data-found] >> nth=0")
        else:
            page.click(f'.pile[data-pile="{dst}"] > .card:last-child')


def play_line(
    player: Player, game: Game, line: list[str], check: Callable[[], None] | None = None
) -> None:
    """Click each move of `line`, wait for the server's answer, apply it to `game` too."""
    variant = game.id
    for move in line:
        before = player.moves()
        click_move(player, variant, move)
        player.wait_moves(before + 1)
        game.apply(move)
        if check is not None:
            check()


def add_results(http: str, variant: str, names: list[str]) -> None:
    """Players who start today's `variant` and resign at once (over the protocol, not a page)."""

    async def run() -> None:
        url = http.replace("http://", "ws://") + "/ws"
        for name in names:
            c = await Client.connect(url, binary=False)
            await c.hello(name=name)
            game = await c.request("daily.start", variant=variant)
            done = await c.request("resign", game_id=game["game_id"])
            assert done["type"] == "finished", done
            await c.close()

    # Playwright's sync API keeps an event loop in this thread: run the clients in another.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(lambda: asyncio.run(run())).result()


def start_room_race(host: Page, guest: Page) -> None:
    """``host`` opens a private room, ``guest`` joins it by its code, ``host`` starts it."""
    host.click('[data-nav="race"]')
    host.click('[data-action="create"]')
    code = host.locator("[data-code]")
    expect(code).to_have_text(re.compile(r"[A-Z0-9]{4,8}"))
    guest.click('[data-nav="race"]')
    guest.fill('input[aria-label="Room code"]', code.inner_text())
    guest.click('[data-action="join"]')
    expect(host.locator(".racers li")).to_have_count(2)
    host.click('[data-action="start"]')


def resign(player: Player) -> None:
    """Resign a race game, unless it is already over (a random deal can leave no move)."""
    button = player.page.locator('[data-action="resign"]')
    if button.is_enabled():
        button.click()
        player.page.locator("dialog.dialog").get_by_role("button", name="Resign").click()
    expect(button).to_be_disabled()


def value(card: str) -> int:
    rank = card[:-1]
    return _VALUES.get(rank) or int(rank)


def card_name(card: str) -> str:
    rank, suit = card[:-1], card[-1]
    return f"{_RANKS.get(rank, rank)} of {_SUITS[suit][1]}"


def hidden_cards(game: Game) -> set[str]:
    """The cards of a one-deck game that the player must not see: face down or in the stock."""
    state: Any = game.to_json()
    hidden: set[str] = set()
    for entry in state.get("tableau", []):
        if entry is not None and not entry["up"]:
            hidden.add(entry["card"])
    for pile in state.get("piles", []):
        for entry in pile:
            if not entry["up"]:
                hidden.add(entry["card"])
    stock = state.get("stock", [])
    if isinstance(stock, list):
        hidden.update(stock)
    return hidden


def visible_cards(game: Game) -> Counter[str]:
    """The face-up cards of a tableau game (Triple Deck, Easthaven), as a multiset: with three
    decks a hidden card may also be visible elsewhere, so counts are compared, not names."""
    state: Any = game.to_json()
    seen: Counter[str] = Counter()
    for pile in state["piles"]:
        seen.update(e["card"] for e in pile if e["up"])
    seen.update(state.get("waste", []))
    for foundation in state["foundations"]:
        seen.update(foundation)
    return seen


def dom_cards(player: Player) -> Counter[str]:
    """The cards the page names in `data-card`, as a multiset."""
    return Counter(
        str(n.get_attribute("data-card")) for n in player.page.locator("[data-card]").all()
    )


def cards_in_json(value: Any) -> Iterator[str]:
    """Every string in a JSON value that is a card's name."""
    if isinstance(value, str):
        if _CARD.fullmatch(value):
            yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from cards_in_json(v)
    elif isinstance(value, list):
        for v in value:
            yield from cards_in_json(v)


def seen_cards(player: Player, variant: str) -> tuple[set[str], set[str]]:
    """(cards named in the page's DOM, cards named in the frames received so far except those
    about another game: the other games' deals share card names with this one's)."""
    page = player.page
    html = page.content()
    text = page.inner_text("body")
    in_dom = set(re.findall(r'data-card="([^"]*)"', html))
    for code in (f"{r}{s}" for r in ("A", *map(str, range(2, 11)), "J", "Q", "K") for s in "CDHS"):
        if card_name(code) in html or f"{code[:-1]}{_SUITS[code[-1]][0]}" in text:
            in_dom.add(code)
    in_frames: set[str] = set()
    for frame in player.frames:
        msg = json.loads(frame)
        game_id = msg.get("game_id") if isinstance(msg, dict) else None
        if isinstance(game_id, str) and not game_id.startswith(f"d.{variant}."):
            continue
        in_frames.update(cards_in_json(msg))
    return in_dom, in_frames


def wait_until(predicate: Callable[[], bool], timeout_s: float = 15.0) -> None:
    """Poll `predicate` until it holds (for state outside the page, like a server process)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)
