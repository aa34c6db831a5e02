"""No import cycles among our packages (engine, protocol, server, clients).

The graph is built with `ast` from every module's imports — module-level, inside functions
and under ``if TYPE_CHECKING:`` alike, and ``importlib.import_module("name", package)`` calls
with constant arguments — so a cycle hidden behind a type-only, a deferred or a dynamic import
fails this test too. An edge goes to the imported module itself (``from a import b``
goes to ``a.b`` when that is a module, else to ``a``); a package's ``__init__`` is its own
node.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "protocol", "server", "clients")


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _dynamic_import(call: ast.Call, package: str) -> str | None:
    """The module an ``import_module("x", __package__)`` call imports, when it can be read."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name != "import_module" or not call.args:
        return None
    first = call.args[0]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None
    target = first.value
    if not target.startswith("."):
        return target
    level = len(target) - len(target.lstrip("."))
    anchor = package.split(".")
    anchor = anchor[: len(anchor) - (level - 1)]
    rest = target.lstrip(".")
    return ".".join([*anchor, rest] if rest else anchor)


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        package = mod if is_pkg else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Call) and (dynamic := _dynamic_import(node, package)):
                targets = [dynamic]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                    for a in node.names
                ]
            for target in targets:
                dep = _resolve(target, modules)
                if dep is not None and dep != mod:
                    graph[mod].add(dep)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state and (found := visit(dep)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_the_graph_sees_our_imports() -> None:
    graph = import_graph()
    assert "server.races.service" in graph["server.services"]
    assert "protocol.races" in graph["server.races.model"]
    assert "engine" in graph["server.races.service"]


def test_a_dynamic_import_is_an_edge() -> None:
    call = ast.parse('importlib.import_module(".solvers.cli", __package__)').body[0]
    assert isinstance(call, ast.Expr) and isinstance(call.value, ast.Call)
    assert _dynamic_import(call.value, "engine") == "engine.solvers.cli"
    plain = ast.parse('import_module("server.app")').body[0]
    assert isinstance(plain, ast.Expr) and isinstance(plain.value, ast.Call)
    assert _dynamic_import(plain.value, "x") == "server.app"
    # the engine's command line reaches the solver's, which no longer reaches back
    graph = import_graph()
    assert "engine.solvers.cli" in graph["engine.cli"]
    assert "engine.cli" not in graph["engine.solvers.cli"]


def test_a_cycle_is_found() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])
