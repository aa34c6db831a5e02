"""The browser client's HTTP routes (`server.transport.web`): content types, caching, revalidation,
path safety and the rules document, over real HTTP."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
import redis.asyncio
from aiohttp import web
from aiohttp.test_utils import TestServer
from yarl import URL

from engine import VARIANT_IDS
from engine.rules import rules_text
from server.transport.web import (
    CONTENT_SECURITY_POLICY,
    IMMUTABLE,
    NO_CACHE,
    WEB_ROOT,
    WebFiles,
    add_web_routes,
    rules_document,
)
from tests.support.app import serve
from tests.support.races import race_config

INDEX = """<!doctype html><title>t</title>
<link rel="stylesheet" href="{{asset:style.css}}">
<script type="module" src="{{asset:app.js}}"></script>
<img src="{{asset:missing.svg}}">"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    web_root = tmp_path / "web"
    (web_root / "assets" / "sub").mkdir(parents=True)
    (web_root / "index.html").write_text(INDEX)
    (web_root / "assets" / "app.js").write_text("import './sub/x.js';\n")
    (web_root / "assets" / "sub" / "x.js").write_text("export const x = 1;\n")
    (web_root / "assets" / "style.css").write_text("body { color: red; }\n")
    (web_root / "assets" / "notes.txt").write_text("not served\n")
    (tmp_path / "secret.js").write_text("outside the root\n")
    return web_root


@pytest_asyncio.fixture
async def http(root: Path) -> AsyncIterator[tuple[str, aiohttp.ClientSession]]:
    app = web.Application()
    add_web_routes(app, root)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            yield str(server.make_url("")).rstrip("/"), session
    finally:
        await server.close()


async def test_index_is_html_revalidated_and_links_versioned_assets(
    http: tuple[str, aiohttp.ClientSession], root: Path
) -> None:
    base, s = http
    async with s.get(base + "/") as r:
        assert r.status == 200
        assert r.headers["Content-Type"] == "text/html; charset=utf-8"
        assert r.headers["Cache-Control"] == NO_CACHE
        assert r.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
        assert "script-src 'self';" in CONTENT_SECURITY_POLICY
        etag = r.headers["ETag"]
        html = await r.text()
    files = WebFiles(root)
    app_js, style = files.asset("app.js"), files.asset("style.css")
    assert app_js is not None and style is not None
    assert f'src="/assets/app.js?v={app_js.version}"' in html
    assert f'href="/assets/style.css?v={style.version}"' in html
    assert 'src="/assets/missing.svg"' in html  # a missing asset is linked unversioned
    async with s.get(base + "/", headers={"If-None-Match": etag}) as r:
        assert r.status == 304
        assert await r.read() == b""
        assert r.headers["ETag"] == etag


async def test_assets_have_their_content_type_and_cache_policy(
    http: tuple[str, aiohttp.ClientSession], root: Path
) -> None:
    base, s = http
    version = WebFiles(root).asset("app.js").version  # type: ignore[union-attr]
    async with s.get(f"{base}/assets/app.js?v={version}") as r:
        assert r.status == 200
        assert r.headers["Content-Type"] == "text/javascript; charset=utf-8"
        assert r.headers["Cache-Control"] == IMMUTABLE
        assert r.headers["X-Content-Type-Options"] == "nosniff"
    for path, ctype in (
        ("/assets/sub/x.js", "text/javascript; charset=utf-8"),
        ("/assets/style.css", "text/css; charset=utf-8"),
        ("/assets/app.js?v=stale", "text/javascript; charset=utf-8"),
    ):
        async with s.get(base + path) as r:
            assert r.status == 200, path
            assert r.headers["Content-Type"] == ctype
            assert r.headers["Cache-Control"] == NO_CACHE  # unversioned: revalidated
            etag = r.headers["ETag"]
        async with s.get(base + path, headers={"If-None-Match": f'W/{etag}, "other"'}) as r:
            assert r.status == 304, path


async def test_large_text_files_are_compressed_when_accepted(
    http: tuple[str, aiohttp.ClientSession], root: Path
) -> None:
    base, s = http
    body = "const x = 1;\n" * 400
    (root / "assets" / "big.js").write_text(body)
    async with s.get(base + "/assets/big.js", headers={"Accept-Encoding": "gzip"}) as r:
        assert r.headers["Content-Encoding"] == "gzip"
        assert r.headers["Vary"] == "Accept-Encoding"
        assert await r.text() == body  # the client inflates it
    async with s.get(base + "/assets/big.js", headers={"Accept-Encoding": "identity"}) as r:
        assert "Content-Encoding" not in r.headers
        assert await r.text() == body
    async with s.get(base + "/assets/sub/x.js", headers={"Accept-Encoding": "gzip"}) as r:
        assert "Content-Encoding" not in r.headers  # too small to be worth it


async def test_a_changed_file_gets_a_new_etag(
    http: tuple[str, aiohttp.ClientSession], root: Path
) -> None:
    base, s = http
    async with s.get(base + "/assets/style.css") as r:
        old = r.headers["ETag"]
    (root / "assets" / "style.css").write_text("body { color: blue; }\n/* longer */\n")
    async with s.get(base + "/assets/style.css", headers={"If-None-Match": old}) as r:
        assert r.status == 200
        assert r.headers["ETag"] != old
        assert "blue" in await r.text()


@pytest.mark.parametrize(
    "path",
    [
        "/assets/../index.html",
        "/assets/%2e%2e/%2e%2e/secret.js",
        "/assets/..%2f..%2fsecret.js",
        "/assets/notes.txt",
        "/assets/nope.js",
        "/assets/sub",
        "/assets/.hidden.js",
        "/assets//etc/passwd",
        "/secret.js",
        "/assets/sub/../app.js",
    ],
)
async def test_nothing_outside_the_assets_is_served(
    http: tuple[str, aiohttp.ClientSession], path: str
) -> None:
    base, s = http
    async with s.get(URL(base + path, encoded=True)) as r:  # sent as written, not normalised
        assert r.status == 404, path


async def test_rules_are_the_text_the_terminal_client_prints(
    http: tuple[str, aiohttp.ClientSession],
) -> None:
    base, s = http
    async with s.get(base + "/rules.json") as r:
        assert r.status == 200
        assert r.headers["Content-Type"] == "application/json"
        doc = json.loads(await r.text())
    assert doc == rules_document()
    assert set(doc) == set(VARIANT_IDS)
    for v in VARIANT_IDS:
        assert doc[v]["text"] == rules_text(v)
    assert doc["triple-triangle"]["title"] == "Triple Triangle (Tri Peaks)"
    # the same descriptor as a version 6 welcome's, for a page before its hello (#26)
    assert doc["triple-deck"]["descriptor"]["id"] == "triple-deck"
    assert doc["triple-deck"]["descriptor"]["may_finish"] is True
    assert doc["fourteen-out"]["descriptor"]["may_finish"] is False


async def test_rules_json_has_the_rules_for_people_without_move_notation(
    http: tuple[str, aiohttp.ClientSession],
) -> None:
    """The Rules page's text (#27): sentences for clicking and tapping, pictures of legal
    plays, undo counting as a move; none of the terminal's move notation."""
    base, s = http
    async with s.get(base + "/rules.json") as r:
        doc = json.loads(await r.text())
    notation = re.compile(r"\b(f\d*[CDHS]? \d+|w [f\d]|\d+ \d+( \d+)?|\d+ f)\b")
    for v in VARIANT_IDS:
        entry = doc[v]
        people = [*entry["about"], *entry["play"], entry["undo"]]
        assert entry["about"] and entry["play"] and entry["pictures"], v
        for sentence in people:
            assert not notation.search(sentence), (v, sentence)
            assert "resign" not in sentence.lower(), (v, sentence)
        assert any("click" in p.lower() and "tap" in p.lower() for p in entry["play"]), v
        moved = entry["descriptor"]["family"] != "tripeaks"  # Tri Peaks cards are only played
        assert any("drag" in p.lower() for p in entry["play"]) == moved, v
        assert "An undo counts as a move." in entry["undo"]
        for picture in entry["pictures"]:
            assert set(picture) == {"caption", "cards", "layout", "sign"}
            assert picture["layout"] in ("row", "pile") and picture["cards"]
    assert any("14" in a for a in doc["fourteen-out"]["about"])
    assert any("Finish" in a for a in doc["triple-easthaven"]["about"])
    assert doc["triple-deck"]["pictures"][0]["layout"] == "pile"


async def test_no_index_without_the_client_files(tmp_path: Path) -> None:
    app = web.Application()
    add_web_routes(app, tmp_path / "missing")
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as s, s.get(server.make_url("/")) as r:
            assert r.status == 404
    finally:
        await server.close()


async def test_the_server_serves_the_real_client_beside_the_websocket(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with serve(race_config(redis_url, tmp_path)) as app, aiohttp.ClientSession() as s:
        async with s.get(app.http + "/") as r:
            assert r.status == 200
            html = await r.text()
        links = re.findall(r'"(/assets/[^"?]+)\?v=([0-9a-f]+)"', html)
        assert {path for path, _ in links} >= {"/assets/app.js", "/assets/style.css"}
        for path, version in links:
            async with s.get(f"{app.http}{path}?v={version}") as r:
                assert r.status == 200, path
                assert r.headers["Cache-Control"] == IMMUTABLE
        async with s.get(app.http + "/healthz") as r:
            assert r.status == 200
    modules = {p.name for p in (WEB_ROOT / "assets").glob("*.js")}
    for js in (WEB_ROOT / "assets").glob("*.js"):  # every relative import names a real module
        for target in re.findall(r'from "\./([^"]+)"', js.read_text()):
            assert target in modules, (js.name, target)


def test_every_client_file_is_packaged() -> None:
    """pyproject.toml installs ``web/*.html`` and ``web/assets/*`` (flat) as package data."""
    files = {p.relative_to(WEB_ROOT).as_posix() for p in WEB_ROOT.rglob("*") if p.is_file()}
    assert "index.html" in files and "assets/app.js" in files
    for name in files:
        parts = name.split("/")
        assert (len(parts) == 1 and name.endswith(".html")) or (
            len(parts) == 2 and parts[0] == "assets"
        ), name
    assert '"web/*.html", "web/assets/*"' in (WEB_ROOT.parents[1] / "pyproject.toml").read_text()
