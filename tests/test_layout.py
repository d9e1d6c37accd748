"""The tree shows the architecture (issue 18): a package per job, imports that flow one way."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parent.parent / "dptool"

# what each part may import of dptool besides itself (the `__init__` docstrings say the same in words)
ALLOWED = {
    "errors": set(),
    "sql": {"errors"},
    "outdir": {"errors", "__init__"},
    "files": {"errors"},
    "progress": set(),
    "answers": {"errors"},
    "bundle": {"errors"},
    "project": {"errors", "sql", "__init__"},
    "llm": {"errors"},
    "demo": {"errors"},
    "generate": {"project", "llm", "answers", "bundle", "sql", "outdir", "progress", "errors", "__init__"},
    "dp": {"project", "llm", "sql", "outdir", "errors"},
    "evaluate": {"answers", "bundle", "llm", "generate", "project", "sql", "outdir", "files", "errors"},
    "cli": {"project", "generate", "evaluate", "llm", "dp", "demo", "sql", "outdir", "progress", "answers", "bundle",
            "errors", "__init__"},
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        if "dbt_package" in path.parts:
            continue
        name = ".".join(("dptool", *path.relative_to(PACKAGE).with_suffix("").parts))
        found[name.removesuffix(".__init__")] = path
    return found


def _imports(modules: dict[str, Path]) -> nx.DiGraph:
    graph = nx.DiGraph()
    for name, path in modules.items():
        graph.add_node(name)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("dptool"):
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                           for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("dptool")]
            for target in targets:
                if target != name and not name.startswith(target + "."):  # a package's own __init__ is no edge
                    graph.add_edge(name, target)
    return graph


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_at_most_six_modules_directly_in_dptool():
    direct = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(direct) <= 6, direct


def test_no_import_cycles_between_modules_or_packages():
    graph = _imports(_modules())
    assert list(nx.simple_cycles(graph)) == []
    parts = nx.DiGraph((_part(a), _part(b)) for a, b in graph.edges if _part(a) != _part(b))
    assert list(nx.simple_cycles(parts)) == []


def test_each_part_imports_only_what_its_docstring_allows():
    graph = _imports(_modules())
    wrong = sorted(f"{a} imports {b}" for a, b in graph.edges
                   if _part(a) != _part(b) and _part(b) not in ALLOWED.get(_part(a), set()))
    assert wrong == []


def test_every_package_says_what_it_holds_and_may_import():
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "import" in doc.lower(), f"{init}: the docstring says what the package may import"
