"""The code that runs is the compiled code `setup.py` builds (the engine's rule modules and the
protocol's codec), current with its source, and it behaves exactly as the pure-Python source."""

from __future__ import annotations

import ast
import copy
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import engine
import protocol
from engine.cards import parse_card
from engine.moves import Move, MoveResult, Reveal, Transfer
from tests.support import codec_trace, engine_trace

ROOT = Path(__file__).resolve().parents[2]
PURE = bool(os.environ.get("SOLITAIRE_PURE_PYTHON"))


def compiled_sources() -> list[str]:
    """setup.py's COMPILED_MODULES, read without running setup.py."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "COMPILED_MODULES" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list)
            return [str(v) for v in value]
    raise AssertionError("setup.py has no COMPILED_MODULES")


def test_the_code_runs_compiled_unless_built_pure() -> None:
    assert engine.COMPILED is not PURE and protocol.COMPILED is not PURE
    for source in compiled_sources():
        name = source.removesuffix(".py").replace("/", ".")
        module = sys.modules.get(name) or __import__(name, fromlist=["_"])
        path = Path(module.__file__ or "")
        assert path.suffix == (".py" if PURE else ".so"), f"{name} was loaded from {path}"
    if PURE:
        return
    # The compiled code is in one library for all the modules (each module's own .so only
    # points there): older than a source, it would run that source's old code.
    library = Path(sys.modules["solitaire_compiled__mypyc"].__file__ or "")
    for source in compiled_sources():
        assert library.stat().st_mtime >= (ROOT / source).stat().st_mtime, (
            f"{library.name} is older than {source}: run `make test` (it recompiles)"
        )


def test_no_library_but_the_listed_ones_is_left_in_the_tree() -> None:
    """A compiled module dropped from the list, or an older build's library, would shadow
    its source for good: only the listed modules and their one library may be compiled."""
    listed = {str(Path(s).with_suffix("")) for s in compiled_sources()}
    found = {
        str(p.relative_to(ROOT)).split(".")[0]
        for d in (
            "engine",
            "engine/easthaven",
            "engine/solvers",
            "engine/solvers/easthaven",
            "protocol",
        )
        for p in (ROOT / d).glob("*.so")
    }
    assert found == (set() if PURE else listed)
    libraries = {p.name.split(".")[0] for p in ROOT.glob("*__mypyc*.so")}
    assert libraries == (set() if PURE else {"solitaire_compiled__mypyc"})


def test_move_values_copy_and_pickle_alike_in_both_builds() -> None:
    values: list[object] = [
        Move("3", "5", 1, counted=True),
        Move("d"),
        Transfer((parse_card("7H"), parse_card("6S")), "3", "5"),
        Reveal(None, "4"),
        MoveResult(
            "3 5 1",
            (Transfer((parse_card("7H"),), "3", "5"),),
            (Reveal(parse_card("KD"), "3"),),
            extra=({"type": "recycle", "cards": 3},),
        ),
    ]
    for value in values:
        for twin in (copy.copy(value), copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
            assert twin == value and repr(twin) == repr(value)
    moved = pickle.loads(pickle.dumps(values[0]))
    assert isinstance(moved, Move) and str(moved) == "3 5 1"  # `counted` travels too


def pure_run(tmp_path: Path, module: str, *args: str) -> dict[str, object]:
    """`python -m module args` with the pure-Python packages: only their .py sources, first on
    the path of a fresh interpreter (its working directory, which `-m` puts first)."""
    for package in ("engine", "protocol"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("*.so", "__pycache__")
        )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    out = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, object] = json.loads(out)
    assert result["compiled"] is False
    return result


@pytest.mark.skipif(PURE, reason="the code under test is the pure one")
def test_compiled_and_pure_engines_play_alike(tmp_path: Path) -> None:
    pure = pure_run(tmp_path, "tests.support.engine_trace", "5")["traces"]
    assert isinstance(pure, dict)
    compiled = json.loads(json.dumps(engine_trace.traces(range(5))))
    for variant in engine.VARIANT_IDS:
        for seed, (a, b) in enumerate(zip(compiled[variant], pure[variant], strict=True)):
            assert len(a) > 10, f"{variant} seed {seed}: too short a game to compare"
            for step, (x, y) in enumerate(zip(a, b, strict=True)):
                assert x == y, f"{variant} seed {seed} step {step}: compiled {x} != pure {y}"


@pytest.mark.skipif(PURE, reason="the code under test is the pure one")
def test_compiled_and_pure_codecs_answer_alike(tmp_path: Path) -> None:
    pure = pure_run(tmp_path, "tests.support.codec_trace")["trace"]
    compiled = json.loads(json.dumps(codec_trace.trace()))
    assert isinstance(pure, list)
    assert {o[0] for o in compiled} == {"ok", "error"}  # both kinds of answer are compared
    for n, (x, y) in enumerate(zip(compiled, pure, strict=True)):
        assert x == y, f"frame {n}: compiled {x} != pure {y}"
