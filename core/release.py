"""Writing a release and checking it independently before reporting success.

A release is the generalized table at one node with minimal required suppression (see
:mod:`microrelease.core.generalization`), identifier columns dropped, written to CSV, plus a JSON
report: parameters, node, metrics, the suppressed rows (count and input row numbers), and a
checksum of the input. Before :func:`write_release` returns, it reads back what it wrote and
re-checks k-anonymity, the row count and the absence of identifiers with code that shares nothing
with the generalization path (a plain pandas group-by on the file's text).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.dataset import Dataset, file_checksum, read_table
from microrelease.core.exceptions import InvalidParameterError, VerificationError
from microrelease.core.generalization import generalize
from microrelease.core.lattice import Lattice, Node
from microrelease.core.metrics import node_metrics
from microrelease.core.profile import ClassStats
from microrelease.core.staging import staged


@dataclass(frozen=True)
class KAnonymityCheck:
    """Result of checking a table for k-anonymity over some QI columns."""

    k: int
    n_rows: int
    n_classes: int
    is_k_anonymous: bool
    smallest_classes: pd.DataFrame  # QI values and size of the smallest classes, smallest first

    def to_dict(self, limit: int = 10) -> dict:
        return {
            "k": self.k,
            "rows": self.n_rows,
            "classes": self.n_classes,
            "k_anonymous": self.is_k_anonymous,
            "smallest_classes": self.smallest_classes.head(limit).to_dict(orient="records"),
        }


def check_k_anonymity(table: pd.DataFrame, qi: Sequence[str], k: int, *, limit: int = 10) -> KAnonymityCheck:
    """Is every combination of the ``qi`` columns shared by at least k rows? (values compared as text)"""
    missing = [c for c in qi if c not in table.columns]
    if missing:
        raise InvalidParameterError(f"unknown QI column(s) {missing}; the table has {list(table.columns)}")
    if len(table) == 0:
        return KAnonymityCheck(k, 0, 0, True, pd.DataFrame(columns=[*qi, "size"]))
    text = table[list(qi)].astype(str)
    sizes = text.groupby(list(qi), sort=False, dropna=False).size().rename("size").reset_index()
    sizes = sizes.sort_values(["size", *qi], kind="stable").reset_index(drop=True)
    ok = bool(sizes["size"].min() >= k)
    return KAnonymityCheck(k, len(table), len(sizes), ok, sizes.head(limit))


@dataclass(frozen=True)
class ReleaseReport:
    """What was released, how, and the proof that it was checked."""

    data: dict

    def to_json(self) -> str:
        return json.dumps(self.data, indent=2, sort_keys=False)


def node_figures(lattice: Lattice, n_rows: int, node: Node, class_sizes: np.ndarray, k: int) -> dict:
    """Every registered metric of one node, from the sizes of all its classes (suppressed included)."""
    stats = ClassStats.from_sizes(class_sizes, k)
    figures = node_metrics(lattice, n_rows, stats, grid=np.array([node]))
    return {name: v[0].item() for name, v in figures.items()}


def write_release(
    dataset: Dataset,
    node: Sequence[int],
    k: int,
    out: str | Path,
    *,
    max_sup: int | None = None,
    sep: str = ",",
    parameters: Mapping[str, object] | None = None,
    sensitive=None,
    models: Sequence = (),
) -> ReleaseReport:
    """Write the release at ``node`` to ``out`` and its report to ``<out stem>.report.json``.

    With privacy ``models`` (l-diversity, t-closeness) on ``sensitive`` (a SensitiveFrequency), the
    classes failing a model are suppressed too, and the read-back check re-evaluates every model on
    every class of the written file.

    If ``max_sup`` is given and the node needs more suppression, nothing is written and
    InvalidParameterError says by how much. Raises VerificationError if the read-back check fails.
    """
    gt = generalize(dataset, node, k, sensitive=sensitive, models=models)
    if max_sup is not None and gt.n_suppressed > max_sup:
        raise InvalidParameterError(
            f"node {list(gt.node)} needs {gt.n_suppressed} suppressed rows for k={gt.k}, over MaxSup={max_sup}"
        )
    out = Path(out)
    with staged(out) as partial:
        gt.released.to_csv(partial, index=False, sep=sep)
        back, check, problems = _recheck(dataset, gt, partial, sep, sensitive, models)
        if problems:
            raise VerificationError(f"release {out} failed its re-check: " + "; ".join(problems))

    h = dataset.hierarchies
    report = {
        "parameters": {
            "k": gt.k,
            "max_sup": max_sup,
            "qi": list(dataset.quasi_identifiers),
            "identifiers_dropped": list(dataset.schema.identifiers),
            "sensitive": list(dataset.schema.sensitive),
            "privacy_models": [m.describe() for m in models],
            **dict(parameters or {}),
        },
        "node": {
            "vector": list(gt.node),
            "levels": {q: h[i].level_names[d] for i, (q, d) in enumerate(zip(dataset.quasi_identifiers, gt.node, strict=True))},
        },
        "metrics": node_figures(dataset.lattice, dataset.n_rows, gt.node, gt.class_sizes, gt.k),
        "input": {"source": dataset.source, "rows": dataset.n_rows, "checksum": dataset.checksum,
                  "missing_qi_values": dict(dataset.missing_counts),
                  "blank_lines_skipped": dataset.blank_lines_skipped},
        "output": {"path": str(out), "rows": len(back), "columns": list(back.columns), "checksum": file_checksum(out)},
        "suppressed": {"count": gt.n_suppressed, "rows": gt.suppressed_rows.tolist(),
                       "row_numbering": "0-based position of the data row in the input (header excluded)"},
        "verification": {"k_anonymous": True, "classes": check.n_classes,
                         "smallest_class": int(check.smallest_classes["size"].iloc[0]) if check.n_classes else 0,
                         "rows_read_back": len(back), "identifiers_absent": True},
    }
    result = ReleaseReport(report)
    report_path(out).write_text(result.to_json() + "\n", encoding="utf-8")
    return result


def _recheck(dataset: Dataset, gt, path: Path, sep: str, sensitive, models):
    """Independent re-check of what is on disk: (table read back, k check, problems found)."""
    back = read_table(path, sep=sep)
    check = check_k_anonymity(back, dataset.quasi_identifiers, gt.k)
    expected_rows = dataset.n_rows - gt.n_suppressed
    problems = []
    if not check.is_k_anonymous:
        problems.append(f"smallest class has {int(check.smallest_classes['size'].iloc[0])} rows < k={gt.k}")
    if len(back) != expected_rows:
        problems.append(f"{len(back)} rows read back, expected {expected_rows}")
    if models and len(back):
        problems += _model_problems(back, dataset.quasi_identifiers, sensitive, models)
    leaked = [c for c in dataset.schema.identifiers if c in back.columns]
    if leaked:
        problems.append(f"identifier column(s) {leaked} present")
    return back, check, problems


def _model_problems(back: pd.DataFrame, qi: Sequence[str], sensitive, models) -> list[str]:
    """Every class of the written file, re-grouped from its text, must pass every model."""
    values = back[sensitive.attribute].astype(str)
    table = pd.crosstab([back[q].astype(str) for q in qi], values).reindex(columns=list(sensitive.labels), fill_value=0)
    counts = table.to_numpy(dtype=float)
    problems = []
    for model in models:
        failing = int((~model.passes(counts, sensitive.table_counts)).sum())
        if failing:
            problems.append(f"{failing} released class(es) fail {model.describe()}")
    return problems


def report_path(out: str | Path) -> Path:
    """``OUT.csv`` -> ``OUT.report.json``."""
    out = Path(out)
    return out.with_name(out.stem + ".report.json")
