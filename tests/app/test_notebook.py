"""examples/explore.ipynb runs top to bottom in a real kernel and displays the app inline."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_example_notebook_executes_without_error():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(ROOT / "examples" / "explore.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT / "examples")}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    mimetypes = {m for o in outputs for m in o.get("data", {})}
    assert "application/vnd.holoviews_load.v0+json" in mimetypes  # pn.extension's payload
    assert "application/vnd.holoviews_exec.v0+json" in mimetypes  # the displayed views
    text = "".join(o.get("text", "") for o in outputs)
    assert "[[0, 2], [1, 1]]" in text and "k-minimal nodes; Find_vector:" in text
