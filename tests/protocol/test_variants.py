"""Protocol 6 variant descriptors (`welcome.variant_info`): typed, validated both ways."""

from __future__ import annotations

import json

import pytest

import protocol as p

TRI_PEAKS = p.VariantInfo(
    id="triple-triangle",
    title="Triple Triangle (Tri Peaks)",
    name="Tri Peaks",
    family=p.Family.TRIPEAKS.value,
    decks=1,
    cards=52,
    clear=28,
    goal="You win by clearing all 28 peak cards.",
    scored=False,
    may_finish=False,
    finish=False,
    undo_counts=True,
    stock="draw the next stock card onto the foundation",
)


def welcome(*info: p.VariantInfo) -> p.Welcome:
    return p.Welcome(
        id=1,
        version=6,
        player_id="p_1",
        name="alice",
        server_time=0,
        variants=tuple(i.id for i in info),
        variant_info=info,
    )


@pytest.mark.parametrize("binary", [False, True])
def test_a_welcome_with_descriptors_round_trips(binary: bool) -> None:
    msg = welcome(TRI_PEAKS)
    assert p.decode_server(p.encode(msg, binary=binary)) == msg
    wire = json.loads(p.encode(msg, binary=False))
    assert wire["variant_info"][0]["family"] == "tripeaks"
    assert "max_score" not in wire["variant_info"][0]  # absent, not null, when unscored


@pytest.mark.parametrize(
    ("field", "value"),
    [("family", "klondike"), ("decks", 0), ("clear", -1), ("goal", ""), ("scored", 1)],
)
def test_a_bad_descriptor_is_refused(field: str, value: object) -> None:
    wire = json.loads(p.encode(welcome(TRI_PEAKS), binary=False))
    wire["variant_info"][0][field] = value
    with pytest.raises(p.BadRequest, match=f"variant_info\\[0\\].{field}"):
        p.decode_server(json.dumps(wire))


def test_an_older_welcome_has_none() -> None:
    old = p.decode_server(
        '{"type":"welcome","id":1,"version":5,"player_id":"p","name":"bob",'
        '"server_time":0,"variants":["fourteen-out"]}'
    )
    assert isinstance(old, p.Welcome) and old.variant_info is None
