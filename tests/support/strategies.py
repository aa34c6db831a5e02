"""Hypothesis strategies derived from the message declarations themselves."""

from __future__ import annotations

from typing import TypeVar

import msgpack  # type: ignore[import-untyped]
from hypothesis import strategies as st

from protocol.errors import BadRequest
from protocol.events import ServerMessage
from protocol.fields import Bool, Date, Int, JsonMap, ListOf, Spec, Str
from protocol.messages import ClientMessage
from protocol.schema import Nested, Struct, fields_of

S = TypeVar("S", bound=Struct)

utf8_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | utf8_text
)

json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(utf8_text, inner, max_size=4),
    max_leaves=12,
)

json_maps = st.dictionaries(utf8_text, json_values, max_size=5)

# Anything msgpack can carry, including what the protocol refuses.
msgpack_values = st.recursive(
    json_scalars
    | st.floats()
    | st.binary(max_size=8)
    | st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=4))
    | st.builds(msgpack.Timestamp, st.integers(0, 2**32 - 1), st.integers(0, 999_999_999)),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(utf8_text | st.integers(-5, 5), inner, max_size=4)
    ),
    max_leaves=12,
)


def for_spec(spec: Spec) -> st.SearchStrategy[object]:
    """Values that ``spec`` accepts, in their Python form."""
    if isinstance(spec, Nested):
        return structs(spec.cls)
    if isinstance(spec, ListOf):
        return st.lists(
            for_spec(spec.item), min_size=spec.min_len, max_size=min(spec.max_len, 4)
        ).map(tuple)
    if isinstance(spec, Bool):
        return st.booleans()
    if isinstance(spec, Int):
        return st.integers(spec.lo, spec.hi)
    if isinstance(spec, Date):
        return st.dates().map(lambda d: d.isoformat())
    if isinstance(spec, Str):
        if spec.pattern is not None:
            return st.from_regex(spec.pattern, fullmatch=True)
        return st.text(alphabet=st.characters(codec="utf-8"), min_size=spec.min_len, max_size=40)
    if isinstance(spec, JsonMap):
        return json_maps
    raise AssertionError(f"no strategy for {spec!r}")


def _valid(obj: Struct) -> bool:
    """False when ``check`` refuses the combination; any other exception is a bug and fails
    the test rather than dropping the example."""
    try:
        obj.check()
    except BadRequest:
        return False
    return True


def structs(cls: type[S]) -> st.SearchStrategy[S]:
    """Valid instances of ``cls``."""
    kwargs: dict[str, st.SearchStrategy[object]] = {}
    for f in fields_of(cls):
        strategy = for_spec(f.spec)
        kwargs[f.name] = st.none() | strategy if f.optional else strategy
    return st.builds(cls, **kwargs).filter(_valid)


def wire_map(obj: ClientMessage | ServerMessage) -> dict[str, object]:
    """The wire map of a message, built independently of the codec (for mutation tests)."""
    out: dict[str, object] = {"type": type(obj).type}
    for name in _names(obj):
        value = getattr(obj, name)
        if value is not None:
            out[name] = _plain(value)
    return out


def _plain(value: object) -> object:
    if isinstance(value, Struct):
        return {
            k: v
            for k, v in ((f, _plain(getattr(value, f))) for f in _names(value))
            if v is not None
        }
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _names(obj: Struct) -> list[str]:
    """The dataclass fields of a struct (every one is a wire field: `fields_of` checks)."""
    return [f.name for f in fields_of(type(obj))]
