"""The privacy models' compiled per-class checks (see microrelease.core.models.model_profile).

The profile kernel (``microrelease.core.lattice.walk_kernel``) carries each class's vector of
sensitive-value counts, and at every node ``mark_failing`` evaluates each model on every class, in
the same arithmetic as the models' numpy checks. A model is handed over as its
``kernel_code``: the kind codes below are the ones
the model classes declare, and ``KERNEL_KINDS`` lists them. The profile refuses a model whose
kind is not there before the kernel runs (see
``build_model_profile``); the kernel itself raises on one too.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from microrelease.core.models.l_diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from microrelease.core.models.privacy_model import TOLERANCE
from microrelease.core.models.t_closeness import TCloseness

_DISTINCT = DistinctLDiversity.kind
_ENTROPY = EntropyLDiversity.kind
_RECURSIVE = RecursiveCLDiversity.kind
_EQUAL = TCloseness.kinds["equal"]
_ORDERED = TCloseness.kinds["ordered"]
_HIERARCHICAL = TCloseness.kinds["hierarchical"]
KERNEL_KINDS = frozenset({_DISTINCT, _ENTROPY, _RECURSIVE, _EQUAL, _ORDERED, _HIERARCHICAL})  # one branch each


@nb.njit(cache=True, nogil=True)
def mark_failing(cnt, n, sizes, table_p, kind, l_value, c_value, t_value, height, level_sizes, map_flat, map_off,
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
