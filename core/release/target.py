"""Where a release goes, and the rules that keep a user's files safe.

A release is a *file* (``out.csv`` or ``out.parquet``, its report ``out.report.json`` and the page
``out.report.html`` beside it, and for the releases that have one the data steward's
``out.audit.json``) or a *folder* (``out/`` holding its data files, ``report.json``, ``report.html``
and ``audit.json``). Nothing that is not ours is ever deleted or overwritten:

- a path that is, or contains, an input or hierarchy file is refused;
- a file target that is an existing folder is refused; a folder target must be new or empty;
- an existing target is replaced only when it is a previous release of this tool (recognised by its
  report, which names its files and the page with their checksums, and the audit with a keyed MAC
  whose key only the audit holds: a file, page or audit edited since is the user's) *and* the caller
  asked for it (``force``);
- two writers to one target: the second fails on the lock file (created with ``O_EXCL``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from microrelease.core.data.reading import file_checksum
from microrelease.core.exceptions import OutputError

TOOL = "microrelease"
# The files beside a file release's data (``OUT.csv`` -> ``OUT.report.json``...), and in a folder release.
BESIDE = {"report": ".report.json", "html": ".report.html", "audit": ".audit.json"}
IN_FOLDER = {"report": "report.json", "html": "report.html", "audit": "audit.json"}
FOLDER_REPORT, FOLDER_HTML = IN_FOLDER["report"], IN_FOLDER["html"]


def beside(out: str | Path, kind: str) -> Path:
    """The ``kind`` file (report, html page, audit) of the file release ``out``: ``OUT.csv`` ->
    ``OUT.report.json``, ``OUT.report.html``, ``OUT.audit.json``."""
    out = Path(out)
    return out.with_name(out.stem + BESIDE[kind])


def report_path(out: str | Path) -> Path:
    """``OUT.csv`` -> ``OUT.report.json`` (the report of a file release).

    Parameters
    ----------
    out : str or Path
        The release's data file.

    Returns
    -------
    Path
        The report's path.
    """
    return beside(out, "report")


def html_path(out: str | Path) -> Path:
    """``OUT.csv`` -> ``OUT.report.html`` (the page a person reads, beside the report).

    Parameters
    ----------
    out : str or Path
        The release's data file.

    Returns
    -------
    Path
        The page's path.
    """
    return beside(out, "html")


def audit_path(out: str | Path) -> Path:
    """``OUT.csv`` -> ``OUT.audit.json`` (the data steward's audit, beside the report).

    Parameters
    ----------
    out : str or Path
        The release's data file.

    Returns
    -------
    Path
        The audit's path.
    """
    return beside(out, "audit")


def audit_mac(text: bytes) -> str | None:
    """The keyed MAC a report gives its audit: HMAC-SHA256 of the audit's bytes under the key the audit
    holds (``mac_key``). A plain checksum in a publishable report would let anyone test guesses of
    the exact statistics the audit holds; without the key, nobody can. None if ``text`` has no key."""
    try:
        key = bytes.fromhex(json.loads(text)["mac_key"])
    except (ValueError, KeyError, TypeError):
        return None
    return "hmac-sha256:" + hmac.new(key, text, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Target:
    """A checked place to write: ``folder`` holds the data files ``names`` and the ``report``.

    Parameters
    ----------
    path : Path
        The file or folder written.
    kind : str
        ``"file"`` or ``"folder"``.
    names : tuple of str
        The data files' names.
    force : bool, default False
        Replace a previous release of this tool.
    protected : tuple of Path, optional
        Files never overwritten.
    """

    path: Path
    kind: str  # "file" or "folder"
    names: tuple[str, ...]
    force: bool = False
    protected: tuple[Path, ...] = ()

    @property
    def folder(self) -> Path:
        return self.path if self.kind == "folder" else self.path.parent

    def _beside(self, kind: str) -> Path:
        return self.path / IN_FOLDER[kind] if self.kind == "folder" else beside(self.path, kind)

    @property
    def report(self) -> Path:
        return self._beside("report")

    @property
    def html(self) -> Path:
        return self._beside("html")

    @property
    def audit(self) -> Path:
        """The data steward's audit (exact statistics of the original; never to be published)."""
        return self._beside("audit")

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
    """The report of the release of this tool now at ``target`` (None if there is none there).

    Parameters
    ----------
    target : Target
        The checked target.

    Returns
    -------
    dict or None
        The previous report, if any.
    """
    try:
        report = json.loads(target.report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(report, dict) or report.get("tool", {}).get("name") != TOOL:
        return None
    return report


def file_target(out: str | Path, *, protected: Iterable[str | Path] = (), force: bool = False) -> Target:
    """The target of a one-file release (CSV or Parquet), checked; OutputError says why not.

    Parameters
    ----------
    out : str or Path
        The release's file.
    protected : iterable of str or Path, optional
        Files never overwritten.
    force : bool, default False
        Replace a previous release of this tool.

    Returns
    -------
    Target
        The checked target.
    """
    path = _resolved(out)
    if path.name.endswith(tuple(BESIDE.values())) or path.name in IN_FOLDER.values():
        raise OutputError(f"{out}: a release's data file cannot be named like a report (nothing was written)")
    return validate_target(Target(path, "file", (path.name,), force, tuple(_real(p) for p in protected)))


def folder_target(out: str | Path, names: Sequence[str], *, protected: Iterable[str | Path] = (),
                  force: bool = False) -> Target:
    """The target of a release made of several files in one folder, checked.

    Parameters
    ----------
    out : str or Path
        The release's folder.
    names : sequence of str
        The data files' names.
    protected : iterable of str or Path, optional
        Files never overwritten.
    force : bool, default False
        Replace a previous release of this tool.

    Returns
    -------
    Target
        The checked target.
    """
    path = _resolved(out)
    return validate_target(Target(path, "folder", tuple(names), force, tuple(_real(p) for p in protected)))


def validate_target(target: Target) -> Target:
    """``target`` if writing there destroys nothing of the user's; else OutputError naming the path.
    Checked when the target is chosen, and again under the lock just before writing."""
    _refuse_protected(target)
    path = target.path
    if target.kind == "file":
        if path.is_dir():
            raise OutputError(f"{path} is a folder; give a file name for the release (nothing was written)")
        present = [p for p in (path, target.report, target.html, target.audit) if p.exists() or p.is_symlink()]
    else:
        if path.exists() and not path.is_dir():
            raise OutputError(f"{path} is a file; the release needs a new or empty folder (nothing was written)")
        present = sorted(path.iterdir()) if path.is_dir() else []
    _refuse_foreign(target, present)
    return target


def _refuse_protected(target: Target) -> None:
    """No written path may be an input; a folder target may not hold one; nothing is written into an
    input folder (its next read would take the release for a partition)."""
    written = tuple(_real(p) for p in (*target.files, target.report, target.html, target.audit, target.path))
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
    ours = {target.report, target.html, target.audit, *target.files}
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
    audit = report.get("audit_report") or {}
    there = target.audit.exists() or target.audit.is_symlink()  # a dangling link too: the user's
    if there and (audit.get("name") != target.audit.name or target.audit.is_symlink() or not target.audit.is_file()
                                  or audit_mac(target.audit.read_bytes()) != audit.get("mac")):
        raise OutputError(f"{target.audit} is not the audit its report {target.report.name} names, or changed since "
                          f"{TOOL} wrote it; it is never overwritten (nothing was written)")
    if not target.force:
        raise OutputError(f"{target.path} holds a previous release, replaced only when forced (nothing was written)",
                          parameter="force")


def _checksum(path: Path) -> str | None:
    """A file's checksum; None for a folder (never ours to replace)."""
    return file_checksum(path) if path.is_file() else None
