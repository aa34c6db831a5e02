"""Golden deal vectors, the generator's construction, rejection sampling and seed checks."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

import pytest

from engine import VARIANT_IDS, DealRng, new_game, shuffled_cards
from engine.cards import full_deck

from .helpers import easthaven_state, pairing_state, tripeaks_state, triple_deck_state

GOLDEN_DEAL_SHA256 = {
    "fourteen-out": "1e1b18ceb3d14347d8d946e34e211d90cc9a641b91ad1f440495a4b13688ce27",
    "triple-fourteens": "7e61070deb087b0b2ef8a78c9dc48c628b5e7ef0d2de791deee6b6951c85fc7b",
    "triple-triangle": "160aebb5e7105126a6cb45dde5c4811f139235e990a5fc4af927bd7213d0c60b",
    "triple-deck": "131614737890de64cb418548729a084f468fb2db26da1d398ee0173435cd030b",
    "triple-deck-kings": "712a1a9654cd6ffd382064096e75b13619c69345d24fed889e5683fa48f554b3",
    "triple-easthaven": "197ef1c5bfa537723b38cca492ad1d474def378b2f70490099d4553a2865f6b0",
}


def canonical_sha(obj: object) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_first_deal_for_seed_1_is_frozen(variant: str) -> None:
    assert canonical_sha(new_game(variant, 1).to_json()) == GOLDEN_DEAL_SHA256[variant]


def test_explicit_golden_cards() -> None:
    assert [
        e["card"] for e in pairing_state(new_game("fourteen-out", 1).to_json())["piles"][0]
    ] == [
        "9C",
        "6C",
        "JH",
        "KD",
        "6S",
    ]
    tri = tripeaks_state(new_game("triple-triangle", 1).to_json())
    assert tri["foundation"] == ["6H"] and tri["stock"][0] == "10D"
    td = triple_deck_state(new_game("triple-deck", 1).to_json())
    assert td["piles"][6][-1] == {"card": "3S", "up": True}
    assert easthaven_state(new_game("triple-easthaven", 1).to_json())["stock"][0] == "8C"


def test_stream_is_sha256_counter_mode() -> None:
    rng = DealRng("triple-deck", 7)
    words = [rng.next_word() for _ in range(8)]
    for block in range(2):
        digest = hashlib.sha256(
            b"solitaire-deal-v1\x00triple-deck\x007\x00" + block.to_bytes(8, "big")
        ).digest()
        expected = [int.from_bytes(digest[k : k + 8], "big") for k in range(0, 32, 8)]
        assert words[4 * block : 4 * block + 4] == expected


def test_streams_differ_by_variant_and_seed() -> None:
    first = {(v, s): DealRng(v, s).next_word() for v in VARIANT_IDS for s in (0, 1, 2**64 - 1)}
    assert len(set(first.values())) == len(first)


def test_golden_shuffle_orders() -> None:
    order = shuffled_cards("fourteen-out", 0, 1, range(1, 14))
    assert " ".join(c.text for c in order[:10]) == "3S QC 3D 2H 4S KD 8S QS JC 7S"
    big = shuffled_cards("triple-deck", 2**64 - 1, 3, range(1, 13))
    assert sorted(c.code for c in big) == sorted(c.code for c in full_deck(range(1, 13)) * 3)
    assert [DealRng("triple-deck", 2**64 - 1).below(52) for _ in range(1)] == [18]


class ScriptedRng(DealRng):
    """A DealRng whose words come from a list."""

    def __init__(self, words: list[int]) -> None:
        super().__init__("x", 0)
        self._words: Iterator[int] = iter(words)

    def next_word(self) -> int:
        return next(self._words)


def test_below_rejects_words_at_or_above_the_largest_multiple() -> None:
    n = 2**63 + 1  # 2**64 mod n = 2**63 - 1, so limit = n: almost half the words are rejected
    limit = 2**64 - 2**64 % n
    assert limit == n
    rng = ScriptedRng([limit, 2**64 - 1, limit - 1])
    assert rng.below(n) == (limit - 1) % n
    assert ScriptedRng([2**64 - 1, 5]).below(3) == 2  # 2**64-1 is rejected for n = 3
    assert ScriptedRng([2**64 - 1]).below(2**32) == (2**64 - 1) % 2**32  # no rejection
    assert ScriptedRng([123]).below(1) == 0


def test_below_is_unbiased_near_2_to_the_63() -> None:
    n = 3 * 2**62  # modulo without rejection would make [0, 2**62) twice as likely
    rng = DealRng("fourteen-out", 5)
    draws = [rng.below(n) for _ in range(3000)]
    assert all(0 <= d < n for d in draws)
    low = sum(d < 2**62 for d in draws) / len(draws)
    assert abs(low - 1 / 3) < 0.04  # biased modulo would give about 1/2


def test_shuffle_is_fisher_yates_from_the_end() -> None:
    items = list(range(10))
    rng_a, rng_b = DealRng("v", 3), DealRng("v", 3)
    expected = list(items)
    for i in range(9, 0, -1):
        j = rng_b.below(i + 1)
        expected[i], expected[j] = expected[j], expected[i]
    assert rng_a.shuffle(items) == expected and items == list(range(10))


@pytest.mark.parametrize("seed", [-1, 2**64, 1.0, "1", True, None])
def test_bad_seeds_are_rejected(seed: object) -> None:
    with pytest.raises(ValueError, match="seed"):
        DealRng("fourteen-out", seed)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed"):  # alike in the compiled and pure builds
        new_game("fourteen-out", seed)


def test_extreme_seeds_deal() -> None:
    assert new_game("triple-easthaven", 0).seed == 0
    assert new_game("triple-easthaven", 2**64 - 1).seed == 2**64 - 1
