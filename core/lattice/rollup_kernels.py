"""Compiled roll-up of the whole-lattice profile: the walk shared by every profile kernel.

A class is an int64 key packing its level codes in bit fields; raising QI ``a`` one level rewrites
its field through the hierarchy's parent map, then an open-addressing hash table regroups the
classes, summing what they carry: a row count (k-anonymity, here) or a vector of counts over the
sensitive values (privacy models, ``microrelease.core.models.model_rollup_kernels``). Only a compiled
group-by reaches the profile targets (measured on a 2-core machine: numpy's sort-based grouping
costs about 5× more).

The depth-first walk is written once: ``start_walk`` sets it up, ``next_node`` moves it to
the next node and rolls that node's classes up from its parent's, ``append_histogram``
collects each node's class-size histogram. The one profile kernel,
``walk_profile``, is the loop ``while next_node(walk) >= 0``
with the per-node work its plan declares. The per-node work is chosen by the plan's values, not passed
as a function, because numba cannot cache a function taking another (nor a closure over one): it
would be compiled anew in every process (numba issue #6264).
"""

from __future__ import annotations

import numba as nb
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing multiplier
_SMALL = 1 << 16  # class sizes below this are histogrammed in a dense scratch array

# positions in the walk tuple (see start_walk)
_DEPTH, _NODE, _STARTED = 0, 1, 2


@nb.njit(cache=True, nogil=True)
def _bits_for(n):
    bits = 4
    while (1 << bits) < 2 * n:
        bits += 1
    return bits


@nb.njit(cache=True, nogil=True)
def roll(keys, counts, n, shift, mask, pmap, out_keys, out_counts, table_keys, table_idx, out_slot):
    """Rewrite the bit field (``shift``, ``mask``) of n keys through ``pmap``, group, return #classes.

    ``counts`` holds one row count per class (1-D) or one vector of counts per class (2-D); merged
    classes add them. ``table_keys`` must be all -1 on entry; it is left all -1 on exit.
    """
    bits = _bits_for(n)
    hash_shift = np.uint64(64 - bits)
    wrap = (1 << bits) - 1
    m = 0
    for i in range(n):
        key = keys[i]
        digit = (key >> shift) & mask
        key += (pmap[digit] - digit) << shift
        s = np.int64((np.uint64(key) * _GOLDEN) >> hash_shift)
        while True:
            tk = table_keys[s]
            if tk == -1:
                table_keys[s] = key
                table_idx[s] = m
                out_slot[m] = s
                out_keys[m] = key
                # numba prunes the branch that does not fit counts' dimensions; the vectors are
                # copied value by value (row views cost 1.8x on this hot path)
                if counts.ndim == 1:
                    out_counts[m] = counts[i]
                else:
                    for c in range(counts.shape[1]):
                        out_counts[m, c] = counts[i, c]
                m += 1
                break
            if tk == key:
                row = table_idx[s]
                if counts.ndim == 1:
                    out_counts[row] += counts[i]
                else:
                    for c in range(counts.shape[1]):
                        out_counts[row, c] += counts[i, c]
                break
            s = (s + 1) & wrap
    for j in range(m):
        table_keys[out_slot[j]] = -1
    return m


def roll_once(keys, counts, shift, mask, pmap):
    """One roll step from Python (used to reach the start node of each chunk)."""
    n = len(keys)
    width = max(n, 1)
    out_keys = np.empty(width, np.int64)
    out_counts = np.empty((width, *counts.shape[1:]), counts.dtype)
    table_keys = np.full(1 << _bits_for(width), -1, np.int64)
    table_idx = np.empty(len(table_keys), np.int64)
    out_slot = np.empty(width, np.int64)
    m = roll(keys, counts, n, shift, mask, pmap, out_keys, out_counts, table_keys, table_idx, out_slot)
    return out_keys[:m].copy(), out_counts[:m].copy()


@nb.njit(cache=True, nogil=True)
def lattice_size(heights):
    n = 1
    for h in heights:
        n *= h + 1
    return n


@nb.njit(cache=True, nogil=True)
def start_walk(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off):
    """The depth-first walk of the sub-lattice over the QIs in ``heights`` (the others fixed),
    from the classes (``base_keys``, ``base_counts``) of its bottom node.

    It follows the spanning tree parent(v) = v - e_a (a = the last QI raised), so a node's classes
    live only until its subtree is done: one buffer of classes per depth. Local node ids number
    the sub-lattice in C order.
    """
    p = len(heights)
    n0 = len(base_keys)
    width = max(n0, 1)
    depth_max = 0
    for a in range(p):
        depth_max += heights[a]
    strides = np.ones(p, np.int64)
    for a in range(p - 2, -1, -1):
        strides[a] = strides[a + 1] * (heights[a + 1] + 1)
    keys_buf = np.empty((depth_max + 1, width), np.int64)
    cnt_buf = np.empty((depth_max + 1, width) + base_counts.shape[1:], base_counts.dtype)
    nlen = np.zeros(depth_max + 1, np.int64)
    keys_buf[0, :n0] = base_keys
    cnt_buf[0, :n0] = base_counts
    nlen[0] = n0
    table_keys = np.full(1 << _bits_for(width), -1, np.int64)
    table_idx = np.empty(len(table_keys), np.int64)
    out_slot = np.empty(width, np.int64)
    vec = np.zeros(p, np.int64)
    next_a = np.zeros(depth_max + 1, np.int64)
    raised = np.zeros(depth_max + 1, np.int64)
    state = np.zeros(3, np.int64)  # depth, local id of the current node, started
    return (heights, shifts, masks, parent_flat, parent_off, strides, vec, next_a, raised, state,
            keys_buf, cnt_buf, nlen, table_keys, table_idx, out_slot)


@nb.njit(cache=True, nogil=True)
def next_node(walk):
    """Move ``walk`` to its next node (the bottom first) and roll up that node's classes.

    Returns the depth d of the node (its classes: see ``classes``; its local id:
    ``node_id``), or -1 when every node has been visited.
    """
    (heights, shifts, masks, parent_flat, parent_off, strides, vec, next_a, raised, state,
     keys_buf, cnt_buf, nlen, table_keys, table_idx, out_slot) = walk
    if state[_STARTED] == 0:
        state[_STARTED] = 1
        return 0
    p = len(heights)
    d = state[_DEPTH]
    while d >= 0:
        a = next_a[d]
        while a < p and vec[a] >= heights[a]:
            a += 1
        if a < p:
            next_a[d] = a + 1
            off = parent_off[a, vec[a]]
            nlen[d + 1] = roll(keys_buf[d], cnt_buf[d], nlen[d], shifts[a], masks[a], parent_flat[off:],
                               keys_buf[d + 1], cnt_buf[d + 1], table_keys, table_idx, out_slot)
            vec[a] += 1
            state[_NODE] += strides[a]
            d += 1
            raised[d] = a
            next_a[d] = a
            state[_DEPTH] = d
            return d
        if d > 0:
            vec[raised[d]] -= 1
            state[_NODE] -= strides[raised[d]]
        d -= 1
    state[_DEPTH] = d
    return -1


@nb.njit(cache=True, nogil=True)
def node_id(walk):
    """Local id of the node ``walk`` is at."""
    return walk[9][_NODE]


@nb.njit(cache=True, nogil=True)
def classes(walk):
    """(counts, n): the node at depth d has ``n[d]`` classes, whose row counts (or vectors of
    counts) are ``counts[d, :n[d]]``."""
    return walk[11], walk[12]


@nb.njit(cache=True, nogil=True)
def histogram_buffers(n_classes):
    """Scratch space of ``histogram`` for up to ``n_classes`` classes."""
    width = max(n_classes, 1)
    return np.zeros(_SMALL, np.int64), np.empty(width, np.int64), np.empty(width, np.int64)


@nb.njit(cache=True, nogil=True)
def histogram(counts, n, buffers):
    """Distinct class sizes (ascending) and how many classes have each."""
    scratch, touched, large = buffers
    nt = 0
    nl = 0
    for i in range(n):
        c = counts[i]
        if c < _SMALL:
            if scratch[c] == 0:
                touched[nt] = c
                nt += 1
            scratch[c] += 1
        else:
            large[nl] = c
            nl += 1
    small_sizes = np.sort(touched[:nt])
    big = np.sort(large[:nl])
    n_big = 0
    for i in range(nl):
        if i == 0 or big[i] != big[i - 1]:
            n_big += 1
    sizes = np.empty(nt + n_big, np.int64)
    freq = np.empty(nt + n_big, np.int64)
    for i in range(nt):
        sizes[i] = small_sizes[i]
        freq[i] = scratch[small_sizes[i]]
        scratch[small_sizes[i]] = 0
    j = nt - 1
    for i in range(nl):
        if i == 0 or big[i] != big[i - 1]:
            j += 1
            sizes[j] = big[i]
            freq[j] = 0
        freq[j] += 1
    return sizes, freq


@nb.njit(cache=True, nogil=True)
def start_histograms(n_nodes):
    """Room for the class-size histograms of ``n_nodes`` nodes, in visit order (CSR)."""
    cap = max(16, 8 * n_nodes)
    return (np.empty(n_nodes, np.int64), np.zeros(n_nodes + 1, np.int64), np.empty(cap, np.int64),
            np.empty(cap, np.int64), np.zeros(1, np.int64))


@nb.njit(cache=True, nogil=True)
def append_histogram(out, lid, sizes, freq):
    """Add node ``lid``'s histogram to ``out`` (returned, its arrays grown when full)."""
    order, seg, out_sizes, out_counts, visited = out
    v = visited[0]
    total = seg[v]
    need = total + len(sizes)
    if need > len(out_sizes):
        cap = len(out_sizes)
        while cap < need:
            cap *= 2
        grown_s = np.empty(cap, np.int64)
        grown_c = np.empty(cap, np.int64)
        grown_s[:total] = out_sizes[:total]
        grown_c[:total] = out_counts[:total]
        out_sizes = grown_s
        out_counts = grown_c
    out_sizes[total:need] = sizes
    out_counts[total:need] = freq
    order[v] = lid
    seg[v + 1] = need
    visited[0] = v + 1
    return order, seg, out_sizes, out_counts, visited


@nb.njit(cache=True, nogil=True)
def finish_histograms(out):
    """(local node ids in visit order, segment offsets, sizes, counts)."""
    order, seg, out_sizes, out_counts, visited = out
    total = seg[visited[0]]
    return order, seg, out_sizes[:total].copy(), out_counts[:total].copy()
