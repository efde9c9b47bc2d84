"""Compiled roll-up of the quality profile (:mod:`microrelease.core.lattice.quality`).

The walk of :mod:`~microrelease.core.lattice.rollup_kernels` visits every node with its classes; here
each class also adds, per QI, its *share mass*: its row count times the share of the QI's ground
domain under the class's generalized value (read from its key at the QI's level). The masses are
summed per distinct class size, beside the node's class-size histogram, so that a query for any k
sums the masses of the classes smaller than k with a prefix sum, as the profile sums their rows.
"""

from __future__ import annotations

import numba as nb
import numpy as np

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
def _grown(rows, need, m):
    cap = max(16, len(rows))
    while cap < need:
        cap *= 2
    out = np.empty((cap, m))
    out[:len(rows)] = rows
    return out


@nb.njit(cache=True, nogil=True)
def inner_quality(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, outer_levels,
                  all_shifts, all_masks, share_flat, share_off):
    """As :func:`~microrelease.core.lattice.rollup_kernels.inner_profile`, plus per histogram pair the
    share mass of each QI (pairs × QIs). QIs [0, p) are walked, the others stay at ``outer_levels``;
    ``share_flat[share_off[a, level] + code]`` is QI a's share at that level."""
    walk = start_walk(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off)
    cnt_buf, nlen = classes(walk)
    keys_buf, vec = walk[10], walk[6]
    p, m = len(heights), len(all_shifts)
    buffers = histogram_buffers(len(base_keys))
    out = start_histograms(lattice_size(heights))
    mass = np.empty((16, m))
    used = 0
    levels = np.empty(m, np.int64)
    for a in range(p, m):
        levels[a] = outer_levels[a - p]
    while True:
        d = next_node(walk)
        if d < 0:
            break
        n = nlen[d]
        sizes, freq = histogram(cnt_buf[d], n, buffers)
        for a in range(p):
            levels[a] = vec[a]
        if used + len(sizes) > len(mass):
            mass = _grown(mass[:used], used + len(sizes), m)
        mass[used:used + len(sizes)] = 0.0
        for i in range(n):
            c = cnt_buf[d, i]
            key = keys_buf[d, i]
            j = used + np.searchsorted(sizes, c)
            for a in range(m):
                code = (key >> all_shifts[a]) & all_masks[a]
                mass[j, a] += c * share_flat[share_off[a, levels[a]] + code]
        used += len(sizes)
        out = append_histogram(out, node_id(walk), sizes, freq)
    order, seg, sizes_out, counts_out = finish_histograms(out)
    return order, seg, sizes_out, counts_out, mass[:used].copy()
