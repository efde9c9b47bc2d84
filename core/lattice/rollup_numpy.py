"""The roll-up of ``microrelease.core.lattice.rollup_kernels`` in plain numpy (sort-based grouping),
with the same contract (``inner_profile``, ``roll_once``).

Kept only as an independent oracle of the compiled kernels: ``build_profile(strategy="numpy")`` in
tests/core/lattice/test_random_brute_force.py (``test_profile_answers_equal_direct_evaluation``) and
tests/core/lattice/test_adult_brute_force.py (``test_numpy_path_gives_the_identical_profile``).
"""

from __future__ import annotations

import numpy as np


def roll_once(keys, counts, shift, mask, pmap) -> tuple[np.ndarray, np.ndarray]:
    digit = (keys >> shift) & mask
    new_keys = keys + ((pmap[digit].astype(np.int64) - digit) << shift)
    order = np.argsort(new_keys, kind="stable")
    sorted_keys = new_keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    return sorted_keys[starts], np.add.reduceat(counts[order], starts)


def _histogram(counts):
    sizes, freq = np.unique(counts, return_counts=True)
    return sizes.astype(np.int64), freq.astype(np.int64)


def walk(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, histogram):
    """(local node ids in visit order, segment offsets, histogram values, classes with each value) for
    every node of the sub-lattice over the QIs in ``heights``: the depth-first roll-up, each node's classes
    regrouped by sorting and summarised by ``histogram(counts) -> (values, frequencies)``."""
    p = len(heights)
    strides = np.ones(p, np.int64)
    for a in range(p - 2, -1, -1):
        strides[a] = strides[a + 1] * (heights[a + 1] + 1)
    order, seg, values_out, counts_out = [], [0], [], []

    def visit(keys, counts, vec, lid, first_attr):
        values, freq = histogram(counts)
        order.append(lid)
        values_out.append(values)
        counts_out.append(freq)
        seg.append(seg[-1] + len(values))
        for a in range(first_attr, p):
            if vec[a] < heights[a]:
                off = parent_off[a, vec[a]]
                child = roll_once(keys, counts, shifts[a], masks[a], parent_flat[off:])
                vec[a] += 1
                visit(*child, vec, lid + strides[a], a)
                vec[a] -= 1

    visit(base_keys, base_counts, [0] * p, 0, 0)
    return (
        np.asarray(order, np.int64),
        np.asarray(seg, np.int64),
        np.concatenate(values_out),
        np.concatenate(counts_out),
    )


def inner_profile(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off):
    return walk(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, _histogram)
