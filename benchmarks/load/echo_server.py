"""The baseline: a bare aiohttp WebSocket server that only decodes and echoes msgpack frames.

Each binary frame is decoded (msgpack) and answered with one msgpack frame carrying the request
id, padded to the size the real server's reply to that request type has (``--reply-sizes``,
JSON ``{"move": 1400, ...}`` measured by the load generator against the real server), so both
servers move the same bytes. No validation, no Redis: the best this stack can do.

    python -m benchmarks.load.echo_server --port 8800 [--reply-sizes JSON] [--uvloop]

``GET /stats`` returns the requests answered so far by type (JSON), so that a benchmark can
count the requests of exactly its measured window.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import msgpack  # type: ignore[import-untyped]
from aiohttp import WSMsgType, web

SIZES = web.AppKey("sizes", dict)
COUNTS = web.AppKey("counts", dict)


async def websocket(request: web.Request) -> web.WebSocketResponse:
    ws = web.WebSocketResponse(compress=False)
    await ws.prepare(request)
    sizes: dict[str, int] = request.app[SIZES]
    counts: dict[str, int] = request.app[COUNTS]
    async for msg in ws:
        if msg.type == WSMsgType.BINARY:
            req: Any = msgpack.unpackb(msg.data)
            kind = req.get("type", "") if isinstance(req, dict) else ""
            rid = req.get("id") if isinstance(req, dict) else None
            target = sizes.get(kind, len(msg.data))
            counts[kind] = counts.get(kind, 0) + 1
            reply = {"type": "echo", "id": rid, "req": kind, "pad": ""}
            pad = max(0, target - len(msgpack.packb(reply)) - 2)
            reply["pad"] = "x" * pad
            await ws.send_bytes(msgpack.packb(reply))
        elif msg.type == WSMsgType.TEXT:
            await ws.send_str(msg.data)
        else:
            break
    return ws


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def stats(request: web.Request) -> web.Response:
    return web.json_response(request.app[COUNTS])


def create_app(sizes: dict[str, int]) -> web.Application:
    app = web.Application()
    app[SIZES] = sizes
    app[COUNTS] = {}
    app.router.add_get("/stats", stats)
    app.router.add_get("/ws", websocket)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", healthz)
    return app


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--reply-sizes", default="{}")
    ap.add_argument("--uvloop", action="store_true")
    a = ap.parse_args()
    loop = None
    if a.uvloop:
        import uvloop

        loop = uvloop.new_event_loop()
    web.run_app(
        create_app(json.loads(a.reply_sizes)),
        host="127.0.0.1",
        port=a.port,
        print=None,
        access_log=None,
        loop=loop,
    )


if __name__ == "__main__":
    main()
