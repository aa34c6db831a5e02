"""The typed full state (`engine.state`): it holds every card, agrees with `Game.to_json`
through play, is immutable, refuses a player's copy, and the solvers need nothing else."""

from __future__ import annotations

import ast
import dataclasses
import random
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pytest

import engine
from engine import (
    VARIANT_IDS,
    Card,
    Game,
    PairingState,
    TableauState,
    TriPeaksState,
    from_view,
    full_state,
    new_game,
)
from engine.pairing import PairingGame
from engine.state import GameState, PileState
from tests.engine.helpers import (
    deck,
    pairing_state,
    random_play,
    tableau_state,
    tripeaks_state,
)


def _texts(cards: Iterable[Card | None]) -> list[str | None]:
    return [None if c is None else c.text for c in cards]


def _check_against_json(game: Game, state: GameState) -> None:
    """Every field of the state says what the game's `to_json` says."""
    data = game.to_json()
    if isinstance(state, PairingState):
        data = pairing_state(data)
        assert [_texts(p) for p in state.piles] == [[c["card"] for c in p] for p in data["piles"]]
    elif isinstance(state, TriPeaksState):
        data = tripeaks_state(data)
        assert _texts(state.tableau) == [None if t is None else t["card"] for t in data["tableau"]]
        assert _texts(state.stock) == data["stock"]  # both in drawing order
        assert _texts(state.foundation) == data["foundation"]
    else:
        assert isinstance(state, TableauState)
        data = tableau_state(data)
        assert [_texts(p.cards) for p in state.piles] == [
            [c["card"] for c in p] for p in data["piles"]
        ]
        assert [p.down for p in state.piles] == [sum(not c["up"] for c in p) for p in data["piles"]]
        assert _texts(state.stock) == data["stock"]
        assert _texts(state.waste) == data.get("waste", [])
        assert [_texts(f) for f in state.foundations] == data["foundations"]


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_full_state_holds_the_deal_and_follows_play(variant: str) -> None:
    game = new_game(variant, 7)
    state = full_state(game)
    assert Counter(c.text for c in state.cards()) == deck(type(game))
    _check_against_json(game, state)
    rng = random.Random(variant)
    for _ in range(6):
        random_play(game, rng, 15)
        state = full_state(game)
        _check_against_json(game, state)
        if isinstance(state, PairingState):  # cleared cards leave a pairing game's state
            assert sum(1 for _ in state.cards()) == game.total_cards - game.cleared
        else:
            assert Counter(c.text for c in state.cards()) == deck(type(game))


def test_state_types_by_family() -> None:
    expected = {
        "fourteen-out": PairingState,
        "triple-fourteens": PairingState,
        "triple-triangle": TriPeaksState,
        "triple-deck": TableauState,
        "triple-deck-kings": TableauState,
        "triple-easthaven": TableauState,
    }
    for variant, kind in expected.items():
        assert type(full_state(new_game(variant, 1))) is kind
    easthaven = full_state(new_game("triple-easthaven", 1))
    assert isinstance(easthaven, TableauState) and easthaven.waste == ()
    state = full_state(new_game("triple-deck", 1))
    assert isinstance(state, TableauState)
    assert [p.down for p in state.piles] == list(range(7)) and state.waste == ()
    assert len(state.stock) == 3 * 48 - 28
    with pytest.raises(TypeError, match="no full state"):
        full_state(Game.__new__(Game))


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_full_state_is_frozen_and_slotted(variant: str) -> None:
    state = full_state(new_game(variant, 3))
    field = dataclasses.fields(state)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(state, field, ())
    assert not hasattr(state, "__dict__")
    assert full_state(new_game(variant, 3)) == state  # a value: equal for the same position
    if isinstance(state, TableauState):
        assert all(isinstance(p, PileState) and not hasattr(p, "__dict__") for p in state.piles)


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_a_players_copy_has_no_full_state(variant: str) -> None:
    game = new_game(variant, 2)
    copy = from_view(game.view())
    if isinstance(copy, PairingGame):  # every card is face up: the view is the full state
        assert full_state(copy) == full_state(game)
        return
    with pytest.raises(ValueError, match="full state"):
        full_state(copy)


def test_exported_from_the_engine_package() -> None:
    for name in (
        "full_state",
        "GameState",
        "PairingState",
        "PileState",
        "TableauState",
        "TriPeaksState",
    ):
        assert name in engine.__all__ and hasattr(engine, name)


def test_solvers_touch_no_private_attributes() -> None:
    """In engine/solvers, an attribute starting with `_` is only ever read off self or cls."""
    root = Path(engine.__file__).parent / "solvers"
    offending = []
    paths = sorted(root.rglob("*.py"))
    assert root / "easthaven" / "search.py" in paths  # the subpackages are read too
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                offending.append(f"{path.name}:{node.lineno} .{node.attr}")
    assert offending == []


def private_reads(path: Path) -> list[str]:
    """Attributes starting with `_` read off anything but self or cls in `path`."""
    return [
        f"{path.name}:{node.lineno} .{node.attr}"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    ]


def test_the_state_module_reads_no_game_field() -> None:
    """Each family exports its own state (`Game.full_state`); engine/state.py neither reads a
    game's private fields nor imports a family."""
    path = Path(engine.__file__).parent / "state.py"
    assert private_reads(path) == []
    imported = {
        node.module
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom)
    }
    assert imported <= {"__future__", "collections.abc", "dataclasses", "typing", "cards"}


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_full_state_is_the_familys_hook(variant: str) -> None:
    game = new_game(variant, 4)
    family = [k for k in type(game).__mro__ if "full_state" in vars(k)]
    assert family and family[0] is not Game
    assert game.full_state() == full_state(game)


def test_easthaven_solvers_import_only_public_names() -> None:
    """The Easthaven solver package imports no underscored name, from the rules or from its
    own modules (issue #26: it imported 11)."""
    root = Path(engine.__file__).parent / "solvers" / "easthaven"
    names = [
        f"{path.name}: {alias.name}"
        for path in sorted(root.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_") and alias.name != "annotations"
    ]
    assert names == []
