"""The joint roll-up of a sample and its population over the whole lattice (k-map), in numpy: the
oracle of the compiled profile kernel's joint mode (``WalkPlan``
with ``pack``).

A class carries two counts, [sample rows, population rows], summed when classes merge. At every node the
classes holding sample rows are histogrammed by their joint (sample size f, population size F), each pair
packed as ``f * base + F`` (``base`` = population rows + 1), so the shared histogram and CSR output
serve unchanged: the packed values come out ascending, i.e. sorted by f, then F.
"""

from __future__ import annotations

import numpy as np

from microrelease.core.lattice.rollup_numpy import walk


def inner_joint_numpy(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, base):
    """(local node ids in visit order, segment offsets, packed (f, F) pairs, classes with each pair) for
    every node of the sub-lattice over the QIs in ``heights`` (sort-based regrouping); population-only
    classes are left out."""

    def histogram(counts):
        held = counts[:, 0] > 0
        pairs, freq = np.unique(counts[held, 0] * base + counts[held, 1], return_counts=True)
        return pairs.astype(np.int64), freq.astype(np.int64)

    return walk(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, histogram)
