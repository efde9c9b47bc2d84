"""Compiled roll-up of the lattice profile under privacy models (see microrelease.core.models.profile).

The walk is the k-anonymity kernel's (:mod:`microrelease.core.lattice.rollup_kernels`); here a
class carries its vector of sensitive-value counts, and at every node each model is evaluated on
every class, in the same arithmetic as the models' numpy checks. A model is handed over as its
:meth:`~microrelease.core.models.base.PrivacyModel.kernel_code`: the kind codes below are the ones
the model classes declare, and :data:`KERNEL_KINDS` lists them. The profile refuses a model whose
kind is not there before the kernel runs (see
:func:`~microrelease.core.models.profile.build_model_profile`); the kernel itself raises on one too.
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
from microrelease.core.models.base import TOLERANCE
from microrelease.core.models.l_diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from microrelease.core.models.t_closeness import TCloseness

_DISTINCT = DistinctLDiversity.kind
_ENTROPY = EntropyLDiversity.kind
_RECURSIVE = RecursiveCLDiversity.kind
_EQUAL = TCloseness.kinds["equal"]
_ORDERED = TCloseness.kinds["ordered"]
_HIERARCHICAL = TCloseness.kinds["hierarchical"]
KERNEL_KINDS = frozenset({_DISTINCT, _ENTROPY, _RECURSIVE, _EQUAL, _ORDERED, _HIERARCHICAL})  # one branch each


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


@nb.njit(cache=True, nogil=True, inline="always")  # inlined into the kernel's class loop: 15% faster
def _passes(row, size, table_p, kind, l_value, c_value, t_value, height, level_sizes, map_flat, map_off):
    m = len(row)
    if kind == _DISTINCT:
        distinct = 0
        for v in range(m):
            if row[v] > 0:
                distinct += 1
        return distinct >= l_value
    if kind == _ENTROPY:
        h = 0.0
        for v in range(m):
            if row[v] > 0:
                p = row[v] / size
                h -= p * np.log(p)
        return h >= np.log(l_value) - TOLERANCE
    if kind == _RECURSIVE:
        ranked = -np.sort(-row)
        tail = 0.0
        for v in range(int(l_value) - 1, m):
            tail += ranked[v]
        return tail > 0 and ranked[0] / tail < c_value
    if kind == _EQUAL:  # computed inline: no array allocated per class on this hot path
        emd = 0.0
        for v in range(m):
            emd += abs(row[v] / size - table_p[v])
        emd *= 0.5
    elif kind == _ORDERED:
        emd = 0.0
        cum = 0.0
        for v in range(m - 1):
            cum += row[v] / size - table_p[v]
            emd += abs(cum)
        emd = emd / (m - 1) if m > 1 else 0.0
    elif kind == _HIERARCHICAL:
        extra = np.empty(m)
        for v in range(m):
            extra[v] = row[v] / size - table_p[v]
        emd = _emd_hierarchical(extra, height, level_sizes, map_flat, map_off) if height > 0 else 0.0
    else:  # never reached through build_model_profile, which checks every kind first
        raise ValueError("a privacy model's kind code has no branch in the compiled kernel")
    return emd <= t_value + TOLERANCE


@nb.njit(cache=True, nogil=True)
def inner_model_profile(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, table_p,
                        kinds, l_values, c_values, t_values, height, level_sizes, map_flat, map_off):
    """Every node's histogram of passing class sizes, rows failing any model and each model, for the
    sub-lattice over the QIs in ``heights`` (as ``inner_profile``; the failing rows in visit order)."""
    walk = start_walk(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off)
    cnt_buf, nlen = classes(walk)
    width = base_counts.shape[1]
    buffers = histogram_buffers(len(base_keys))
    sizes_now = np.empty(max(len(base_keys), 1), np.int64)
    n_nodes = lattice_size(heights)
    out = start_histograms(n_nodes)
    n_models = len(kinds)
    failing = np.zeros(n_nodes, np.int64)
    failing_by = np.zeros((n_models, n_nodes), np.int64)
    visited = 0
    while True:
        d = next_node(walk)
        if d < 0:
            break
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
                    failing_by[k, visited] += np.int64(round(size))
                    ok = False
            if ok:
                sizes_now[kept] = np.int64(round(size))
                kept += 1
            else:
                failing[visited] += np.int64(round(size))
        sizes, freq = histogram(sizes_now, kept, buffers)
        out = append_histogram(out, node_id(walk), sizes, freq)
        visited += 1
    order, seg, out_sizes, out_counts = finish_histograms(out)
    return order, seg, out_sizes, out_counts, failing, failing_by
