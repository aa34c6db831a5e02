"""Decoding anything never raises anything but ProtocolError."""

from __future__ import annotations

import json

import msgpack  # type: ignore[import-untyped]
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import protocol as p
from protocol.schema import _load_struct, fields_of, load_struct
from tests.support.strategies import json_values, msgpack_values, structs, wire_map

TYPE_FIELD = frozenset({"type"})
ALL_TYPES = sorted([*p.CLIENT_MESSAGES, *p.SERVER_MESSAGES])
#: Every message field name, and ``type`` (a ClassVar, so not among the wire fields).
FIELD_NAMES = sorted(
    {"type"}
    | {
        spec.name
        for cls in [*p.CLIENT_MESSAGES.values(), *p.SERVER_MESSAGES.values()]
        for spec in fields_of(cls)
    }
)


def decode_both_ways(frame: bytes | str) -> None:
    """Feed a frame to both decoders; success must re-encode to the same message."""
    try:
        msg = p.decode(frame)
    except p.ProtocolError as exc:
        assert exc.code in p.ERROR_CODES
        assert exc.id is None or 0 <= exc.id <= p.MAX_REQUEST_ID
    else:
        assert p.decode(p.encode_request(msg, True)) == msg
        assert p.decode(p.encode_request(msg, False)) == msg
    try:
        reply = p.decode_server(frame)
    except p.ProtocolError as exc:
        assert exc.code in p.ERROR_CODES
    else:
        assert p.decode_server(p.encode(reply, True)) == reply
        assert p.decode_server(p.encode(reply, False)) == reply


@given(st.binary(max_size=300))
def test_arbitrary_bytes(frame: bytes) -> None:
    decode_both_ways(frame)


@given(st.text(max_size=300))
def test_arbitrary_text(frame: str) -> None:
    decode_both_ways(frame)


@given(st.text(alphabet=st.characters(codec=None, categories=["Cs", "Ll", "Nd", "P"]), max_size=50))
def test_text_with_surrogates(frame: str) -> None:
    decode_both_ways(frame)


@given(msgpack_values)
def test_random_msgpack_structures(value: object) -> None:
    decode_both_ways(msgpack.packb(value, use_bin_type=True, strict_types=False))


@given(json_values | st.dictionaries(st.text(max_size=8), json_values, max_size=6))
def test_random_json_structures(value: object) -> None:
    decode_both_ways(json.dumps(value))


@st.composite
def envelopes(draw: st.DrawFn) -> dict[str, object]:
    """Maps that look like messages: a real type and real field names, random values."""
    obj: dict[str, object] = {"type": draw(st.sampled_from(ALL_TYPES))}
    if draw(st.booleans()):
        obj["id"] = draw(st.integers(-2, 2**31) | json_values)
    names = draw(st.lists(st.sampled_from(FIELD_NAMES), max_size=8, unique=True))
    for name in names:
        obj[name] = draw(json_values | st.integers(-(2**63), 2**64 - 1))
    return obj


@given(envelopes(), st.booleans())
def test_message_like_maps(obj: dict[str, object], binary: bool) -> None:
    decode_both_ways(msgpack.packb(obj) if binary else json.dumps(obj))


def valid_maps() -> st.SearchStrategy[dict[str, object]]:
    messages: list[type[p.ClientMessage] | type[p.ServerMessage]] = [
        *p.CLIENT_MESSAGES.values(),
        *p.SERVER_MESSAGES.values(),
    ]
    classes = sorted(
        messages,
        key=lambda c: (c.__module__, c.type),
    )
    return st.sampled_from(classes).flatmap(structs).map(wire_map)


@st.composite
def mutations(draw: st.DrawFn) -> dict[str, object]:
    obj = draw(valid_maps())
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["replace", "drop", "add", "retype", "nest"]))
        key = draw(st.sampled_from(sorted(obj))) if obj else "type"
        if action == "replace":
            obj[key] = draw(json_values)
        elif action == "drop":
            obj.pop(key, None)
        elif action == "add":
            obj[draw(st.sampled_from(FIELD_NAMES) | st.text(max_size=5))] = draw(json_values)
        elif action == "retype":
            obj["type"] = draw(st.sampled_from(ALL_TYPES))
        else:
            obj[key] = {"x": obj.get(key)} if draw(st.booleans()) else [obj.get(key)]
    return obj


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(mutations(), st.booleans())
def test_mutated_valid_messages(obj: dict[str, object], binary: bool) -> None:
    decode_both_ways(msgpack.packb(obj) if binary else json.dumps(obj))


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(valid_maps(), st.data())
def test_truncated_and_flipped_frames(obj: dict[str, object], data: st.DataObject) -> None:
    frame = msgpack.packb(obj)
    cut = data.draw(st.integers(0, len(frame)))
    decode_both_ways(frame[:cut])
    pos = data.draw(st.integers(0, len(frame) - 1))
    flipped = bytearray(frame)
    flipped[pos] ^= data.draw(st.integers(1, 255))
    decode_both_ways(bytes(flipped))
    text = json.dumps(obj)
    decode_both_ways(text[: data.draw(st.integers(0, len(text)))])


def load_both(obj: dict[str, object]) -> None:
    """A message's generated loader (`load_struct`) and the field-by-field reference
    (`_load_struct`) build the same message from a map, or refuse it with the same error."""
    name = obj.get("type")
    for table in (p.CLIENT_MESSAGES, p.SERVER_MESSAGES):
        cls = table.get(name) if isinstance(name, str) else None
        if cls is None:
            continue
        outcomes: list[object] = []
        for load in (load_struct, _load_struct):
            try:
                outcomes.append(load(cls, obj, "", TYPE_FIELD))
            except p.ProtocolError as exc:
                outcomes.append((type(exc), exc.message))
        assert outcomes[0] == outcomes[1]


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(mutations() | envelopes() | valid_maps())
def test_the_generated_loaders_agree_with_the_reference(obj: dict[str, object]) -> None:
    load_both(obj)
