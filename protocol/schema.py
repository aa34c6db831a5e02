"""``Struct``: the base of every wire map, and the generic map <-> dataclass conversion.

A struct is a frozen, keyword-only dataclass (declared with :func:`struct`) whose every field
is annotated with a spec from :mod:`protocol.fields`. An optional field is written
``x: SomeType | None = None``; it is omitted from the wire when ``None`` and may be absent or
``null`` on input. Every other field must be present. Keys on the wire are the field names;
unknown keys are refused.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypeVar, cast, get_args, get_origin

from protocol.errors import BadRequest
from protocol.fields import Bool, Int, Spec, Str, kind_of

S = TypeVar("S", bound="Struct")
T = TypeVar("T")


class Struct:
    """Base class of messages and nested records. Subclasses are frozen dataclasses."""

    def check(self) -> None:
        """Cross-field validation, run after every field passed its spec.

        Override to raise :class:`~protocol.errors.BadRequest`; the default accepts.
        """


@dataclasses.dataclass(frozen=True)
class FieldSpec:
    """How one dataclass field is carried on the wire."""

    name: str
    spec: Spec
    optional: bool


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _spec_of(hint: Any) -> tuple[Spec, bool] | None:
    """``(spec, optional)`` from ``Annotated[T, spec]`` or ``Annotated[T, spec] | None``."""
    optional = False
    if get_origin(hint) in (typing.Union, types.UnionType):
        args = get_args(hint)
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1 or len(args) != 2:
            return None
        hint, optional = rest[0], True
    if get_origin(hint) is not Annotated:
        return None
    specs = [m for m in hint.__metadata__ if isinstance(m, Spec)]
    return (specs[0], optional) if len(specs) == 1 else None


C = TypeVar("C", bound=type)


@typing.dataclass_transform(frozen_default=True, kw_only_default=True)
def struct(cls: C) -> C:
    """``@dataclass(frozen=True, kw_only=True)``, with a faster ``__init__``.

    A frozen dataclass's own ``__init__`` sets each field through ``object.__setattr__``
    (frozen classes refuse plain assignment): ~0.15 µs a field, 2 µs for a ``moved`` reply,
    and every request and reply makes one. This one writes the fields into the instance's
    ``__dict__``, which the frozen ``__setattr__`` does not guard: the same fields, defaults
    and frozenness (a later assignment still raises ``FrozenInstanceError``)."""
    made = cast(C, dataclasses.dataclass(frozen=True, kw_only=True)(cls))
    init = _dict_init(made)
    if init is not None:
        setattr(made, "__init__", init)  # noqa: B010 (mypy: no assigning to a method)
    return made


def _dict_init(cls: type) -> Any:
    """An ``__init__`` writing the fields into ``__dict__``; None where that cannot stand in
    for the dataclass's (slots, ``__post_init__``, fields not set by ``__init__``)."""
    if "__slots__" in cls.__dict__ or hasattr(cls, "__post_init__"):
        return None
    fields = dataclasses.fields(cls)
    if any(not f.init or not f.kw_only for f in fields):
        return None
    scope: dict[str, Any] = {"_MISSING": dataclasses.MISSING}
    params, body = [], ["  d = self.__dict__"]
    for f in fields:
        if f.default is not dataclasses.MISSING:
            scope[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            scope[f"_f_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            body.append(f"  if {f.name} is _MISSING: {f.name} = _f_{f.name}()")
        else:
            params.append(f.name)
        body.append(f"  d[{f.name!r}] = {f.name}")
    signature = f"self, *, {', '.join(params)}" if params else "self"
    source = f"def __init__({signature}):\n" + "\n".join(body) + "\n"
    exec(source, scope)  # how `dataclasses` makes its own __init__
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


_fields_cache: dict[type[Struct], tuple[FieldSpec, ...]] = {}


def fields_of(cls: type[Struct]) -> tuple[FieldSpec, ...]:
    """The wire fields of a struct class, in declaration order.

    Raises ``TypeError`` for a class that is not a frozen dataclass of its own, a field
    without exactly one spec, or an optional field whose default is not ``None``.
    """
    cached = _fields_cache.get(cls)
    if cached is not None:
        return cached
    if "__dataclass_fields__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__} must be decorated with @dataclass(frozen=True, ...)")
    if not cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        raise TypeError(f"{cls.__name__} must be a frozen dataclass")
    hints = typing.get_type_hints(cls, include_extras=True)
    result = []
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        found = _spec_of(hints[field.name])
        if found is None:
            raise TypeError(f"{cls.__name__}.{field.name}: annotate with Annotated[T, spec]")
        spec, optional = found
        if optional and field.default is not None:
            raise TypeError(f"{cls.__name__}.{field.name}: an optional field defaults to None")
        result.append(FieldSpec(field.name, spec, optional))
    _fields_cache[cls] = tuple(result)
    return _fields_cache[cls]


@dataclasses.dataclass(frozen=True, slots=True)
class _LoadPlan:
    """What `load_struct` needs of a class, worked out once per class (top-level maps)."""

    known: frozenset[str]
    #: name, spec, optional, the path written in errors, required (no default)
    fields: tuple[tuple[str, Spec, bool, str, bool], ...]


_plans: dict[tuple[type[Struct], frozenset[str]], _LoadPlan] = {}


def _plan(cls: type[Struct], path: str, ignore: frozenset[str]) -> _LoadPlan:
    """The class's load plan; cached for top-level maps only (a nested path varies)."""
    if not path:
        cached = _plans.get((cls, ignore))
        if cached is not None:
            return cached
    specs = fields_of(cls)
    dc_fields = cls.__dataclass_fields__  # type: ignore[attr-defined]
    fields = tuple(
        (
            f.name,
            f.spec,
            f.optional,
            _join(path, f.name),
            dc_fields[f.name].default is dataclasses.MISSING
            and dc_fields[f.name].default_factory is dataclasses.MISSING,
        )
        for f in specs
    )
    plan = _LoadPlan(frozenset(f.name for f in specs) | ignore, fields)
    if not path:
        _plans[(cls, ignore)] = plan
    return plan


_loaders: dict[tuple[type[Struct], frozenset[str]], Callable[[Mapping[str, object]], Any]] = {}


def load_struct(
    cls: type[S], data: Mapping[str, object], path: str = "", ignore: frozenset[str] = frozenset()
) -> S:
    """Build ``cls`` from a parsed map, validating every field; keys in ``ignore`` are skipped."""
    if not path:  # a message: its own loader (`_loader`), made once per class
        loader = _loaders.get((cls, ignore))
        if loader is None:
            loader = _loaders[(cls, ignore)] = _loader(cls, ignore)
        return cast(S, loader(data))
    return _load_struct(cls, data, path, ignore)


def _load_struct(cls: type[S], data: Mapping[str, object], path: str, ignore: frozenset[str]) -> S:
    """`load_struct` field by field, by the class's plan (nested maps; the reference the
    generated loaders of `_loader` must agree with)."""
    plan = _plan(cls, path, ignore)
    known = plan.known
    for k in data:
        if k not in known:
            _refuse_unknown(data, known, path)
    values: dict[str, Any] = {}
    for name, spec, optional, where, required in plan.fields:
        if name not in data:
            if not optional and required:
                raise BadRequest(f"missing field {where!r}")
            continue
        value = data[name]
        if value is None:
            if optional:
                values[name] = None
                continue
            raise BadRequest(f"{where}: must not be null")
        values[name] = spec.load(value, where)
    obj = cls(**values)
    obj.check()
    return obj


def _refuse_unknown(data: Mapping[str, object], known: frozenset[str], path: str) -> None:
    unknown = sorted(str(k) for k in data if k not in known)
    names = ", ".join(repr(_join(path, k)) for k in unknown)
    raise BadRequest(f"unknown field{'s' if len(unknown) > 1 else ''} {names}")


_ABSENT = object()


def _loader(cls: type[Struct], ignore: frozenset[str]) -> Callable[[Mapping[str, object]], Any]:
    """A function loading a top-level map into ``cls`` as `_load_struct` does (the same
    checks, errors and values), written out for the class's fields: a message is read at
    every request, and the generic loop cost ~2.8 µs for a `move`. The plain specs (`Int`,
    `Str`, `Bool` themselves, not their subclasses) are checked inline; any value they do not
    accept at once goes to the spec's own `load`, which accepts it the same or raises."""
    plan = _plan(cls, "", ignore)
    scope: dict[str, Any] = {
        "_cls": cls,
        "_known": plan.known,
        "_ABSENT": _ABSENT,
        "_refuse_unknown": _refuse_unknown,
        "BadRequest": BadRequest,
    }
    dc_fields = cls.__dataclass_fields__  # type: ignore[attr-defined]
    lines = [
        "def load(data):",
        "  for k in data:",
        "    if k not in _known:",
        "      _refuse_unknown(data, _known, '')",
        "  get = data.get",
    ]
    args = []
    for n, (name, spec, optional, where, required) in enumerate(plan.fields):
        v = f"v{n}"
        scope[f"_s{n}"] = spec
        lines.append(f"  {v} = get({name!r}, _ABSENT)")
        if optional:
            lines.append(f"  if {v} is None or {v} is _ABSENT: {v} = None")
        else:
            if required:
                missing = f"raise BadRequest({f'missing field {where!r}'!r})"
            elif dc_fields[name].default is not dataclasses.MISSING:
                scope[f"_d{n}"] = dc_fields[name].default
                missing = f"{v} = _d{n}"
            else:
                scope[f"_f{n}"] = dc_fields[name].default_factory
                missing = f"{v} = _f{n}()"
            lines.append(f"  if {v} is _ABSENT: {missing}")
            lines.append(f"  elif {v} is None: raise BadRequest({f'{where}: must not be null'!r})")
        lines.append(
            f"  elif not ({_inline_check(spec, v, n, scope)}): {v} = _s{n}.load({v}, {where!r})"
        )
        args.append(f"{name}={v}")
    lines += [f"  obj = _cls({', '.join(args)})", "  obj.check()", "  return obj"]
    exec("\n".join(lines) + "\n", scope)  # as `dataclasses` writes its methods
    load: Callable[[Mapping[str, object]], Any] = scope["load"]
    load.__qualname__ = f"load_struct<{cls.__qualname__}>"
    return load


def _inline_check(spec: Spec, v: str, n: int, scope: dict[str, Any]) -> str:
    """A Python expression true when ``spec.load(v)`` would return ``v`` itself ("False":
    always ask the spec)."""
    kind = type(spec)
    if kind is Int:
        assert isinstance(spec, Int)
        return f"type({v}) is int and {spec.lo} <= {v} <= {spec.hi}"
    if kind is Bool:
        return f"type({v}) is bool"
    if kind is Str:
        assert isinstance(spec, Str)
        check = f"type({v}) is str and {spec.min_len} <= len({v}) <= {spec.max_len}"
        if spec.pattern is None:
            return check
        scope[f"_p{n}"] = spec.pattern.fullmatch
        return f"{check} and _p{n}({v}) is not None"
    return "False"


def dump_struct(obj: Struct, path: str = "") -> dict[str, Any]:
    """The wire map of ``obj`` (optional ``None`` fields omitted), validating every field."""
    out: dict[str, Any] = {}
    for f in fields_of(type(obj)):
        value = getattr(obj, f.name)
        where = _join(path, f.name)
        if value is None:
            if f.optional:
                continue
            raise BadRequest(f"{where}: must not be None")
        out[f.name] = f.spec.dump(value, where)
    obj.check()
    return out


class Nested(Spec):
    """A map carried as a typed struct (e.g. a game result or a leaderboard entry)."""

    def __init__(self, cls: type[Struct]) -> None:
        self.cls = cls

    def load(self, value: object, path: str) -> Struct:
        if not isinstance(value, dict):
            raise BadRequest(f"{path}: expected a map, got {kind_of(value)}")
        return load_struct(self.cls, value, path)

    def dump(self, value: object, path: str) -> dict[str, Any]:
        if not isinstance(value, self.cls):
            raise BadRequest(f"{path}: expected {self.cls.__name__}, got {kind_of(value)}")
        return dump_struct(value, path)


_TYPE_NAME = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*", re.ASCII)


def register(table: dict[str, type[T]], cls: type[T], type_name: str) -> None:
    """Add ``cls`` to a message table under ``type_name`` (used by ``__init_subclass__``)."""
    if _TYPE_NAME.fullmatch(type_name) is None:
        raise TypeError(f"{cls.__name__}: bad message type name {type_name!r}")
    if type_name in table:
        raise TypeError(f"{cls.__name__}: type {type_name!r} already used by {table[type_name]}")
    table[type_name] = cls
