"""The release of one lattice node (Samarati's generalization with minimal required suppression).

A release is the table generalized to ``node`` with every class removed that is smaller than k or,
with privacy models on a sensitive attribute, fails one of them; identifier columns are dropped. It
is written by the engine that holds the rows (pandas for a ``Dataset``,
DuckDB or Dask for a ``TableSummary``) in a random row order, through
``microrelease.core.release.publishing``: written under a temporary name, read back and checked
(rows, k, MaxSup, levels, every model on every class, t-closeness against the input's distribution,
the report's counts of it when it publishes them (``reference``), no
identifier, formula cells), reported, and
only then put in place. The same function serves the CLI, the dashboard's export and the API.

The report counts the suppressed rows by reason; it lists the suppressed classes (generalized
values, size, reason) only on request, and never input row positions: a report beside the release
would otherwise tell which people are the input's outliers. For the page a person reads, it also
says why the node was chosen and where it sits in the lattice (its height, whether it is k-minimal),
what each QI keeps (level, level name, share of distinct values), and, counted on the file read
back, the class-size histogram and the re-identification risk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from microrelease.core.criteria.criteria_set import Criteria
from microrelease.core.criteria.criterion import ClassView
from microrelease.core.data.dataset import Dataset
from microrelease.core.engines import COUNT, Engine, PandasEngine, ReleasePlan, Source, output_format
from microrelease.core.engines.summary import TableSummary
from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.distance_vectors import Lattice, Node
from microrelease.core.lattice.frequency import FrequencySource
from microrelease.core.lattice.generalization import class_representatives, class_sizes, generalize_codes
from microrelease.core.lattice.hierarchies import describe_levels
from microrelease.core.lattice.metrics import node_metrics
from microrelease.core.lattice.policies import POLICIES
from microrelease.core.lattice.profile import ClassStats
from microrelease.core.lattice.quality import node_quality
from microrelease.core.lattice.reference import (
    figures_line,
    reference_faults,
    reference_section,
    reference_table,
    stated_section,
    table_wide,
    worst_figures,
)
from microrelease.core.lattice.release_report import decision, minimality, utility
from microrelease.core.release import (
    Published,
    Verification,
    Verified,
    file_target,
    publish,
    with_formula_verification,
)
from microrelease.core.release.cells import escape_column, formula_counts, refuse_formula_headers
from microrelease.core.release.class_risk import class_figures, population_risk
from microrelease.core.validation import validate_k, validate_share

if TYPE_CHECKING:
    from microrelease.core.models.sensitive import SensitiveFrequency
    from microrelease.core.risk.k_map import KMap


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
    """Is every combination of the ``qi`` columns shared by at least k rows? (values compared as text)

    Parameters
    ----------
    table : pandas.DataFrame
        A released table.
    qi : sequence of str
        Its quasi-identifier columns.
    k : int
        The k to check.
    limit : int, default 10
        At most this many failing classes are listed.

    Returns
    -------
    KAnonymityCheck
        Whether every class has at least ``k`` rows, and the smallest classes otherwise.

    Examples
    --------
    >>> import pandas as pd
    >>> check_k_anonymity(pd.DataFrame({"zip": ["1*", "1*", "2*"]}), ["zip"], 2).is_k_anonymous
    False
    """
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


@dataclass(frozen=True, eq=False)
class NodeSuppression:
    """Which classes of a node are released, and why the others are not (one set of counts)."""

    node: Node
    k: int
    sizes: np.ndarray          # every class of the node
    small: np.ndarray          # class smaller than k (and passing every model)
    failing: dict[str, np.ndarray]  # model description -> class fails it
    class_levels: np.ndarray   # level codes of each class (classes × QIs)

    @cached_property
    def suppressed(self) -> np.ndarray:
        out = self.small.copy()
        for fails in self.failing.values():
            out |= fails
        return out

    def counts(self, n_rows: int) -> dict:
        """The suppressed rows by reason, for the report. A class smaller than k is counted under k
        whatever else it fails: charged to a model when it also failed one, its reason would say how far
        its sensitive values are from the table's (for a two-valued attribute, which value a suppressed
        outlier held). Only classes of k rows or more are counted under the models they fail."""
        below_k = self.suppressed & (self.sizes < self.k)
        total = int(self.sizes[self.suppressed].sum())
        return {"input_rows": n_rows, "released_rows": n_rows - total, "suppressed_rows": total,
                "suppressed_by_reason": {
                    "class_smaller_than_k": int(self.sizes[below_k].sum()),
                    "class_failing_a_privacy_model": int(self.sizes[self.suppressed & ~below_k].sum()),
                    "by_model": {m: int(self.sizes[f & ~below_k].sum()) for m, f in self.failing.items()}}}


def node_suppression(data: FrequencySource, node: Sequence[int], criteria: Criteria) -> NodeSuppression:
    """The classes of ``node`` and the ones minimal required suppression removes for ``criteria``:
    smaller than k, or failing a scope-CLASS criterion (each read through the protocol)."""
    freq, hierarchies, k = data.frequency, data.hierarchies, criteria.k.k
    sizes, tuple_class = class_sizes(freq, hierarchies, node)
    first = class_representatives(tuple_class, len(sizes))
    levels = generalize_codes(hierarchies, freq.codes[first], node)
    if criteria.models and freq.row_tuple is None:
        raise InvalidParameterError("privacy models read every row's sensitive value: they need a Dataset, "
                                    "not a summary computed by an engine", parameter="models")
    sensitive, k_map = criteria.sensitive, criteria.k_map
    classes = ClassView(
        sizes,
        value_counts=(lambda: sensitive.class_counts(tuple_class[freq.row_tuple], len(sizes))) if sensitive else None,
        table_counts=(lambda: sensitive.table_counts) if sensitive else None,
        population_sizes=(lambda: k_map.population.class_sizes(freq.codes[first], node)) if k_map else None)
    failing = criteria.failing(classes)
    passing = np.ones(len(sizes), dtype=bool)
    for fails in failing.values():
        passing &= ~fails
    return NodeSuppression(tuple(node), k, sizes, (sizes < k) & passing, failing, levels)


def node_figures(lattice: Lattice, n_rows: int, suppression: NodeSuppression) -> dict:
    """Every registered metric of one node, from the classes its release keeps."""
    stats = ClassStats.from_sizes(suppression.sizes, suppression.k, suppression.suppressed)
    figures = node_metrics(lattice, n_rows, stats, grid=np.array([suppression.node]))
    return {name: v[0].item() for name, v in figures.items()}


def _plan(data: FrequencySource, suppression: NodeSuppression, sep: str, fmt: str, escape: bool) -> ReleasePlan:
    tables = []
    kept = suppression.class_levels[~suppression.suppressed]
    for i, (h, d) in enumerate(zip(data.hierarchies, suppression.node, strict=True)):
        labels = pd.Series(np.asarray(h.labels[d], dtype=object)[h.codes[d]])
        if escape:
            labels = escape_column(labels)
        tables.append(pd.DataFrame({"raw": list(h.ground), "label": labels.to_numpy(dtype=object),
                                    "code": h.codes[d].astype(np.int32),
                                    "written": np.isin(h.codes[d], kept[:, i])}))
    dropped = suppression.class_levels[suppression.suppressed]
    gone = pd.DataFrame(dropped, columns=[f"c{i}" for i in range(dropped.shape[1])]).astype(np.int32)
    columns = tuple(data.schema.output_columns(list(data.columns)))
    return ReleasePlan(data.quasi_identifiers, columns, tuple(tables), gone,
                       int(suppression.sizes[~suppression.suppressed].sum()), sep, fmt, escape)


def _suppressed_classes(data: FrequencySource, suppression: NodeSuppression, limit: int) -> dict:
    chosen = np.flatnonzero(suppression.suppressed)
    frame = pd.DataFrame({q: np.asarray(h.labels[d], dtype=object)[suppression.class_levels[chosen, i]]
                          for i, (q, h, d) in enumerate(zip(data.quasi_identifiers, data.hierarchies,
                                                                suppression.node, strict=True))})
    frame["size"] = suppression.sizes[chosen]
    frame["reason"] = ["; ".join([f"fails {m}" for m, f in suppression.failing.items() if f[c]]
                                 or [f"smaller than k={suppression.k}"]) for c in chosen]
    frame = frame.sort_values(["size", *data.quasi_identifiers], kind="stable")
    listed: dict[str, object] = {"classes_total": len(frame), "classes_listed": min(limit, len(frame))}
    if limit:  # they single out the outliers: only when the data steward asks, for a report kept private
        listed |= {"classes": frame.head(limit).to_dict(orient="records"),
                   "note": "these classes single out outliers of the input: keep this report private"}
    return listed


@dataclass(frozen=True)
class OutputOptions:
    """How a release is written: CSV ``sep``; ``escape`` formula cells with a leading ``'``; ``force``
    replaces a previous release of this tool (nothing else is ever overwritten); ``protected`` paths
    are never written (hierarchy files; the input always is); ``list_classes``: list up to that many
    suppressed classes (generalized values, size, reason) in the report, 0 gives their number only, as
    a listing singles out the input's outliers; ``sampling_fraction``: report the population risk of
    the written classes for a sample of that share of the population; ``publish_reference``: under
    t-closeness, publish the input's counts of the sensitive values in the report (minus the file's
    counts they give the suppressed rows' sensitive values: off by default).

    Parameters
    ----------
    sep : str, default ","
        The CSV separator.
    escape : bool, default False
        Escape formula cells with a leading ``'``.
    force : bool, default False
        Replace a previous release of this tool.
    protected : tuple, optional
        Paths never written.
    list_classes : int, default 0
        List up to that many suppressed classes in the report.
    sampling_fraction : float, optional
        The sampling fraction for the risk figures.
    publish_reference : bool, default False
        Also write the reference figures.
    """

    sep: str = ","
    escape: bool = False
    force: bool = False
    protected: tuple = ()
    list_classes: int = 0
    sampling_fraction: float | None = None
    publish_reference: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "protected", tuple(self.protected))
        if self.sampling_fraction is not None:
            object.__setattr__(self, "sampling_fraction", validate_share(self.sampling_fraction, "sampling_fraction"))


@dataclass(frozen=True, eq=False)
class NodeRelease:
    """One release decision, described once: the table, the node, the privacy criteria, MaxSup and
    how the node was chosen. The dashboard's export and the CLI's ``release`` both build one and
    call ``write``, so that they cannot write different releases for the same decision.

    Parameters
    ----------
    data : FrequencySource
        A ``Dataset`` or a ``TableSummary``.
    node : tuple of int
        The distance vector released.
    criteria : Criteria
        The privacy criteria.
    max_sup : int, optional
        MaxSup, in rows.
    chosen_by : str, default "node"
        How the node was chosen (for the report).
    policy : str, optional
        The preference policy that chose it.
    weights : dict, optional
        The policy's weights.
    """

    data: FrequencySource
    node: tuple[int, ...]
    criteria: Criteria
    max_sup: int | None = None
    chosen_by: str = "node"  # "node", or "policy NAME"
    policy: str | None = None
    weights: dict | None = None

    @property
    def parameters(self) -> dict:
        return {"chosen_by": self.chosen_by, "policy": self.policy, "weights": self.weights or None}

    def suppression(self) -> NodeSuppression:
        return node_suppression(self.data, self.node, self.criteria)

    def write(self, out: str | Path, output: OutputOptions | None = None, **options) -> Published:
        """Write this release to ``out``; ``options`` as for ``write_release`` (engine, progress,
        should_stop).

        Parameters
        ----------
        out : str or Path
            The release's file.
        output : OutputOptions, optional
            How it is written.
        **options
            Further arguments of ``write_release``.

        Returns
        -------
        Published
            The files written and the verification of the re-read release.
        """
        return write_release(self.data, self.node, out, criteria=self.criteria, max_sup=self.max_sup,
                             output=output, parameters=self.parameters, **options)


def write_release(
    data: FrequencySource,
    node: Sequence[int],
    out: str | Path,
    *,
    criteria: Criteria,
    max_sup: int | None = None,
    output: OutputOptions | None = None,
    parameters: Mapping[str, object] | None = None,
    engine: Engine | None = None,
    progress=None,
    should_stop=None,
) -> Published:
    """Write the release of ``node`` under ``criteria`` to ``out`` (CSV, or Parquet by suffix) and its
    report (``<stem>.report.json``); see the module docstring and ``OutputOptions``.

    Criteria on a sensitive attribute need a Dataset. If ``max_sup`` is given and the node needs more
    suppression, or the released classes fail a scope-RELEASE criterion, nothing is written and
    InvalidParameterError says by how much.

    Parameters
    ----------
    data : FrequencySource
        A ``Dataset`` or a ``TableSummary``.
    node : sequence of int
        The distance vector to release.
    out : str or Path
        The release's file.
    criteria : Criteria
        The criteria the release must satisfy.
    max_sup : int, optional
        MaxSup, the most rows that may be suppressed.
    output : OutputOptions, optional
        How the release is written.
    parameters : mapping, optional
        Extra entries for the JSON report.
    engine : Engine, optional
        The engine that writes the rows (default: the data's own).
    progress : callable, optional
        Called with the progress.
    should_stop : callable, optional
        Polled; when it returns true the release raises ``Cancelled``.

    Returns
    -------
    Published
        The files written and the verification of the re-read release.

    Raises
    ------
    VerificationError
        If the re-read release does not meet its guarantee.
    """
    if not isinstance(criteria, Criteria):
        raise InvalidParameterError(f"criteria: expected a Criteria (Criteria.of(k, ...)), got {criteria!r}",
                                    parameter="criteria")
    output = output or OutputOptions()
    node = data.lattice.validate_node(node)
    k = validate_k(criteria.k.k, data.n_rows)
    if criteria.models and not isinstance(data, Dataset):
        raise InvalidParameterError("privacy models are checked in memory: pass a Dataset (engine 'pandas')")
    source = data.rows
    target = file_target(out, protected=[*_input_paths(data), *output.protected], force=output.force)
    if output.escape:
        refuse_formula_headers(data.schema.output_columns(list(data.columns)))
    suppression = node_suppression(data, node, criteria)
    counts = suppression.counts(data.n_rows)
    if max_sup is not None and counts["suppressed_rows"] > max_sup:
        by = "" if not criteria.class_scoped else " (" + ", ".join(
            f"{n} in classes failing {m}" for m, n in counts["suppressed_by_reason"]["by_model"].items()) + ")"
        raise InvalidParameterError(f"node {list(node)} needs {counts['suppressed_rows']} suppressed rows for "
                                    f"{', '.join(criteria.describe())}{by}, over MaxSup={max_sup}", parameter="max_sup")
    fault = criteria.release_fault(suppression.sizes[~suppression.suppressed])
    if fault is not None:  # refused before anything is written, as MaxSup is
        criterion, value = fault
        raise InvalidParameterError(f"node {list(node)} does not satisfy {criterion.describe()}: it has {value:.6g}",
                                    parameter=criterion.parameter)
    fmt = output_format(target.path)
    plan = _plan(data, suppression, output.sep, fmt, output.escape)
    engine = engine or _own_engine(data)
    name = target.names[0]

    def write(paths):
        engine.release(source, plan, paths[name], progress=progress, should_stop=should_stop)

    planned = class_figures(suppression.sizes[~suppression.suppressed])["classes"]["histogram"]
    h, qi = data.hierarchies, data.quasi_identifiers
    # the input's distribution t-closeness is measured against; published (and then the re-check reads
    # these very counts) only on request
    reference = reference_section(criteria.sensitive, criteria.models) if criteria.models else None

    def verify(paths):
        return verify_generalization(engine, paths[name], data, plan, criteria, max_sup, planned=planned,
                                     sampling_fraction=output.sampling_fraction, node=node, reference=reference,
                                     publish_reference=output.publish_reference)

    figures = node_figures(data.lattice, data.n_rows, suppression)
    figures["quality"] = node_quality(h, node, suppression.sizes, suppression.class_levels, suppression.suppressed,
                                      data.n_rows)
    # DM* sums the suppressed classes' squared sizes: with their count and rows it tells how the input's
    # outliers cluster, which the report otherwise keeps to a count. The non-uniform entropy and the KL
    # divergence, which read the suppressed rows' values and tuples, are left out for the same reason.
    del figures["quality"]["dm-star"]
    policy = (parameters or {}).get("policy")
    chosen = POLICIES.get(policy) if isinstance(policy, str) else None
    minimal = minimality(data.lattice, node, max_sup, criteria,
                         lambda other: _satisfies(node_suppression(data, other, criteria), max_sup, criteria),
                         by_policy=chosen is not None and chosen.among == "k-minimal")
    models, k_map = criteria.models, criteria.k_map
    sensitive = criteria.sensitive if models else None  # Criteria holds one whenever it has models
    body = {
        "kind": "generalization",
        "parameters": {"k": k, "max_sup": max_sup, "qi": list(qi),
                       "identifiers_dropped": list(data.schema.identifiers),
                       "sensitive": [sensitive.attribute] if sensitive is not None else list(data.schema.sensitive),
                       "criteria": {c.name: c.spec() for c in criteria.all},
                       "privacy_models": [m.describe() for m in models],
                       "risk_criteria": [c.describe() for c in criteria.release_scoped], **dict(parameters or {}),
                       **({"k_map": {"criterion": k_map.describe(), "k": k_map.k,
                                     "population": {"name": Path(k_map.population.source).name or "<DataFrame>",
                                                    "rows": k_map.population.n_rows}}} if k_map else {})},
        "node": {"vector": list(node), "levels": describe_levels(h, node),
                 "height": sum(node), "max_height": data.lattice.max_height, "k_minimal": minimal[0],
                 "k_minimal_detail": minimal[1]},
        "decision": decision(data.lattice, node, figures, dict(parameters or {}), minimal),
        "counts": counts,
        "metrics": figures,
        "utility": utility(data, node, suppression.class_levels[~suppression.suppressed]),
        "input": {"name": _input_name(data), "rows": data.n_rows, "checksum": data.checksum,
                  "missing_qi_values": dict(data.missing_counts),
                  "blank_lines_skipped": getattr(data, "blank_lines_skipped", 0), "engine": engine.name},
        "output": {"format": fmt, "rows": counts["released_rows"], "columns": list(plan.columns),
                   "row_order": "random (drawn from OS entropy)"},
        "suppressed": _suppressed_classes(data, suppression, output.list_classes),
    }
    return publish(target, write, verify, body, should_stop=should_stop)


def _own_engine(data: FrequencySource) -> Engine:
    """The engine that holds ``data``'s rows: pandas for a Dataset, a TableSummary's own."""
    if isinstance(data, Dataset):
        return PandasEngine()
    if isinstance(data, TableSummary):
        return data.engine
    raise InvalidParameterError(f"data: expected a Dataset or a TableSummary, got {type(data).__name__}; "
                                "pass the engine that holds its rows (engine=...)", parameter="engine")


def _satisfies(suppression: NodeSuppression, max_sup: int | None, criteria: Criteria) -> bool:
    """The node's release keeps within MaxSup (None: any suppression) and meets every scope-RELEASE criterion."""
    return ((max_sup is None or int(suppression.sizes[suppression.suppressed].sum()) <= max_sup)
            and criteria.release_fault(suppression.sizes[~suppression.suppressed]) is None)


def _input_paths(data: FrequencySource) -> list[Path]:
    if isinstance(data, Dataset):
        return [Path(data.source)] if data.source and data.source != "<DataFrame>" else []
    paths = list(data.rows.paths)  # a TableSummary's rows are its source's files
    if len(paths) > 1:  # partitions: a release written among them would be read as one next time
        paths += sorted({p.parent for p in paths})
    return paths


def _input_name(data: FrequencySource) -> str:
    """The input's file name (never a full path: a report may travel with the release)."""
    paths = _input_paths(data)
    if not paths:
        return "<DataFrame>"
    paths = [p for p in paths if not p.is_dir()]
    return paths[0].name if len(paths) == 1 else f"{paths[0].parent.name}/ ({len(paths)} files)"


def verify_generalization(engine: Engine, path: Path, data: FrequencySource, plan: ReleasePlan, criteria: Criteria,
                          max_sup: int | None,
                          planned: list | None = None, sampling_fraction: float | None = None,
                          node=None, reference: Mapping | None = None, publish_reference: bool = False) -> Verified:
    """Every claim of a generalization release, checked on the written file by re-reading it: each
    criterion through the protocol on the classes read back. The class sizes and the risk they carry
    are reported as counted on the file (``planned``: the histogram the release should have,
    ``[size, classes]`` pairs). A model measured against a table-wide distribution (t-closeness's
    EMD) is measured against ``reference`` (the input's counts): when the report publishes them
    (``publish_reference``), the counts as the report states them, not the input held in memory; its
    worst class against the file's own distribution is reported beside."""
    written = Source((path,), plan.format, plan.sep)
    columns = written.columns()
    sensitive, k_map = criteria.sensitive if criteria.models else None, criteria.k_map
    extra = [sensitive.attribute] if sensitive is not None else []
    classes = engine.frequency(written, [*plan.qi, *extra]).to_pandas()
    by_class = classes.groupby(list(plan.qi), sort=False)[COUNT].sum()
    rows = int(classes[COUNT].sum())
    n = data.n_rows
    verifications = [Verification("rows", rows == plan.expected_rows, f"{rows} rows read back, {plan.expected_rows} expected")]
    view = ClassView(by_class.to_numpy(),
                     value_counts=(lambda: _written_value_counts(classes, plan, sensitive)) if sensitive else None,
                     table_counts=(lambda: _reference_counts(reference if publish_reference else None, sensitive))
                     if sensitive else None,
                     population_sizes=(lambda: _written_population_sizes(k_map, node, plan, by_class))
                     if k_map else None)
    wide = table_wide(criteria.class_scoped) if sensitive is not None else ()
    reference_facts = {}
    if reference is not None and sensitive is not None:
        counted = view.value_counts if rows else np.zeros((0, len(sensitive.labels)))
        found = dict(zip(sensitive.labels, counted.sum(axis=0), strict=True))
        faults = reference_faults(reference, found, n)
        verifications.append(Verification("reference distribution", not faults, "; ".join(faults) or (
            f"{reference['attribute']}: {len(reference['values'])} values, {reference['total']} rows (the input's), "
            "each counted at least as often as in the released file" if publish_reference else
            f"{reference['attribute']}: the input's counts (not published), each value's at least the released "
            "file's")))
        held = [v for v, m in found.items() if m > 0]
        reference_facts = {"reference_distribution": {**stated_section(reference, held, publish_reference), "models": {
            m.describe(): worst_figures(m, counted, sensitive.labels, view.table_counts, publish_reference)
            for m in wide}}}
    for criterion in (criteria.k, *criteria.class_scoped):  # each class read back, judged as the release judged it
        if not rows:
            verifications.append(Verification(criterion.describe(), True, "no class released"))
            continue
        failing = int((~criterion.satisfies(view)).sum())
        smallest = int(view.sizes.min())
        detail = (f"all {len(view.sizes)} classes pass (smallest {smallest} rows)" if not failing
                  else f"{failing} of {len(view.sizes)} classes fail (smallest {smallest} rows)")
        if criterion in wide and reference_facts:  # both figures, so a reader sees which distribution is meant
            figures = reference_facts["reference_distribution"]["models"][criterion.describe()]
            detail += f"; {figures_line(figures)}"
        verifications.append(Verification(criterion.describe(), failing == 0, detail))
    verifications += [
        Verification("columns", list(columns) == list(plan.columns), f"{len(columns)} columns, identifiers dropped"),
        Verification("identifiers absent", not set(columns) & set(data.schema.identifiers),
              f"none of {list(data.schema.identifiers)}"),
    ]
    if max_sup is not None:
        verifications.append(Verification("MaxSup", n - rows <= max_sup, f"{n - rows} of {n} rows suppressed, MaxSup {max_sup}"))
    for i, q in enumerate(plan.qi):
        allowed = set(plan.level_tables[i]["label"])
        strangers = sorted(set(classes[q]) - allowed)[:3]
        verifications.append(Verification(f"levels of {q}", not strangers, "every value is a label of the node's level"
                            if not strangers else f"values {strangers} are not labels of the node's level"))
    for criterion in criteria.release_scoped:  # on the class sizes read back
        value = criterion.table_figure(view.sizes)
        verifications.append(Verification(criterion.describe(), criterion.satisfies_value(value), f"{value:.6g} on the written file"))
    figures = class_figures(by_class.to_numpy())
    if sampling_fraction is not None and rows:
        figures["risk"]["population"] = population_risk(by_class.to_numpy(), sampling_fraction)
    if planned is not None:
        same = figures["classes"]["histogram"] == planned
        verifications.append(Verification("class sizes", same, f"{len(by_class)} classes, sized as planned" if same
                            else "the classes read back differ from the node's released classes"))
    # The cells of the columns grouped above are counted on the groups; only the others are scanned.
    grouped = [*plan.qi, *extra]
    found = {name: cells for name in grouped if any(cells := formula_counts(classes[name], classes[COUNT]))}
    others = [c for c in columns if c not in grouped]
    found |= engine.formula_cells(written, others) if others else {}
    verified = with_formula_verification(verifications, found, plan.escape, columns)
    return Verified(verified.verifications, {**verified.facts, **figures, **reference_facts})


def _reference_counts(reference: Mapping | None, sensitive: SensitiveFrequency) -> np.ndarray:
    """The table-wide counts the models are measured against: the report's reference when it has one."""
    return sensitive.table_counts if reference is None else reference_table(reference, sensitive.labels)


def _written_value_counts(classes: pd.DataFrame, plan: ReleasePlan, sensitive: SensitiveFrequency) -> np.ndarray:
    """Classes (in ``by_class`` order) × sensitive values, counted on the file read back."""
    table = classes.pivot_table(index=list(plan.qi), columns=sensitive.attribute, values=COUNT, aggfunc="sum",
                                fill_value=0, sort=False)
    labels = pd.Series(list(sensitive.labels), dtype=object)
    if plan.escape:  # the file holds the sensitive values as written, formula cells escaped
        labels = escape_column(labels)
    index = classes.groupby(list(plan.qi), sort=False)[COUNT].sum().index
    return table.reindex(index=index, columns=labels.tolist(), fill_value=0).to_numpy(dtype=float)


def _written_population_sizes(k_map: KMap, node: Node, plan: ReleasePlan, by_class: pd.Series) -> np.ndarray:
    """Each written class's population records, generalized to the same ``node`` (labelled, and
    escaped, as the file is), counted anew."""
    population = k_map.population
    if population is None:  # a k-map read from text is bound to its population before a release
        raise InvalidParameterError("k-map needs a population table", parameter="population")
    labels = {}
    for i, (q, h, d) in enumerate(zip(plan.qi, population.hierarchies, node, strict=True)):
        column = pd.Series(np.asarray(h.labels[d], dtype=object)[h.codes[d][population.codes[:, i]]])
        labels[q] = (escape_column(column) if plan.escape else column).to_numpy(dtype=object)
    counted = pd.DataFrame(labels).assign(_n=population.counts).groupby(list(plan.qi), sort=False)["_n"].sum()
    return counted.reindex(by_class.index, fill_value=0).to_numpy()
