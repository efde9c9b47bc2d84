"""Where a release goes, and the rules that keep a user's files safe.

A release is a *file* (``out.csv`` or ``out.parquet``, its report ``out.report.json`` and the page
``out.report.html`` beside it) or a *folder* (``out/`` holding its data files, ``report.json`` and
``report.html``). Nothing that is not ours is ever deleted or overwritten:

- a path that is, or contains, an input or hierarchy file is refused;
- a file target that is an existing folder is refused; a folder target must be new or empty;
- an existing target is replaced only when it is a previous release of this tool (recognised by its
  report, which names its files and the page with their checksums: a file or page edited since is
  the user's) *and* the caller asked for it (``force``);
- two writers to one target: the second fails on the lock file (created with ``O_EXCL``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from microrelease.core.data.dataset import file_checksum
from microrelease.core.exceptions import OutputError

TOOL = "microrelease"
FOLDER_REPORT = "report.json"
FOLDER_HTML = "report.html"


def report_path(out: str | Path) -> Path:
    """``OUT.csv`` -> ``OUT.report.json`` (the report of a file release)."""
    out = Path(out)
    return out.with_name(out.stem + ".report.json")


def html_path(out: str | Path) -> Path:
    """``OUT.csv`` -> ``OUT.report.html`` (the page a person reads, beside the report)."""
    out = Path(out)
    return out.with_name(out.stem + ".report.html")


@dataclass(frozen=True)
class Target:
    """A checked place to write: ``folder`` holds the data files ``names`` and the ``report``."""

    path: Path
    kind: str  # "file" or "folder"
    names: tuple[str, ...]
    force: bool = False
    protected: tuple[Path, ...] = ()

    @property
    def folder(self) -> Path:
        return self.path if self.kind == "folder" else self.path.parent

    @property
    def report(self) -> Path:
        return self.path / FOLDER_REPORT if self.kind == "folder" else report_path(self.path)

    @property
    def html(self) -> Path:
        return self.path / FOLDER_HTML if self.kind == "folder" else html_path(self.path)

    @property
    def files(self) -> tuple[Path, ...]:
        return tuple(self.folder / n for n in self.names)

    @property
    def lock(self) -> Path:
        """One lock per report: ``out.csv`` and ``out.parquet`` share ``out.report.json``, so they
        share the lock too."""
        if self.kind == "folder":
            return self.path.parent / f".{self.path.name}.lock"
        return self.folder / f".{self.report.name}.lock"


def _resolved(path: str | Path) -> Path:
    """The real folder (symbolic links followed) and the name as given: an output is never written
    through a link into someone else's file, and an input reached through a link is still protected."""
    path = Path(os.path.abspath(str(path)))
    if not path.name:
        raise OutputError(f"{path} is not a file name; give one for the release (nothing was written)")
    return Path(os.path.realpath(path.parent)) / path.name


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(os.path.abspath(str(path))))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def previous_release(target: Target) -> dict | None:
    """The report of the release of this tool now at ``target`` (None if there is none there)."""
    try:
        report = json.loads(target.report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(report, dict) or report.get("tool", {}).get("name") != TOOL:
        return None
    return report


def file_target(out: str | Path, *, protected: Iterable[str | Path] = (), force: bool = False) -> Target:
    """The target of a one-file release (CSV or Parquet), checked; OutputError says why not."""
    path = _resolved(out)
    if path.name.endswith((".report.json", ".report.html")) or path.name in (FOLDER_REPORT, FOLDER_HTML):
        raise OutputError(f"{out}: a release's data file cannot be named like a report (nothing was written)")
    return check_target(Target(path, "file", (path.name,), force, tuple(_real(p) for p in protected)))


def folder_target(out: str | Path, names: Sequence[str], *, protected: Iterable[str | Path] = (),
                  force: bool = False) -> Target:
    """The target of a release made of several files in one folder, checked."""
    path = _resolved(out)
    return check_target(Target(path, "folder", tuple(names), force, tuple(_real(p) for p in protected)))


def check_target(target: Target) -> Target:
    """``target`` if writing there destroys nothing of the user's; else OutputError naming the path.
    Checked when the target is chosen, and again under the lock just before writing."""
    _refuse_protected(target)
    path = target.path
    if target.kind == "file":
        if path.is_dir():
            raise OutputError(f"{path} is a folder; give a file name for the release (nothing was written)")
        present = [p for p in (path, target.report, target.html) if p.exists() or p.is_symlink()]
    else:
        if path.exists() and not path.is_dir():
            raise OutputError(f"{path} is a file; the release needs a new or empty folder (nothing was written)")
        present = sorted(path.iterdir()) if path.is_dir() else []
    _refuse_foreign(target, present)
    return target


def _refuse_protected(target: Target) -> None:
    """No written path may be an input; a folder target may not hold one; nothing is written into an
    input folder (its next read would take the release for a partition)."""
    written = tuple(_real(p) for p in (*target.files, target.report, target.html, target.path))
    for p in target.protected:
        clash = p in written or (target.kind == "folder" and _inside(p, target.path)) or (
            p.is_dir() and _inside(target.path, p))
        if clash:
            raise OutputError(f"{target.path} would overwrite, hold or sit in the input {p}; "
                              "write the release elsewhere (nothing was written)")


def _refuse_foreign(target: Target, present: Sequence[Path]) -> None:
    """Existing paths at the target: allowed only as a previous release of ours, with ``force``."""
    if not present:
        return
    report = previous_release(target)
    ours = {target.report, target.html, *target.files}
    strangers = [p for p in present if p not in ours]
    if report is None or strangers:
        stranger = (strangers or present)[0]
        left = re.fullmatch(r"\..+\.(partial|lock)-?(\d*).*", stranger.name)
        why = (f"is a temporary file left by an interrupted {TOOL} run; delete it if no {TOOL} is running"
               if left else f"exists and is not part of a release written by {TOOL}; it is never overwritten")
        raise OutputError(f"{stranger} {why}: choose another output (nothing was written)")
    listed = {f.get("name"): f.get("checksum") for f in report.get("output", {}).get("files", [])}
    if set(listed) != set(target.names):
        raise OutputError(f"{target.report} is the report of the release {sorted(listed)}, not of {target.path.name}; "
                          "choose another output name (nothing was written)")
    page = report.get("html_report") or {}
    if target.html.exists() and page.get("name") != target.html.name:  # a report written before pages were
        raise OutputError(f"{target.html} is not named by the report {target.report.name}; it is never overwritten: "
                          "choose another output (nothing was written)")
    listed[page.get("name")] = page.get("checksum")
    for path in (*target.files, target.html):
        if path.exists() and listed.get(path.name) != _checksum(path):
            raise OutputError(f"{path} changed after {TOOL} wrote it (its checksum differs from its report's); "
                              "it is not overwritten (nothing was written)")
    if not target.force:
        raise OutputError(f"{target.path} holds a previous release, replaced only with 'force' (nothing was written)",
                          parameter="force")


def _checksum(path: Path) -> str | None:
    """A file's checksum; None for a folder (never ours to replace)."""
    return file_checksum(path) if path.is_file() else None
