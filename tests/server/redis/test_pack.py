"""Commands packed in RESP by our own writer (`server.redis.resp.pack`) are hiredis's bytes."""

from __future__ import annotations

import hiredis
import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.redis.resp import pack

_ARG = st.one_of(
    st.text(max_size=40),
    st.text(min_size=1000, max_size=1100),  # lengths past the kept length lines
    st.integers(min_value=-(2**70), max_value=2**70),
    st.binary(max_size=40),
)


@given(st.lists(_ARG, min_size=1, max_size=70).map(tuple))
def test_a_command_is_packed_as_hiredis_packs_it(args: tuple[str | int | bytes, ...]) -> None:
    assert pack(args) == hiredis.pack_command(args)  # type: ignore[arg-type]


def test_other_types_are_refused() -> None:
    for refused in (True, None, 1.5):  # hiredis refuses a bool and None too
        with pytest.raises(TypeError):
            pack(("SET", "k", refused))  # type: ignore[arg-type]
    assert pack(("EVALSHA", "é", 3)) == b"*3\r\n$7\r\nEVALSHA\r\n$2\r\n\xc3\xa9\r\n$1\r\n3\r\n"
