"""The distribution t-closeness is measured against, stated in the release report so that a reader
can check the claim from the released file alone.

t-closeness (Li, Li & Venkatasubramanian, ICDE 2007) bounds the Earth Mover's Distance (EMD)
between each equivalence class's distribution of the sensitive attribute and the *whole table's*.
The whole table is the input, before suppression (the paper's and ARX's reading): the released
file's own distribution differs once classes are suppressed, so a reader recomputing from the file
finds other distances, and a class at 0.4967 against the input may sit at 0.5031 against the file (adult, README).

:func:`reference_section` is the report's ``reference_distribution``: which distribution, the
sensitive attribute, its values in the order the EMD reads them (the value order for the ordered
distance, the hierarchy's leaf order for the hierarchical one, with the hierarchy's rows), each
value's count in the input and their total. The release's re-check on the written file measures
against these counts (:func:`reference_table`), and :func:`check_against_report` lets a reader do
the same from the report and the file, with the figures against the file's own distribution beside.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.criteria.base import Statistic
from microrelease.core.data.dataset import read_table
from microrelease.core.exceptions import VerificationError
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.models.base import TOLERANCE
from microrelease.core.models.t_closeness import TCloseness
from microrelease.core.release.cells import escape_column

DISTRIBUTION = "input"  # the only reference there is: the input table's, before suppression
DESCRIPTION = ("the input table's distribution of the sensitive attribute, before suppression (as Li et al. "
               "define t-closeness and ARX measures it)")
NOTE = ("these counts are the input's distribution of the sensitive attribute, published so that the claim can "
        "be checked from the released file")


def table_wide(models: Sequence) -> tuple:
    """The models measured against a table-wide distribution (t-closeness's EMD reference)."""
    return tuple(m for m in models if Statistic.TABLE_DISTRIBUTION in m.needs())


def emd_values(labels: Sequence[str], model) -> list[str]:
    """The sensitive values in the order the EMD reads them: the hierarchy's leaf order for a
    hierarchical ground, else the value order of the attribute (numeric when every value is a number)."""
    hierarchy = getattr(model, "hierarchy", None)
    if getattr(model, "ground", "") == "hierarchical" and hierarchy is not None:
        return sorted(labels, key=hierarchy.index.__getitem__)
    return list(labels)


def reference_section(sensitive, models: Sequence) -> dict | None:
    """The report's ``reference_distribution`` for ``models`` on ``sensitive`` (a SensitiveFrequency),
    or None when no model reads a table-wide distribution."""
    wide = table_wide(models)
    if not wide:
        return None
    counts = dict(zip(sensitive.labels, (int(n) for n in sensitive.table_counts), strict=True))
    values = emd_values(sensitive.labels, wide[0])
    section = {"distribution": DISTRIBUTION, "description": DESCRIPTION, "attribute": sensitive.attribute,
               "order": _order_name(wide[0]), "values": values, "counts": [counts[v] for v in values],
               "total": sum(counts.values()), "note": NOTE}
    hierarchy = getattr(wide[0], "hierarchy", None)
    if getattr(wide[0], "ground", "") == "hierarchical" and hierarchy is not None:
        kept = set(values)  # the leaves the data holds: a leaf of mass 0 moves no earth
        section["hierarchy"] = [list(row) for row in hierarchy.rows if row[0] in kept]
    return section


def _order_name(model) -> str:
    if getattr(model, "ground", "") == "hierarchical":
        return "the hierarchy's leaf order"
    return "value order (numeric when every value is a number, else text)"


def reference_table(section: Mapping, labels: Sequence[str]) -> np.ndarray:
    """The section's counts in ``labels``' column order; a value of ``labels`` it lacks is refused by name."""
    counts = dict(zip(section["values"], section["counts"], strict=True))
    absent = [v for v in labels if v not in counts]
    if absent:
        raise VerificationError(f"reference distribution of {section['attribute']!r}: value {absent[0]!r} of the "
                                "released file is not in it")
    return np.array([counts[v] for v in labels], dtype=float)


def reference_faults(section: Mapping, file_counts: Mapping[str, float], input_rows: int) -> list[str]:
    """Why ``section`` cannot be the input's distribution of a file holding ``file_counts`` rows of each
    value: counts and total disagree, the total is not the input's rows, or a value is counted below
    the released rows that hold it. Empty when it can be."""
    name = f"reference distribution of {section['attribute']!r}"
    counts = dict(zip(section["values"], section["counts"], strict=True))
    faults = []
    if sum(counts.values()) != section["total"]:
        faults.append(f"{name}: its counts sum to {sum(counts.values())}, its total says {section['total']}")
    if section["total"] != input_rows:
        faults.append(f"{name}: total {section['total']} is not the input's {input_rows} rows")
    for value, n in file_counts.items():
        if n > counts.get(value, 0):
            faults.append(f"{name}: count {counts.get(value, 0)} of {value!r} is below the {int(n)} released rows "
                          "holding it")
    return faults


def distances(model, class_counts: np.ndarray, reference: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each class's EMD to ``reference`` and to the classes' own total (the released file's distribution)."""
    return model.statistic(class_counts, reference), model.statistic(class_counts, class_counts.sum(axis=0))


def worst_figures(model, class_counts: np.ndarray, reference: np.ndarray) -> dict:
    """The worst class against the reference and against the file's own distribution, for the report."""
    against, own = distances(model, class_counts, reference)
    limit = model.t + TOLERANCE
    return {"t": model.t, "classes": len(class_counts),
            "worst_vs_reference": float(against.max(initial=0.0)),
            "worst_vs_released_file": float(own.max(initial=0.0)),
            "failing_vs_reference": int((against > limit).sum()),
            "failing_vs_released_file": int((own > limit).sum())}


def figures_line(figures: Mapping) -> str:
    """One line with both figures (the verification's and the command line's)."""
    return (f"worst class {figures['worst_vs_reference']:.6g} against the input's distribution (the report's "
            f"reference), {figures['worst_vs_released_file']:.6g} against the released file's own")


@dataclass(frozen=True)
class ReferenceCheck:
    """A released file re-checked against its report's reference distribution: each class's EMD to
    the reference (``distances``, classes in ``classes`` order, by their QI values) and to the file's
    own distribution (``file_distances``), the worst of each and whether every class is within t."""

    model: str
    attribute: str
    t: float
    classes: tuple[tuple[str, ...], ...]
    distances: tuple[float, ...]
    worst: float
    passes: bool
    file_distances: tuple[float, ...]
    file_worst: float
    file_passes: bool


def check_against_report(report_path: str | Path, data_path: str | Path | None = None, *,
                         sep: str | None = None) -> ReferenceCheck:
    """Re-check a released file's t-closeness from its report alone: the classes (rows sharing their
    QI values) counted on the file at ``data_path`` (by default the file the report names, beside
    it), measured against the report's reference counts and against the file's own distribution.

    Raises VerificationError (one line, naming the value) when the report states no reference, or
    when its counts cannot be the input's distribution of this file.
    """
    report_path = Path(report_path)
    report = json.loads(report_path.read_text(encoding="utf-8"))
    section = report.get("reference_distribution")
    if not section:
        raise VerificationError(f"{report_path.name} states no reference distribution (no model of it is measured "
                                "against a table-wide distribution)")
    model = _model(report, section)
    path = Path(data_path) if data_path else report_path.parent / report["output"]["files"][0]["name"]
    table = _read(path, sep, report.get("output", {}).get("format", "csv"))
    qi, attribute = list(report["parameters"]["qi"]), section["attribute"]
    values = _file_values(section, report)
    cells = table[attribute].map(values)
    if cells.isna().any():
        raise VerificationError(f"reference distribution of {attribute!r}: value {table[attribute][cells.isna()].iloc[0]!r} "
                                "of the released file is not in it")
    grid = pd.crosstab([table[q] for q in qi], cells).reindex(columns=section["values"], fill_value=0)
    faults = reference_faults(section, dict(zip(section["values"], grid.sum(axis=0), strict=True)),
                              report["counts"]["input_rows"])
    if faults:
        raise VerificationError(faults[0])
    counts = grid.to_numpy(dtype=float)
    against, own = distances(model, counts, np.asarray(section["counts"], dtype=float))
    limit = model.t + TOLERANCE
    keys = tuple(k if isinstance(k, tuple) else (k,) for k in grid.index)
    return ReferenceCheck(model.describe(), attribute, model.t, keys, tuple(map(float, against)),
                          float(against.max(initial=0.0)), bool((against <= limit).all()), tuple(map(float, own)),
                          float(own.max(initial=0.0)), bool((own <= limit).all()))


def _model(report: Mapping, section: Mapping) -> TCloseness:
    spec = report["parameters"]["criteria"].get(TCloseness.name)
    model = TCloseness.from_spec(spec) if spec else None
    if model is None:
        raise VerificationError(f"the report's criteria name no {TCloseness.name} to check: {report['parameters']['criteria']}")
    if model.ground != "hierarchical":
        return model
    hierarchy = Hierarchy(section["attribute"], [tuple(r) for r in section["hierarchy"]])
    return TCloseness(model.t, model.ground, hierarchy, tuple(hierarchy.index[v] for v in section["values"]))


def _file_values(section: Mapping, report: Mapping) -> dict[str, str]:
    """Each cell as the file holds it -> the value of the reference (formula cells are written escaped)."""
    values = list(section["values"])
    if not report.get("formula_cells", {}).get("escape_formulas"):
        return {v: v for v in values}
    return dict(zip(escape_column(pd.Series(values, dtype=object)), values, strict=True))


def _read(path: Path, sep: str | None, fmt: str) -> pd.DataFrame:
    if fmt == "parquet":
        return pd.read_parquet(path).astype(str)
    return read_table(path, sep=sep)
