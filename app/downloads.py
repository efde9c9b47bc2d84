"""Release files offered as downloads (param only): one write, kept as bytes.

Rows are shuffled on every write and the report carries the file's checksum, so a file and its
report must come from the same write: both downloads are served from the bytes of one write.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from microrelease.core.release import Published


def written_bytes(write: Callable[[Path], Published], name: str) -> tuple[bytes, bytes]:
    """(file bytes, report bytes) of one ``write(path)`` to ``name`` in a temporary folder (removed after)."""
    with tempfile.TemporaryDirectory() as tmp:
        published = write(Path(tmp) / name)
        return published.target.files[0].read_bytes(), published.target.report.read_bytes()
