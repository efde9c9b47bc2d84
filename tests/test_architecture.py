"""Layout rules: core is pure computation and never imports the app; views only bind widgets to
state (no core writer, no thread); docs/architecture.md's Layout names every folder and core module; the
wheel lists every package."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from docs_text import page, section

ROOT = Path(__file__).resolve().parents[1]


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
    return sorted(p for p in (ROOT / "app").rglob("*.py") if p.stem.endswith("_view") or p.parent.name == "views")


def test_views_call_no_core_writer_and_start_no_thread():
    writers = core_writers()
    assert "microrelease.core.lattice.node_release.write_release" in writers  # the scan sees the writers
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


def readme_section(heading: str) -> str:
    """docs/architecture.md's text under ``heading`` (a ``## `` or ``### `` line), up to the next heading of
    that level or above (the README's Layout and glossary moved there)."""
    return section(page("architecture.md"), heading)


def bullets(text: str) -> list[tuple[int, str]]:
    """Each ``- `` bullet of ``text`` as (indent, its own lines up to the next bullet of any level)."""
    found: list[tuple[int, list[str]]] = []
    for line in text.splitlines():
        if line.lstrip().startswith("- "):
            found.append((len(line) - len(line.lstrip()), [line]))
        elif found and line.strip():
            found[-1][1].append(line)
    return [(indent, "\n".join(lines)) for indent, lines in found]


def folder_bullets(text: str, parent: str) -> dict[str, str]:
    """Under the bullet that opens with `parent/`: each sub-bullet that opens with `name/`, by name, with
    its nested bullets' text; and the parent's own text under ``""``."""
    items, out = bullets(text), {}
    start = next(i for i, (_, t) in enumerate(items) if t.lstrip().startswith(f"- `{parent}/`"))
    indent = items[start][0]
    out[""] = items[start][1]
    current = None
    for level, t in items[start + 1:]:
        if level <= indent:
            break
        opening = t.lstrip().removeprefix("- ")
        if level == min(lv for lv, _ in items[start + 1:] if lv > indent) and opening.startswith("`") \
                and "/`" in opening.split()[0]:
            current = opening[1:opening.index("/`")]
            out[current] = t
        elif current is not None:
            out[current] += "\n" + t
    return out


def test_readme_layout_names_every_folder_and_each_core_module_in_its_folder_bullet():
    layout = readme_section("## Layout")
    missing = []
    for top in ("core", "app"):
        for init in (ROOT / top).rglob("__init__.py"):
            folder = init.parent
            if folder != ROOT / top and f"{folder.name}/" not in layout:
                missing.append(str(folder.relative_to(ROOT)) + "/")
    by_folder = folder_bullets(layout, "core")
    assert {"data", "lattice", "models", "micro", "dp"} <= set(by_folder)  # the parse sees the folder bullets
    for path in (ROOT / "core").rglob("*.py"):
        if path.stem == "__init__":
            continue
        parts = path.relative_to(ROOT / "core").parts
        folder = parts[0] if len(parts) > 1 else ""  # a module at core's top is named in core's own bullet
        if f"`{path.stem}`" not in by_folder.get(folder, ""):
            missing.append(str(path.relative_to(ROOT)))
    assert not missing, f"docs/architecture.md's Layout does not name (in its folder's bullet): {missing}"


def test_readme_folder_bullets_are_read_per_folder():
    text = "- `core/`: `a`\n  - `x/`: `m`,\n    `n`\n    - `deep`\n  - `y/`: `o`\n- `app/`: `p`\n"
    assert folder_bullets(text, "core") == {"": "- `core/`: `a`", "x": "  - `x/`: `m`,\n    `n`\n    - `deep`",
                                            "y": "  - `y/`: `o`"}


# --- the glossary: one word, one meaning -----------------------------------------------------------------

OLD_NAMES = ("linkage_attack", "t_closeness_route", "TClosenessRelease")


def core_modules() -> list[str]:
    names = []
    for path in sorted((ROOT / "core").rglob("*.py")):
        module = ".".join(("microrelease", "core", *path.relative_to(ROOT / "core").with_suffix("").parts))
        names.append(module.removesuffix(".__init__"))
    return names


def core_names() -> tuple[set[str], set[str]]:
    """(every class, function, method and module-level name defined in core; every key of a core
    registry, an upper-case module-level dict)."""
    defined, keys = set(), set()
    for path in (ROOT / "core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.add(node.name)
    for module in core_modules():
        for name, value in vars(importlib.import_module(module)).items():
            defined.add(name)
            if name.isupper() and isinstance(value, dict):
                keys.update(k for k in value if isinstance(k, str))
    return defined, keys


def resolves_in_core(name: str, defined: set[str], keys: set[str]) -> bool:
    if name.startswith("microrelease."):
        try:
            importlib.import_module(name)
        except ImportError:
            return False
        return True
    if "." in name:  # Class.attribute: the class is core's, the attribute one of its fields or members
        owner, attribute = name.split(".", 1)
        for module in core_modules():
            cls = getattr(importlib.import_module(module), owner, None)
            if cls is not None and (hasattr(cls, attribute) or attribute in getattr(cls, "__dataclass_fields__", {})):
                return True
        return False
    return name in defined or name in keys


def test_every_code_name_of_the_glossary_exists_in_core():
    glossary = readme_section("### One word, one meaning")
    quoted = set(re.findall(r"`([^`\s]+)`", glossary))
    assert {"record_linkage", "subsequence_attack", "SensitiveFrequency", "laplace", "record-noise"} <= quoted
    defined, keys = core_names()
    assert not resolves_in_core("linkage_attack", defined, keys)  # the lookup can say no
    assert not sorted(name for name in quoted if not resolves_in_core(name, defined, keys))


def test_the_old_names_are_gone_from_core_and_app():
    from microrelease.core.dp.mechanisms import MECHANISMS
    from microrelease.core.dp.microdata import DP_METHODS

    assert "laplace" in MECHANISMS and "laplace" not in DP_METHODS  # laplace is a noise, never a method
    laplace_method = re.compile(r"""method\s*=\s*["']laplace["']""")
    offenders = []
    for folder in ("core", "app"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            offenders += [f"{path.relative_to(ROOT)}: {old}" for old in OLD_NAMES if old in text]
            offenders += [f"{path.relative_to(ROOT)}: method laplace" for _ in laplace_method.findall(text)]
    assert not offenders


# --- state modules: param only, no UI library, no colours, no HTML -------------------------------------------

UI_LIBRARIES = {"panel", "holoviews", "bokeh"}
COLOUR = re.compile(r"#[0-9a-fA-F]{6}\b")
HTML_TAG = re.compile(r"</?(?:a|b|i|u|p|br|hr|em|strong|span|div|code|pre|small|sub|sup|font|img|svg|style|ul|ol|li"
                      r"|table|thead|tbody|tr|td|th|h[1-6])(?:\s[^<>]*)?/?>", re.IGNORECASE)


def state_modules() -> list[Path]:
    """The tabs' and the explorer's state, and every other app module that says it is param only or free
    of UI libraries."""
    found = {ROOT / "app" / "explorer" / "explorer.py", *(ROOT / "app" / "tabs").glob("*/*_state.py")}
    for path in (ROOT / "app").rglob("*.py"):
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        if "param only" in doc.split("\n\n")[0] or "no UI library" in doc.split("\n\n")[0]:
            found.add(path)
    return sorted(found)


def ui_leaks(path: Path) -> set[str]:
    text = path.read_text()
    leaks = {m for m in imported_modules(path) if m.split(".")[0] in UI_LIBRARIES}
    return leaks | set(COLOUR.findall(text)) | set(HTML_TAG.findall(text))


def test_state_modules_import_no_ui_library_and_hold_no_colour_or_html(tmp_path):
    modules = state_modules()
    assert len([p for p in modules if p.name.endswith("_state.py")]) >= 9 and ROOT / "app" / "downloads.py" in modules
    offenders = {str(p.relative_to(ROOT)): leaks for p in modules if (leaks := ui_leaks(p))}
    assert not offenders
    sample = tmp_path / "state.py"  # the scan sees each kind of leak
    sample.write_text('import holoviews as hv\nfrom panel import pane\nC = "#1f77B4"\nT = "<b>x</b>"\nD = "<name>/"\n')
    assert ui_leaks(sample) == {"holoviews", "panel", "#1f77B4", "<b>", "</b>"}


# core never imports the app nor a UI library: the contracts of .importlinter (tests/test_import_contracts.py)


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


def test_every_public_exception_and_warning_of_core_is_defined_in_core_exceptions():
    """One place for what core raises or warns (a reader and a front end find them all there); private
    control-flow exceptions (a leading underscore) stay beside the code that catches them."""
    import importlib
    import inspect
    import pkgutil

    import microrelease.core as core

    elsewhere = []
    for info in pkgutil.walk_packages(core.__path__, "microrelease.core."):
        module = importlib.import_module(info.name)
        elsewhere += [f"{info.name}.{name}" for name, obj in vars(module).items()
                      if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == info.name
                      and not name.startswith("_") and info.name != "microrelease.core.exceptions"]
    assert not elsewhere, elsewhere


def test_no_two_modules_share_a_name():
    """A module's name says which one it is: no two modules of core and app share a file name, so a
    traceback, a search or a reader's "profile.py" is never ambiguous."""
    seen: dict[str, list[str]] = {}
    for path in [*(ROOT / "core").rglob("*.py"), *(ROOT / "app").rglob("*.py")]:
        if path.name != "__init__.py":
            seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}


def test_no_package_exports_a_name_its_submodule_also_has():
    """``microrelease.core.dp.dp_release`` must be one thing: the function, not now and then the module
    (an exported name that equals a submodule's is shadowed by the import system and confuses readers
    and the API reference alike)."""
    import importlib
    import pkgutil

    import microrelease.core

    packages = [microrelease.core, *(importlib.import_module(m.name) for m in
                                     pkgutil.walk_packages(microrelease.core.__path__, "microrelease.core.") if m.ispkg)]
    clashes = {p.__name__: sorted({s.name for s in pkgutil.iter_modules(p.__path__)} & set(getattr(p, "__all__", ())))
               for p in packages}
    assert len(packages) > 10 and {name: c for name, c in clashes.items() if c} == {}


def test_each_lazy_package_names_the_module_of_every_exported_name_and_no_other():
    """A subpackage loading its names on first use (microrelease.core.lazy_exports) keeps its table of
    modules and its ``__all__`` as one list: a name in one and not the other would be unreachable or
    undocumented."""
    import importlib

    lazy = []
    for init in sorted((ROOT / "core").rglob("__init__.py")):
        if "lazy_exports(__name__, _MODULES)" in init.read_text():
            package = importlib.import_module("microrelease." + ".".join(init.parent.relative_to(ROOT).parts))
            listed = [name for names in package._MODULES.values() for name in names]
            assert sorted(listed) == sorted(package.__all__) and len(set(listed)) == len(listed), package.__name__
            assert all(getattr(package, name) is not None for name in package.__all__)
            lazy.append(package.__name__)
    assert len(lazy) >= 6
