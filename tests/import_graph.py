"""The graph of module-level imports among the modules of microrelease.core and microrelease.app
(an ``import`` inside a function or under ``if TYPE_CHECKING:`` is not an edge)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"microrelease.core": ROOT / "core", "microrelease.app": ROOT / "app"}


def modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _all_imports(tree: ast.Module):
    """Every import statement, in a function or not (what the graph would be with none deferred)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def _top_level_imports(tree: ast.Module):
    """Import statements run when the module is imported: not in a function, not under TYPE_CHECKING."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _type_checking(node.test):
                todo.extend(node.body)
            todo.extend(node.orelse)
        elif isinstance(node, ast.Try):
            todo.extend(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                todo.extend(handler.body)
        elif isinstance(node, ast.With):
            todo.extend(node.body)
        # a def or class body: run later (class bodies run at import, but we keep no imports there)
        elif isinstance(node, ast.ClassDef):
            todo.extend(node.body)


def function_level_imports() -> list[tuple[str, int, str]]:
    """(module, line, source) of every import inside a function of core and app."""
    found = []
    for name, path in modules().items():
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Import | ast.ImportFrom):
                        found.append((name, inner.lineno, lines[inner.lineno - 1].strip()))
    return sorted(set(found))


def graph(every_import: bool = False) -> nx.DiGraph:
    known = modules()
    g = nx.DiGraph()
    g.add_nodes_from(known)
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in (_all_imports if every_import else _top_level_imports)(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")
                    up = up[: len(up) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for target in targets:
                # the module itself, else the package it names (importing a package runs its __init__)
                while target and target not in known:
                    target = target.rpartition(".")[0]
                # a module's own packages are imported before it: no edge
                if target and target != name and not name.startswith(target + "."):
                    g.add_edge(name, target)
                    # importing a.b.c runs a/__init__ and a/b/__init__ first
                    parent = target.rpartition(".")[0]
                    while parent in known and parent != name and not name.startswith(parent + "."):
                        g.add_edge(name, parent)
                        parent = parent.rpartition(".")[0]
    return g


def cycles(limit: int = 50) -> list[list[str]]:
    """The strongly connected components of more than one module, each as one cycle through it."""
    g = graph()
    found = []
    for component in nx.strongly_connected_components(g):
        if len(component) > 1:
            sub = g.subgraph(component)
            found.append(sorted(component))
            found[-1] = nx.find_cycle(sub, source=sorted(component)[0])
    return found[:limit]


if __name__ == "__main__":
    import sys

    g = graph(every_import="--all" in sys.argv)
    for component in sorted(nx.strongly_connected_components(g), key=len, reverse=True):
        if len(component) > 1:
            print(len(component), sorted(component))
            print("   cycle:", [a for a, _ in nx.find_cycle(g.subgraph(component))])
    print("function-level imports:", len(function_level_imports()))
