"""Writing a microaggregated release with its report, checked on what was written.

Written through ``microrelease.core.release.publishing`` (temporary name, re-read, report last) in a
random row order. The written file is checked with code independent of the method: row count, no
identifier column; for MDAV-ID every QI vector shared by at least k rows; for the swap methods
every permuted attribute holds exactly its original multiset of values; the other columns hold the
input's rows (compared as multisets of rows: the file's order is random). The report gives the group sizes, the information loss and the linkage risk before and
after, and the checksums.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.data.reading import frame_checksum
from microrelease.core.lattice.node_release import check_k_anonymity
from microrelease.core.micro.linkage import record_linkage
from microrelease.core.micro.micro_loss import information_loss
from microrelease.core.micro.microaggregation import Microaggregation
from microrelease.core.release import Published, Verification
from microrelease.core.release.cells import escape_formulas
from microrelease.core.release.table import (
    input_name,
    publish_table,
    shape_verifications,
    untouched_verification,
)


def _verify(result: Microaggregation, back: pd.DataFrame, expected: pd.DataFrame, original: pd.DataFrame,
            identifiers: Sequence[str]) -> list[Verification]:
    changed = set(result.confidential) if result.method == "ir-swap" else set(result.qi)
    verifications = shape_verifications(back, expected, identifiers)
    if not all(c.passed for c in verifications):
        return verifications
    if result.method == "mdav-id":
        check = check_k_anonymity(back, result.qi, result.k)
        smallest = int(check.smallest_classes["size"].iloc[0]) if check.n_classes else 0
        verifications.append(Verification(f"{result.k}-anonymous QIs", check.is_k_anonymous, f"smallest QI class {smallest}"))
    else:
        for name in sorted(changed):
            same = np.array_equal(np.sort(pd.to_numeric(back[name]).to_numpy(dtype=float)),
                                  np.sort(original[name].to_numpy(dtype=float)))
            verifications.append(Verification(f"{name} holds its original values", same, "as a multiset"))
    verifications.append(untouched_verification(back, original, sorted(changed)))
    return verifications


def write_microaggregation(
    result: Microaggregation,
    out: str | Path,
    *,
    identifiers: Sequence[str] = (),
    source: str = "<DataFrame>",
    checksum: str | None = None,
    sep: str = ",",
    escape: bool = False,
    force: bool = False,
    protected: Sequence[str | Path] = (),
) -> Published:
    """Write ``result.released`` to ``out`` (CSV) and ``<stem>.report.json``; see the module doc.
    ``source`` is the input's path (protected, and named in the report by its file name).

    Parameters
    ----------
    result : Microaggregation
        What ``microaggregate`` returned.
    out : str or Path
        The release's file.
    identifiers : sequence of str, optional
        Direct identifiers (recorded as dropped).
    source : str, default "<DataFrame>"
        The input's name, for the report.
    checksum : str, optional
        The input's checksum, for the report.
    sep : str, default ","
        The output separator.
    escape : bool, default False
        Neutralize cells that a spreadsheet would read as a formula.
    force : bool, default False
        Overwrite an earlier release.
    protected : sequence of str or Path, optional
        Files the release must never overwrite.

    Returns
    -------
    Published
        The files written and the verification of the re-read release.

    Raises
    ------
    VerificationError
        If the re-read release does not meet its guarantee.
    """
    attributes = [*result.qi, *result.confidential]
    sizes = result.group_sizes
    groups = ({"count": len(sizes), "smallest": int(sizes.min()), "largest": int(sizes.max())} if len(sizes) else
              {a: {"k": result.attribute_k[a], "count": int(g.max()) + 1} for a, g in result.attribute_groups.items()})
    risk = before = None
    if result.qi:
        risk = record_linkage(result.original, result.released, result.qi, result.confidential, k=result.k).to_dict()
        before = record_linkage(result.original, result.original, result.qi, result.confidential, k=1).to_dict()
    body = {
        "kind": "microaggregation",
        "parameters": {"method": result.method, "k": result.k, "qi": list(result.qi),
                       "confidential": list(result.confidential), "k_per_attribute": result.attribute_k or None,
                       # never the seed itself: with it and the released groups, the swaps could be undone
                       "seeded": result.seed is not None, "identifiers_dropped": list(identifiers)},
        "counts": {"input_rows": len(result.original), "released_rows": len(result.released), "suppressed_rows": 0},
        "groups": groups,
        "input": {"name": input_name(source)},
        "output": {"format": "csv", "rows": len(result.released), "columns": list(result.released.columns),
                   "row_order": "random (drawn from OS entropy)"},
    }
    # computed from the original values: the data steward's, not for publication
    audit = {
        "information_loss": information_loss(result.original, result.released, attributes).to_dict(),
        "linkage_risk": {"released": risk, "original": before},
        "seeded": result.seed is not None,
        "input": {"name": input_name(source), "rows": len(result.original),
                  "checksum": checksum or frame_checksum(result.original)},
    }
    original = escape_formulas(result.original) if escape else result.original  # as the file should hold it
    return publish_table(result.released, out,
                         lambda back, written: _verify(result, back, written, original, identifiers), body,
                         sep=sep, escape=escape, force=force, source=source, protected=protected, audit=audit)
