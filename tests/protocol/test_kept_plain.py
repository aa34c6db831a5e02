"""`keep_plain`: the wire form of a tuple shared by many replies, made once (issue #30: the
welcome's descriptors and tier cells were converted again for every new player)."""

from __future__ import annotations

import json

import msgpack  # type: ignore[import-untyped]
import pytest

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


def test_kept_fields_go_into_the_frame_packed_and_written_as_the_whole_map_would_be() -> None:
    cells = tuple(
        p.DayTier(variant=v, tier=t, state="upcoming")
        for v in ("fourteen-out", "triple-deck")
        for t in ("easy", "hard")
    )
    ids = ("fourteen-out", "triple-deck")
    before, rolling = dict(codec._KEPT), dict(codec._ROLLING)
    try:
        p.keep_plain(cells)
        p.keep_plain(ids)
        message = p.Welcome(
            id=9,
            version=10,
            player_id="Ab3_x9Kq2Lm0",
            name="Kept",
            server_time=1_907_755_200_000,
            variants=ids,
            token=None,
            daily=(),
            variant_info=VARIANT_INFO,
            tiers=cells,
        )
        wire, kept = codec._plain_wire(message, "welcome")
        assert kept is not None and set(kept) == {"variants", "variant_info", "tiers"}
        for binary in (True, False):
            spliced = p.encode(message, binary, validate=False)
            assert spliced == p.encode(message, binary)  # the validating encoder's bytes
        assert codec._pack_spliced(wire, kept) == msgpack.packb(wire, use_bin_type=True)
        assert codec._dumps_spliced(wire, kept) == json.dumps(
            wire, ensure_ascii=False, separators=(",", ":")
        )
        body = json.loads(p.encode(message, False, validate=False))
        assert body["variants"] == list(ids) and body["tiers"][3]["tier"] == "hard"
        # Text that is not ASCII is written unescaped, kept or not (a map built here: the
        # messages' own text fields are ASCII).
        text = {"type": "x", "a": ["Zoë", "Ærø €"], "b": "名前", "c": [1, {"d": None}]}
        forms = {k: (msgpack.packb(text[k]), codec._dumps(text[k])) for k in "ac"}
        assert codec._dumps_spliced(text, forms) == json.dumps(
            text, ensure_ascii=False, separators=(",", ":")
        )
        assert codec._pack_spliced(text, forms) == msgpack.packb(text, use_bin_type=True)
        # A frame over the limit is refused as before, kept fields or not.
        size = len(p.encode(message, True, validate=False))
        with pytest.raises(p.EncodeError, match="larger than"):
            p.encode(message, True, validate=False, max_size=size - 1)
    finally:
        codec._KEPT.clear()
        codec._KEPT.update(before)
        codec._ROLLING.clear()
        codec._ROLLING.update(rolling)
