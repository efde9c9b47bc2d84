"""Release files offered as downloads (param only): one write, kept as bytes.

Rows are shuffled on every write and the report carries the file's checksum (and the page's), so a
file, its report and its page must come from the same write: every download is served from the
bytes of one write.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from microrelease.core.release import Published


class WrittenFiles(NamedTuple):
    """The bytes of one release: its data file, its JSON report and the report's page (HTML)."""

    data: bytes
    report: bytes
    html: bytes


def written_bytes(write: Callable[[Path], Published], name: str) -> WrittenFiles:
    """The files of one ``write(path)`` to ``name`` in a temporary folder (removed after)."""
    with tempfile.TemporaryDirectory() as tmp:
        target = write(Path(tmp) / name).target
        return WrittenFiles(target.files[0].read_bytes(), target.report.read_bytes(), target.html.read_bytes())
