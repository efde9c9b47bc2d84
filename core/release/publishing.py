"""The one path by which every release reaches the disk.

``publish`` takes a checked ``Target``, a function that
writes the data files and a function that reads *the written files* back and checks every claim
the release makes. It:

1. takes the target's lock (``O_EXCL``: a second writer fails, it never interleaves) and checks the
   target again (see ``microrelease.core.release.target``);
2. has the data written under temporary names in the target's folder;
3. re-reads them and runs the checks; any failure raises and nothing is put in place;
4. writes the report (with each file's checksum and every check's result) under a temporary name,
   as strict JSON: a float that is not finite (an information loss that overflowed at a tiny ε) is
   written as the string ``"inf"``, ``"-inf"`` or ``"nan"``, since JSON has no such numbers; and the
   page a person reads (``OUT.report.html``), rendered from that same report: the JSON names the
   page with its SHA-256 (``html_report``), so the JSON stays the one record of the release and a
   page edited since is recognised (and never overwritten);
5. for the releases with exact statistics of the original data (DP, microaggregation, sequential),
   writes them apart, in the data steward's audit (``OUT.audit.json``): the report stays publishable.
   The report names the audit with a keyed MAC, never a plain checksum (anyone could test guesses of
   the audit's figures against one); the key is in the audit only;
6. moves the data files into place, then the audit and the page, then the JSON report: a reader who
   finds a report finds its files.

Whatever happens (an error, a full disk, a cancel, SIGINT/SIGTERM turned into an exception), the
temporary files, the lock and any folder created on the way are removed; nothing else is touched.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from microrelease.core.data.reading import file_checksum
from microrelease.core.exceptions import Cancelled, OutputError, VerificationError
from microrelease.core.release.report_html import render_report
from microrelease.core.release.target import TOOL, Target, audit_mac, validate_target


@dataclass(frozen=True)
class Verification:
    """One claim of a release, checked on the written file.

    Parameters
    ----------
    name : str
        What is claimed.
    passed : bool
        Whether the written file meets it.
    detail : str, optional
        What was found.
    """

    name: str
    passed: bool
    detail: str = ""

    def to_dict(self) -> dict:
        return {"check": self.name, "passed": self.passed, "detail": self.detail}


@dataclass(frozen=True)
class Verified:
    """What the re-read of the written files found: the checks, facts for the report, and facts for the
    data steward's audit (figures computed with the original data).

    Parameters
    ----------
    verifications : tuple of Verification
        The verifications made.
    facts : dict, optional
        Facts for the report.
    audit : dict, optional
        Facts for the data steward's audit.
    """

    verifications: tuple[Verification, ...]
    facts: dict = field(default_factory=dict)
    audit: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Published:
    """A release in place: its report (as written), where its files are (``target.report``, the page
    ``target.html`` and the audit ``target.audit`` beside them), and the audit's figures (None without one).

    Parameters
    ----------
    data : dict
        The report, as written.
    target : Target
        Where the files are.
    audit : dict, optional
        The audit's figures.
    """

    data: dict
    target: Target
    audit: dict | None = None

    @property
    def verifications(self) -> list[str]:
        return [c["check"] for c in self.data["verification"]]


WriteFiles = Callable[[Mapping[str, Path]], None]
VerifyFiles = Callable[[Mapping[str, Path]], Verified]


def _version() -> str:
    from microrelease.core import __version__  # circle: microrelease.core's __init__ imports this module

    return __version__


AUDIT_NOTE = ("for the data steward only: exact statistics of the original data, which the release does not "
              "protect; never publish this file")


def publish(target: Target, write: WriteFiles, verify: VerifyFiles, body: Mapping, *,
            audit: Mapping | None = None, should_stop: Callable[[], bool] | None = None) -> Published:
    """Write, re-check and put in place one release (see the module docstring).

    ``write(paths)`` writes each data file of ``target.names`` to ``paths[name]``; ``verify(paths)``
    reads them back and returns what it found (``Verified``); ``body`` is the report's content (parameters, counts,
    metrics); ``audit`` (if given) what goes to the data steward's audit instead. Returns the report
    as written; raises VerificationError if a check fails, OutputError if the disk refuses,
    Cancelled if ``should_stop()`` says so.

    Parameters
    ----------
    target : Target
        Where the release goes.
    write : callable
        Writes the data files.
    verify : callable
        Reads them back and returns a ``Verified``.
    body : mapping
        The report's entries.
    audit : mapping, optional
        The audit's entries.
    should_stop : callable, optional
        Polled; when it returns true nothing is put in place.

    Returns
    -------
    Published
        The release in place.

    Raises
    ------
    VerificationError
        If a check of the re-read files fails.
    """
    made: list[Path] = []  # what this call created, and only that, is removed on the way out
    lock = _take_lock(target, made)
    try:
        validate_target(target)
        if audit is None and target.audit.exists():
            raise OutputError(f"{target.audit} belongs to the release this one would replace, and this release has no "
                              "audit: remove it yourself or choose another output (nothing was written)")
        _make_folders(target.folder, made)
        token = f"{os.getpid()}-{secrets.token_hex(4)}"
        temp = {n: target.folder / f".{n}.partial-{token}" for n in target.names}
        made.extend(temp.values())
        _io(target, lambda: write(temp))
        _stop(should_stop)
        verified = verify(temp)
        verifications = list(verified.verifications)
        failed = [c for c in verifications if not c.passed]
        if failed:
            raise VerificationError(f"release {target.path} failed its re-check on the written file: "
                                    + "; ".join(f"{c.name}: {c.detail}" for c in failed))
        if verified.audit:
            audit = {**(audit or {}), **verified.audit}
        files = [{"name": n, "bytes": temp[n].stat().st_size, "checksum": file_checksum(temp[n])}
                 for n in target.names]
        report = strict_json({
            "tool": {"name": TOOL, "version": _version()},
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            **body,
            **verified.facts,
            "output": {**dict(body.get("output", {})), "files": files},
            "verification": [c.to_dict() for c in verifications],
        })
        html_temp, report_temp, audit_temp = (target.folder / f".{p.name}.partial-{token}"
                                              for p in (target.html, target.report, target.audit))
        made.extend((html_temp, report_temp))
        if audit is not None:
            made.append(audit_temp)
            text = _audit_text(report, audit, target)
            _io(target, lambda: _write_synced(audit_temp, text, mode=0o600))  # the steward's: not for others to read
            report["audit_report"] = {"name": target.audit.name, "mac": audit_mac(text.encode("utf-8"))}
        page = render_report(report, target.report.name)  # before the JSON names the page: no loop
        _io(target, lambda: _write_synced(html_temp, page))
        written = page.encode("utf-8")  # what _write_synced wrote: no second read of the page
        report["html_report"] = {"name": target.html.name, "bytes": len(written),
                                 "checksum": "sha256:" + hashlib.sha256(written).hexdigest()}
        _io(target, lambda: _write_synced(report_temp, json.dumps(report, indent=2, allow_nan=False) + "\n"))
        _stop(should_stop)
        _io(target, lambda: _commit(target, temp, html_temp, report_temp, audit_temp if audit is not None else None))
        made = [p for p in made if p not in (*temp.values(), html_temp, report_temp, audit_temp)]
        return Published(report, target, None if audit is None else strict_json(dict(audit)))
    except BaseException:
        _remove_made([lock, *made])  # the lock too, or a folder made for the release is not empty yet
        raise
    finally:
        _remove_made([lock])


def strict_json(value):
    """``value`` (dicts, lists, scalars) with every non-finite float as the string "inf", "-inf" or
    "nan": ``json.dumps`` would write them as Infinity and NaN, which strict JSON readers refuse."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {key: strict_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [strict_json(item) for item in value]
    return value


def _take_lock(target: Target, made: list[Path]) -> Path:
    _make_folders(target.path.parent, made)
    try:
        fd = os.open(target.lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        _remove_made(made)
        raise OutputError(f"another microrelease is writing {target.path} (lock {target.lock}"
                          f"{_lock_owner(target.lock)}) (nothing was written)") from None
    except OSError as exc:
        _remove_made(made)
        raise OutputError(f"cannot write in {target.path.parent}: {exc.strerror} (nothing was written)") from None
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(f"{os.getpid()}\n")
    except OSError as exc:  # a full disk: the empty lock goes, and so does any folder made for it
        made.append(target.lock)
        _remove_made(made)
        raise OutputError(f"cannot write in {target.path.parent}: {exc.strerror} (nothing was written; "
                          "previous files are untouched)") from None
    return target.lock


def _lock_owner(lock: Path) -> str:
    """Who holds a lock: a running process, or one gone (then the lock is stale: say so)."""
    try:
        pid = int(lock.read_text().strip())
        os.kill(pid, 0)
    except ProcessLookupError:
        return f", left by process {pid}, which is no longer running: delete the lock file"
    except (OSError, ValueError):
        return "; if no microrelease is running, delete the lock file"
    return f", held by running process {pid}"


def _make_folders(folder: Path, made: list[Path]) -> None:
    missing = []
    p = folder
    while not p.exists():
        missing.append(p)
        p = p.parent
    for p in reversed(missing):
        try:
            p.mkdir()
        except OSError as exc:
            raise OutputError(f"cannot create the folder {p}: {exc.strerror} (nothing was written)") from None
        made.append(p)


def _io(target: Target, step: Callable[[], None]) -> None:
    """Run ``step``; a refusal of the disk (full, read-only, no permission) becomes one OutputError."""
    try:
        step()
    except OSError as exc:
        where = exc.filename or target.path
        raise OutputError(f"cannot write the release {target.path}: {exc.strerror or exc} ({where}); "
                          "previous files are untouched") from None


def _write_synced(path: Path, text: str, mode: int = 0o644) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)  # a temporary name: never there before
    with open(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def _audit_text(report: Mapping, audit: Mapping, target: Target) -> str:
    """The audit as written: what it is for, the release it belongs to, its figures, and the MAC key."""
    return json.dumps(strict_json({
        "tool": report["tool"], "created": report["created"], "note": AUDIT_NOTE,
        "release_report": target.report.name, **audit, "mac_key": secrets.token_hex(32),
    }), indent=2, allow_nan=False) + "\n"


def _commit(target: Target, temp: Mapping[str, Path], html_temp: Path, report_temp: Path,
            audit_temp: Path | None) -> None:
    """Data files first, then the audit and the page, the report last; an old report goes first, so
    no report ever names other files."""
    if target.report.exists():
        target.report.unlink()  # only reached for a previous release of ours, replaced on request
    for name, path in temp.items():
        os.replace(path, target.folder / name)
    if audit_temp is not None:
        os.replace(audit_temp, target.audit)
    os.replace(html_temp, target.html)
    os.replace(report_temp, target.report)
    try:
        fd = os.open(target.folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _stop(should_stop) -> None:
    if should_stop is not None and should_stop():
        raise Cancelled("the release was cancelled; nothing was written")


def _remove_made(paths: Sequence[Path]) -> None:
    """Remove what this run created (temporary files, a temporary part folder, folders made for the
    output); a folder is removed only when empty, so nothing of the user's can go with it."""
    folders = sorted((p for p in paths if p.is_dir() and not p.is_symlink()), key=lambda p: -len(p.parts))
    for p in [p for p in paths if p not in folders] + folders:  # files first, deepest folder first
        try:
            if p in folders:
                p.rmdir()
            elif p.exists() or p.is_symlink():
                p.unlink()
        except OSError:
            pass
