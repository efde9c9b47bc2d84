"""Layout rules: core is pure computation and never imports the app; the wheel lists every package."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN_IN_CORE = {"panel", "param", "bokeh", "holoviews", "microrelease.app", "app"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                names.add("." * node.level + (node.module or ""))
            else:
                names.add(node.module or "")
    return names


def test_core_imports_no_ui_library_and_not_the_app():
    offenders = {}
    for path in (ROOT / "core").rglob("*.py"):
        bad = {m for m in imported_modules(path) if m.split(".")[0] in FORBIDDEN_IN_CORE or m.startswith("microrelease.app")}
        if bad:
            offenders[str(path.relative_to(ROOT))] = bad
    assert not offenders


def test_no_relative_or_bare_folder_imports():
    offenders = {}
    for folder in ("core", "app", "tests", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            bad = {m for m in imported_modules(path) if m.startswith(".") or m.split(".")[0] in {"core", "app"}}
            if bad:
                offenders[str(path.relative_to(ROOT))] = bad
    assert not offenders


def test_importing_core_loads_no_ui_library():
    code = "import sys, microrelease.core; print(sorted(m for m in ('panel','param','bokeh','holoviews') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_every_package_folder_is_listed_for_the_wheel():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    mapping = config["package-dir"]
    found = set()
    for package, folder in mapping.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            found.add(".".join([package, *rel.parts]) if rel.parts else package)
    assert found == listed
