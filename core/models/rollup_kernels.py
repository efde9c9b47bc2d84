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
def _mark_failing(cnt, n, sizes, table_p, kind, l_value, c_value, t_value, height, level_sizes, map_flat, map_off,
                  scratch, fails):
    """``fails[i]``: whether class i of the ``n`` in ``cnt`` (``sizes``: their row counts) fails the
    model of ``kind``. The kind is dispatched once per node, and each class read in place: a row
    view, or a call taking arrays, per class costs several times the whole evaluation (each array
    handed over is reference-counted)."""
    m = cnt.shape[1]
    if kind == _DISTINCT:
        for i in range(n):
            distinct = 0
            for v in range(m):
                if cnt[i, v] > 0:
                    distinct += 1
            fails[i] = not distinct >= l_value
    elif kind == _ENTROPY:
        bound = np.log(l_value) - TOLERANCE
        for i in range(n):
            h = 0.0
            for v in range(m):
                if cnt[i, v] > 0:
                    p = cnt[i, v] / sizes[i]
                    h -= p * np.log(p)
            fails[i] = not h >= bound
    elif kind == _RECURSIVE:
        # r_1 / (r_l + ... + r_m): the l - 1 largest counts are selected to the front (no sort per
        # class); the counts are whole numbers, so the tail is exact whatever the order of the sum
        top = scratch[0]
        head_len = int(l_value) - 1
        for i in range(n):
            for v in range(m):
                top[v] = cnt[i, v]
            head = 0.0
            for j in range(head_len):
                best = j
                for v in range(j + 1, m):
                    if top[v] > top[best]:
                        best = v
                top[j], top[best] = top[best], top[j]
                head += top[j]
            r1 = top[0]
            if head_len == 0:
                for v in range(1, m):
                    r1 = max(r1, top[v])
            tail = sizes[i] - head
            fails[i] = not (tail > 0 and r1 / tail < c_value)
    elif kind == _EQUAL:
        for i in range(n):
            emd = 0.0
            for v in range(m):
                emd += abs(cnt[i, v] / sizes[i] - table_p[v])
            emd *= 0.5
            fails[i] = not emd <= t_value + TOLERANCE
    elif kind == _ORDERED:
        for i in range(n):
            emd = 0.0
            cum = 0.0
            for v in range(m - 1):
                cum += cnt[i, v] / sizes[i] - table_p[v]
                emd += abs(cum)
            emd = emd / (m - 1) if m > 1 else 0.0
            fails[i] = not emd <= t_value + TOLERANCE
    elif kind == _HIERARCHICAL:  # Li et al.'s closed formula, level by level up the value hierarchy
        extra, pos, neg = scratch[0], scratch[1], scratch[2]  # each as long as the largest level
        for i in range(n):
            for v in range(m):
                extra[v] = cnt[i, v] / sizes[i] - table_p[v]
            emd = 0.0
            for level in range(1, height + 1):
                n_parent = level_sizes[level]
                for a in range(n_parent):  # loops, not slices: a slice is an array made per class
                    pos[a] = 0.0
                    neg[a] = 0.0
                off = map_off[level - 1]
                for c in range(level_sizes[level - 1]):
                    parent = map_flat[off + c]
                    e = extra[c]
                    if e > 0:
                        pos[parent] += e
                    else:
                        neg[parent] -= e
                s = 0.0
                for a in range(n_parent):
                    s += min(pos[a], neg[a])
                emd += (level / height) * s
                for a in range(n_parent):
                    extra[a] = pos[a] - neg[a]
            fails[i] = not emd <= t_value + TOLERANCE
    else:  # never reached through build_model_profile, which checks every kind first
        raise ValueError("a privacy model's kind code has no branch in the compiled kernel")


@nb.njit(cache=True, nogil=True)
def inner_model_profile(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, table_p,
                        kinds, l_values, c_values, t_values, height, level_sizes, map_flat, map_off):
    """Every node's histogram of passing class sizes, rows failing any model and each model, and the
    failing classes' Σ size², for the sub-lattice over the QIs in ``heights`` (as ``inner_profile``;
    the failing rows in visit order)."""
    walk = start_walk(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off)
    cnt_buf, nlen = classes(walk)
    width = base_counts.shape[1]
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
    failing_sq = np.zeros(n_nodes, np.int64)  # Σ size² of the failing classes (DM*: quality.py)
    failing_by = np.zeros((n_models, n_nodes), np.int64)
    visited = 0
    while True:
        d = next_node(walk)
        if d < 0:
            break
        cnt = cnt_buf[d]
        n = nlen[d]
        for i in range(n):
            size = 0.0
            for c in range(width):
                size += cnt[i, c]
            sizes[i] = size
            ok[i] = True
        for k in range(n_models):
            _mark_failing(cnt, n, sizes, table_p, kinds[k], l_values[k], c_values[k], t_values[k], height,
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
        out = append_histogram(out, node_id(walk), sizes_kept, freq)
        visited += 1
    order, seg, out_sizes, out_counts = finish_histograms(out)
    return order, seg, out_sizes, out_counts, failing, failing_by, failing_sq
