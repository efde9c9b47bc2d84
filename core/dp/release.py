"""Writing a DP release with its report, through the one release path (re-read, checked, report last).

Rows are written in a random order drawn from OS entropy. The written file is checked: row count,
columns, no identifier column, every released value a finite number, the columns not released under
noise holding the input's rows (compared as multisets of rows: the file's order is random).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.data.dataset import frame_checksum
from microrelease.core.dp.microdata import DPRelease
from microrelease.core.exceptions import DataError
from microrelease.core.micro.information_loss import information_loss
from microrelease.core.release import Check, Published
from microrelease.core.release.cells import escape_formulas
from microrelease.core.release.table import input_name, publish_table, shape_checks, untouched_check


def _checks(release: DPRelease, back: pd.DataFrame, expected: pd.DataFrame, original: pd.DataFrame,
            identifiers: Sequence[str]) -> list[Check]:
    checks = shape_checks(back, expected, identifiers)
    if not all(c.passed for c in checks):
        return checks
    for name in back.columns:
        if name in release.attributes:
            finite = bool(np.isfinite(pd.to_numeric(back[name], errors="coerce")).all())
            checks.append(Check(f"{name} released with noise", finite, "every value a finite number"))
    checks.append(untouched_check(back, original, release.attributes))
    return checks


def write_dp_release(release: DPRelease, original: pd.DataFrame, out: str | Path, *, identifiers: Sequence[str] = (),
                     source: str = "<DataFrame>", checksum: str | None = None, sep: str = ",", warnings_raised=(),
                     escape: bool = False, force: bool = False, protected: Sequence[str | Path] = ()) -> Published:
    """Write ``release.released`` to ``out`` and ``<stem>.report.json`` (ε spent, per-attribute noise,
    information loss against ``original``); see the module docstring.

    ``identifiers``: columns of ``original`` that must not be written. Those :func:`dp_release` dropped
    (``release.identifiers``) count too; any still in ``release.released`` is dropped here."""
    unknown = [c for c in identifiers if c not in original.columns]
    if unknown:
        raise DataError(f"unknown identifier column(s) {unknown}; the table has {list(original.columns)}",
                        parameter="identifiers")
    named = set(identifiers) | set(release.identifiers)
    dropped = [c for c in original.columns if c in named]
    released = release.released.drop(columns=[c for c in dropped if c in release.released.columns])
    body = {
        "kind": "differential privacy",
        "parameters": {**release.to_dict(), "identifiers_dropped": dropped},
        "counts": {"input_rows": len(original), "released_rows": len(released), "suppressed_rows": 0},
        "information_loss": information_loss(original, released, list(release.attributes)).to_dict(),
        "warnings": list(warnings_raised),
        "input": {"name": input_name(source), "rows": len(original),
                  "checksum": checksum or frame_checksum(original)},
        "output": {"format": "csv", "rows": len(released), "columns": list(released.columns),
                   "row_order": "random (drawn from OS entropy)"},
    }
    as_written = escape_formulas(original) if escape else original  # as the file should hold it
    return publish_table(released, out, lambda back, written: _checks(release, back, written, as_written, dropped),
                         body, sep=sep, escape=escape, force=force, source=source, protected=protected)
