"""Compiled roll-up of the lattice profile under privacy models (see microrelease.core.models.profile).

The same depth-first walk as the k-anonymity kernel (microrelease.core.lattice.rollup_kernels): a class is an
int64 key of bit fields; raising one QI rewrites its field and a hash table regroups the classes,
here summing their vectors of sensitive-value counts. At every node the models are evaluated on
every class, in the same arithmetic as the numpy version (which the tests compare it with).
Model kinds: 0 distinct l, 1 entropy l, 2 recursive (c, l), 3/4/5 t-closeness with equal, ordered,
hierarchical ground distance.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from microrelease.core.lattice.rollup_kernels import _GOLDEN, _bits_for, _histogram

_EPS = 1e-12


@nb.njit(cache=True, nogil=True)
def roll_vec(keys, counts, n, shift, mask, pmap, out_keys, out_counts, table_keys, table_idx, out_slot):
    """Like ``roll``, summing count vectors (rows of ``counts``) of the merged classes."""
    bits = _bits_for(n)
    hash_shift = np.uint64(64 - bits)
    wrap = (1 << bits) - 1
    m = 0
    width = counts.shape[1]
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
                for c in range(width):
                    out_counts[m, c] = counts[i, c]
                m += 1
                break
            if tk == key:
                row = table_idx[s]
                for c in range(width):
                    out_counts[row, c] += counts[i, c]
                break
            s = (s + 1) & wrap
    for j in range(m):
        table_keys[out_slot[j]] = -1
    return m


@nb.njit(cache=True, nogil=True)
def _emd_hierarchical(extra0, height, level_sizes, map_flat, map_off):
    extra = extra0.copy()
    total = 0.0
    for level in range(1, height + 1):
        n_parent = level_sizes[level]
        pos = np.zeros(n_parent)
        neg = np.zeros(n_parent)
        off = map_off[level - 1]
        for c in range(len(extra)):
            parent = map_flat[off + c]
            e = extra[c]
            if e > 0:
                pos[parent] += e
            else:
                neg[parent] -= e
        s = 0.0
        for a in range(n_parent):
            s += min(pos[a], neg[a])
        total += (level / height) * s
        extra = pos - neg
    return total


@nb.njit(cache=True, nogil=True)
def _passes(row, size, table_p, kind, l_value, c_value, t_value, height, level_sizes, map_flat, map_off):
    m = len(row)
    if kind == 0:
        distinct = 0
        for v in range(m):
            if row[v] > 0:
                distinct += 1
        return distinct >= l_value
    if kind == 1:
        h = 0.0
        for v in range(m):
            if row[v] > 0:
                p = row[v] / size
                h -= p * np.log(p)
        return h >= np.log(l_value) - _EPS
    if kind == 2:
        ranked = -np.sort(-row)
        tail = 0.0
        for v in range(int(l_value) - 1, m):
            tail += ranked[v]
        return tail > 0 and ranked[0] / tail < c_value
    if kind == 3:  # computed inline: no array allocated per class on this hot path
        emd = 0.0
        for v in range(m):
            emd += abs(row[v] / size - table_p[v])
        emd *= 0.5
    elif kind == 4:
        emd = 0.0
        cum = 0.0
        for v in range(m - 1):
            cum += row[v] / size - table_p[v]
            emd += abs(cum)
        emd = emd / (m - 1) if m > 1 else 0.0
    else:
        extra = np.empty(m)
        for v in range(m):
            extra[v] = row[v] / size - table_p[v]
        emd = _emd_hierarchical(extra, height, level_sizes, map_flat, map_off) if height > 0 else 0.0
    return emd <= t_value + _EPS


@nb.njit(cache=True, nogil=True)
def model_profile(base_keys, base_counts, heights, strides, shifts, masks, parent_flat, parent_off, table_p,
                  kinds, l_values, c_values, t_values, height, level_sizes, map_flat, map_off):
    """Every node's histogram of passing class sizes, rows failing any model and each model."""
    p = len(heights)
    n0, width = base_counts.shape
    cap_rows = max(n0, 1)
    depth_max = 0
    n_nodes = 1
    for a in range(p):
        depth_max += heights[a]
        n_nodes *= heights[a] + 1
    keys_buf = np.empty((depth_max + 1, cap_rows), np.int64)
    cnt_buf = np.empty((depth_max + 1, cap_rows, width))
    nlen = np.zeros(depth_max + 1, np.int64)
    keys_buf[0, :n0] = base_keys
    cnt_buf[0, :n0, :] = base_counts
    nlen[0] = n0
    table_keys = np.full(1 << _bits_for(cap_rows), -1, np.int64)
    table_idx = np.empty(len(table_keys), np.int64)
    out_slot = np.empty(cap_rows, np.int64)
    scratch = np.zeros(1 << 16, np.int64)
    touched = np.empty(cap_rows, np.int64)
    large = np.empty(cap_rows, np.int64)
    sizes_now = np.empty(cap_rows, np.int64)
    n_models = len(kinds)
    failing = np.zeros(n_nodes, np.int64)
    failing_by = np.zeros((n_models, n_nodes), np.int64)
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
            kept = 0
            for i in range(nlen[d]):
                row = cnt_buf[d, i]
                size = 0.0
                for c in range(width):
                    size += row[c]
                ok = True
                for k in range(n_models):
                    if not _passes(row, size, table_p, kinds[k], l_values[k], c_values[k], t_values[k], height,
                                   level_sizes, map_flat, map_off):
                        failing_by[k, lid] += np.int64(round(size))
                        ok = False
                if ok:
                    sizes_now[kept] = np.int64(round(size))
                    kept += 1
                else:
                    failing[lid] += np.int64(round(size))
            sizes, freq = _histogram(sizes_now, kept, scratch, touched, large)
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
        nlen[d + 1] = roll_vec(keys_buf[d], cnt_buf[d], nlen[d], shifts[a], masks[a], parent_flat[off:],
                               keys_buf[d + 1], cnt_buf[d + 1], table_keys, table_idx, out_slot)
        vec[a] += 1
        lid += strides[a]
        d += 1
        raised[d] = a
        next_a[d] = a
        emit = True
    return order, seg, out_sizes[:total].copy(), out_counts[:total].copy(), failing, failing_by
