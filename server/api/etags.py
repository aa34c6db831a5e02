"""JSON bodies with a strong ``ETag`` (hash of the bytes), ``Cache-Control`` and ``304``.

Cache policies (docs/api.md): what cannot change (a closed day's deals, a finished race) is
cached a day, ``immutable``; what only a fair-play review can still change (a closed day's
boards and results file) is revalidated on every use (``no-cache``: a ``304`` while its ETag
holds), so a marked account's results leave every cache at once; live data a few seconds.
"""

from __future__ import annotations

import hashlib
import json
from typing import Final

from aiohttp import web

__all__ = [
    "CLOSED",
    "LIVE",
    "REVIEWABLE",
    "SHORT",
    "STATIC",
    "dumps",
    "etag_of",
    "if_none_match",
    "respond_bytes",
    "respond_json",
]

#: A closed day (no game of it can change): a day in any cache.
CLOSED: Final = "public, max-age=86400, immutable"
#: A closed day's boards and results file: final but for a fair-play review (a mark takes an
#: account's results off): kept, but revalidated by ETag on every use.
REVIEWABLE: Final = "public, no-cache"
#: Live boards, running races: a few seconds.
LIVE: Final = "public, max-age=5"
#: Profiles, histories, race boards: changes now and then.
SHORT: Final = "public, max-age=30"
#: JSON bodies larger than this are compressed for clients that accept it.
COMPRESS_MIN_BYTES: Final = 1024
#: The OpenAPI document: changes with a deploy.
STATIC: Final = "public, max-age=300"


def dumps(data: object) -> bytes:
    """The canonical JSON of a response: the same bytes for the same data on every process."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


def etag_of(body: bytes) -> str:
    return f'"{hashlib.sha256(body).hexdigest()[:32]}"'


def if_none_match(request: web.Request, etag: str) -> bool:
    """Whether the client's cached copy (``If-None-Match``) is ``etag``."""
    header = request.headers.get("If-None-Match", "")
    if header.strip() == "*":
        return True
    return etag in {t.strip().removeprefix("W/") for t in header.split(",") if t.strip()}


def respond_bytes(
    request: web.Request, body: bytes, content_type: str, cache_control: str
) -> web.Response:
    etag = etag_of(body)
    headers = {"ETag": etag, "Cache-Control": cache_control, "Vary": "Accept-Encoding"}
    if if_none_match(request, etag):
        return web.Response(status=304, headers=headers)
    response = web.Response(body=body, headers={**headers, "Content-Type": content_type})
    if content_type == "application/json" and len(body) > COMPRESS_MIN_BYTES:
        response.enable_compression()  # gzip or deflate, when the request accepts it
    return response


def respond_json(request: web.Request, data: object, cache_control: str) -> web.Response:
    return respond_bytes(request, dumps(data), "application/json", cache_control)
