"""No import circle inside sentinel/: every module's imports, at module level and inside functions, form a graph
without a cycle. A function-level import breaks a circle at run time but not in the design: two modules that need
each other are one module, or a third one is missing.

An edge goes from a module to the module it names (`from sentinel.memory.cards import index` names
sentinel.memory.cards.index, `from sentinel.memory.store import StoreError` names the package sentinel.memory.store);
importing a submodule also runs its parent packages, but a parent is not counted as imported, so a package's lazy
facade (sentinel.memory's `search`, `show`) does not make a circle with the modules it forwards to.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "sentinel"


def module_files(package: Path) -> dict[str, Path]:
    out = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imported_modules(name: str, path: Path, modules: dict[str, Path], top: str) -> set[str]:
    """The modules of the package that `name` imports anywhere in its body."""
    is_package = path.name == "__init__.py"
    named: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            named += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            named += [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names]
    out = set()
    for target in named:
        if target != top and not target.startswith(top + "."):
            continue
        while target not in modules and "." in target:
            target = target.rsplit(".", 1)[0]
        if target in modules and target != name:
            out.add(target)
    return out


def import_graph(package: Path) -> dict[str, set[str]]:
    modules = module_files(package)
    return {name: imported_modules(name, path, modules, package.name) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle per strongly connected component of more than one module (Tarjan, iteratively), as a path
    that starts and ends at the same module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        comp.append(member)
                        if member == node:
                            break
                    if len(comp) > 1:
                        components.append(set(comp))
    return [_circle(graph, comp) for comp in components]


def _circle(graph: dict[str, set[str]], comp: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, inside the component."""
    start = min(comp)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & comp):
            if nxt == start:
                return paths[node] + [start]
            if nxt not in paths:
                paths[nxt] = paths[node] + [nxt]
                queue.append(nxt)
    return sorted(comp)


def test_sentinel_has_no_import_cycle():
    found = cycles(import_graph(PACKAGE))
    assert not found, "import circles inside sentinel/:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_memory_layout_is_the_flow():
    """memory's parts depend one way: cards <- learn, retrieval <- hypotheses; the store is reached by learn and
    the hypotheses only; nothing in memory imports the checks, the engine or the reporters."""
    graph = import_graph(PACKAGE)
    allowed = {
        "sentinel.memory.cards": {"sentinel.memory.cards", "sentinel.memory.learn"},
        "sentinel.memory.retrieval": {"sentinel.memory.cards", "sentinel.memory.retrieval",
                                      "sentinel.memory.hypotheses"},
        "sentinel.memory.store": {"sentinel.memory.store", "sentinel.memory.hypotheses"},
    }
    wrong = []
    for name, targets in graph.items():
        if not name.startswith("sentinel.memory"):
            continue
        for target in targets:
            if target.startswith(("sentinel.checks", "sentinel.engine", "sentinel.report")):
                wrong.append(f"{name} -> {target}")
            for part, ok in allowed.items():
                if name.startswith(part + ".") and target.startswith("sentinel.memory.") \
                        and not target.startswith(tuple(ok)):
                    wrong.append(f"{name} -> {target}")
    assert not wrong, "memory imports against its flow:\n" + "\n".join(sorted(wrong))


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / "pkg" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path / "pkg"


def test_a_circle_through_a_function_level_import_is_found(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from pkg.b import thing\n",
        "b.py": "def thing():\n    from pkg import a\n    return a\n",
        "c.py": "import pkg.a\n",
    })
    assert cycles(import_graph(pkg)) == [["pkg.a", "pkg.b", "pkg.a"]]


@pytest.mark.parametrize("files", [
    {"__init__.py": "def api():\n    from pkg.sub.x import f\n    return f\n", "sub/__init__.py": "",
     "sub/x.py": "from pkg.sub import y\n", "sub/y.py": "import os\n"},  # a facade is not a circle
    {"__init__.py": "", "a.py": "import json\nfrom os import path\n", "b.py": "from .a import path\n"},
])
def test_no_circle_where_there_is_none(tmp_path, files):
    assert cycles(import_graph(_package(tmp_path, files))) == []


def test_relative_and_package_imports_are_followed(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "sub/__init__.py": "from ..top import X\n",
        "top.py": "from pkg import sub\nX = 1\n",
    })
    assert cycles(import_graph(pkg)) == [["pkg.sub", "pkg.top", "pkg.sub"]]
