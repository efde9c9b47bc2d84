"""Writing a DP release with its reports, through the one release path (re-read, checked, report last).

Rows are written in a random order drawn from OS entropy. The written file is checked: row count,
columns, no identifier column, every released value a finite number, the columns kept as is holding
the input's rows (compared as multisets of rows: the file's order is random).

Two reports. ``OUT.report.json`` is publishable: the method, ε per attribute and in total, the bounds,
k, what each column is (with noise, as is, not released, dropped as an identifier), the guarantee in
words, the counts n and the checks: nothing computed from the original values. ``OUT.audit.json`` is
the data steward's: the information loss (means and variances of the original), the values clamped,
the input's checksum, the warnings (which quote such counts).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.data.reading import frame_checksum
from microrelease.core.dp.microdata import DPRelease
from microrelease.core.exceptions import DataError
from microrelease.core.release import Published, Verification
from microrelease.core.release.cells import escape_formulas
from microrelease.core.release.table import (
    input_name,
    publish_table,
    shape_verifications,
    untouched_verification,
)


def _verifications(release: DPRelease, back: pd.DataFrame, expected: pd.DataFrame, original: pd.DataFrame,
            identifiers: Sequence[str]) -> list[Verification]:
    verifications = shape_verifications(back, expected, identifiers)
    if not all(c.passed for c in verifications):
        return verifications
    for name in back.columns:
        if name in release.attributes:
            finite = bool(np.isfinite(pd.to_numeric(back[name], errors="coerce")).all())
            verifications.append(Verification(f"{name} released with noise", finite, "every value a finite number"))
    expected_columns = {*release.attributes, *release.kept}
    verifications.append(Verification("only protected or kept columns", set(back.columns) == expected_columns,
                        f"{len(release.attributes)} with noise, {len(release.kept)} kept as is"))
    verifications.append(untouched_verification(back, original, release.attributes))
    return verifications


def write_dp_release(release: DPRelease, original: pd.DataFrame, out: str | Path, *, identifiers: Sequence[str] = (),
                     source: str = "<DataFrame>", checksum: str | None = None, sep: str = ",", warnings_raised=(),
                     escape: bool = False, force: bool = False, protected: Sequence[str | Path] = ()) -> Published:
    """Write ``release.released`` to ``out``, the publishable ``<stem>.report.json`` and the data
    steward's ``<stem>.audit.json`` (see the module docstring).

    ``identifiers``: columns of ``original`` that must never be written. Those ``dp_release`` left
    out count too; one still in ``release.released`` (a kept column named an identifier here) is refused.

    Parameters
    ----------
    release : DPRelease
        What ``dp_release`` returned.
    original : pandas.DataFrame
        The input table.
    out : str or Path
        The release's file.
    identifiers : sequence of str, optional
        Columns of ``original`` never written.
    source : str, default "<DataFrame>"
        The input's name, for the report.
    checksum : str, optional
        The input's checksum.
    sep : str, default ","
        The output separator.
    warnings_raised : sequence of str, optional
        The privacy warnings raised, for the report.
    escape : bool, default False
        Neutralize formula cells.
    force : bool, default False
        Replace a previous release of this tool.
    protected : sequence of str or Path, optional
        Files never overwritten.

    Returns
    -------
    Published
        The files written and the verification of the re-read release.
    """
    unknown = [c for c in identifiers if c not in original.columns]
    if unknown:
        raise DataError(f"unknown identifier column(s) {unknown}; the table has {list(original.columns)}",
                        parameter="identifiers")
    named = set(identifiers) | set(release.identifiers)
    clash = [c for c in release.released.columns if c in named]
    if clash:
        raise DataError(f"{clash} are identifiers and would be written; identifiers are never released",
                        parameter="identifiers")
    dropped = [c for c in original.columns if c in named]
    released = release.released
    body = {
        "kind": "differential privacy",
        "parameters": {**release.to_dict(), "identifiers_dropped": dropped,
                       "not_released": [c for c in release.not_released if c not in named]},
        "counts": {"input_rows": len(original), "released_rows": len(released), "suppressed_rows": 0},
        "input": {"name": input_name(source)},
        "output": {"format": "csv", "rows": len(released), "columns": list(released.columns),
                   "row_order": "random (drawn from OS entropy)" if release.linked
                   else "each attribute's column in its own random order (drawn from OS entropy)"},
    }
    audit = {
        "information_loss": release.loss.to_dict() if release.loss is not None
        else "undefined: an attribute is constant in the input (no SST)",
        "values_clamped": release.clamped,
        "seeded": release.seeded,
        "warnings": list(warnings_raised),
        "input": {"name": input_name(source), "rows": len(original), "checksum": checksum or frame_checksum(original)},
    }
    as_written = escape_formulas(original) if escape else original  # as the file should hold it
    return publish_table(released, out, lambda back, written: _verifications(release, back, written, as_written, dropped),
                         body, sep=sep, escape=escape, force=force, source=source, protected=protected, audit=audit)

