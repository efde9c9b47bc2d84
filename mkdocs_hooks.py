"""mkdocs hook: let mkdocstrings find ``microrelease.core`` where it is installed.

The repository maps ``core/`` to ``microrelease.core`` (see ``[tool.setuptools] package-dir``), so the
folder names are not the package names, and an editable install hides them behind an import hook that
griffe's static finder does not read. Before the build, a temporary folder is made with
``microrelease/core`` pointing at the installed package's folder (whatever the install: a wheel's
site-packages or an editable checkout), and the python handler is given that folder as its path.
"""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import tempfile
from pathlib import Path

from mkdocs.plugins import event_priority


@event_priority(100)  # before mkdocstrings reads its handlers' options
def on_config(config, **kwargs):
    spec = importlib.util.find_spec("microrelease.core")
    if spec is None or spec.origin is None:
        raise RuntimeError("microrelease is not installed: pip install '.[docs]' first")
    root = Path(tempfile.mkdtemp(prefix="microrelease-docs-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    (root / "microrelease").mkdir()
    (root / "microrelease" / "core").symlink_to(Path(spec.origin).parent, target_is_directory=True)
    handler = config["plugins"]["mkdocstrings"].config["handlers"].setdefault("python", {})
    handler["paths"] = [str(root)]
    return config
