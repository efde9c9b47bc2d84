"""Writing a microaggregated release with its report, checked on what was written.

Like :func:`microrelease.core.write_release`: the file is written under a temporary name, read back
and checked with code independent of the method (row count, no identifier column; for MDAV-ID
every QI vector shared by at least k rows; for the swap methods every permuted attribute holds
exactly its original multiset of values, and every other column is unchanged), and only then
renamed into place next to its JSON report (parameters, group sizes, information loss, linkage
risk before and after, checksums).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.dataset import file_checksum, frame_checksum
from microrelease.core.exceptions import VerificationError
from microrelease.core.information_loss import information_loss
from microrelease.core.linkage import linkage_attack
from microrelease.core.microaggregation import Microaggregation
from microrelease.core.release import ReleaseReport, check_k_anonymity, report_path
from microrelease.core.staging import staged


def _verify(result: Microaggregation, back: pd.DataFrame, identifiers: list[str]) -> list[str]:
    problems = []
    if len(back) != len(result.original):
        problems.append(f"{len(back)} rows read back, expected {len(result.original)}")
    leaked = [c for c in identifiers if c in back.columns]
    if leaked:
        problems.append(f"identifier column(s) {leaked} present")
    if problems:
        return problems
    changed = set(result.confidential) if result.method == "ir-swap" else set(result.qi)
    if result.method == "mdav-id":
        check = check_k_anonymity(back, result.qi, result.k)
        if not check.is_k_anonymous:
            problems.append(f"a QI vector is shared by {int(check.smallest_classes['size'].iloc[0])} rows < k")
    else:
        for name in changed:
            if not np.array_equal(np.sort(back[name].to_numpy(dtype=float)),
                                  np.sort(result.original[name].to_numpy(dtype=float))):
                problems.append(f"column {name!r} does not hold its original values")
    for name in back.columns:
        if name not in changed:
            same = back[name].astype(str).to_numpy() == result.original[name].astype(str).to_numpy()
            if not same.all():
                problems.append(f"column {name!r} changed although the method does not touch it")
    return problems


def write_microaggregation(
    result: Microaggregation,
    out: str | Path,
    *,
    identifiers: list[str] | tuple[str, ...] = (),
    source: str = "<DataFrame>",
    checksum: str | None = None,
    sep: str = ",",
) -> ReleaseReport:
    """Write ``result.released`` to ``out`` (CSV) and ``<stem>.report.json``; see the module doc."""
    out = Path(out)
    with staged(out) as partial:
        result.released.to_csv(partial, index=False, sep=sep)
        back = pd.read_csv(partial, sep=sep, keep_default_na=False, dtype=str)
        problems = _verify(result, back, list(identifiers))
        if problems:
            raise VerificationError(f"microaggregated release {out} failed its re-check: " + "; ".join(problems))

    attributes = [*result.qi, *result.confidential]
    sizes = result.group_sizes
    groups = ({"count": len(sizes), "smallest": int(sizes.min()), "largest": int(sizes.max())} if len(sizes) else
              {a: {"k": result.attribute_k[a], "count": int(g.max()) + 1} for a, g in result.attribute_groups.items()})
    risk = before = None
    if result.qi:
        risk = linkage_attack(result.original, result.released, result.qi, result.confidential, k=result.k).to_dict()
        before = linkage_attack(result.original, result.original, result.qi, result.confidential, k=1).to_dict()
    report = {
        "parameters": {"method": result.method, "k": result.k, "qi": list(result.qi),
                       "confidential": list(result.confidential), "k_per_attribute": result.attribute_k or None,
                       # never the seed itself: with it and the released groups, the swaps could be undone
                       "seeded": result.seed is not None, "identifiers_dropped": list(identifiers)},
        "groups": groups,
        "information_loss": information_loss(result.original, result.released, attributes).to_dict(),
        "linkage_risk": {"released": risk, "original": before},
        "input": {"source": source, "rows": len(result.original),
                  "checksum": checksum or frame_checksum(result.original)},
        "output": {"path": str(out), "rows": len(back), "columns": list(back.columns), "checksum": file_checksum(out)},
        "verification": {"rows_read_back": len(back), "identifiers_absent": True,
                         "checked": "k-anonymous QIs" if result.method == "mdav-id" else "original multisets kept"},
    }
    result_report = ReleaseReport(report)
    report_path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return result_report
