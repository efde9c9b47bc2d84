"""Writing a ratio-closeness release (``.ratio_closeness``: the route from t-closeness to DP)
through the one release path, with its claims re-checked *from the written file*.

Written: the QIs (class centroids), the confidential attribute (true values) and the columns named
in ``keep`` (as they are, without protection); never an identifier; rows in an order drawn from OS
entropy. Checked on the file read back: rows, columns, no identifier; every QI combination shared by
at least k rows; and, with the classes taken from the file (rows sharing their QI values) and the
declared bins, the ε the file achieves, 2·max over classes and bins of |ln(p_C(v)/p(v))|, no more
than the target. The publishable report gives that ε, the bins, k and the class count; the data
steward's audit the QI information loss, the values clamped and the input's checksum.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.data.reading import frame_checksum
from microrelease.core.dp.microdata import validate_named_columns
from microrelease.core.dp.ratio_closeness import RatioClosenessRelease
from microrelease.core.dp.ratio_partition import log_ratio_excess
from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.release import Published, Verification
from microrelease.core.release.cells import escape_formulas
from microrelease.core.release.table import (
    input_name,
    publish_table,
    shape_verifications,
    untouched_verification,
)

TOLERANCE = 1e-9  # the file's decimal values re-read: ε recomputed from counts, exact up to rounding of logs


def file_epsilon(release: RatioClosenessRelease, back: pd.DataFrame) -> tuple[float, int, int]:
    """(ε achieved, number of classes, smallest class) of the written file: classes are the rows
    sharing their QI values, bins the declared ones."""
    classes = back.groupby(list(release.qi), sort=False).ngroup().to_numpy()
    value_bin = release.value_bins(pd.to_numeric(back[release.confidential]).to_numpy(dtype=float))
    n_bins = len(release.cuts) + 1
    counts = np.zeros((int(classes.max()) + 1, n_bins), dtype=np.int64)
    np.add.at(counts, (classes, value_bin), 1)
    p = counts.sum(axis=0) / counts.sum()
    return 2 * float(log_ratio_excess(counts, p).max()), len(counts), int(counts.sum(axis=1).min())


def guarantee(release: RatioClosenessRelease, kept: Sequence[str]) -> str:
    text = (f"{release.confidential} released as it is (anyone who knows the other records reads the last one "
            f"off the file); learning a person's class from the QIs changes the odds of any *declared* bin of "
            f"{release.confidential} by at most a factor exp(epsilon/2) = {release.t:.4g} (epsilon = "
            f"{release.epsilon_target:g}: differential privacy with respect to the QIs on those bins only, not of "
            f"the file); every class has at least k = {release.k} records, its QIs released as the class centroid")
    return text + (f"; {', '.join(kept)} released as is, without protection" if kept else "")


def write_ratio_closeness(release: RatioClosenessRelease, original: pd.DataFrame, out: str | Path, *,
                          identifiers: Sequence[str] = (), keep: Sequence[str] = (), source: str = "<DataFrame>",
                          checksum: str | None = None, sep: str = ",", warnings_raised: Sequence[str] = (),
                          escape: bool = False, force: bool = False,
                          protected: Sequence[str | Path] = ()) -> Published:
    """Write ``release`` (see the module docstring): the QIs, the confidential attribute and ``keep``.

    Parameters
    ----------
    release : RatioClosenessRelease
        What ``ratio_closeness_release`` returned.
    original : pandas.DataFrame
        The input table.
    out : str or Path
        The release's file.
    identifiers : sequence of str, optional
        Columns of ``original`` never written.
    keep : sequence of str, optional
        Columns released as is.
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
    columns = [*release.qi, release.confidential]
    validate_named_columns(original, identifiers=identifiers, keep=keep)
    clash = [c for c in keep if c in identifiers or c in columns]
    if clash:
        raise InvalidParameterError(f"{clash} in 'keep' are identifiers or already released (identifiers are never "
                                    "released)", parameter="keep")
    if set(identifiers) & set(columns):
        raise InvalidParameterError(f"{sorted(set(identifiers) & set(columns))} are released (QIs or confidential) "
                                    "and named identifiers", parameter="identifiers")
    released = release.released[[c for c in original.columns if c in {*columns, *keep}]]
    sizes = release.class_sizes
    body = {
        "kind": "ratio closeness (t-closeness route to DP)",
        "parameters": {"epsilon_target": release.epsilon_target, "t": release.t, "k": release.k,
                       "qi": list(release.qi), "confidential": release.confidential,
                       "bins": {"bounds": list(release.bounds) if release.bounds is not None else None,
                                "cuts": list(release.cuts)},
                       "guarantee": guarantee(release, keep), "released_without_protection": list(keep),
                       "identifiers_dropped": [c for c in original.columns if c in identifiers],
                       "not_released": [c for c in original.columns if c not in {*columns, *keep, *identifiers}]},
        "counts": {"input_rows": len(original), "released_rows": len(released), "suppressed_rows": 0},
        "input": {"name": input_name(source)},
        "output": {"format": "csv", "rows": len(released), "columns": list(released.columns),
                   "row_order": "random (drawn from OS entropy)"},
    }
    audit = {"qi_sse_sst_percent": release.sse_sst, "values_clamped": release.clamped,
             "single_class_reason": release.single_class_reason,
             "classes": {"count": len(sizes), "smallest": int(sizes.min()), "largest": int(sizes.max())},
             "warnings": list(warnings_raised),
             "input": {"name": input_name(source), "rows": len(original),
                       "checksum": checksum or frame_checksum(original)}}
    as_written = escape_formulas(original) if escape else original

    def verifications(back: pd.DataFrame, written: pd.DataFrame) -> list[Verification]:
        out = shape_verifications(back, written, identifiers)
        if not all(c.passed for c in out):
            return out
        achieved, n_classes, smallest = file_epsilon(release, back)
        # the report is built after this re-read: it gives the file's own figures
        body["file"] = {"epsilon_on_declared_bins": achieved, "classes": n_classes, "smallest_class": smallest}
        out += [Verification(f"{release.k}-anonymity on the QIs", smallest >= release.k,
                      f"{n_classes} classes, the smallest of {smallest} rows"),
                Verification("ratio closeness", achieved <= release.epsilon_target + TOLERANCE,
                      f"epsilon on the declared bins {achieved:.4g} <= {release.epsilon_target:g}, from the file's "
                      "classes"),
                untouched_verification(back, as_written, list(release.qi))]
        return out

    return publish_table(released, out, verifications, body, sep=sep, escape=escape, force=force, source=source,
                         protected=protected, audit=audit)
