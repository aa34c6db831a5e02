"""Arguments and output shared by the engine's commands (`engine.cli`, `engine.solvers.cli`)."""

from __future__ import annotations

import argparse
import json
import re
from typing import TextIO

from .variants import VARIANT_IDS

_SEED_RE = re.compile(r"0|[1-9][0-9]{0,19}")


def seed_arg(text: str) -> int:
    """A seed as docs/deals.md writes it: decimal ASCII digits, no sign, spaces, underscores
    or leading zeros (Python's `int` would take ``+1``, `` 1``, ``1_0``, ``01``, ``١``)."""
    if _SEED_RE.fullmatch(text) is None:
        raise argparse.ArgumentTypeError(
            f"invalid seed {text!r}: write it in decimal ASCII digits without sign, spaces, "
            "underscores or leading zeros (e.g. 0, 1, 18446744073709551615)"
        )
    value = int(text)
    if value > 2**64 - 1:
        raise argparse.ArgumentTypeError("the seed must be in 0..2**64-1")
    return value


def positive_int(text: str) -> int:
    """A whole number of 1 or more (a count, a node budget)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def positive_float(text: str) -> float:
    """A number above 0 (a time budget)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def dump(obj: object, out: TextIO, indent: int | None) -> None:
    out.write(json.dumps(obj, indent=indent) + "\n")


def game_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("variant", choices=VARIANT_IDS, help="variant id")
    parser.add_argument("--seed", type=seed_arg, required=True, help="deal seed, 0..2**64-1")
    parser.add_argument("--indent", type=int, default=None, help="pretty-print the JSON")
