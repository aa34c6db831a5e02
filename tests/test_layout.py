"""The test tree's layout: test modules import helpers, never each other.

Helpers shared by test modules live in ``tests/support`` (or are fixtures in a conftest.py);
a test module (``test_*.py``) or a conftest is never imported, so pytest collects each once
and a fixture is never shared by importing it. Imports are read with `ast`, at any depth
(module level or inside functions), absolute or relative.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def enclosing_test_module(dotted: str) -> str | None:
    """The test module (``tests....test_x`` or ``....conftest``) a dotted name is in, if any."""
    parts = dotted.split(".")
    if parts[0] != "tests":
        return None
    for i, part in enumerate(parts[1:], 2):
        if part.startswith("test_") or part == "conftest":
            return ".".join(parts[:i])
    return None


def imported_test_modules(source: str, module: str) -> set[str]:
    hits = (enclosing_test_module(name) for name in imported_modules(source, module))
    return {hit for hit in hits if hit is not None}


def imported_modules(source: str, module: str) -> set[str]:
    """Every module ``module``'s source imports, including ``from pkg import mod`` as
    ``pkg.mod`` (a name imported from a package may be a submodule)."""
    package = module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.add(name)
            found.update(f"{name}.{alias.name}" for alias in node.names)
    return found


#: Known offenders outside this change's reach (tests/engine is being reworked separately);
#: an entry may only shrink: remove it once the import is gone.
KNOWN: dict[str, set[str]] = {}


def offending_imports() -> dict[str, set[str]]:
    """Test tree module -> the test modules it imports."""
    bad: dict[str, set[str]] = {}
    for path in TESTS.rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        hits = imported_test_modules(path.read_text(), module)
        if hits:
            bad[module] = hits
    return bad


def test_a_test_module_import_is_seen() -> None:
    src = (
        "from tests.server.test_races import start_race\n"
        "from . import conftest\n"
        "def f():\n    import tests.clients.test_cli_server\n"
        "from tests.support.app import serve\n"
    )
    assert imported_test_modules(src, "tests.server.test_x") == {
        "tests.server.test_races",
        "tests.server.conftest",
        "tests.clients.test_cli_server",
    }
    assert imported_test_modules("from tests.support import app\n", "tests.test_x") == set()


def test_no_test_module_imports_another() -> None:
    bad = {module: hits - KNOWN.get(module, set()) for module, hits in offending_imports().items()}
    assert {m: h for m, h in bad.items() if h} == {}, "move shared helpers to tests/support"
