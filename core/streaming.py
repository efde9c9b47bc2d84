"""Release at scale: the chosen node applied by the engine that holds the rows, streamed to a file.

The same release as :func:`microrelease.core.write_release` (Samarati's generalization with minimal
required suppression, identifiers dropped), but the rows never enter Python: the engine joins each
row to its QI's level table, drops the rows of the classes smaller than k (known in advance from
the frequency set), and writes CSV or Parquet. The output is first written under a temporary name
beside the target and re-checked by the engine (rows, smallest class, columns); only then is it
renamed into place and the report written. On any failure nothing is left under the target name.
Suppressed rows cannot be numbered without a second ordered pass over the input, so the report
lists the suppressed classes (generalized values and sizes) with their total.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.engines import Engine, ReleasePlan, Source, output_format
from microrelease.core.exceptions import InvalidParameterError, VerificationError
from microrelease.core.generalization import class_sizes, generalize_codes
from microrelease.core.release import ReleaseReport, node_figures, report_path
from microrelease.core.staging import staged
from microrelease.core.summary import TableSummary
from microrelease.core.validation import check_k


def release_plan(summary: TableSummary, node: Sequence[int], k: int, *, sep: str = ",",
                 fmt: str = "csv") -> tuple[ReleasePlan, pd.DataFrame, np.ndarray]:
    """The plan for ``node`` and ``k``, the suppressed classes (labels and ``size``) and all class sizes."""
    freq, hierarchies, qi = summary.frequency, summary.hierarchies, summary.quasi_identifiers
    sizes, tuple_class = class_sizes(freq, hierarchies, node)
    tables = tuple(
        pd.DataFrame({"raw": list(h.ground), "label": np.asarray(h.labels[d], dtype=object)[h.codes[d]],
                      "code": h.codes[d].astype(np.int32)})
        for h, d in zip(hierarchies, node, strict=True)
    )
    small = sizes[tuple_class] < k
    level = generalize_codes(hierarchies, freq.codes[small], node)
    classes, first = np.unique(level, axis=0, return_index=True)
    suppressed = pd.DataFrame(classes, columns=[f"c{i}" for i in range(len(qi))]).astype(np.int32)
    labelled = pd.DataFrame({
        name: np.asarray(h.labels[d], dtype=object)[classes[:, i]] if len(classes) else []
        for i, (name, h, d) in enumerate(zip(qi, hierarchies, node, strict=True))
    })
    labelled["size"] = sizes[tuple_class[np.flatnonzero(small)[first]]] if len(classes) else []
    plan = ReleasePlan(qi, tuple(summary.schema.output_columns(list(summary.columns))), tables, suppressed,
                       int(summary.n_rows - sizes[sizes < k].sum()), sep, fmt)
    return plan, labelled.sort_values(["size", *qi], kind="stable").reset_index(drop=True), sizes


def stream_release(
    summary: TableSummary,
    node: Sequence[int],
    k: int,
    out: str | Path,
    *,
    max_sup: int | None = None,
    sep: str = ",",
    parameters: Mapping[str, object] | None = None,
    engine: Engine | None = None,
    list_classes: int = 1000,
    progress=None,
    should_stop=None,
) -> ReleaseReport:
    """Write the release at ``node`` to ``out`` (CSV, or Parquet by suffix) and ``<stem>.report.json``.

    ``engine`` defaults to the one that computed the summary. If ``max_sup`` is given and the node
    needs more suppression, nothing is written and InvalidParameterError says by how much.
    """
    node = summary.lattice.check_node(node)
    k = check_k(k, summary.n_rows)
    engine = engine or summary.engine
    out = Path(out)
    fmt = output_format(out)
    plan, suppressed, sizes = release_plan(summary, node, k, sep=sep, fmt=fmt)
    n_suppressed = summary.n_rows - plan.expected_rows
    if max_sup is not None and n_suppressed > max_sup:
        raise InvalidParameterError(
            f"node {list(node)} needs {n_suppressed} suppressed rows for k={k}, over MaxSup={max_sup}"
        )
    with staged(out) as partial:
        engine.release(summary.source, plan, partial, progress=progress, should_stop=should_stop)
        written = engine.inspect(partial, summary.quasi_identifiers, fmt=fmt, sep=sep)
        problems = []
        if written.rows != plan.expected_rows:
            problems.append(f"{written.rows} rows written, expected {plan.expected_rows}")
        if written.rows and written.smallest < k:
            problems.append(f"smallest class has {written.smallest} rows < k={k}")
        leaked = [c for c in summary.schema.identifiers if c in written.columns]
        if leaked:
            problems.append(f"identifier column(s) {leaked} present")
        if list(written.columns) != list(plan.columns):
            problems.append(f"columns {list(written.columns)} differ from {list(plan.columns)}")
        if problems:
            raise VerificationError(f"release {out} failed its re-check: " + "; ".join(problems))

    files = tuple(sorted(out.glob("*.parquet"))) if out.is_dir() else (out,)
    h, qi = summary.hierarchies, summary.quasi_identifiers
    report = {
        "parameters": {
            "k": k, "max_sup": max_sup, "qi": list(qi),
            "identifiers_dropped": list(summary.schema.identifiers), "sensitive": list(summary.schema.sensitive),
            **dict(parameters or {}),
        },
        "node": {"vector": list(node), "levels": {q: h[i].level_names[d] for i, (q, d) in enumerate(zip(qi, node, strict=True))}},
        "metrics": node_figures(summary.lattice, summary.n_rows, node, sizes, k),
        "input": {"source": summary.source.description, "rows": summary.n_rows, "checksum": summary.checksum,
                  "missing_qi_values": dict(summary.missing_counts), "engine": engine.name},
        "output": {"path": str(out), "format": fmt, "rows": written.rows, "columns": list(written.columns),
                   "checksum": Source(files, fmt, sep).checksum()},
        "suppressed": {"count": n_suppressed, "classes_total": len(suppressed),
                       "classes": suppressed.head(list_classes).to_dict(orient="records"),
                       "classes_listed": min(list_classes, len(suppressed))},
        "verification": {"k_anonymous": True, "classes": written.classes, "smallest_class": written.smallest,
                         "rows_read_back": written.rows, "identifiers_absent": True, "checked_by": engine.name},
    }
    result = ReleaseReport(report)
    report_path(out).write_text(result.to_json() + "\n", encoding="utf-8")
    return result
