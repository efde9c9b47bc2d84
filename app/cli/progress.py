"""The progress bar every long step of the command line draws on stderr."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


class ProgressBar:
    """A one-line progress bar on stderr (drawn only on a terminal, silenced by --quiet)."""

    def __init__(self, label: str, quiet: bool, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = not quiet and self.stream.isatty()
        self.label = label

    def __call__(self, fraction: float) -> None:
        if self.enabled:
            filled = int(round(30 * fraction))
            self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] {fraction:4.0%}")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")


@contextmanager
def progress_bar(label: str, quiet: bool) -> Iterator[ProgressBar]:
    """A bar for one step, ended on its own line however the step ends."""
    bar = ProgressBar(label, quiet)
    try:
        yield bar
    finally:
        bar.close()
