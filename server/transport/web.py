"""The browser client's HTTP routes: the page at ``/``, its assets and the rules text.

The files live in ``clients/web`` (docs/web.md). Every answer carries a strong ``ETag`` (a hash
of the content) and is revalidated with ``If-None-Match`` (``304``). ``index.html`` is
``no-cache``; it names its entry assets with ``?v=<hash>``, and an asset asked for with the
current hash is cached for a year (``immutable``); without it (ES module imports) an asset is
revalidated on every use. ``/rules.json`` is built from the same text the terminal client
prints (`engine.rules`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from aiohttp import web

from engine import VARIANT_IDS, variant
from engine.guide import HINT, UNDO, guide
from engine.rules import rules_text
from protocol.schema import dump_struct
from server.games.descriptors import describe

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "WEB_ROOT",
    "StaticFile",
    "WebFiles",
    "add_web_routes",
    "rules_document",
]

#: The browser client's files (installed as package data of `clients`).
WEB_ROOT: Final = Path(__file__).resolve().parents[2] / "clients" / "web"

#: Content types by suffix; other suffixes are not served.
CONTENT_TYPES: Final[dict[str, str]] = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".json": "application/json",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".webmanifest": "application/manifest+json",
}
#: The page loads nothing but its own files and talks only to its own server.
CONTENT_SECURITY_POLICY: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
#: Text files larger than this are sent compressed to clients that accept it (~4x smaller).
COMPRESS_MIN_BYTES: Final = 1024
NO_CACHE: Final = "no-cache"
IMMUTABLE: Final = "public, max-age=31536000, immutable"
#: ``{{asset:NAME}}`` in index.html becomes ``/assets/NAME?v=<hash of NAME>``.
_ASSET_REF: Final = re.compile(r"\{\{asset:([A-Za-z0-9_./-]+)\}\}")
_ASSET_NAME: Final = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*")


@dataclass(frozen=True, slots=True)
class StaticFile:
    """One file as served: its bytes, content type and ETag (quoted hash)."""

    body: bytes
    content_type: str
    etag: str

    @classmethod
    def of(cls, body: bytes, content_type: str) -> StaticFile:
        return cls(body, content_type, f'"{hashlib.sha256(body).hexdigest()[:20]}"')

    @property
    def version(self) -> str:
        """The hash used in ``?v=`` asset links."""
        return self.etag.strip('"')


class WebFiles:
    """The files under a root, read once and kept in memory (the client is small).

    `reload()` reads them again; a file changed on disk is picked up by the next request that
    finds its size or modification time changed, so an edited page shows without a restart.
    """

    def __init__(self, root: Path = WEB_ROOT) -> None:
        self.root = root.resolve()
        self._cache: dict[str, tuple[tuple[int, int], StaticFile]] = {}

    def asset(self, name: str) -> StaticFile | None:
        """The file ``assets/<name>``, or None when there is none (or it may not be served)."""
        if not _ASSET_NAME.fullmatch(name) or ".." in name.split("/"):
            return None
        return self._read(self.root / "assets" / name)

    def index(self) -> StaticFile:
        """index.html with its ``{{asset:...}}`` links versioned by the assets' hashes."""
        raw = self._read(self.root / "index.html")
        if raw is None:
            raise web.HTTPNotFound(text="the web client is not installed")

        def link(m: re.Match[str]) -> str:
            f = self.asset(m.group(1))
            version = f"?v={f.version}" if f is not None else ""
            return f"/assets/{m.group(1)}{version}"

        html = _ASSET_REF.sub(link, raw.body.decode("utf-8"))
        return StaticFile.of(html.encode("utf-8"), raw.content_type)

    def _read(self, path: Path) -> StaticFile | None:
        content_type = CONTENT_TYPES.get(path.suffix)
        if content_type is None:
            return None
        try:
            resolved = path.resolve()
            if not resolved.is_relative_to(self.root):
                return None
            st = resolved.stat()
        except OSError:
            return None
        if not resolved.is_file():
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        hit = self._cache.get(str(resolved))
        if hit is not None and hit[0] == stamp:
            return hit[1]
        f = StaticFile.of(resolved.read_bytes(), content_type)
        self._cache[str(resolved)] = (stamp, f)
        return f


def rules_document() -> dict[str, dict[str, object]]:
    """Each variant's title and rules, the text `solitaire rules VARIANT` prints, and its
    descriptor (`welcome.variant_info`'s, for a page that has not said hello yet); and the
    same rules for people at a screen (`engine.guide`): ``about``, ``play`` (clicks, taps,
    drags and keys, no move notation), ``undo``, ``hint`` and ``pictures`` of legal plays."""
    return {
        v: {
            "title": variant(v).title,
            "text": rules_text(v),
            "descriptor": dump_struct(describe(variant(v))),
            "about": list(guide(v).about),
            "play": list(guide(v).play),
            "undo": UNDO,
            "hint": HINT,
            "pictures": [
                {"caption": p.caption, "cards": list(p.cards), "layout": p.layout, "sign": p.sign}
                for p in guide(v).pictures
            ],
        }
        for v in VARIANT_IDS
    }


def respond(request: web.Request, f: StaticFile, cache_control: str) -> web.Response:
    """``f`` with its ETag, or ``304`` when the client's copy is current."""
    headers = {
        "ETag": f.etag,
        "Cache-Control": cache_control,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    if f.content_type.startswith("text/html"):
        headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    if f.etag in _etags(request.headers.get("If-None-Match", "")):
        return web.Response(status=304, headers=headers)
    response = web.Response(body=f.body, headers={**headers, "Content-Type": f.content_type})
    if not f.content_type.startswith("image/png") and len(f.body) > COMPRESS_MIN_BYTES:
        response.enable_compression()  # gzip or deflate, when the request accepts it
        response.headers["Vary"] = "Accept-Encoding"
    return response


def _etags(header: str) -> set[str]:
    return {t.strip().removeprefix("W/") for t in header.split(",") if t.strip()}


FILES: Final = web.AppKey("web_files", WebFiles)
RULES: Final = web.AppKey("web_rules", StaticFile)


async def index(request: web.Request) -> web.Response:
    return respond(request, request.app[FILES].index(), NO_CACHE)


async def asset(request: web.Request) -> web.Response:
    f = request.app[FILES].asset(request.match_info["name"])
    if f is None:
        raise web.HTTPNotFound(text="no such file")
    versioned = request.query.get("v") == f.version
    return respond(request, f, IMMUTABLE if versioned else NO_CACHE)


async def rules(request: web.Request) -> web.Response:
    return respond(request, request.app[RULES], NO_CACHE)


def add_web_routes(app: web.Application, root: Path = WEB_ROOT) -> None:
    """Serve the browser client from ``root`` at ``/``, ``/assets/...`` and ``/rules.json``."""
    app[FILES] = WebFiles(root)
    body = json.dumps(rules_document(), ensure_ascii=False).encode("utf-8")
    app[RULES] = StaticFile.of(body, CONTENT_TYPES[".json"])
    app.router.add_get("/", index)
    app.router.add_get("/index.html", index)
    app.router.add_get("/assets/{name:.+}", asset)
    app.router.add_get("/rules.json", rules)
