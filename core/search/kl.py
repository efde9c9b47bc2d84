"""ARX's KL divergence of one node, from its classes, for the pruned search (the definition is in
``quality``).

Summed over the rows as ARX sums, KL = (1/n) Σ_x c_x² (log2(c_x / n) − log2 q_x): the first part is a
constant of the table, and q is one value per released class C (|C| / n / area(C)) and one for every
suppressed row (S / n / ∏|D_i|). So a node's KL reads, per class, its rows, its area and Σ c_x² over the
ground tuples x it holds. That last sum is rolled up by an evaluator of its own over the frequency set
weighted by c_x² (a roll-up sums what it is given: the classes' keys are the main evaluator's), so it
costs what the node's classes cost.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from microrelease.core.search.evaluator import NodeEvaluator

SQUARES_CACHE = 64 << 20  # bytes of snapshots the squares' evaluator keeps


class KLDivergence:
    """KL divergence scores over ``evaluator``'s lattice (see the module docstring)."""

    def __init__(self, evaluator: NodeEvaluator) -> None:
        keys, counts = evaluator.bottom  # the frequency set: ground codes packed, rows
        codes = np.column_stack([(keys >> int(s)) & int(m) for s, m in zip(evaluator.shifts, evaluator.masks,
                                                                            strict=True)])
        self.evaluator, self.n = evaluator, int(counts.sum())
        squares = SimpleNamespace(hierarchies=evaluator.hierarchies, frequency=SimpleNamespace(
            codes=codes, counts=counts * counts, n_rows=int((counts * counts).sum())))
        self.squares = NodeEvaluator(squares, cache_budget=SQUARES_CACHE)
        self.tuples = float((counts.astype(float) ** 2 * np.log2(counts / self.n)).sum()) if self.n else 0.0
        # per QI and level: log2 of the ground values under each value (a class's area is their product)
        self.log_leaves = [[np.log2(np.bincount(h.codes[d]).astype(float)) for d in range(h.height + 1)]
                           for h in evaluator.hierarchies]
        self.log_max_area = float(sum(np.log2(len(h.ground)) for h in evaluator.hierarchies))

    def score(self, node, keys: np.ndarray, counts: np.ndarray, suppressed: np.ndarray) -> float:
        """The node's KL divergence in bits; ``suppressed``: which of its classes it removes."""
        if not self.n:
            return 0.0
        node = np.asarray(node, dtype=np.int64)
        square_keys, square_counts, _ = self.squares.classes(node)
        order = np.argsort(square_keys, kind="stable")
        square = square_counts[order][np.searchsorted(square_keys[order], keys)].astype(float)
        log_area = np.zeros(len(keys))
        for a, table in enumerate(self.log_leaves):
            log_area += table[node[a]][(keys >> int(self.evaluator.shifts[a])) & int(self.evaluator.masks[a])]
        kept = ~suppressed
        sizes = counts.astype(float)
        released = float((square[kept] * (np.log2(sizes[kept] / self.n) - log_area[kept])).sum())
        removed = float(sizes[suppressed].sum())
        outliers = np.log2(removed / self.n) - self.log_max_area if removed else 0.0
        return (self.tuples - released - float(square[suppressed].sum()) * outliers) / self.n
