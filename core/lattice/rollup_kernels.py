"""Compiled kernels of the whole-lattice roll-up (see microrelease.core.lattice.profile).

A class is an int64 key packing its level codes in bit fields; raising QI ``a`` one level rewrites
its field through the hierarchy's parent map, then an open-addressing hash table regroups the
classes. Only a compiled group-by reaches the profile targets (measured on a 2-core machine:
numpy's sort-based grouping costs about 5× more).
"""

from __future__ import annotations

import numba as nb
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing multiplier
_SMALL = 1 << 16  # class sizes below this are histogrammed in a dense scratch array


@nb.njit(cache=True, nogil=True)
def _bits_for(n):
    bits = 4
    while (1 << bits) < 2 * n:
        bits += 1
    return bits


@nb.njit(cache=True, nogil=True)
def roll(keys, counts, n, shift, mask, pmap, out_keys, out_counts, table_keys, table_idx, out_slot):
    """Rewrite the bit field (``shift``, ``mask``) of n keys through ``pmap``, group, return #classes.

    ``table_keys`` must be all -1 on entry; it is left all -1 on exit.
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
                out_counts[m] = counts[i]
                m += 1
                break
            if tk == key:
                out_counts[table_idx[s]] += counts[i]
                break
            s = (s + 1) & wrap
    for j in range(m):
        table_keys[out_slot[j]] = -1
    return m


@nb.njit(cache=True, nogil=True)
def _histogram(counts, n, scratch, touched, large):
    """Distinct class sizes (ascending) and how many classes have each."""
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
def inner_profile(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off):
    """Histograms of every node of the sub-lattice over the QIs in ``heights`` (the others fixed).

    Depth-first over the spanning tree parent(v) = v - e_a (a = the last QI raised), so a node's
    classes live only until its subtree is done. Returns (local node ids in visit order, segment
    offsets, sizes, counts); local ids number the sub-lattice in C order.
    """
    p = len(heights)
    n0 = len(base_keys)
    width = max(n0, 1)
    depth_max = 0
    n_nodes = 1
    for a in range(p):
        depth_max += heights[a]
        n_nodes *= heights[a] + 1
    strides = np.ones(p, np.int64)
    for a in range(p - 2, -1, -1):
        strides[a] = strides[a + 1] * (heights[a + 1] + 1)

    keys_buf = np.empty((depth_max + 1, width), np.int64)
    cnt_buf = np.empty((depth_max + 1, width), np.int64)
    nlen = np.zeros(depth_max + 1, np.int64)
    keys_buf[0, :n0] = base_keys
    cnt_buf[0, :n0] = base_counts
    nlen[0] = n0
    table_keys = np.full(1 << _bits_for(width), -1, np.int64)
    table_idx = np.empty(len(table_keys), np.int64)
    out_slot = np.empty(width, np.int64)
    scratch = np.zeros(_SMALL, np.int64)
    touched = np.empty(width, np.int64)
    large = np.empty(width, np.int64)

    order = np.empty(n_nodes, np.int64)
    seg = np.zeros(n_nodes + 1, np.int64)
    cap = max(16, 8 * n_nodes)
    out_sizes = np.empty(cap, np.int64)
    out_counts = np.empty(cap, np.int64)
    total = 0
    visited = 0

    vec = np.zeros(p, np.int64)
    next_a = np.zeros(depth_max + 1, np.int64)
    raised = np.zeros(depth_max + 1, np.int64)
    d = 0
    lid = 0
    emit = True
    while d >= 0:
        if emit:
            sizes, freq = _histogram(cnt_buf[d], nlen[d], scratch, touched, large)
            need = total + len(sizes)
            if need > cap:
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
            total = need
            order[visited] = lid
            visited += 1
            seg[visited] = total
            emit = False
        a = next_a[d]
        while a < p and vec[a] >= heights[a]:
            a += 1
        if a >= p:
            if d > 0:
                vec[raised[d]] -= 1
                lid -= strides[raised[d]]
            d -= 1
            continue
        next_a[d] = a + 1
        off = parent_off[a, vec[a]]
        nlen[d + 1] = roll(keys_buf[d], cnt_buf[d], nlen[d], shifts[a], masks[a], parent_flat[off:],
                           keys_buf[d + 1], cnt_buf[d + 1], table_keys, table_idx, out_slot)
        vec[a] += 1
        lid += strides[a]
        d += 1
        raised[d] = a
        next_a[d] = a
        emit = True
    return order, seg, out_sizes[:total].copy(), out_counts[:total].copy()


def roll_once(keys, counts, shift, mask, pmap):
    """One roll step from Python (used to reach the start node of each chunk)."""
    n = len(keys)
    width = max(n, 1)
    out_keys = np.empty(width, np.int64)
    out_counts = np.empty(width, np.int64)
    table_keys = np.full(1 << _bits_for(width), -1, np.int64)
    table_idx = np.empty(len(table_keys), np.int64)
    out_slot = np.empty(width, np.int64)
    m = roll(keys, counts, n, shift, mask, pmap, out_keys, out_counts, table_keys, table_idx, out_slot)
    return out_keys[:m].copy(), out_counts[:m].copy()
