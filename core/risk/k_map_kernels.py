"""Compiled joint roll-up of a sample and its population over the whole lattice (k-map).

The walk is the k-anonymity kernel's (:mod:`microrelease.core.lattice.rollup_kernels`); a class carries
two counts, [sample rows, population rows], summed when classes merge. At every node the classes
holding sample rows are histogrammed by their joint (sample size f, population size F), each pair
packed as ``f * base + F`` (``base`` = population rows + 1), so the shared histogram and CSR output
serve unchanged: the packed values come out ascending, i.e. sorted by f, then F.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from microrelease.core.lattice.quality_kernels import _grown, add_node_quality, start_quality
from microrelease.core.lattice.rollup_kernels import (
    append_histogram,
    classes,
    finish_histograms,
    histogram,
    histogram_buffers,
    lattice_size,
    next_node,
    node_id,
    start_histograms,
    start_walk,
)


@nb.njit(cache=True, nogil=True)
def inner_joint_profile(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, base):
    """(local node ids in visit order, segment offsets, packed (f, F) pairs, classes with each pair)
    for every node of the sub-lattice over the QIs in ``heights``; population-only classes are left out."""
    walk = start_walk(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off)
    cnt_buf, nlen = classes(walk)
    buffers = histogram_buffers(len(base_keys))
    packed = np.empty(max(len(base_keys), 1), np.int64)
    out = start_histograms(lattice_size(heights))
    while True:
        d = next_node(walk)
        if d < 0:
            break
        cnt = cnt_buf[d]
        m = 0
        for i in range(nlen[d]):
            if cnt[i, 0] > 0:
                packed[m] = cnt[i, 0] * base + cnt[i, 1]
                m += 1
        pairs, freq = histogram(packed, m, buffers)
        out = append_histogram(out, node_id(walk), pairs, freq)
    return finish_histograms(out)


def inner_joint_numpy(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, base):
    """The same in numpy (sort-based regrouping): the compiled kernel's oracle."""
    from microrelease.core.lattice.rollup_numpy import roll_once

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


@nb.njit(cache=True, nogil=True)
def inner_k_map_quality(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, outer_levels,
                        k_map, all_shifts, all_masks, share_flat, share_off, leaves_flat, value_off, xlog_table):
    """For one K: every node's histogram of the sample classes with at least ``k_map`` population rows, and
    the quality figures of :func:`~microrelease.core.lattice.quality_kernels.add_node_quality` (the other sample
    classes fail). ``base_counts``: [sample rows, population rows, Σ c_x² of the sample's tuples] (float)."""
    walk = start_walk(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off)
    cnt_buf, nlen = classes(walk)
    keys_buf, vec = walk[10], walk[6]
    m = len(all_shifts)
    buffers = histogram_buffers(len(base_keys))
    width = max(len(base_keys), 1)
    sizes_now = np.empty(width, np.int64)
    ok = np.empty(width, np.bool_)
    out = start_histograms(lattice_size(heights))
    levels, value_count, pair_q, node_q = start_quality(heights, outer_levels, m, value_off)
    used = 0
    visited = 0
    while True:
        d = next_node(walk)
        if d < 0:
            break
        n = nlen[d]
        cnt = cnt_buf[d]
        kept = 0
        for i in range(n):
            ok[i] = cnt[i, 0] > 0 and cnt[i, 1] >= k_map
            if ok[i]:
                sizes_now[kept] = np.int64(round(cnt[i, 0]))
                kept += 1
        sizes, freq = histogram(sizes_now, kept, buffers)
        for a in range(len(heights)):
            levels[a] = vec[a]
        if used + len(sizes) > len(pair_q):
            pair_q = _grown(pair_q[:used], used + len(sizes), m + 3)
        add_node_quality(keys_buf[d], cnt[:, 0], cnt[:, 2], n, ok, sizes, freq, levels, all_shifts, all_masks, share_flat,
                     share_off, leaves_flat, value_count, value_off, xlog_table, pair_q, used, node_q, visited)
        used += len(sizes)
        visited += 1
        out = append_histogram(out, node_id(walk), sizes, freq)
    order, seg, sizes_out, counts_out = finish_histograms(out)
    return order, seg, sizes_out, counts_out, pair_q[:used].copy(), node_q
