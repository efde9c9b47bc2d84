"""The import contracts (.importlinter: core never imports the app nor a UI library; the explorer is
below the tabs; the command line never imports the tabs) and no import circle among the modules of
core and of the app (import-linter's contracts do not find a general circle)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest
from import_graph import graph

ROOT = Path(__file__).resolve().parent.parent


def test_the_import_contracts_are_kept():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    if not lint_imports.exists():
        pytest.skip("import-linter is not installed (the test extra)")
    # the console script's interpreter may be another environment's: run this one's
    run = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
         "sys.exit(lint_imports_command())", "--no-cache"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_no_import_circle_among_the_modules_of_core_and_app():
    g = graph()
    circles = [nx.find_cycle(g.subgraph(c)) for c in nx.strongly_connected_components(g) if len(c) > 1]
    assert not circles, "import circles:\n" + "\n".join(" -> ".join(a for a, _ in c) + f" -> {c[0][0]}" for c in circles)


def test_the_graph_sees_a_circle(tmp_path, monkeypatch):
    import import_graph

    (tmp_path / "a.py").write_text("from microrelease.core.b import x\n")
    (tmp_path / "b.py").write_text("import microrelease.core.a\ndef f():\n    import microrelease.core.c\n")
    (tmp_path / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import microrelease.core.a\n")
    monkeypatch.setattr(import_graph, "PACKAGES", {"microrelease.core": tmp_path})
    g = import_graph.graph()
    assert set(g.edges) == {("microrelease.core.a", "microrelease.core.b"), ("microrelease.core.b", "microrelease.core.a")}
    assert ("microrelease.core.b", "microrelease.core.c") in import_graph.graph(every_import=True).edges
