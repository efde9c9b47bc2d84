"""The joint roll-up of a sample and its population over the whole lattice (k-map), in numpy: the
oracle of the compiled profile kernel's joint mode (:class:`~microrelease.core.lattice.walk_kernel.WalkPlan`
with ``pack``).

A class carries two counts, [sample rows, population rows], summed when classes merge. At every node the
classes holding sample rows are histogrammed by their joint (sample size f, population size F), each pair
packed as ``f * base + F`` (``base`` = population rows + 1), so the shared histogram and CSR output
serve unchanged: the packed values come out ascending, i.e. sorted by f, then F.
"""

from __future__ import annotations

import numpy as np

from microrelease.core.lattice.rollup_numpy import roll_once


def inner_joint_numpy(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, base):
    """(local node ids in visit order, segment offsets, packed (f, F) pairs, classes with each pair) for
    every node of the sub-lattice over the QIs in ``heights`` (sort-based regrouping); population-only
    classes are left out."""

    p = len(heights)
    strides = np.ones(p, np.int64)
    for a in range(p - 2, -1, -1):
        strides[a] = strides[a + 1] * (heights[a + 1] + 1)
    order, seg, pairs_out, counts_out = [], [0], [], []

    def visit(keys, counts, vec, lid, first):
        held = counts[:, 0] > 0
        pairs, freq = np.unique(counts[held, 0] * base + counts[held, 1], return_counts=True)
        order.append(lid)
        pairs_out.append(pairs.astype(np.int64))
        counts_out.append(freq.astype(np.int64))
        seg.append(seg[-1] + len(pairs))
        for a in range(first, p):
            if vec[a] < heights[a]:
                off = parent_off[a, vec[a]]
                child = roll_once(keys, counts, shifts[a], masks[a], parent_flat[off:])
                vec[a] += 1
                visit(*child, vec, lid + strides[a], a)
                vec[a] -= 1

    visit(base_keys, base_counts, [0] * p, 0, 0)
    return (np.asarray(order, np.int64), np.asarray(seg, np.int64), np.concatenate(pairs_out),
            np.concatenate(counts_out))
