"""Seeded shuffles that any language can reproduce (specified in docs/deals.md).

The generator is SHA-256 in counter mode: block i is
``SHA-256(b"solitaire-deal-v1" 0x00 variant 0x00 decimal(seed) 0x00 u64be(i))``, read as four
big-endian unsigned 64-bit words. `below(n)` draws words, rejecting those at or above the
largest multiple of n (so every result is equally likely), and returns ``word % n``. The deck is
shuffled with Fisher-Yates from the last position down: for i = len-1 .. 1, swap positions i and
below(i + 1).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from typing import Final, TypeVar

from .cards import Card, full_deck

T = TypeVar("T")

DOMAIN: Final = b"solitaire-deal-v1"
MAX_SEED: Final = 2**64 - 1
_WORD: Final = 2**64


class DealRng:
    """The deal stream for one (variant, seed)."""

    __slots__ = ("_buffer", "_counter", "_prefix")

    def __init__(self, variant: str, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise ValueError(f"seed must be an integer in 0..2**64-1, got {seed!r}")
        self._prefix = DOMAIN + b"\x00" + variant.encode("ascii") + b"\x00" + str(seed).encode()
        self._prefix += b"\x00"
        self._counter = 0
        self._buffer: list[int] = []

    def next_word(self) -> int:
        """The next unsigned 64-bit word of the stream."""
        if not self._buffer:
            block = hashlib.sha256(self._prefix + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            # Reversed so that pop() yields the words in stream order.
            self._buffer = [int.from_bytes(block[k : k + 8], "big") for k in (24, 16, 8, 0)]
        return self._buffer.pop()

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), by rejection sampling (no modulo bias)."""
        limit = _WORD - _WORD % n
        while True:
            word = self.next_word()
            if word < limit:
                return word % n

    def shuffle(self, items: Sequence[T]) -> list[T]:
        """A Fisher-Yates shuffled copy of `items`."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


def shuffled_cards(variant: str, seed: int, decks: int, ranks: range) -> list[Card]:
    """The variant's cards in dealing order: `decks` canonical decks concatenated, then shuffled."""
    return list(_shuffled(variant, seed, decks, ranks))


@functools.lru_cache(maxsize=256, typed=True)  # typed: 1.0 is no seed, 1 is
def _shuffled(variant: str, seed: int, decks: int, ranks: range) -> tuple[Card, ...]:
    # Remembered: a day's deal is the same for every player of that variant (and every replay
    # of a stored game starts from it); cards are immutable values, so sharing them is safe.
    if isinstance(seed, bool) or not isinstance(seed, int):  # before hashing: 1 == True
        raise ValueError(f"seed must be an integer in 0..2**64-1, got {seed!r}")
    return tuple(DealRng(variant, seed).shuffle(full_deck(ranks) * decks))
