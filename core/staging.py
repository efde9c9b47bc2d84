"""Outputs are written under a temporary name beside their target and renamed into place only once
re-checked: a failure or a cancel leaves nothing under the target name that could pass for a release."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def remove(path: Path) -> None:
    """Delete a file or a folder, if there."""
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


@contextmanager
def staged(out: str | Path, *, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary path next to ``out`` (a new empty folder if ``directory``); when the block
    ends without an exception it replaces ``out``; in every case the temporary path is gone after."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.stem}.partial-{os.getpid()}{out.suffix}")
    remove(partial)
    if directory:
        partial.mkdir()
    try:
        yield partial
        remove(out)
        os.replace(partial, out)
    finally:
        remove(partial)
