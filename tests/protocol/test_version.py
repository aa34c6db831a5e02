from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import protocol as p


def test_current_version_is_supported() -> None:
    assert p.PROTOCOL_VERSION == 10
    assert {1, 2, 3, 4, 5, 6, 7, 8, 9, 10} == p.SUPPORTED_VERSIONS, (
        "version 1 to 9 clients keep working"
    )


@pytest.mark.parametrize(
    ("offered", "supported", "chosen"),
    [
        ([1], {1}, 1),
        ([3, 2, 1], {1}, 1),
        ([1, 1], {1}, 1),
        ([2, 3, 9], {1, 2, 3}, 3),
        ([1, 2], {1, 2, 3}, 2),
    ],
)
def test_negotiate_picks_highest_common(
    offered: list[int], supported: set[int], chosen: int
) -> None:
    assert p.negotiate(offered, supported) == chosen


@pytest.mark.parametrize("offered", [[], [99], [0, 99, 100]])
def test_negotiate_without_common_version(offered: list[int]) -> None:
    with pytest.raises(p.UnsupportedVersion) as info:
        p.negotiate(offered)
    assert info.value.code == "unsupported_version"
    assert "1, 2, 3, 4, 5, 6, 7, 8" in info.value.message


def test_negotiate_from_a_decoded_hello() -> None:
    hello = p.decode('{"type":"hello","id":4,"versions":[99,1],"name":"bob"}')
    assert isinstance(hello, p.Hello)
    assert p.negotiate(hello.versions) == 1
    assert p.negotiate((1, 2)) == 2
    assert p.negotiate((2, 3)) == 3
    assert p.negotiate((3, 4)) == 4
    assert p.negotiate((4, 5)) == 5
    assert p.negotiate((5, 6)) == 6
    assert p.negotiate((6, 7)) == p.ACCOUNTS == 7
    assert p.negotiate((6, 8)) == 8


@given(st.lists(st.integers(1, 20), max_size=8), st.sets(st.integers(1, 20), min_size=1))
def test_negotiate_property(offered: list[int], supported: set[int]) -> None:
    common = set(offered) & supported
    if common:
        assert p.negotiate(offered, supported) == max(common)
    else:
        with pytest.raises(p.UnsupportedVersion):
            p.negotiate(offered, supported)
