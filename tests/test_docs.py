"""The documentation: a README that is a README (short, linking only to pages that exist), a site that
mkdocs builds with --strict and no warning, and every Python block of its pages run by a test or marked
as not run."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs_text import DOCS, NOT_RUN, ROOT, RUN_BY, page, pages, python_blocks, readme, section

MKDOCS = Path(sys.executable).parent / "mkdocs"


def test_the_readme_is_at_most_150_lines():
    assert len(readme().splitlines()) <= 150


def test_the_readme_links_only_to_docs_pages_that_exist():
    links = re.findall(r"\]\(([^)\s]+)\)", readme())
    assert len(links) >= 10  # the parse sees the links
    missing = []
    for link in links:
        if re.match(r"[a-z]+://", link):
            continue  # no external link is checked here; the README has none
        target = link.split("#")[0]
        assert target.startswith("docs/") and target.endswith(".md"), f"the README links outside docs/: {link}"
        if not (ROOT / target).is_file():
            missing.append(link)
    assert not missing


def test_every_docs_page_is_in_the_nav():
    import yaml

    class Loader(yaml.SafeLoader):  # mkdocs.yml may hold !!python tags: read it without them
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)["nav"]

    def files(item):
        if isinstance(item, str):
            yield item
        elif isinstance(item, list):
            for x in item:
                yield from files(x)
        elif isinstance(item, dict):
            for x in item.values():
                yield from files(x)

    listed = set(files(nav))
    assert {str(p.relative_to(DOCS)) for p in pages()} == listed


def test_mkdocs_builds_the_site_strictly_without_a_warning(tmp_path):
    if not MKDOCS.exists():
        pytest.fail(f"mkdocs is not installed beside {sys.executable}: pip install '.[test]' (or '.[docs]')")
    done = subprocess.run([str(MKDOCS), "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=ROOT,
                          capture_output=True, text=True, env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"})
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "WARNING" not in output and "ERROR" not in output, output
    import importlib

    roles = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):")  # Sphinx markup mkdocstrings shows raw
    shown = {str(p.relative_to(tmp_path)): roles.findall(p.read_text()) for p in (tmp_path / "site").rglob("*.html")}
    assert {name: found for name, found in shown.items() if found} == {}
    for built in (tmp_path / "site" / "reference").glob("*/index.html"):  # every exported name documented
        module = re.search(r"^::: (\S+)", page(f"reference/{built.parent.name}.md"), re.M).group(1)
        exported = getattr(importlib.import_module(module), "__all__", [])
        html = built.read_text()
        assert [n for n in exported if f'id="{module}.{n}"' not in html] == [], module


def test_the_reference_pages_list_every_exported_name_of_their_package():
    import importlib
    import pkgutil

    import microrelease.core

    exporting = ["core", "hierarchies"] + [m.name for m in pkgutil.iter_modules(microrelease.core.__path__)
                                           if m.ispkg and hasattr(importlib.import_module(f"microrelease.core.{m.name}"),
                                                                  "__all__")]
    assert {"dp", "engines", "release", "search", "risk", "sequential", "lattice"} <= set(exporting)
    for name in exporting:
        text = page(f"reference/{name}.md")
        module = re.search(r"^::: (\S+)", text, re.M).group(1)
        listed = re.findall(r"^\s+- (\w+)$", text, re.M)
        assert listed == list(importlib.import_module(module).__all__), name


def test_every_python_block_of_the_docs_is_run_by_a_test_or_marked_not_run():
    seen, unmarked, wrong = 0, [], []
    for path in pages():
        name = str(path.relative_to(DOCS))
        for before, code in python_blocks(path.read_text()):
            seen += 1
            ast.parse(code)  # every block is Python, run or not
            if before.strip() == NOT_RUN:
                continue
            marker = RUN_BY.fullmatch(before.strip())
            if marker is None:
                unmarked.append(f"{name}: {code.splitlines()[0]}")
                continue
            test_file, test_name = marker.groups()
            source = (ROOT / test_file).read_text() if (ROOT / test_file).is_file() else ""
            # the named test exists, and its file reads this page
            if f"def {test_name}(" not in source or f"\"{name}\"" not in source:
                wrong.append(f"{name}: {before.strip()}")
    assert seen >= 5  # the parse sees the blocks
    assert not unmarked, f"mark each block '<!-- run by tests/FILE.py::TEST -->' or '{NOT_RUN}': {unmarked}"
    assert not wrong


def test_the_index_python_example_is_the_readmes():
    """The README's first Python example (run by tests/test_readme.py) is the one getting started shows."""
    readme_block = re.search(r"## Python API\n\n```python\n(.*?)```", readme(), re.S).group(1)
    index_blocks = [code for _, code in python_blocks(section(page("index.md"), "## Python API"))]
    assert index_blocks == [readme_block]


def test_the_docs_give_the_two_commands_exactly_as_the_readme():
    commands = re.findall(r"```bash\n(# [12]\. .*?)```", readme(), re.S)
    assert len(commands) == 2
    index = page("index.md")
    assert all(c in index for c in commands)


def test_each_definition_of_samarati_s_paper_names_a_module_and_a_name_it_holds():
    import importlib

    text = page("explanation/samarati-lattice.md").split("### Where each definition of the paper lives")[1]
    rows = re.findall(r"^\| [^|]+ \| [^|]+ \| `(core/[\w/]+)\.py` \| `(\w+)` \|$", text, re.M)
    assert len(rows) == 10
    for path, name in rows:
        module = importlib.import_module("microrelease." + path.replace("/", "."))
        assert hasattr(module, name), (path, name)
