"""The whole-lattice profile under privacy models on a sensitive attribute (l-diversity, t-closeness).

Like :mod:`microrelease.core.lattice.profile`, every node is computed once, each rolled up from its parent
in a depth-first walk of the lattice: a node's equivalence classes carry a vector of counts over the
sensitive values (classes × values), and raising one QI merges classes by summing their vectors.
At each node the chosen models are evaluated on all classes at once; the node's profile keeps the
size histogram of the classes that pass, and the rows of the classes that fail
(``failing_rows``): those are suppressed whatever k is. A (k, MaxSup) query then costs what it costs
without models (Samarati's search, policies and metrics are unchanged); the suppression rule is
"remove every class that is smaller than k or fails a model".

The table distribution that t-closeness compares with is that of the whole input (before
suppression), as in Li et al.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microrelease.core.data.dataset import Dataset, as_text
from microrelease.core.exceptions import Cancelled, CoverageError, DataError, InvalidParameterError
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.lattice.profile import LatticeProfile, _assemble, _key_spec
from microrelease.core.models.definitions import (
    DistinctLDiversity,
    EntropyLDiversity,
    RecursiveCLDiversity,
    TCloseness,
    check_model,
)


@dataclass(frozen=True, eq=False)
class SensitiveFrequency:
    """The frequency set extended by one sensitive attribute: tuple t has QI ground codes
    ``codes[t]``, sensitive value ``labels[values[t]]`` and ``counts[t]`` rows."""

    attribute: str
    codes: np.ndarray
    values: np.ndarray
    counts: np.ndarray
    labels: tuple[str, ...]
    hierarchy: Hierarchy | None = None

    @property
    def table_counts(self) -> np.ndarray:
        return np.bincount(self.values, weights=self.counts, minlength=len(self.labels))

    @property
    def ground_order(self) -> tuple[int, ...]:
        """Ground code in the sensitive hierarchy of each value column (hierarchical distance)."""
        return tuple(self.hierarchy.index[v] for v in self.labels) if self.hierarchy is not None else ()


def value_order(values: Sequence[str]) -> list[str]:
    """Numbers in numeric order when every value is a number (ordered distance), else text order."""
    values = sorted(set(values))
    try:
        return sorted(values, key=float)
    except ValueError:
        return values


def sensitive_frequency(dataset: Dataset, attribute: str, hierarchy: Hierarchy | None = None) -> SensitiveFrequency:
    """Extend ``dataset``'s frequency set by ``attribute`` (which must not be a QI)."""
    if attribute in dataset.quasi_identifiers:
        raise DataError(f"the sensitive attribute {attribute!r} is also a QI; a value cannot be both hidden in "
                        "a class and used to form it")
    if attribute not in dataset.table.columns:
        raise DataError(f"unknown sensitive column {attribute!r}; the table has {list(dataset.table.columns)}")
    text = as_text(dataset.table[attribute])
    labels = value_order(text.unique())
    if hierarchy is not None:
        absent = {v: int(n) for v, n in text[~text.isin(hierarchy.index.keys())].value_counts().items()}
        if absent:
            raise CoverageError(attribute, absent)
    column = pd.Index(labels).get_indexer(text)
    keyed = np.column_stack([dataset.codes, column])
    tuples, counts = np.unique(keyed, axis=0, return_counts=True)
    return SensitiveFrequency(attribute, tuples[:, :-1].astype(np.int32), tuples[:, -1].astype(np.int64),
                              counts.astype(np.int64), tuple(labels), hierarchy)


def _merge(codes: np.ndarray, counts: np.ndarray, radices: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Merge the rows of ``codes`` that are equal (one sort), summing their ``counts`` rows."""
    if float(np.prod(radices, dtype=float)) < 2**62:
        key = np.zeros(len(codes), dtype=np.int64)
        for i, r in enumerate(radices):
            key = key * r + codes[:, i]
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    else:
        _, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
        order = np.argsort(inverse.reshape(-1), kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(inverse.reshape(-1)[order]) != 0])
    if len(order) == 0:
        return codes, counts
    return codes[order[starts]], np.add.reduceat(counts[order], starts, axis=0)


def build_model_profile(
    dataset,
    sensitive: SensitiveFrequency,
    models: Sequence,
    *,
    strategy: str = "auto",
    progress=None,
    should_stop=None,
) -> LatticeProfile:
    """The profile of ``dataset``'s lattice where classes failing any of ``models`` are suppressed.

    ``strategy``: ``"numba"`` (compiled roll-up, the default when the QI codes pack into 62 bits) or
    ``"numpy"`` (the same walk in numpy; the cross-check, and the fallback).
    """
    models = tuple(check_model(m, len(sensitive.labels), attribute=repr(sensitive.attribute)) for m in models)
    for m in models:
        if isinstance(m, TCloseness) and m.distance == "hierarchical" and not m.order:
            raise DataError("hierarchical t-closeness: build the model with order=sensitive.ground_order")
    if strategy not in ("auto", "numba", "numpy"):
        raise InvalidParameterError(f"The 'strategy' parameter must be 'auto', 'numba' or 'numpy'. Got {strategy!r}.")
    spec = _key_spec(dataset.hierarchies)
    if strategy != "numpy" and spec is not None:
        return _compiled_profile(dataset, sensitive, models, spec, progress)
    hierarchies = dataset.hierarchies
    lattice = dataset.lattice
    table = sensitive.table_counts
    n_values = len(sensitive.labels)
    one_hot = np.zeros((len(sensitive.values), n_values))
    one_hot[np.arange(len(sensitive.values)), sensitive.values] = sensitive.counts
    root_codes, root_counts = _merge(sensitive.codes.astype(np.int64), one_hot,
                                     [h.level_size(0) for h in hierarchies])
    heights = lattice.heights
    q = len(heights)
    pieces, done = [], [0]
    by_model = {m.describe(): np.zeros(lattice.size, dtype=np.int64) for m in models}

    def evaluate(vec: list[int], counts: np.ndarray) -> None:
        sizes = counts.sum(axis=1).round().astype(np.int64)
        ok = np.ones(len(sizes), dtype=bool)
        i = lattice.index(tuple(vec))
        for m in models:
            passes = m.passes(counts, table)
            by_model[m.describe()][i] = sizes[~passes].sum()
            ok &= passes
        s, c = np.unique(sizes[ok], return_counts=True)
        pieces.append((np.array([i]), np.array([0, len(s)]), s.astype(np.int64),
                       c.astype(np.int64), int(sizes[~ok].sum())))
        done[0] += 1
        if should_stop is not None and done[0] % 64 == 0 and should_stop():
            raise Cancelled("profile computation cancelled")
        if progress is not None and (done[0] % 64 == 0 or done[0] == lattice.size):
            progress(done[0] / lattice.size)

    def visit(vec: list[int], codes: np.ndarray, counts: np.ndarray, first_qi: int) -> None:
        evaluate(vec, counts)
        for j in range(first_qi, q):
            if vec[j] < heights[j]:
                child = codes.copy()
                child[:, j] = hierarchies[j].parents[vec[j]][codes[:, j]]
                vec[j] += 1
                visit(vec, *_merge(child, counts, [h.level_size(d) for h, d in zip(hierarchies, vec, strict=True)]), j)
                vec[j] -= 1

    visit([0] * q, root_codes, root_counts, 0)
    failing = np.zeros(lattice.size, dtype=np.int64)
    for ids, _, _, _, rows in pieces:
        failing[ids[0]] = rows
    profile = _assemble(lattice, int(sensitive.counts.sum()), [p[:4] for p in pieces], "sensitive roll-up")
    failing.setflags(write=False)
    return dataclasses.replace(profile, failing_rows=failing, models=models, failing_by_model=by_model,
                               _stats_cache={})


def explain_node(dataset: Dataset, sensitive: SensitiveFrequency, node: Sequence[int], models: Sequence,
                 *, k: int = 1) -> pd.DataFrame:
    """The classes of ``node`` that fail a model: generalized QI values, size, the failing models,
    each model's statistic (distinct values, effective l, r₁/tail ratio or EMD to the table's
    distribution) and the class's sensitive distribution. Failing classes first, largest first."""
    node = dataset.lattice.check_node(node)
    from microrelease.core.lattice.generalization import (  # no import cycle at load
        class_sizes,
        generalize_codes,
    )

    freq = dataset.frequency
    sizes, tuple_class = class_sizes(freq, dataset.hierarchies, node)
    row_class = tuple_class[freq.row_tuple]
    labels = pd.Index(sensitive.labels)
    column = labels.get_indexer(as_text(dataset.table[sensitive.attribute]))
    m = len(labels)
    counts = np.bincount(row_class * m + column, minlength=len(sizes) * m).reshape(len(sizes), m).astype(float)
    first_row = np.full(len(sizes), -1)
    first_row[row_class[::-1]] = np.arange(len(row_class))[::-1]
    level = generalize_codes(dataset.hierarchies, dataset.codes[first_row], node)
    frame = pd.DataFrame({q: np.asarray(h.labels[d], dtype=object)[level[:, i]]
                          for i, (q, h, d) in enumerate(zip(dataset.quasi_identifiers, dataset.hierarchies, node,
                                                                strict=True))})
    frame["size"] = sizes
    failing = [[] for _ in sizes]
    for model in models:
        frame[model.describe()] = np.round(model.statistic(counts, sensitive.table_counts), 4)
        for i in np.flatnonzero(~model.passes(counts, sensitive.table_counts)):
            failing[i].append(model.describe())
    for i in np.flatnonzero(sizes < k):
        failing[i].append(f"smaller than k={k}")
    frame["fails"] = ["; ".join(f) for f in failing]
    frame["distribution"] = [", ".join(f"{labels[j]}: {int(c)}" for j, c in enumerate(row) if c) for row in counts]
    frame = frame[frame["fails"] != ""]
    return frame.sort_values("size", ascending=False, kind="stable").reset_index(drop=True)


_DISTANCE_KIND = {"equal": 3, "ordered": 4, "hierarchical": 5}


def _model_arrays(models, sensitive: SensitiveFrequency):
    kinds, l_values, c_values, t_values = [], [], [], []
    for m in models:
        if isinstance(m, DistinctLDiversity):
            kinds.append(0)
        elif isinstance(m, EntropyLDiversity):
            kinds.append(1)
        elif isinstance(m, RecursiveCLDiversity):
            kinds.append(2)
        else:
            kinds.append(_DISTANCE_KIND[m.distance])
        l_values.append(float(getattr(m, "l", 0)))
        c_values.append(float(getattr(m, "c", 0)))
        t_values.append(float(getattr(m, "t", 0)))
    hierarchy = next((m.hierarchy for m in models if isinstance(m, TCloseness) and m.distance == "hierarchical"), None)
    if hierarchy is None:
        height, level_sizes, map_flat, map_off = 0, np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64)
    else:
        order = np.asarray(sensitive.ground_order, dtype=np.int64)
        height = hierarchy.height
        maps = [hierarchy.codes[1][order]] + [hierarchy.parents[level] for level in range(1, height)]
        level_sizes = np.array([len(order)] + [hierarchy.level_size(lv) for lv in range(1, height + 1)], np.int64)
        map_off = np.concatenate(([0], np.cumsum([len(x) for x in maps]))).astype(np.int64)
        map_flat = np.concatenate(maps).astype(np.int64)
    return (np.array(kinds, np.int64), np.array(l_values), np.array(c_values), np.array(t_values), height,
            level_sizes, map_flat, map_off)


def _compiled_profile(dataset, sensitive: SensitiveFrequency, models, spec, progress) -> LatticeProfile:
    from microrelease.core.models.kernels import model_profile

    shifts, masks, parent_flat, parent_off = spec
    lattice = dataset.lattice
    n_values = len(sensitive.labels)
    one_hot = np.zeros((len(sensitive.values), n_values))
    one_hot[np.arange(len(sensitive.values)), sensitive.values] = sensitive.counts
    codes, counts = _merge(sensitive.codes.astype(np.int64), one_hot,
                           [h.level_size(0) for h in dataset.hierarchies])
    keys = np.bitwise_or.reduce(codes << shifts, axis=1) if len(codes) else np.zeros(0, np.int64)
    shape = np.array(lattice.heights, dtype=np.int64) + 1
    strides = np.ones(len(shape), dtype=np.int64)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    table = sensitive.table_counts
    if progress is not None:
        progress(0.0)
    order, seg, sizes, freq, failing, failing_by = model_profile(
        keys, np.ascontiguousarray(counts), np.array(lattice.heights, np.int64), strides, shifts, masks,
        parent_flat, parent_off, table / table.sum(), *_model_arrays(models, sensitive))
    if progress is not None:
        progress(1.0)
    profile = _assemble(lattice, int(sensitive.counts.sum()), [(order, seg, sizes, freq)], "sensitive roll-up (numba)")
    failing.setflags(write=False)
    by_model = {m.describe(): failing_by[i] for i, m in enumerate(models)}
    return dataclasses.replace(profile, failing_rows=failing, models=models, failing_by_model=by_model,
                               _stats_cache={})
