"""Frames through the protocol's codec, written down: what `decode` and `encode` answered.

Valid requests and seeded random mutations of them (bytes flipped, cut, fields changed) as
msgpack and JSON frames. `python -m tests.support.codec_trace` prints the trace as JSON, so the
same frames can be traced by another build of the codec (the pure-Python source, first on
PYTHONPATH) and compared with the compiled one (tests/engine/test_compiled.py).
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

import msgpack  # type: ignore[import-untyped]

import protocol as p

VALID: list[dict[str, Any]] = [
    {"type": "hello", "id": 1, "versions": [1, 2, 3, 4], "name": "Ann"},
    {
        "type": "move",
        "id": 7,
        "game_id": "d.triple-deck.2030-06-15.p_abcdefgh",
        "move": "3 5 1",
        "expected_seq": 12,
        "with_view": True,
    },
    {"type": "undo", "id": 8, "game_id": "d.fourteen-out.2030-06-15.p_abcdefgh"},
    {"type": "leaderboard.top", "id": 9, "variant": "triple-easthaven", "limit": 20},
    {"type": "race.queue", "id": 10, "variant": "triple-triangle", "size": 2},
    {"type": "ping", "id": 11},
]
ODD_VALUES: list[object] = [
    None,
    True,
    -1,
    2**64 - 1,
    1.5,
    "x" * 70,
    [],
    {},
    [[[]]],
    "\u00e9",
    {"a": {"b": [1, 2.5, None]}},
]


def frames(seed: int, count: int) -> list[bytes | str]:
    rng = random.Random(seed)
    out: list[bytes | str] = []
    for _ in range(count):
        msg = dict(rng.choice(VALID))
        if rng.random() < 0.5:
            msg[rng.choice([*msg, "extra"])] = rng.choice(ODD_VALUES)
        if rng.random() < 0.5:
            out.append(json.dumps(msg))
            continue
        data = bytearray(msgpack.packb(msg))
        for _ in range(rng.choice([0, 0, 1, 2])):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.1:
            data = data[: rng.randrange(len(data))]
        out.append(bytes(data))
    return out


def outcome(frame: bytes | str) -> list[object]:
    """What decoding the frame gives, then encoding a reply to it: values or error codes."""
    try:
        msg = p.decode(frame)
    except p.ProtocolError as exc:
        return ["error", str(exc.code), exc.message, exc.id]
    reply = p.ErrorReply(
        id=getattr(msg, "id", None), code=p.ErrorCode.BAD_REQUEST, message=repr(msg)[:200]
    )
    return ["ok", repr(msg), p.encode(reply, True).hex(), p.encode(reply, False)]


def trace(seed: int = 0, count: int = 400) -> list[list[object]]:
    return [outcome(f) for f in frames(seed, count)]


if __name__ == "__main__":
    json.dump({"compiled": p.COMPILED, "trace": trace()}, sys.stdout)
