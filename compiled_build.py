"""The compiled build, kept outside the source tree so that no library can shadow a source.

`make` compiles setup.py's COMPILED_MODULES with mypyc into a directory of the virtualenv
(``.venv/compiled``: ``setup.py build_ext --build-lib``), never next to the sources, and then
runs ``python compiled_build.py activate .venv/compiled``, which

* copies this module into that directory and writes ``compiled.json`` there: each compiled
  module's name, its library and the absolute path of its source;
* writes ``solitaire-compiled.pth`` into the virtualenv's site-packages: at every start of
  the virtualenv's interpreter it calls `install` on that directory.

`install` puts a finder first on ``sys.meta_path`` that loads exactly the listed modules from
their libraries; every other module (and every listed one when the finder is not installed)
comes from its source as usual. The finder is not installed when

* ``SOLITAIRE_PURE_PYTHON`` is set (``make test-pure``, ``make coverage``): pure Python; or
* a listed source is newer than the compiled code (edited since ``make``): it runs as Python
  then, with a warning, instead of running old code. ``tests/engine/test_compiled.py`` fails
  in that case, so ``make test`` (which rebuilds first) never passes on a stale build.

A wheel (``pip wheel .``, the Docker image) needs none of this: there the libraries are
installed in place of the sources. ``python compiled_build.py deactivate .venv/compiled``
removes the ``.pth`` file and the directory.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import sysconfig
import warnings
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

MANIFEST = "compiled.json"
PTH = "solitaire-compiled.pth"
#: The name mypyc gives the library holding the code of every compiled module (setup.py's
#: group_name + "__mypyc"); each module's own library only points into it.
GROUP = "solitaire_compiled__mypyc"


class CompiledFinder(MetaPathFinder):
    """Finds the listed modules in the compiled build (module name -> library path)."""

    def __init__(self, libraries: dict[str, Path]) -> None:
        self.libraries = libraries

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        library = self.libraries.get(fullname)
        if library is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(library))
        return importlib.util.spec_from_file_location(fullname, library, loader=loader)


def stale_sources(directory: Path) -> list[str]:
    """The listed sources newer than the compiled code (its group library), or every source
    when there is no library: a build that must not run."""
    manifest = json.loads((directory / MANIFEST).read_text())
    group = [p for p in directory.glob(f"{GROUP}.*") if p.suffix in (".so", ".pyd")]
    if not group:
        return [str(s) for s in manifest["sources"].values()]
    built = group[0].stat().st_mtime
    return [
        source
        for source in manifest["sources"].values()
        if not Path(source).exists() or Path(source).stat().st_mtime > built
    ]


def install(directory: str | Path) -> bool:
    """Load the compiled modules of `directory` from now on (see the module docstring); False
    when the build is not used (pure Python asked for, or older than a source)."""
    if os.environ.get("SOLITAIRE_PURE_PYTHON"):
        return False
    directory = Path(directory)
    try:
        stale = stale_sources(directory)
        manifest = json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    if stale:
        warnings.warn(
            f"the compiled build in {directory} is older than {stale[0]}: running the Python "
            "source instead (`make` rebuilds it)",
            RuntimeWarning,
            stacklevel=2,
        )
        return False
    if any(isinstance(f, CompiledFinder) for f in sys.meta_path):
        return True
    libraries = {name: directory / lib for name, lib in manifest["libraries"].items()}
    # The group library is found by the finder too, not through `sys.path`: the directory on
    # the path would make its `engine/` and `protocol/` folders (libraries, no `__init__.py`)
    # empty namespace packages for any process not started in the source tree, ahead of the
    # editable install's finder (`solitaire-server` run elsewhere: "cannot import name ...").
    group = [p for p in directory.glob(f"{GROUP}.*") if p.suffix in (".so", ".pyd")]
    libraries[GROUP] = group[0]
    if str(directory) in sys.path:
        sys.path.remove(str(directory))
    sys.meta_path.insert(0, CompiledFinder(libraries))
    return True


def _library_of(directory: Path, source: str) -> Path:
    stem = Path(source).with_suffix("")
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    for suffix in suffixes:
        candidate = directory / (str(stem) + suffix)
        if candidate.exists():
            return candidate
    raise SystemExit(f"no library for {source} in {directory}: did the build fail?")


def compiled_modules(root: Path) -> list[str]:
    """setup.py's COMPILED_MODULES, read without running setup.py."""
    tree = ast.parse((root / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "COMPILED_MODULES" for t in node.targets
        ):
            return [str(v) for v in ast.literal_eval(node.value)]
    raise SystemExit("setup.py has no COMPILED_MODULES")


def write_manifest(directory: Path, root: Path) -> None:
    """List the build's libraries and their sources in `directory` (`compiled.json`) and copy
    this module there (the `.pth` file imports it from there)."""
    libraries = {}
    sources = {}
    for source in compiled_modules(root):
        name = source.removesuffix(".py").replace("/", ".")
        libraries[name] = str(_library_of(directory, source).relative_to(directory))
        sources[name] = str((root / source).resolve())
    manifest = {"libraries": libraries, "sources": sources}
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    shutil.copy(Path(__file__), directory / "solitaire_compiled_build.py")


def activate(directory: Path, root: Path) -> None:
    """Write the manifest and the `.pth` file of a build in `directory` (see the docstring)."""
    write_manifest(directory, root)
    # The directory is on `sys.path` only while this module is imported from it (`install`
    # takes it off again: see there).
    line = (
        f"import sys; sys.path.append({str(directory)!r}); "
        f"import solitaire_compiled_build; solitaire_compiled_build.install({str(directory)!r}); "
        f"{str(directory)!r} in sys.path and sys.path.remove({str(directory)!r})"
    )
    (Path(sysconfig.get_path("purelib")) / PTH).write_text(line + "\n")


def deactivate(directory: Path) -> None:
    (Path(sysconfig.get_path("purelib")) / PTH).unlink(missing_ok=True)
    shutil.rmtree(directory, ignore_errors=True)


def main(argv: Sequence[str]) -> None:
    if len(argv) != 2 or argv[0] not in ("activate", "deactivate"):
        raise SystemExit("usage: python compiled_build.py activate|deactivate DIRECTORY")
    directory = Path(argv[1]).resolve()
    if argv[0] == "activate":
        if os.environ.get("SOLITAIRE_PURE_PYTHON"):
            print("SOLITAIRE_PURE_PYTHON is set: nothing was compiled, nothing to activate")
            return
        activate(directory, Path(__file__).resolve().parent)
    else:
        deactivate(directory)


if __name__ == "__main__":
    main(sys.argv[1:])
