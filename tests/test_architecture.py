"""Layout rules: core is pure computation and never imports the app; views only bind widgets to
state (no core writer, no thread); the README's Layout names every folder and core module; the
wheel lists every package."""

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


def imported_names(path: Path) -> set[str]:
    """Every ``module.name`` brought in by ``from module import name`` (and every plain import)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def core_writers() -> set[str]:
    """The functions and specs of core that write to disk: every ``write_*`` and what publishes."""
    found = {"microrelease.core.release"}  # the release path itself, any of its modules
    for path in (ROOT / "core").rglob("*.py"):
        module = "microrelease.core." + ".".join(path.relative_to(ROOT / "core").with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and (
                    node.name.startswith("write_") or node.name.startswith("publish") or node.name.endswith("Release")):
                found.add(f"{module}.{node.name}")
                found.add(f"microrelease.core.{node.name}")  # re-exported at the top
    return found


def view_modules() -> list[Path]:
    return sorted(p for p in (ROOT / "app").rglob("*.py") if p.stem == "view" or p.parent.name == "views")


def test_views_call_no_core_writer_and_start_no_thread():
    writers = core_writers()
    assert "microrelease.core.lattice.release.write_release" in writers  # the scan sees the writers
    views = view_modules()
    assert len(views) >= 8, "every tab has a view module"
    offenders = {}
    for path in views:
        names = imported_names(path)
        bad = {n for n in names if n in writers or n.startswith("microrelease.core.release")}
        bad |= {n for n in names if n.split(".")[0] in ("threading", "concurrent", "multiprocessing")}
        if bad:
            offenders[str(path.relative_to(ROOT))] = bad
    assert not offenders


def test_readme_layout_names_every_folder_and_core_module():
    readme = (ROOT / "README.md").read_text()
    layout = readme[readme.index("## Layout"):]
    layout = layout[:layout.index("\n## ", 1)] if "\n## " in layout[1:] else layout
    missing = []
    for top in ("core", "app"):
        for init in (ROOT / top).rglob("__init__.py"):
            folder = init.parent
            if folder != ROOT / top and f"{folder.name}/" not in layout:
                missing.append(str(folder.relative_to(ROOT)) + "/")
    for path in (ROOT / "core").rglob("*.py"):
        if path.stem != "__init__" and f"`{path.stem}`" not in layout:
            missing.append(str(path.relative_to(ROOT)))
    assert not missing, f"README's Layout does not name: {missing}"


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
