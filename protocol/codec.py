"""Frames <-> messages: the only module that knows about JSON and msgpack.

Binary frames are msgpack, text frames JSON; both carry one map with the same schema.
Every function here either returns a valid message / frame or raises a
:class:`~protocol.errors.ProtocolError`: decoding errors are the peer's fault
(``bad_request``, ``too_large``, ``unknown_type``, ``invalid_name``); :class:`EncodeError`
is the caller's bug. Nothing here does I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Final, Literal, TypeVar, overload

import msgpack  # type: ignore[import-untyped]

from protocol.errors import BadRequest, EncodeError, FrameTooLarge, ProtocolError, UnknownType
from protocol.events import SERVER_MESSAGES, ServerMessage
from protocol.fields import MAX_REQUEST_ID, kind_of
from protocol.messages import CLIENT_MESSAGES, ClientMessage
from protocol.schema import Struct, dump_struct, fields_of, load_struct

MAX_FRAME_SIZE: Final = 64 * 1024
"""Default limit, in bytes (UTF-8 bytes for text frames), of a frame in either direction."""
MAX_DEPTH: Final = 32
"""Deepest nesting of maps and arrays in a frame; the top-level map is depth 1."""

_INT_MIN: Final = -(2**63)
_INT_MAX: Final = 2**64 - 1  # what msgpack can carry; JSON frames are held to the same range
_TYPE_FIELD: Final = frozenset({"type"})
#: The longest text of an integer in range: 2**64-1 has 20 digits, -2**63 a sign and 19.
_INT_TEXT_MAX: Final = 20

M = TypeVar("M", bound=Struct)

#: What a frame may be given as: msgpack bytes (any buffer) or JSON text.
Frame = bytes | bytearray | memoryview | str


class _Reject(ValueError):
    """Raised by parser hooks; its message is reported as is."""


# --- parsing ---------------------------------------------------------------------------------


def _pairs_to_map(pairs: list[tuple[object, object]]) -> dict[object, object]:
    """A map of the frame, refusing duplicate keys. A msgpack key that is a number, bytes or
    nil is kept, for `check_tree` to refuse once the frame is parsed and its `id` can be
    read (docs/protocol.md §6); an array or map as a key (unhashable) is refused here."""
    out: dict[object, object] = {}
    for key, value in pairs:
        if isinstance(key, str):
            if key in out:
                raise _Reject(f"duplicate key {key[:64]!r}")
        elif not isinstance(key, (int, float, bytes)) and key is not None:
            raise _Reject(f"map keys must be strings, got {kind_of(key)}")
        out[key] = value
    return out


def _reject_constant(name: str) -> object:
    raise _Reject(f"{name} is not allowed")


def _bounded_int(text: str) -> int:
    """A JSON integer; refused by its length before Python's own limit on converting long
    digit strings (4,300 digits) answers with a message about `sys.set_int_max_str_digits`."""
    if len(text) > _INT_TEXT_MAX:
        raise _Reject("integer is out of range -2**63..2**64-1")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Reject(f"number {text[:32]} is out of range")
    return value


def _reject_ext(code: int, data: bytes) -> object:
    raise _Reject(f"msgpack extension types are not allowed (ext type {code})")


def _msgpack_fault(exc: Exception) -> str:
    """What is wrong with a msgpack frame, in the protocol's words rather than the library's
    (which names its internals: "4294967295 exceeds max_array_len(22)")."""
    if isinstance(exc, msgpack.ExtraData):
        return "bytes after the end of the map"
    if isinstance(exc, msgpack.FormatError):
        return "a byte that starts no msgpack value"
    text = str(exc)
    if "incomplete input" in text:
        return "the frame ends inside a value"
    if "exceeds max_" in text:
        return "a length larger than the frame"
    return "malformed data"


def _check_str(text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise BadRequest("string is not valid UTF-8 (lone surrogate)") from None


def check_tree(root: object, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`BadRequest` unless ``root`` is JSON/msgpack-neutral data.

    Allowed: ``None``, ``bool``, ints in ``-2**63..2**64-1``, finite floats, strings
    without lone surrogates, lists/tuples and dicts with string keys, nested at most
    ``max_depth`` containers deep.
    """
    _check_value(root, 1, max_depth)


def _check_value(value: object, depth: int, max_depth: int) -> None:
    """`check_tree` of one value ``depth`` containers deep. Recursive (at most ``max_depth``
    calls deep): a frame's every value passes here, and a stack of (value, depth) tuples cost
    four times what a call does (a 64 KiB frame of empty arrays: 16 ms of it, issue #30's
    parse-cost flood)."""
    if isinstance(value, str):
        if not value.isascii():
            _check_str(value)
    elif value is None or isinstance(value, bool):
        pass
    elif isinstance(value, int):
        if not _INT_MIN <= value <= _INT_MAX:
            raise BadRequest("integer is out of range -2**63..2**64-1")
    elif isinstance(value, dict):
        if depth > max_depth:
            raise BadRequest(f"frame is nested more than {max_depth} levels deep")
        for key, item in value.items():
            if not isinstance(key, str):
                raise BadRequest(f"map keys must be strings, got {kind_of(key)}")
            if not key.isascii():
                _check_str(key)
            _check_value(item, depth + 1, max_depth)
    elif isinstance(value, (list, tuple)):
        if depth > max_depth:
            raise BadRequest(f"frame is nested more than {max_depth} levels deep")
        for item in value:
            _check_value(item, depth + 1, max_depth)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise BadRequest("NaN and infinite numbers are not allowed")
    elif isinstance(value, bytes):
        raise BadRequest("binary values are not allowed")
    else:
        raise BadRequest(f"values of type {kind_of(value)} are not allowed")


def parse_frame(frame: Frame, max_size: int) -> dict[str, Any]:
    """Parse one frame into a map of plain data, enforcing size, encoding and shape."""
    obj: object
    if isinstance(frame, str):
        if len(frame) > max_size:
            raise FrameTooLarge(f"frame is larger than {max_size} bytes")
        try:
            size = len(frame.encode("utf-8"))
        except UnicodeEncodeError:
            raise BadRequest("text frame is not valid UTF-8") from None
        if size > max_size:
            raise FrameTooLarge(f"frame of {size} bytes is larger than {max_size} bytes")
        try:
            obj = json.loads(
                frame,
                object_pairs_hook=_pairs_to_map,
                parse_constant=_reject_constant,
                parse_float=_finite_float,
                parse_int=_bounded_int,
            )
        # Each clause binds a name of its own: compiled (setup.py), a name is one typed
        # variable, and a ValueError bound to the _Reject clause's name would not fit it.
        except _Reject as rejected:
            raise BadRequest(f"invalid JSON: {rejected}") from None
        except RecursionError:
            raise BadRequest("frame is nested too deeply") from None
        except ValueError as exc:
            raise BadRequest(f"invalid JSON: {exc}") from None
    elif isinstance(frame, (bytes, bytearray, memoryview)):
        data = bytes(frame)
        if len(data) > max_size:
            raise FrameTooLarge(f"frame of {len(data)} bytes is larger than {max_size} bytes")
        try:
            obj = msgpack.unpackb(
                data,
                raw=False,
                use_list=True,
                strict_map_key=False,
                object_pairs_hook=_pairs_to_map,
                ext_hook=_reject_ext,
            )
        except _Reject as rejected:
            raise BadRequest(f"invalid msgpack: {rejected}") from None
        except RecursionError:
            raise BadRequest("frame is nested too deeply") from None
        except UnicodeDecodeError:
            raise BadRequest("invalid msgpack: string is not valid UTF-8") from None
        except msgpack.StackError:
            raise BadRequest("frame is nested too deeply") from None
        except (ValueError, msgpack.UnpackException) as broken:
            raise BadRequest(f"invalid msgpack: {_msgpack_fault(broken)}") from None
    else:
        raise TypeError(f"a frame is bytes (msgpack) or str (JSON), not {type(frame).__name__}")
    if not isinstance(obj, dict):
        raise BadRequest(f"frame must be a map, got {kind_of(obj)}")
    try:
        check_tree(obj)
    except ProtocolError as refused:  # the id is still readable: keep it on the error
        refused.id = _read_id(obj)
        raise
    return obj


def _read_id(obj: Mapping[str, Any]) -> int | None:
    """The request id of a parsed map, when it is a valid one."""
    raw_id = obj.get("id")
    return raw_id if type(raw_id) is int and 0 <= raw_id <= MAX_REQUEST_ID else None


def _load_message(obj: dict[str, Any], table: Mapping[str, type[M]]) -> M:
    msg_id = _read_id(obj)
    if "type" not in obj:
        raise BadRequest("missing field 'type'", id=msg_id)
    type_name = obj["type"]
    if not isinstance(type_name, str):
        raise BadRequest(f"type: expected a string, got {kind_of(type_name)}", id=msg_id)
    cls = table.get(type_name)
    if cls is None:
        raise UnknownType(f"unknown message type {type_name[:64]!r}", id=msg_id)
    try:
        return load_struct(cls, obj, ignore=_TYPE_FIELD)
    except ProtocolError as exc:
        raise type(exc)(f"{type_name}: {exc.message}", code=exc.code, id=msg_id) from None


def decode(frame: Frame, *, max_size: int = MAX_FRAME_SIZE) -> ClientMessage:
    """Decode a frame received by the server into a request.

    ``bytes`` are msgpack, ``str`` JSON. Raises :class:`ProtocolError` (never anything
    else for ``bytes``/``str`` input) with ``id`` set whenever the frame held a valid id.
    """
    return _load_message(parse_frame(frame, max_size), CLIENT_MESSAGES)


def decode_server(frame: Frame, *, max_size: int = MAX_FRAME_SIZE) -> ServerMessage:
    """Decode a frame received by a client into a server message (validated like ``decode``)."""
    return _load_message(parse_frame(frame, max_size), SERVER_MESSAGES)


# --- encoding --------------------------------------------------------------------------------


#: `keep_plain`'s wire forms, by the identity of the tuple they are of: id -> (the tuple,
#: held so that its id is not reused while it is kept; its wire form; that form packed as
#: msgpack and written as JSON, which `_encode` splices into a reply's frame unconverted).
_KEPT: dict[int, tuple[object, object, bytes, str]] = {}
#: The ids of the forms kept without ``pinned``, oldest first: at most `KEPT_MAX`.
_ROLLING: dict[int, None] = {}
KEPT_MAX: Final = 64


def keep_plain(value: tuple[object, ...], *, pinned: bool = False) -> None:
    """Keep the wire form of a tuple (of messages, strings) that many replies share, for
    ``encode(validate=False)`` to use instead of converting the tuple again for each reply:
    the welcome's variant descriptors (9 µs of a `hello`), a new player's tier cells. A kept
    tuple that is a field of the message itself goes into the frame already packed (msgpack)
    or written (JSON): the welcome's 1.6 KB of descriptors cost a `hello` 7 µs to pack and
    20 µs to write as JSON every time. For
    frozen messages whose fields are immutable (strings, numbers, tuples, frozen messages)
    only: a kept form is never converted again. A ``pinned`` form (a constant of the
    process) stays; of the others at most `KEPT_MAX` are kept, and keeping another drops the
    oldest (`forget_plain` drops one at once). The validating encoder (tests) never uses
    them."""
    key = id(value)
    if key in _KEPT:
        if pinned:
            _ROLLING.pop(key, None)
        return
    if not pinned:
        while len(_ROLLING) >= KEPT_MAX:
            oldest = next(iter(_ROLLING))
            del _ROLLING[oldest]
            del _KEPT[oldest]
        _ROLLING[key] = None
    plain = [_plain(v) for v in value]
    _KEPT[key] = (value, plain, _PACKER.pack(plain), _dumps(plain))


def forget_plain(value: tuple[object, ...]) -> None:
    """Drop the kept wire form of ``value`` (kept without ``pinned``), if any: the tuple is
    replaced by another and no reply will carry it again."""
    key = id(value)
    kept = _KEPT.get(key)
    if kept is not None and kept[0] is value and key in _ROLLING:
        del _ROLLING[key]
        del _KEPT[key]


def _kept(value: object) -> tuple[object, object, bytes, str] | None:
    """The kept forms of a tuple (`keep_plain`), if it is one kept."""
    kept = _KEPT.get(id(value))
    return kept if kept is not None and kept[0] is value else None


def _plain(value: object) -> object:
    """The wire form of a field value, unchecked (see ``encode(validate=False)``)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or kind is dict or value is None:
        return value
    if kind is tuple:
        kept = _kept(value)
        if kept is not None:
            return kept[1]
        return [_plain(v) for v in value]  # type: ignore[attr-defined]
    if kind is list:
        return [_plain(v) for v in value]  # type: ignore[attr-defined]
    if isinstance(value, Struct):
        return _plain_struct(value)
    if isinstance(value, str):  # StrEnum members go out as plain strings
        return str(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    return value


def _plain_struct(msg: Struct) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields_of(type(msg)):
        value = getattr(msg, f.name)
        if value is not None or not f.optional:
            out[f.name] = _plain(value)
    return out


#: A message class's fields as (name, optional), ``id`` first: the wire map's order.
_wire_fields: dict[type[Struct], tuple[tuple[str, bool], ...]] = {}


def _fields_for_wire(cls: type[Struct]) -> tuple[tuple[str, bool], ...]:
    found = _wire_fields.get(cls)
    if found is None:
        pairs = [(f.name, f.optional) for f in fields_of(cls)]
        pairs.sort(key=lambda pair: pair[0] != "id")  # stable: the rest keep their order
        found = _wire_fields[cls] = tuple(pairs)
    return found


def _plain_wire(
    msg: Struct, type_name: str
) -> tuple[dict[str, Any], dict[str, tuple[bytes, str]] | None]:
    """The wire map of a message, unchecked: ``type``, ``id``, then the fields in order,
    optional ``None`` fields left out (``encode(validate=False)``, every reply); and the
    fields whose value is a kept tuple, with its form packed and written (`keep_plain`)."""
    wire: dict[str, Any] = {"type": type_name}
    kept_fields: dict[str, tuple[bytes, str]] | None = None
    for name, optional in _fields_for_wire(type(msg)):
        value = getattr(msg, name)
        kind = type(value)
        if kind is str or kind is int or kind is bool:
            wire[name] = value
        elif kind is tuple:
            kept = _kept(value)
            if kept is None:
                wire[name] = [_plain(v) for v in value]
            else:  # one lookup: a reply's tuples (a move's events) are rarely kept
                wire[name] = kept[1]
                if kept_fields is None:
                    kept_fields = {}
                kept_fields[name] = (kept[2], kept[3])
        elif value is not None:
            wire[name] = _plain(value)
        elif not optional:
            wire[name] = None
    return wire, kept_fields


#: One JSON encoder for every text frame: `json.dumps` with options makes an encoder per
#: call (~1 µs a reply). Encoding keeps no state in it.
_JSON: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _dumps(value: object) -> str:
    """JSON as every text frame is written."""
    return _JSON.encode(value)


def _pack_spliced(wire: dict[str, Any], kept: dict[str, tuple[bytes, str]]) -> bytes:
    """``wire`` packed as `_PACKER` packs it, the ``kept`` fields' values taken as packed:
    a map is its header, then each key and value packed in turn."""
    parts = [_PACKER.pack_map_header(len(wire))]
    for name, value in wire.items():
        parts.append(_PACKER.pack(name))
        form = kept.get(name)
        parts.append(_PACKER.pack(value) if form is None else form[0])
    return b"".join(parts)


def _dumps_spliced(wire: dict[str, Any], kept: dict[str, tuple[bytes, str]]) -> str:
    """``wire`` written as `_dumps` writes it, the ``kept`` fields' values taken as written."""
    parts = []
    for name, value in wire.items():
        form = kept.get(name)
        parts.append(f"{_dumps(name)}:{_dumps(value) if form is None else form[1]}")
    return "{" + ",".join(parts) + "}"


#: One msgpack packer for every binary frame: `msgpack.packb` makes a packer, and its
#: buffer, per call (~1 µs a reply). `pack` holds the GIL throughout, so no other thread
#: packs on it meanwhile; a failed pack resets it.
_PACKER: Final = msgpack.Packer(use_bin_type=True, autoreset=True)


def _encode(
    msg: Struct,
    table: Mapping[str, type[Struct]],
    binary: bool,
    max_size: int,
    validate: bool = True,
) -> bytes | str:
    cls = type(msg)
    type_name: str | None = getattr(cls, "type", None)
    if type_name is None or table.get(type_name) is not cls:
        raise EncodeError(f"{cls.__name__} is not a registered message class")
    wire: dict[str, Any]
    kept: dict[str, tuple[bytes, str]] | None = None
    if validate:
        try:
            body = dump_struct(msg)
            wire = {"type": type_name}
            if "id" in body:
                wire["id"] = body.pop("id")
            wire.update(body)
            check_tree(wire)
        except ProtocolError as exc:
            msg_id = getattr(msg, "id", None)
            raise EncodeError(f"cannot encode {type_name}: {exc.message}", id=msg_id) from None
    else:
        wire, kept = _plain_wire(msg, type_name)
    out: bytes | str
    try:
        if binary:
            out = _PACKER.pack(wire) if kept is None else _pack_spliced(wire, kept)
            size = len(out)
        else:
            out = _dumps(wire) if kept is None else _dumps_spliced(wire, kept)
            size = len(out.encode("utf-8"))
    except (TypeError, ValueError, OverflowError) as unencodable:  # only when unvalidated
        if binary:
            _PACKER.reset()
        msg_id = getattr(msg, "id", None)
        raise EncodeError(f"cannot encode {type_name}: {unencodable}", id=msg_id) from None
    if size > max_size:
        raise EncodeError(
            f"cannot encode {type_name}: {size} bytes is larger than {max_size}",
            id=getattr(msg, "id", None),
        )
    return out


@overload
def encode(
    msg: ServerMessage, binary: Literal[True], *, max_size: int = ..., validate: bool = ...
) -> bytes: ...
@overload
def encode(
    msg: ServerMessage, binary: Literal[False], *, max_size: int = ..., validate: bool = ...
) -> str: ...
@overload
def encode(
    msg: ServerMessage, binary: bool, *, max_size: int = ..., validate: bool = ...
) -> bytes | str: ...
def encode(
    msg: ServerMessage, binary: bool, *, max_size: int = MAX_FRAME_SIZE, validate: bool = True
) -> bytes | str:
    """Encode a server message: msgpack ``bytes`` if ``binary`` else JSON ``str``.

    The message is validated first; an invalid one raises :class:`EncodeError`. A server
    whose messages are built from typed values may skip that with ``validate=False`` (the
    production server does; its tests validate every reply): only an unencodable value or an
    oversized frame is then caught.
    """
    return _encode(msg, SERVER_MESSAGES, binary, max_size, validate)


@overload
def encode_request(msg: ClientMessage, binary: Literal[True], *, max_size: int = ...) -> bytes: ...
@overload
def encode_request(msg: ClientMessage, binary: Literal[False], *, max_size: int = ...) -> str: ...
@overload
def encode_request(msg: ClientMessage, binary: bool, *, max_size: int = ...) -> bytes | str: ...
def encode_request(
    msg: ClientMessage, binary: bool, *, max_size: int = MAX_FRAME_SIZE
) -> bytes | str:
    """Encode a request (client side), validated like :func:`encode`."""
    return _encode(msg, CLIENT_MESSAGES, binary, max_size)
