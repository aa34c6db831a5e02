"""The code that runs is the compiled code `setup.py` builds (the engine's rule modules and the
protocol's codec), current with its source, and it behaves exactly as the pure-Python source."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import engine
import protocol
from tests.support import codec_trace, engine_trace

ROOT = Path(__file__).resolve().parents[2]
PURE = bool(os.environ.get("SOLITAIRE_PURE_PYTHON"))


def compiled_sources() -> list[str]:
    """setup.py's COMPILED_MODULES, read without running setup.py."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "COMPILED_MODULES" for t in node.targets):
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
            f"{library.name} is older than {source}: run `make test` (it recompiles)")


def pure_run(tmp_path: Path, module: str, *args: str) -> dict[str, object]:
    """`python -m module args` with the pure-Python packages: only their .py sources, first on
    the path of a fresh interpreter (its working directory, which `-m` puts first)."""
    for package in ("engine", "protocol"):
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    out = subprocess.run([sys.executable, "-m", module, *args], cwd=tmp_path, env=env,
                         check=True, capture_output=True, text=True).stdout
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
