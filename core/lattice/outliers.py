"""Samarati's outlier distance matrix VT (§5.2) and suppression computed from it.

Rows of VT are the *outliers*: distinct QI tuples that occur fewer than k times in the table.
Columns are all distinct tuples. Entry VT[x, y] is the distance vector at which x and y first
become equal: per attribute, the level of their lowest common ancestor in its hierarchy. At a
node v, outlier x shares its generalized class with every y having VT[x, y] <= v, so its class has
C_x = sum of count(y) over those y, and x's rows are suppressed iff C_x < k. Tuples occurring at
least k times are never suppressed at any node.

VT grows as (#outliers × #distinct × m); it is meant for small tables, for teaching and for
cross-checking the grouping evaluation. ``outlier_matrix`` refuses sizes beyond ``max_cells``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.frequency import FrequencySet
from microrelease.core.lattice.hierarchies import Hierarchy


@dataclass(frozen=True, eq=False)
class OutlierMatrix:
    """VT for a given k: ``vt[x, y]`` is the LCA distance vector of outlier x and tuple y."""

    k: int
    outliers: np.ndarray  # frequency-set indices of the outlier tuples (count < k)
    vt: np.ndarray  # (n_outliers × n_distinct × m) levels
    counts: np.ndarray  # row count of every distinct tuple

    def class_size_at(self, node: Sequence[int]) -> np.ndarray:
        """C_x for every outlier x at ``node``."""
        within = np.all(self.vt <= np.asarray(node, dtype=self.vt.dtype), axis=2)
        return within @ self.counts

    def suppressed_tuples(self, node: Sequence[int]) -> np.ndarray:
        """Frequency-set indices of the outliers suppressed at ``node`` (C_x < k)."""
        return self.outliers[self.class_size_at(node) < self.k]

    def suppressed_count(self, node: Sequence[int]) -> int:
        """Rows suppressed at ``node``: sum of count(x) over outliers x with C_x < k."""
        return int(self.counts[self.suppressed_tuples(node)].sum())

    def satisfies(self, node: Sequence[int], max_sup: int) -> bool:
        return self.suppressed_count(node) <= max_sup


def outlier_matrix(
    freq: FrequencySet, hierarchies: Sequence[Hierarchy], k: int, *, max_cells: int = 50_000_000
) -> OutlierMatrix:
    """Build VT for ``k`` from the frequency set.

    Parameters
    ----------
    freq : FrequencySet
        The frequency set at the bottom of the lattice.
    hierarchies : sequence of Hierarchy
        One hierarchy per quasi-identifier.
    k : int
        The k of k-anonymity.
    max_cells : int, default 50000000
        The largest matrix built.

    Returns
    -------
    OutlierMatrix
        Samarati's VT: the rows to suppress at every node.
    """
    outliers = np.flatnonzero(freq.counts < k)
    cells = len(outliers) * freq.n_distinct * len(hierarchies)
    if cells > max_cells:
        raise InvalidParameterError(
            f"the outlier matrix VT would have {cells:,} cells ({len(outliers):,} outliers × "
            f"{freq.n_distinct:,} tuples × {len(hierarchies)} QIs), over max_cells={max_cells:,}; "
            "use the grouping evaluation for tables this size"
        )
    vt = np.empty((len(outliers), freq.n_distinct, len(hierarchies)), dtype=np.int16)
    for i, h in enumerate(hierarchies):
        lca = h.lca_levels()
        vt[:, :, i] = lca[freq.codes[outliers, i][:, None], freq.codes[None, :, i]]
    return OutlierMatrix(k, outliers, vt, freq.counts)
