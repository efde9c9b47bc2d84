"""Writing a DP release with its report, re-read and checked before it is put in place."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.dataset import file_checksum, frame_checksum
from microrelease.core.dp.microdata import DPRelease
from microrelease.core.exceptions import VerificationError
from microrelease.core.information_loss import information_loss
from microrelease.core.release import ReleaseReport, report_path
from microrelease.core.staging import staged


def write_dp_release(release: DPRelease, original: pd.DataFrame, out: str | Path, *, source: str = "<DataFrame>",
                     checksum: str | None = None, sep: str = ",", warnings_raised=()) -> ReleaseReport:
    """Write ``release.released`` to ``out`` and ``<stem>.report.json`` (ε spent, per-attribute noise,
    information loss against ``original``). The file is read back: row count, columns, every
    released value finite, every column not released under noise unchanged."""
    out = Path(out)
    with staged(out) as partial:
        release.released.to_csv(partial, index=False, sep=sep)
        back = pd.read_csv(partial, sep=sep, dtype=str, keep_default_na=False)
        problems = []
        if len(back) != len(original) or list(back.columns) != list(release.released.columns):
            problems.append(f"{len(back)} rows / columns {list(back.columns)} read back")
        else:
            for name in back.columns:
                if name in release.attributes:
                    if not np.isfinite(pd.to_numeric(back[name], errors="coerce")).all():
                        problems.append(f"column {name!r} holds values that are not finite numbers")
                elif not (back[name].to_numpy() == release.released[name].astype(str).to_numpy()).all():
                    problems.append(f"column {name!r} changed although it is not released with noise")
        if problems:
            raise VerificationError(f"DP release {out} failed its re-check: " + "; ".join(problems))

    report = {
        "parameters": release.to_dict(),
        "information_loss": information_loss(original, release.released, list(release.attributes)).to_dict(),
        "warnings": list(warnings_raised),
        "input": {"source": source, "rows": len(original), "checksum": checksum or frame_checksum(original)},
        "output": {"path": str(out), "rows": len(back), "columns": list(back.columns), "checksum": file_checksum(out)},
    }
    result = ReleaseReport(report)
    report_path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return result
