"""A node's figures under privacy criteria beside k, for the pruned search
(``flash``): each criterion read through the protocol
(``criterion``) on the node's classes, as the release reads it.

The evaluator gives a node's classes as packed keys (its level codes) and row counts. A criterion on
the sensitive attribute reads each class's value counts: the sensitive frequency (QI codes, value,
rows) is rolled up to the node and each (class, value) pair looked up among the classes' keys. k-map
reads each class's population records: the population rolled up to the node, likewise (a population
class holding no sample row counts for no class). A class smaller than k or failing a scope-CLASS
criterion is suppressed; the figures (and the quality figures) are those of what the node then
releases, and ``satisfies_release_criteria`` says whether it satisfies the scope-RELEASE criteria.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from microrelease.core.criteria.criteria_set import Criteria
from microrelease.core.criteria.criterion import ClassView
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.search.evaluator import NodeEvaluator, NodeFigures

SIDE_CACHE = 64 << 20  # bytes of snapshots kept by each of the two side evaluators


def _recode(ours, theirs) -> np.ndarray:
    """Per label of ``ours`` (one level's labels), its code among ``theirs``."""
    code = {label: c for c, label in enumerate(theirs)}
    return np.array([code[label] for label in ours], dtype=np.int64)


class _Frequency:
    """What a ``NodeEvaluator`` reads of a source: hierarchies and a frequency set."""

    def __init__(self, hierarchies, codes: np.ndarray, counts: np.ndarray) -> None:
        self.hierarchies = tuple(hierarchies)
        self.frequency = SimpleNamespace(codes=np.asarray(codes), counts=np.asarray(counts, dtype=np.int64),
                                         n_rows=int(np.sum(counts)))


class CriteriaFigures:
    """The figures of ``this module`` for one evaluator
    and one ``Criteria``. The sensitive frequency and the population are rolled up by evaluators
    of their own (the sensitive value a first, never generalized field: the QIs' fields keep the
    sample's bits), so a node's value counts and population sizes cost what its classes cost."""

    def __init__(self, evaluator: NodeEvaluator, criteria: Criteria) -> None:
        self.evaluator, self.criteria = evaluator, criteria
        sensitive = criteria.sensitive if criteria.models else None
        self._sensitive = None
        if sensitive is not None:
            value = Hierarchy(f"{sensitive.attribute} (values)", tuple((str(i),) for i in range(len(sensitive.labels))))
            codes = np.column_stack([np.asarray(sensitive.values), np.asarray(sensitive.codes)])
            pairs = NodeEvaluator(_Frequency((value, *evaluator.hierarchies), codes, sensitive.counts),  # type: ignore[arg-type]  # _Frequency: the members of FrequencySource a NodeEvaluator reads
                                  cache_budget=SIDE_CACHE)
            field = int(pairs.shifts[0])
            self._sensitive = (pairs, field, len(sensitive.labels), np.asarray(sensitive.table_counts, dtype=float))
        population = criteria.k_map.population if criteria.k_map is not None else None
        self._population = None
        if population is not None:
            # the population's hierarchies are the sample's, extended where it has blanks the sample has not:
            # its own evaluator, and per QI and level the sample's label codes in the population's coding
            to_population = [[_recode(ours.labels[d], theirs.labels[d]) for d in range(ours.height + 1)]
                             for ours, theirs in zip(evaluator.hierarchies, population.hierarchies, strict=True)]
            side = NodeEvaluator(_Frequency(population.hierarchies, population.codes, population.counts),  # type: ignore[arg-type]  # _Frequency: the members of FrequencySource a NodeEvaluator reads
                                 cache_budget=SIDE_CACHE)
            self._population = (side, to_population)

    @staticmethod
    def _lookup(class_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(class of each key, whether it has one)."""
        order = np.argsort(class_keys, kind="stable")
        ordered = class_keys[order]
        pos = np.minimum(np.searchsorted(ordered, keys), max(len(ordered) - 1, 0))
        found = ordered[pos] == keys if len(ordered) else np.zeros(len(keys), dtype=bool)
        return order[pos], found

    def view(self, node, keys: np.ndarray, counts: np.ndarray) -> ClassView:
        """The node's classes as the criteria read them."""
        node = np.asarray(node, dtype=np.int64)
        value_counts = table_counts = population_sizes = None
        if self._sensitive is not None:
            pairs, field, m, table = self._sensitive

            def value_counts():
                pair_keys, pair_counts, _ = pairs.classes(np.concatenate([[0], node]))
                cls, found = self._lookup(keys, pair_keys & ((np.int64(1) << field) - 1))
                if not found.all():
                    raise AssertionError("a sensitive value's rows fell in no class of the node")
                values = pair_keys >> field
                return np.bincount(cls * m + values, weights=pair_counts, minlength=len(keys) * m).reshape(len(keys), m)

            table_counts = table
        if self._population is not None:
            population, to_population = self._population

            def population_sizes():
                population_keys, population_counts, _ = population.classes(node)
                ours = np.zeros(len(keys), dtype=np.int64)  # each class's key as the population packs it
                for a, (shift, mask) in enumerate(zip(self.evaluator.shifts, self.evaluator.masks, strict=True)):
                    code = to_population[a][int(node[a])][(keys >> int(shift)) & int(mask)]
                    ours |= code << int(population.shifts[a])
                cls, found = self._lookup(ours, population_keys)
                return np.bincount(cls[found], weights=population_counts[found], minlength=len(keys)).astype(np.int64)

        return ClassView(counts, value_counts=value_counts, table_counts=table_counts,
                         population_sizes=population_sizes)

    def suppressed(self, node, keys: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
        """Which of the node's classes its release removes: smaller than k, or failing a scope-CLASS criterion."""
        out = np.asarray(counts) < k
        if self.criteria.class_scoped:
            for fails in self.criteria.failing(self.view(node, keys, counts)).values():
                out |= fails
        return out

    def figures(self, node, keys: np.ndarray, counts: np.ndarray, k: int, *, quality: bool) -> NodeFigures:
        """The node's figures for k and the criteria (``quality``: with the suppressed rows' share mass
        and entropy sum, as ``NodeEvaluator.figures`` gives them)."""
        counts = np.asarray(counts, dtype=np.int64)
        suppressed = self.suppressed(node, keys, counts, k)
        released = counts[~suppressed]
        satisfies_release_criteria = self.criteria.release_fault(released) is None
        mass = entropy = None
        if quality:
            mass, entropy = suppressed_quality(self.evaluator, node, keys[suppressed], counts[suppressed])
        return NodeFigures(int(counts[suppressed].sum()), len(released), int(released.min()) if len(released) else 0,
                           int((released * released).sum()), int((counts * counts).sum()), len(counts), mass,
                           entropy, True, satisfies_release_criteria)


def suppressed_quality(evaluator: NodeEvaluator, node, keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, float]:
    """What the quality models read of the given suppressed classes: per QI their rows' share mass at
    the node, and Σ over QIs of Σ_u a_u log2 a_u, a_u the suppressed rows holding generalized value u
    (the numpy form of ``suppressed_quality``)."""
    node = np.asarray(node, dtype=np.int64)
    m = len(evaluator.hierarchies)
    mass = np.zeros(m)
    entropy = 0.0
    rows = counts.astype(np.float64)
    for a in range(m):
        code = (keys >> int(evaluator.shifts[a])) & int(evaluator.masks[a])
        mass[a] = float((rows * evaluator.share_flat[evaluator.share_off[a, node[a]] + code]).sum())
        x = np.bincount(code, weights=rows)
        x = x[x > 0]
        entropy += float((x * np.log2(x)).sum())
    return mass, entropy
