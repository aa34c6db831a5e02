"""`protocol.schema.struct`: a frozen keyword-only dataclass whose `__init__` writes the
instance's `__dict__` (faster than the dataclass's `object.__setattr__` per field), with the
same fields, defaults and frozenness."""

from __future__ import annotations

import dataclasses

import pytest

import protocol as p
from protocol.schema import struct


@struct
class Point:
    x: int
    y: int = 3
    tags: tuple[str, ...] = ()
    seen: list[int] = dataclasses.field(default_factory=list)


def test_the_fields_and_their_defaults_are_the_dataclass_ones() -> None:
    a = Point(x=1)
    assert (a.x, a.y, a.tags, a.seen) == (1, 3, (), [])
    assert a == Point(x=1, y=3, tags=(), seen=[])
    assert repr(Point(x=1, y=2, seen=[5])) == "Point(x=1, y=2, tags=(), seen=[5])"
    assert Point(x=1).seen is not Point(x=1).seen, "a default factory runs for each instance"
    assert dataclasses.replace(a, y=9) == Point(x=1, y=9)


def test_it_stays_frozen_and_keyword_only() -> None:
    a = Point(x=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Point(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(x=1, z=2)  # type: ignore[call-arg]


def test_classes_it_cannot_serve_keep_the_dataclass_init() -> None:
    @struct
    class Checked:
        x: int

        def __post_init__(self) -> None:
            if self.x < 0:
                raise ValueError("negative")

    with pytest.raises(ValueError, match="negative"):
        Checked(x=-1)
    assert "__dict__" not in Checked.__init__.__code__.co_names


def test_the_messages_use_it() -> None:
    for cls in (p.Move, p.Moved, p.ErrorReply):
        assert "__dict__" in cls.__init__.__code__.co_names, cls
    moved = p.Moved(id=1, game_id="g", move="m", seq=1, events=(), elapsed_ms=0, finished=False)
    assert moved.view is None and moved.result is None
    move = p.Move(id=2, game_id="g", move="m")
    assert hash(move) == hash(p.Move(id=2, game_id="g", move="m")), "frozen: hashable by value"
