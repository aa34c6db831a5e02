"""`keep_plain`: the wire form of a tuple shared by many replies, made once (issue #30: the
welcome's descriptors and tier cells were converted again for every new player)."""

from __future__ import annotations

import json

import msgpack  # type: ignore[import-untyped]

import protocol as p
from protocol import codec
from server.games.descriptors import VARIANT_INFO, VARIANT_INFO_RULES_FREE


def welcome(info: tuple[p.VariantInfo, ...]) -> p.Welcome:
    return p.Welcome(
        id=7,
        version=10,
        player_id="Ab3_x9Kq2Lm0",
        name="Kept",
        server_time=1_907_755_200_000,
        variants=("fourteen-out", "triple-deck"),
        token=None,
        daily=(),
        variant_info=info,
    )


def test_a_kept_tuple_encodes_as_it_did_and_as_the_validating_encoder_does() -> None:
    fresh = tuple(p.VariantInfo(**vars(i)) for i in VARIANT_INFO_RULES_FREE)  # not kept
    assert codec._KEPT.get(id(VARIANT_INFO_RULES_FREE)) is not None  # kept at import
    assert id(fresh) not in codec._KEPT
    for binary in (True, False):
        kept = p.encode(welcome(VARIANT_INFO_RULES_FREE), binary, validate=False)
        unkept = p.encode(welcome(fresh), binary, validate=False)
        checked = p.encode(welcome(VARIANT_INFO_RULES_FREE), binary)
        assert kept == unkept == checked
    body = msgpack.unpackb(p.encode(welcome(VARIANT_INFO), True, validate=False))
    assert [v["id"] for v in body["variant_info"]] == [i.id for i in VARIANT_INFO]
    assert json.loads(p.encode(welcome(VARIANT_INFO), False, validate=False)) == body


def test_a_kept_form_is_made_once_the_oldest_dropped_and_the_pinned_kept() -> None:
    before, rolling = dict(codec._KEPT), dict(codec._ROLLING)
    try:
        first = (p.VariantInfo(**vars(VARIANT_INFO[0])),)
        p.keep_plain(first)
        assert codec._plain(first) is codec._plain(first)  # the kept list, not a new one
        others = [(f"t{i}",) for i in range(codec.KEPT_MAX)]
        for t in others:
            p.keep_plain(t)
        assert len(codec._ROLLING) == codec.KEPT_MAX
        assert id(first) not in codec._KEPT  # dropped, the oldest
        assert codec._plain(first) is not codec._plain(first)  # converted each time again
        assert codec._plain(others[-1]) == [others[-1][0]]
        # The descriptors, pinned at import, outlast any number of others.
        for shared in (VARIANT_INFO, VARIANT_INFO_RULES_FREE):
            assert codec._plain(shared) is codec._plain(shared)
        p.forget_plain(others[-1])
        assert id(others[-1]) not in codec._KEPT
        p.forget_plain(VARIANT_INFO)  # pinned: not forgotten
        assert codec._plain(VARIANT_INFO) is codec._plain(VARIANT_INFO)
    finally:
        codec._KEPT.clear()
        codec._KEPT.update(before)
        codec._ROLLING.clear()
        codec._ROLLING.update(rolling)
