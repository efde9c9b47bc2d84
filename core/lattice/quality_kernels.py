"""The quality profile's compiled per-node figures (``microrelease.core.lattice.quality``).

The profile kernel (``walk_kernel``) visits every node with its classes. A
class carries two counts: its rows c and Σ c_x² over the ground tuples x it holds (the KL divergence
weighs each row by its tuple's frequency). At each node, ``add_node_quality`` adds, per distinct size
of the passing classes (beside the class-size histogram), what the quality models read:

- per QI, the *share mass*: Σ c · share_i (the share of QI i's ground domain under the class's value);
- Σ c_x², and Σ c_x² · Σ_i log2(leaves_i) (the class's area in ground values, for KL);
- the running Σ_u a_u log2 a_u, summed over QIs, where a_u counts the rows of generalized value u among
  the classes failing a privacy model and the passing classes of this size or smaller: the entropy of
  the rows a query for any k suppresses (ARX's non-uniform entropy), read with one gather.

The classes failing a privacy model give, per node, their Σ c_x² and that entropy sum (``node_q``).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from microrelease.core.lattice.rollup_kernels import lattice_size


@nb.njit(cache=True, nogil=True)
def _grown(rows, need, width):
    cap = max(16, len(rows))
    while cap < need:
        cap *= 2
    out = np.empty((cap, width))
    out[:len(rows)] = rows
    return out


@nb.njit(cache=True, nogil=True)
def _xlog2x(x, table):
    """x log2 x for a whole number x: read from ``table`` (x log2 x for 0..len - 1) when it holds it."""
    i = np.int64(x)
    if i < len(table):
        return table[i]
    return x * np.log2(x)


@nb.njit(cache=True, nogil=True)
def _add_entropy(key, rows, all_shifts, all_masks, value_count, value_off, xlog_table):
    """Add a class's rows to the per-value counts; returns the change of Σ a log2 a over QIs."""
    delta = 0.0
    for a in range(len(all_shifts)):
        j = value_off[a] + ((key >> all_shifts[a]) & all_masks[a])
        old = value_count[j]
        value_count[j] = old + rows
        delta += _xlog2x(old + rows, xlog_table) - _xlog2x(old, xlog_table)
    return delta


@nb.njit(cache=True, nogil=True)
def add_node_quality(keys, rows, squares, n, ok, sizes, freq, levels, all_shifts, all_masks, share_flat, share_off,
                 leaves_flat, value_count, value_off, xlog_table, pair_q, used, node_q, visited):
    """Write one node's quality figures: ``pair_q[used + j]`` for its j-th passing size (columns: m share
    masses, Σ c_x², Σ c_x² log2 area, running entropy sum) and ``node_q[visited]`` for its failing classes
    (Σ c_x², entropy sum). ``rows``/``squares``: each class's rows and Σ c_x²; ``ok``: passes every model;
    ``sizes``/``freq``: the passing classes' histogram; ``value_count`` (all zero, left all zero): scratch per
    QI value, ``value_off[a]`` its QI's start; ``xlog_table``: x log2 x for small whole x."""
    m = len(all_shifts)
    pair_q[used:used + len(sizes)] = 0.0
    entropy = 0.0
    fail_sq = 0.0
    n_ok = 0
    for i in range(n):
        if ok[i]:
            n_ok += 1
            continue
        if rows[i] == 0:  # a class of the population alone (k-map): none of the data's rows
            continue
        fail_sq += squares[i]
        entropy += _add_entropy(keys[i], rows[i], all_shifts, all_masks, value_count, value_off, xlog_table)
    node_q[visited, 0] = fail_sq
    node_q[visited, 1] = entropy
    # the passing classes by size, in one counting pass over the histogram (sizes ascending)
    start = np.empty(len(sizes) + 1, np.int64)
    start[0] = 0
    for j in range(len(sizes)):
        start[j + 1] = start[j] + freq[j]
    fill = start[:-1].copy()
    order = np.empty(n_ok, np.int64)
    for i in range(n):
        if ok[i]:
            j = np.searchsorted(sizes, np.int64(round(rows[i])))
            order[fill[j]] = i
            fill[j] += 1
    m2 = m + 2
    for pair in range(len(sizes)):
        row = used + pair
        for t in range(start[pair], start[pair + 1]):
            i = order[t]
            c = rows[i]
            key = keys[i]
            area = 0.0
            for a in range(m):
                at = share_off[a, levels[a]] + ((key >> all_shifts[a]) & all_masks[a])
                pair_q[row, a] += c * share_flat[at]
                area += leaves_flat[at]
            pair_q[row, m] += squares[i]
            pair_q[row, m + 1] += squares[i] * area
            entropy += _add_entropy(key, c, all_shifts, all_masks, value_count, value_off, xlog_table)
        pair_q[row, m2] = entropy
    for i in range(n):
        if rows[i] != 0:
            for a in range(m):
                value_count[value_off[a] + ((keys[i] >> all_shifts[a]) & all_masks[a])] = 0.0


@nb.njit(cache=True, nogil=True)
def start_quality(heights, outer_levels, m, value_off):
    """Buffers of a quality kernel: the node's levels (the walked QIs are filled per node), the scratch
    per QI value, room for the pairs' and the nodes' figures."""
    p = len(heights)
    levels = np.empty(m, np.int64)
    for a in range(p, m):
        levels[a] = outer_levels[a - p]
    value_count = np.zeros(value_off[-1])
    n_nodes = lattice_size(heights)
    return levels, value_count, np.empty((16, m + 3)), np.zeros((n_nodes, 2))
