"""The code that runs is the compiled code `setup.py` builds (the engine's rule modules and the
protocol's codec), current with its source and outside the source tree (`compiled_build`), and
it behaves exactly as the pure-Python source."""

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

import compiled_build
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


def test_no_library_is_in_the_source_tree() -> None:
    """The compiled build lives outside the tree (`compiled_build`): a library next to its
    source, an older build's or one of a module dropped from the list, would shadow the source
    for good. In the compiled build every listed module comes from outside the tree."""
    found = [
        str(p.relative_to(ROOT))
        for pattern in ("engine/**/*.so", "protocol/**/*.so", "*.so", "engine/**/*.pyd")
        for p in ROOT.glob(pattern)
    ]
    assert found == []
    for source in compiled_sources():
        module = sys.modules.get(source.removesuffix(".py").replace("/", "."))
        assert module is not None and module.__file__ is not None
        path = Path(module.__file__)
        # outside the sources: elsewhere, or in the venv (which `make` keeps in the tree)
        outside = not path.is_relative_to(ROOT) or path.is_relative_to(sys.prefix)
        assert (path == ROOT / source) if PURE else outside, path


def fake_build(tmp_path: Path, source_age: float) -> Path:
    """A build directory with one listed module: its library (a stand-in) `source_age`
    seconds older than its source (negative: newer)."""
    build = tmp_path / "compiled"
    (build / "pkg").mkdir(parents=True)
    source = tmp_path / "pkg" / "mod.py"
    source.parent.mkdir()
    source.write_text("X = 1\n")
    library = build / "pkg" / "mod.cpython-311-x86_64-linux-gnu.so"
    group = build / f"{compiled_build.GROUP}.cpython-311-x86_64-linux-gnu.so"
    for path in (library, group):
        path.write_bytes(b"")
    manifest = {
        "libraries": {"pkg.mod": str(library.relative_to(build))},
        "sources": {"pkg.mod": str(source)},
    }
    (build / compiled_build.MANIFEST).write_text(json.dumps(manifest))
    built = source.stat().st_mtime - source_age
    os.utime(group, (built, built))
    return build


def test_a_build_older_than_a_source_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SOLITAIRE_PURE_PYTHON", raising=False)
    # a copy of the import system's finders, without the compiled build's (if it runs)
    finders = [f for f in sys.meta_path if not isinstance(f, compiled_build.CompiledFinder)]
    monkeypatch.setattr(sys, "meta_path", finders)
    monkeypatch.setattr(sys, "path", list(sys.path))
    stale = fake_build(tmp_path / "stale", 5.0)
    with pytest.warns(RuntimeWarning, match="older than"):
        assert compiled_build.install(stale) is False
    assert compiled_build.stale_sources(stale) == [str(tmp_path / "stale" / "pkg" / "mod.py")]
    assert not any(isinstance(f, compiled_build.CompiledFinder) for f in sys.meta_path)
    monkeypatch.setenv("SOLITAIRE_PURE_PYTHON", "1")  # pure asked for: even a fresh build
    fresh = fake_build(tmp_path / "fresh", -5.0)
    assert compiled_build.install(fresh) is False
    monkeypatch.delenv("SOLITAIRE_PURE_PYTHON")
    sys.meta_path[:] = [
        f for f in sys.meta_path if not isinstance(f, compiled_build.CompiledFinder)
    ]
    assert compiled_build.install(fresh) is True
    finder = sys.meta_path[0]
    assert isinstance(finder, compiled_build.CompiledFinder)
    spec = finder.find_spec("pkg.mod", None)
    assert spec is not None and spec.origin == str(
        fresh / "pkg" / "mod.cpython-311-x86_64-linux-gnu.so"
    )
    assert finder.find_spec("pkg.other", None) is None  # not listed: found as usual


def test_the_commands_start_outside_the_source_tree(tmp_path: Path) -> None:
    """The README's `make run` starts `solitaire-server` from the venv: a process not started in
    the source tree must import the engine (compiled unless built pure), not an empty namespace
    package made of the build directory's `engine/` folder (the quick start failed so)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    bin_dir = Path(sys.executable).parent
    for command in ("solitaire-server", "solitaire"):
        done = subprocess.run(
            [str(bin_dir / command), "--help"], cwd=tmp_path, env=env, capture_output=True
        )
        assert done.returncode == 0, done.stderr.decode()
        assert b"usage:" in done.stdout
    probe = "import sys, engine; print(engine.COMPILED, any('compiled' in p for p in sys.path))"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, check=True
    ).stdout.split()
    assert out == [str(not PURE).encode(), b"False"]


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
    # SOLITAIRE_PURE_PYTHON: the compiled build's finder (`compiled_build`) stays out
    env = {
        **os.environ,
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}",
        "SOLITAIRE_PURE_PYTHON": "1",
    }
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
