"""A t-closeness release re-checked from its report and its file, and from the input for the one
who holds it (``verify_against_report``).

It is a consistency check of the file against its report, not a proof: the file must be the one
the report names (its rows and SHA-256), the report's fields well formed, its stated figures those
the file gives. Against the file's own distribution anyone can recompute the figures; against the
input's, only with the input's counts: the report's, when it publishes them, or the input's file
(``input=``, a data steward's). Without either a tampered report consistent with the file cannot
be detected.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.data.reading import file_checksum, read_table
from microrelease.core.exceptions import HierarchyError, VerificationError
from microrelease.core.lattice.hierarchies import Hierarchy, read_arx
from microrelease.core.lattice.reference import own_distances, reference_faults
from microrelease.core.models.privacy_model import TOLERANCE
from microrelease.core.models.sensitive import value_order
from microrelease.core.models.t_closeness import TCloseness
from microrelease.core.release.cells import escape_column, formula_mask

FIGURES = 1e-9  # a stated figure and the recomputed one differ by float summation order only
UNCHECKED = ("the report does not publish the input's counts: the worst class against the input's distribution "
             "cannot be checked without them or the input (input=)")


@dataclass(frozen=True)
class ReferenceVerification:
    """A released file re-checked against its report: each class's EMD (classes in ``classes``
    order, by their QI values) to the input's distribution (``distances``; None with ``unchecked``
    saying why when neither the report's counts nor the input were at hand) and to the file's own
    (``file_distances``, over the values the file holds), the worst of each and whether every class
    is within t. ``reference``: where the input's counts came from ("report", "input" or "")."""

    model: str
    attribute: str
    t: float
    classes: tuple[tuple[str, ...], ...]
    distances: tuple[float, ...] | None
    worst: float | None
    satisfies: bool | None
    file_distances: tuple[float, ...]
    file_worst: float
    file_satisfies: bool
    file_failing: int
    reference: str
    unchecked: str = ""


def verify_against_report(report_path: str | Path, data_path: str | Path | None = None, *,
                         input: str | Path | None = None, sep: str | None = None, input_sep: str | None = None,
                         hierarchy: Hierarchy | str | Path | None = None) -> ReferenceVerification:
    """Re-check a released file's t-closeness from its report: the classes (rows sharing their QI
    values) counted on the file at ``data_path`` (by default the file the report names, beside it),
    measured against the input's distribution (the report's counts when published; counted from
    ``input``, the input table, when given: both when both) and against the file's own.
    ``hierarchy`` (hierarchical ground, with ``input``): the sensitive attribute's hierarchy, for the
    input's values the report's rows lack.

    Raises VerificationError (one line, naming the field or value) when the report is malformed,
    the file is not the one it names, the counts cannot be the input's, or a stated figure is not
    the file's.
    """
    report_path = Path(report_path)
    report = _load(report_path)
    if not report.get("reference_distribution"):
        raise VerificationError(f"{report_path.name} states no reference distribution (no model of it is measured "
                                "against a table-wide distribution)")
    section = _at(report, "reference_distribution", Mapping)
    attribute = _at(report, "reference_distribution.attribute", str)
    qi = _texts(_at(report, "parameters.qi", list), "parameters.qi")
    model = _model(report)
    path = _released_file(report, report_path, data_path)
    table = _read(path, sep, _at(report, "output.format", str) if "format" in report["output"] else "csv")
    _same_rows(report, path, len(table))
    for field, column in [*(("parameters.qi", q) for q in qi), ("reference_distribution.attribute", attribute)]:
        if column not in table.columns:
            raise VerificationError(f"{field}: column {column!r} is not in {path.name}")
    formulas = report.get("formula_cells")
    escaped = isinstance(formulas, Mapping) and formulas.get("escape_formulas") is True
    counts_stated = section.get("published") or "counts" in section or "values" in section
    published = _published(report) if counts_stated else None
    cells = _cells(table[attribute], published, escaped, attribute)
    counted = _input_counts(report, input, input_sep, attribute) if input is not None else None
    if published is not None and counted is not None and published != counted:
        value = next(v for v in [*published, *counted] if published.get(v) != counted.get(v))
        raise VerificationError(f"reference_distribution.counts: {value!r} counted {published.get(value, 0)}, the "
                                f"input holds {counted.get(value, 0)}")
    reference = published if published is not None else counted
    labels = list(reference) if reference is not None else value_order(set(cells))
    model, labels = _bound(model, section, labels, hierarchy)
    grid = pd.crosstab([table[q] for q in qi], cells).reindex(columns=labels, fill_value=0)
    strangers = sorted(set(cells) - set(labels))
    if strangers:
        raise VerificationError(f"reference distribution of {attribute!r}: value {strangers[0]!r} of the released "
                                "file is not in it")
    if reference is not None:
        stated = {"attribute": attribute, "values": labels, "counts": [reference[v] for v in labels],
                  "total": section["total"] if published is not None else sum(reference.values())}
        faults = reference_faults(stated, dict(zip(labels, grid.sum(axis=0), strict=True)),
                                  _count(_at(report, "counts.input_rows"), "counts.input_rows"))
        if faults:
            raise VerificationError(faults[0])
    counts = grid.to_numpy(dtype=float)
    own = own_distances(model, counts, labels)
    against = None if reference is None else model.statistic(counts, np.array([reference[v] for v in labels], float))
    _stated_figures(section, model, len(counts), own, against)
    limit = model.t + TOLERANCE
    keys = tuple(k if isinstance(k, tuple) else (k,) for k in grid.index)
    return ReferenceVerification(
        model.describe(), attribute, model.t, keys,
        None if against is None else tuple(map(float, against)),
        None if against is None else float(against.max(initial=0.0)),
        None if against is None else bool((against <= limit).all()),
        tuple(map(float, own)), float(own.max(initial=0.0)), bool((own <= limit).all()), int((own > limit).sum()),
        "" if reference is None else ("report" if published is not None else "input"),
        UNCHECKED if reference is None else "")


def _load(path: Path) -> dict:
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VerificationError(f"{path.name}: not a readable JSON report ({' '.join(str(exc).split())})") from None
    if not isinstance(report, dict):
        raise VerificationError(f"{path.name}: not a release report (expected a JSON object)")
    return report


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


KINDS: dict[type, str] = {str: "text", list: "a list", Mapping: "an object"}


def _at(report: Mapping, field: str, kind: type | None = None):
    """The report's ``field`` (a dotted path), refused by name when absent or not of ``kind``."""
    node = report
    for key in field.split("."):
        if not isinstance(node, Mapping) or node.get(key) is None:
            raise VerificationError(f"the report has no {field}")
        node = node[key]
    if kind is not None and not isinstance(node, kind):
        raise VerificationError(f"{field}: expected {KINDS[kind]}, got {_short(node)}")
    return node


def _texts(value: list, field: str, *, names: bool = True) -> list[str]:
    """Distinct text, at least one (``names``: column names, none empty)."""
    if not value or not all(isinstance(v, str) and (v or not names) for v in value) or len(set(value)) != len(value):
        raise VerificationError(f"{field}: expected a non-empty list of distinct {'names' if names else 'values'}, "
                                f"got {_short(value)}")
    return value


def _count(value, field: str) -> int:
    """A count as JSON holds one: a non-negative whole number (not 0.5, "3", true or 1e3)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise VerificationError(f"{field}: expected a non-negative whole number, got {_short(value)}")
    return value


def _model(report: Mapping) -> TCloseness:
    criteria = _at(report, "parameters.criteria", Mapping)
    spec = criteria.get(TCloseness.name)
    model = TCloseness.from_spec(spec) if isinstance(spec, str) else None
    if model is None or not (0 < model.t <= 1 and math.isfinite(model.t)) or model.ground not in (
            "equal", "ordered", "hierarchical"):
        raise VerificationError(f"parameters.criteria.{TCloseness.name}: expected T[:equal|ordered|hierarchical], "
                                f"got {_short(spec)}")
    return model


def _released_file(report: Mapping, report_path: Path, data_path) -> Path:
    files = _at(report, "output.files", list)
    if not files or not isinstance(files[0], Mapping) or not isinstance(files[0].get("name"), str):
        raise VerificationError(f"output.files: expected a list naming the released file, got {_short(files)}")
    path = Path(data_path) if data_path else report_path.parent / Path(files[0]["name"]).name
    stated = files[0].get("checksum")
    if not isinstance(stated, str):  # every release's report gives it: without it, any file would pass
        raise VerificationError(f"output.files[0].checksum: expected the released file's SHA-256, got {_short(stated)}")
    if file_checksum(path) != stated:
        raise VerificationError(f"{path.name}: its SHA-256 is not the report's output.files[0].checksum (not the "
                                "released file, or changed since)")
    return path


def _same_rows(report: Mapping, path: Path, rows: int) -> None:
    """The file holds the rows the report says it released (``output.rows``, ``counts.released_rows``)."""
    for field in ("output.rows", "counts.released_rows"):
        stated = _count(_at(report, field), field)
        if rows != stated:
            raise VerificationError(f"{path.name}: {rows} rows, the report's {field} says {stated}")


def _published(report: Mapping) -> dict[str, int]:
    """The report's counts, value -> count, refused by field when malformed."""
    values = _texts(_at(report, "reference_distribution.values", list), "reference_distribution.values", names=False)
    counts = _at(report, "reference_distribution.counts", list)
    if len(counts) != len(values):
        raise VerificationError(f"reference_distribution.counts: {len(counts)} counts for {len(values)} values")
    for n in counts:
        _count(n, "reference_distribution.counts")
    _count(_at(report, "reference_distribution.total"), "reference_distribution.total")
    return dict(zip(values, counts, strict=True))


def _cells(column: pd.Series, published: Mapping | None, escaped: bool, attribute: str) -> pd.Series:
    """Each cell as the input held it (formula cells are written escaped)."""
    if not escaped:
        return column
    if published is not None:  # the published values, escaped as the file holds them
        values = list(published)
        return column.map(dict(zip(escape_column(pd.Series(values, dtype=object)), values, strict=True))).fillna(column)
    raw = column.str.slice(1)
    return column.where(~(column.str.startswith("'") & formula_mask(raw)), raw)


def _input_counts(report: Mapping, input, sep: str | None, attribute: str) -> dict[str, int]:
    """The input table's count of each value, from the input file a data steward holds."""
    table = read_table(input, sep=sep)
    stated = report.get("input", {}).get("checksum") if isinstance(report.get("input"), Mapping) else None
    if isinstance(stated, str) and report["input"].get("name") != "<DataFrame>" and file_checksum(input) != stated:
        raise VerificationError(f"{Path(input).name}: its SHA-256 is not the report's input.checksum (not the input "
                                "of this release)")
    if attribute not in table.columns:
        raise VerificationError(f"reference_distribution.attribute: column {attribute!r} is not in {Path(input).name}")
    rows = _count(_at(report, "counts.input_rows"), "counts.input_rows")
    if len(table) != rows:
        raise VerificationError(f"{Path(input).name}: {len(table)} rows, the report's counts.input_rows says {rows}")
    return {str(v): int(n) for v, n in table[attribute].value_counts(sort=False).items()}


def _bound(model: TCloseness, section: Mapping, labels: Sequence[str], given) -> tuple[TCloseness, list[str]]:
    """The model with its hierarchy (hierarchical ground: ``given``, else the report's rows), and
    ``labels`` in the order the EMD reads them (the model's columns)."""
    if model.ground != "hierarchical":
        return model, value_order(labels)
    try:
        if given is None:
            rows = _at({"reference_distribution": section}, "reference_distribution.hierarchy", list)
            if not all(isinstance(r, list) and r and all(isinstance(c, str) for c in r) for r in rows):
                raise VerificationError(f"reference_distribution.hierarchy: expected rows of text, got {_short(rows)}")
            hierarchy = Hierarchy(section["attribute"], tuple(tuple(r) for r in rows))
        else:
            hierarchy = given if isinstance(given, Hierarchy) else read_arx(given, section["attribute"])
    except (HierarchyError, ValueError) as exc:  # the rows or the file given
        raise VerificationError(f"reference_distribution.hierarchy: {' '.join(str(exc).split())}") from None
    absent = [v for v in labels if v not in hierarchy.index]
    if absent:
        raise VerificationError(f"reference_distribution.hierarchy: value {absent[0]!r} is not a leaf of it"
                                + ("; give hierarchy=" if given is None else ""))
    labels = sorted(labels, key=hierarchy.index.__getitem__)
    return TCloseness(model.t, model.ground, hierarchy, tuple(hierarchy.index[v] for v in labels)), labels


def _stated_figures(section: Mapping, model: TCloseness, classes: int, own: np.ndarray, against) -> None:
    """The report's figures for ``model`` must be the file's (and the input's, when checked)."""
    name = model.describe()
    figures = section.get("models", {}).get(name) if isinstance(section.get("models"), Mapping) else None
    field = f"reference_distribution.models[{name!r}]"
    if figures is None:  # the model the report claims must have its figures, or the claim goes unchecked
        raise VerificationError(f"{field}: missing (the report claims {name} but gives no figures for it)")
    if not isinstance(figures, Mapping):
        raise VerificationError(f"{field}: expected an object, got {_short(figures)}")
    limit = model.t + TOLERANCE
    found = {"classes": classes, "worst_vs_released_file": float(own.max(initial=0.0)),
             "failing_vs_released_file": int((own > limit).sum())}
    if against is not None:
        found |= {"worst_vs_reference": float(against.max(initial=0.0)),
                  "failing_vs_reference": int((against > limit).sum())}
    for key, value in found.items():
        said = figures.get(key)
        if key == "worst_vs_reference" and said is None and "worst_vs_reference" in figures:
            continue  # left out of a report without counts: it would give them
        # not (|a - b| <= ε): a NaN stated figure fails too
        if isinstance(said, bool) or not isinstance(said, int | float) or not abs(said - value) <= FIGURES:
            raise VerificationError(f"{field}.{key}: the report says {_short(said)}, recomputed {value:.6g}")


def _read(path: Path, sep: str | None, fmt: str) -> pd.DataFrame:
    if fmt == "parquet":
        try:
            return pd.read_parquet(path).astype(str)
        except Exception as exc:  # pyarrow's errors for a file that is not Parquet
            raise VerificationError(f"{path.name} is not a readable Parquet file (output.format says parquet): "
                                    f"{' '.join(str(exc).split())[:200]}") from None
    return read_table(path, sep=sep)
