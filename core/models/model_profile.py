"""The whole-lattice profile under privacy models on a sensitive attribute (l-diversity, t-closeness).

Like ``microrelease.core.lattice.profile``, every node is computed once, each rolled up from its parent
in a depth-first walk of the lattice: a node's equivalence classes carry a vector of counts over the
sensitive values (classes × values), and raising one QI merges classes by summing their vectors.
At each node the chosen models are evaluated on all classes at once; the node's profile keeps the
size histogram of the classes that pass, and the rows of the classes that fail
(``failing_rows``): those are suppressed whatever k is. A (k, MaxSup) query then costs what it costs
without models (Samarati's search, policies and metrics are unchanged); the suppression rule is
"remove every class that is smaller than k or fails a model".

The table distribution that t-closeness compares with is that of the whole input (before
suppression), as in Li et al.

El Emam & Dankar's k-map rides in the same walk (``k_map``): the population's QI combinations are
joined into the root classes as one more column of counts (population records), summed when classes
merge as the value counts are; a class then also fails when the population holds fewer than K of its
records, and a class of the population alone holds no row of the data (it is no class of the release).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd

from microrelease.core.data.dataset import Dataset
from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.generalization import class_representatives, class_sizes, generalize_codes
from microrelease.core.lattice.profile import (
    MEMORY_BUDGET,
    LatticeProfile,
    Progress,
    ShouldStop,
    assemble_profile,
    key_spec,
    roll_up,
)
from microrelease.core.lattice.quality_profile import (
    attach_quality,
    kernel_tables,
    node_quality_arrays,
    node_tables,
)
from microrelease.core.models.model_rollup_numpy import merge_classes, model_profile
from microrelease.core.models.privacy_model import PrivacyModel, Statistic
from microrelease.core.models.sensitive import SensitiveFrequency
from microrelease.core.risk.k_map import KMap

MODEL_STRATEGIES = ("auto", "numba", "numpy")


def build_model_profile(
    dataset: Dataset,
    sensitive_frequency: SensitiveFrequency,
    models: Sequence[PrivacyModel],
    *,
    strategy: str = "auto",
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    workers: int | None = None,
    memory_budget: int = MEMORY_BUDGET,
    quality: bool = False,
    k_map: KMap | None = None,
) -> LatticeProfile:
    """The profile of ``dataset``'s lattice where classes failing any of ``models`` are suppressed.

    ``models`` are bound to ``sensitive_frequency`` and checked first (as by
    ``prepare_models``).
    ``strategy``: ``"numba"`` (compiled roll-up, the default when the QI codes pack into 62 bits) or
    ``"numpy"`` (the same walk in numpy; the oracle, and the fallback for wider codes).
    ``progress``, ``should_stop``, ``workers``, ``memory_budget``, ``quality``: as for
    ``build_profile`` (cancelling raises ``Cancelled``); with
    ``quality``, the quality models read the passing classes' figures and the failing classes' too.
    ``k_map``: El Emam & Dankar's k-map (a ``KMap`` bound to its
    population) beside the models, in the same walk: the population is joined in as one more column
    of counts, and a class also fails when the population holds fewer than K of its records
    (``failing_by_model`` has its rows last, and ``models`` ends with it).

    Parameters
    ----------
    dataset : Dataset
        The table and its hierarchies.
    sensitive_frequency : SensitiveFrequency
        The sensitive attribute.
    models : sequence of PrivacyModel
        The models every class must satisfy.
    strategy : str, default "auto"
        How the frequency set is rolled up.
    progress : callable, optional
        Called with the progress.
    should_stop : callable, optional
        Polled; when it returns true the build raises ``Cancelled``.
    workers : int, optional
        Threads for the roll-up.
    memory_budget : int, default 536870912
        Bytes the roll-up may hold at once.
    quality : bool, default False
        Also compute ARX's quality models.
    k_map : KMap, optional
        A k-map criterion counted with the models.

    Returns
    -------
    LatticeProfile
        The profile, classes failing a model counted as to be suppressed.
    """
    models = tuple(m.bind(sensitive_frequency).validate(len(sensitive_frequency.labels), repr(sensitive_frequency.attribute)) for m in models)
    if strategy not in MODEL_STRATEGIES:
        raise InvalidParameterError(f"The 'strategy' parameter must be one of {MODEL_STRATEGIES}. Got {strategy!r}.",
                                    parameter="strategy")
    if k_map is not None:
        if not isinstance(k_map, KMap):
            raise InvalidParameterError(f"k_map must be a KMap bound to a population, got {k_map!r}", parameter="k_map")
        k_map = k_map.validate()
    lattice = dataset.lattice
    table = sensitive_frequency.table_counts
    hierarchies, codes, counts = _joined(dataset, sensitive_frequency, k_map)
    width = len(sensitive_frequency.labels)  # the sensitive-value columns; k-map's population column next
    spec = key_spec(hierarchies)
    if strategy == "auto" and spec is not None:
        from microrelease.core.models.model_rollup_kernels import KERNEL_KINDS  # numba: compiled on first use

        if any(m.kernel_code().kind not in KERNEL_KINDS for m in models):
            strategy = "numpy"  # a model with no compiled branch: the numpy walk runs its own check
    if strategy != "numpy" and spec is not None:
        from microrelease.core.lattice.rollup_kernels import roll_once  # numba loads on first use
        from microrelease.core.lattice.walk_kernel import WalkPlan  # numba: compiled on first use
        from microrelease.core.models.model_rollup_kernels import KERNEL_KINDS  # numba: compiled on first use

        checks = (table / table.sum(), *kernel_arrays(models, KERNEL_KINDS))
        plan = WalkPlan(rows=None, values=(0, width), checks=checks)
        if k_map is not None:
            plan = dataclasses.replace(plan, population=width, k_map=float(k_map.k))
        if quality:
            plan = dataclasses.replace(plan, squares=counts.shape[1],
                                       quality=kernel_tables(dataset.hierarchies, dataset.n_rows),
                                       shifts=spec.shifts, masks=spec.masks)
            counts = np.column_stack((counts, counts[:, :width].sum(axis=1) ** 2))
        pieces = roll_up(lattice, spec, spec.pack(codes), np.ascontiguousarray(counts, dtype=float), plan.inner(),
                         roll_once, progress=progress, should_stop=should_stop, workers=workers,
                         memory_budget=memory_budget, with_start=True)
        name = "sensitive roll-up (numba)"
    else:
        pieces = model_profile(lattice, hierarchies, codes, counts, table, models, progress, should_stop,
                               k_map=k_map.k if k_map is not None else 0)
        if quality:
            tables = node_tables(dataset.hierarchies)
            pieces = [(*piece, *_node_quality(dataset, sensitive_frequency, models, k_map, piece[0], tables))
                      for piece in pieces]
        name = "sensitive roll-up"
    checked: tuple[PrivacyModel | KMap, ...] = (*models, *([k_map] if k_map is not None else []))
    failing = np.zeros(lattice.size, dtype=np.int64)
    failing_sq = np.zeros(lattice.size, dtype=np.int64)
    failing_by = np.zeros((len(checked), lattice.size), dtype=np.int64)
    for ids, _, _, _, rows, rows_by, squares, *_ in pieces:
        failing[ids] = rows
        failing_by[:, ids] = rows_by
        failing_sq[ids] = squares
    failing.setflags(write=False)
    failing_sq.setflags(write=False)
    if k_map is not None:
        name += " with k-map"
    profile = assemble_profile(lattice, int(sensitive_frequency.counts.sum()), pieces, name)
    profile = dataclasses.replace(profile, failing_rows=failing, failing_sq=failing_sq, models=checked,
                                  failing_by_model={m.describe(): failing_by[i] for i, m in enumerate(checked)},
                                  _stats_cache={})
    if quality:
        profile = attach_quality(profile, dataset.frequency, dataset.hierarchies, pieces)
    return profile


def _joined(dataset: Dataset, sensitive_frequency: SensitiveFrequency, k_map: KMap | None) -> tuple:
    """(hierarchies, ground codes, counts) of the walk's root classes: each distinct QI combination with its
    counts over the sensitive values, and (``k_map``) its population records in one more column, over the
    union of the sample's and the population's combinations, coded in the population's hierarchies (the
    sample's, extended with a missing value where the population has blanks: the sample's codes stay valid)."""
    values = sensitive_frequency.values
    one_hot = np.zeros((len(values), len(sensitive_frequency.labels)))
    one_hot[np.arange(len(values)), values] = sensitive_frequency.counts
    codes = sensitive_frequency.codes.astype(np.int64)
    hierarchies = tuple(dataset.hierarchies)
    if k_map is not None:
        population = k_map.population
        assert population is not None  # a k-map given here is bound to its population
        hierarchies = tuple(population.hierarchies)
        joined = np.zeros((len(codes) + len(population.codes), one_hot.shape[1] + 1))
        joined[:len(codes), :-1] = one_hot
        joined[len(codes):, -1] = population.counts
        codes, one_hot = np.concatenate([codes, population.codes.astype(np.int64)]), joined
    codes, counts = merge_classes(codes, one_hot, [h.level_size(0) for h in hierarchies])
    return hierarchies, codes, counts


def _node_quality(dataset: Dataset, sensitive_frequency: SensitiveFrequency, models, k_map, ids, tables) -> tuple:
    """The quality figures of the nodes ``ids`` (pairs, failing), node by node from the rows: the oracle
    of the compiled kernel (and the path for QI codes too wide to pack). ``k_map``: its check too."""

    freq, pairs, failing = dataset.frequency, [], []

    for i in ids:
        node = dataset.lattice.node(int(i))

        def passing(sizes, tuple_class, node=node):
            ok = sensitive_frequency.passing(tuple_class[freq.row_tuple], len(sizes), models)
            if k_map is not None:
                first = freq.codes[class_representatives(tuple_class, len(sizes))]
                ok = ok & (k_map.population.class_sizes(first, node) >= k_map.k)
            return ok

        _, _, node_pairs, node_failing = node_quality_arrays(freq, dataset.hierarchies, node, passing, tables)
        pairs.append(node_pairs)
        failing.append(node_failing)
    return np.concatenate(pairs), np.array(failing)


def kernel_arrays(models: Sequence[PrivacyModel], known_kinds: Collection[int]) -> tuple:
    """The models as the compiled kernel takes them: kind codes, l, c and t values, and the
    sensitive hierarchy of the (first) model with a hierarchical ground, if any. A kind code not
    in ``known_kinds`` (the kernel's branches) is refused here, before the kernel runs."""
    codes = [m.kernel_code() for m in models]
    for model, code in zip(models, codes, strict=True):
        if code.kind not in known_kinds:
            raise NotImplementedError(f"{model.describe()} ({type(model).__name__}) hands the compiled kernel kind "
                                      f"code {code.kind}, which it has no branch for (known: {sorted(known_kinds)}); "
                                      "add one in microrelease.core.models.model_rollup_kernels, or use strategy='numpy'")
    grounded = next((m for m in models if Statistic.VALUE_HIERARCHY in m.needs()), None)
    ground = (0, np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64)) if grounded is None \
        else grounded.kernel_ground()  # type: ignore[attr-defined]  # a model needing VALUE_HIERARCHY has it (TCloseness)
    return (np.array([c.kind for c in codes], np.int64), np.array([c.l for c in codes], float),
            np.array([c.c for c in codes], float), np.array([c.t for c in codes], float), *ground)


def explain_node(dataset: Dataset, sensitive_frequency: SensitiveFrequency, node: Sequence[int], models: Sequence[PrivacyModel],
                 *, k: int = 1) -> pd.DataFrame:
    """The classes of ``node`` that fail a model: generalized QI values, size, the failing models,
    each model's statistic (distinct values, effective l, r₁/tail ratio or EMD to the table's
    distribution) and the class's sensitive distribution. Failing classes first, largest first.

    Parameters
    ----------
    dataset : Dataset
        The table and its hierarchies.
    sensitive_frequency : SensitiveFrequency
        The sensitive attribute.
    node : sequence of int
        The distance vector.
    models : sequence of PrivacyModel
        The models explained.
    k : int, default 1
        The k of k-anonymity.

    Returns
    -------
    pandas.DataFrame
        One row per class of the node, with each model's figure and verdict.
    """
    node = dataset.lattice.validate_node(node)
    freq = dataset.frequency
    sizes, tuple_class = class_sizes(freq, dataset.hierarchies, node)
    row_class = tuple_class[freq.row_tuple]
    counts = sensitive_frequency.class_counts(row_class, len(sizes))
    first_row = np.full(len(sizes), -1)
    first_row[row_class[::-1]] = np.arange(len(row_class))[::-1]
    level = generalize_codes(dataset.hierarchies, dataset.codes[first_row], node)
    frame = pd.DataFrame({q: np.asarray(h.labels[d], dtype=object)[level[:, i]]
                          for i, (q, h, d) in enumerate(zip(dataset.quasi_identifiers, dataset.hierarchies, node,
                                                                strict=True))})
    frame["size"] = sizes
    failing: list[list[str]] = [[] for _ in sizes]
    for model in models:
        frame[model.describe()] = np.round(model.statistic(counts, sensitive_frequency.table_counts), 4)
        for i in np.flatnonzero(~model.satisfies_counts(counts, sensitive_frequency.table_counts)):
            failing[i].append(model.describe())
    for i in np.flatnonzero(sizes < k):
        failing[i].append(f"smaller than k={k}")
    frame["fails"] = ["; ".join(f) for f in failing]
    labels = sensitive_frequency.labels
    frame["distribution"] = [", ".join(f"{labels[j]}: {int(c)}" for j, c in enumerate(row) if c) for row in counts]
    frame = frame[frame["fails"] != ""]
    return frame.sort_values("size", ascending=False, kind="stable").reset_index(drop=True)
