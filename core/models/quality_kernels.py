"""Compiled roll-up of the quality profile under privacy models: ARX's quality models with l-diversity or
t-closeness.

The walk and the models' checks are :func:`~microrelease.core.models.rollup_kernels.inner_model_profile`'s;
a class's vector of sensitive-value counts carries one column more, Σ c_x² over its ground tuples, and at
every node :func:`~microrelease.core.lattice.quality_kernels.add_node_quality` adds the quality figures of the
passing classes per size, and those of the failing classes (which every query suppresses).
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
from microrelease.core.models.rollup_kernels import _mark_failing


@nb.njit(cache=True, nogil=True)
def inner_model_quality(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, outer_levels,
                        table_p, kinds, l_values, c_values, t_values, height, level_sizes, map_flat, map_off,
                        all_shifts, all_masks, share_flat, share_off, leaves_flat, value_off, xlog_table):
    """:func:`~microrelease.core.models.rollup_kernels.inner_model_profile`'s results, then the quality
    figures (pairs, failing) of :func:`~microrelease.core.lattice.quality_kernels.inner_quality`.
    ``base_counts``: the sensitive-value counts of each class, then its Σ c_x² (last column)."""
    walk = start_walk(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off)
    cnt_buf, nlen = classes(walk)
    keys_buf, vec = walk[10], walk[6]
    width = base_counts.shape[1] - 1
    m = len(all_shifts)
    buffers = histogram_buffers(len(base_keys))
    n_classes = max(len(base_keys), 1)
    sizes_now = np.empty(n_classes, np.int64)
    sizes = np.empty(n_classes)
    ok = np.empty(n_classes, np.bool_)
    fails = np.empty(n_classes, np.bool_)
    scratch = np.empty((3, max(width, level_sizes.max())))
    n_nodes = lattice_size(heights)
    out = start_histograms(n_nodes)
    n_models = len(kinds)
    failing = np.zeros(n_nodes, np.int64)
    failing_sq = np.zeros(n_nodes, np.int64)
    failing_by = np.zeros((n_models, n_nodes), np.int64)
    levels, value_count, pair_q, node_q = start_quality(heights, outer_levels, m, value_off)
    used = 0
    visited = 0
    while True:
        d = next_node(walk)
        if d < 0:
            break
        cnt = cnt_buf[d]
        values = cnt[:, :width]
        n = nlen[d]
        for i in range(n):
            size = 0.0
            for c in range(width):
                size += cnt[i, c]
            sizes[i] = size
            ok[i] = True
        for k in range(n_models):
            _mark_failing(values, n, sizes, table_p, kinds[k], l_values[k], c_values[k], t_values[k], height,
                          level_sizes, map_flat, map_off, scratch, fails)
            for i in range(n):
                if fails[i]:
                    failing_by[k, visited] += np.int64(round(sizes[i]))
                    ok[i] = False
        kept = 0
        for i in range(n):
            if ok[i]:
                sizes_now[kept] = np.int64(round(sizes[i]))
                kept += 1
            else:
                failing[visited] += np.int64(round(sizes[i]))
                failing_sq[visited] += np.int64(round(sizes[i])) ** 2
        sizes_kept, freq = histogram(sizes_now, kept, buffers)
        for a in range(len(heights)):
            levels[a] = vec[a]
        if used + len(sizes_kept) > len(pair_q):
            pair_q = _grown(pair_q[:used], used + len(sizes_kept), m + 3)
        add_node_quality(keys_buf[d], sizes, cnt[:, width], n, ok, sizes_kept, freq, levels, all_shifts,
                     all_masks, share_flat, share_off, leaves_flat, value_count, value_off, xlog_table, pair_q, used,
                     node_q, visited)
        used += len(sizes_kept)
        out = append_histogram(out, node_id(walk), sizes_kept, freq)
        visited += 1
    order, seg, out_sizes, out_counts = finish_histograms(out)
    return order, seg, out_sizes, out_counts, failing, failing_by, failing_sq, pair_q[:used].copy(), node_q
