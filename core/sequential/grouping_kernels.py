"""Compiled steps of the grouping (``microrelease.core.sequential.grouping``): a k-d tree over the
sketch that forgets grouped entities, and the greedy that grows each group one member at a time.

A candidate's *score* is the loss (``group_loss``) it adds to the
group: its QIs raise the group's common level, and merged into the group's running consensus (the
members aligned in the order they joined) it may shrink what the consensus keeps. Candidates are tried
in the order of a lower bound of their score, exact for the QIs and from
``value_bound`` for the codes; a candidate is aligned
only while its bound can still beat the best score found, so the choice is the one every candidate
aligned would give.
"""

from __future__ import annotations

import numba as nb
import numpy as np

import microrelease.core.sequential.alignment_kernels as kernels
from microrelease.core.sequential.group_loss import (
    code_value,
    consensus_value,
    first_consensus,
    relational_after,
    rows_loss,
    value_bound,
    visit_tops,
)

LEAF = 16
SLACK = 1e-9  # a bound within SLACK of the best score is still aligned: rounding never drops the exact best


# --- the k-d tree ------------------------------------------------------------------------------------------

@nb.njit(cache=True, nogil=True)
def build_tree(points):
    """A k-d tree: nodes split at the median of their widest feature. Returns (perm, start, end, left,
    right, parent, count, lo, hi, leaf_of): node v holds points perm[start[v]:end[v]] inside the box
    lo[v]..hi[v]; ``count`` says how many of them are still ungrouped."""
    n, dims = points.shape
    cap = 2 * n + 1
    perm = np.arange(n)
    start, end = np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64)
    left, right = np.full(cap, -1, dtype=np.int64), np.full(cap, -1, dtype=np.int64)
    parent, count = np.full(cap, -1, dtype=np.int64), np.zeros(cap, dtype=np.int64)
    lo, hi = np.zeros((cap, dims)), np.zeros((cap, dims))
    leaf_of = np.zeros(n, dtype=np.int64)
    stack, top, nodes = np.zeros(cap, dtype=np.int64), 1, 1
    end[0] = n
    while top > 0:
        top -= 1
        v = stack[top]
        s, e = start[v], end[v]
        count[v] = e - s
        for f in range(dims):
            lo[v, f], hi[v, f] = np.inf, -np.inf
            for t in range(s, e):
                x = points[perm[t], f]
                lo[v, f], hi[v, f] = min(lo[v, f], x), max(hi[v, f], x)
        spread = hi[v] - lo[v] if e > s else np.zeros(dims)
        f = int(np.argmax(spread))
        if e - s <= LEAF or spread[f] == 0:
            for t in range(s, e):
                leaf_of[perm[t]] = v
            continue
        idx = perm[s:e].copy()
        perm[s:e] = idx[np.argsort(points[idx, f], kind="mergesort")]
        mid = (s + e) // 2
        for child, a, b in ((nodes, s, mid), (nodes + 1, mid, e)):
            start[child], end[child], parent[child] = a, b, v
            stack[top] = child
            top += 1
        left[v], right[v] = nodes, nodes + 1
        nodes += 2
    return perm, start, end, left, right, parent, count, lo, hi, leaf_of


@nb.njit(cache=True, nogil=True)
def _box_distance(x, lo, hi):
    d = 0.0
    for f in range(len(x)):
        if x[f] < lo[f]:
            d += lo[f] - x[f]
        elif x[f] > hi[f]:
            d += x[f] - hi[f]
    return d


@nb.njit(cache=True, nogil=True)
def nearest(x, want, points, tree, alive, best_d, best_i):
    """The ``want`` ungrouped points nearest x in L1 (ties: smaller index) into best_d/best_i, sorted;
    returns how many were found."""
    perm, start, end, left, right, _, count, lo, hi, _ = tree
    best_d[:] = np.inf
    best_i[:] = np.iinfo(np.int64).max
    found = 0
    stack = np.empty(256, dtype=np.int64)
    stack[0], top = 0, 1
    while top > 0:
        top -= 1
        v = stack[top]
        if count[v] == 0 or _box_distance(x, lo[v], hi[v]) > best_d[want - 1]:
            continue
        if left[v] < 0:
            for t in range(start[v], end[v]):
                p = perm[t]
                if not alive[p]:
                    continue
                d = 0.0
                for f in range(len(x)):
                    d += abs(points[p, f] - x[f])
                last = want - 1
                if d < best_d[last] or (d == best_d[last] and p < best_i[last]):
                    found = min(found + 1, want)
                    while last > 0 and (d < best_d[last - 1] or (d == best_d[last - 1] and p < best_i[last - 1])):
                        best_d[last], best_i[last] = best_d[last - 1], best_i[last - 1]
                        last -= 1
                    best_d[last], best_i[last] = d, p
            continue
        a, b = left[v], right[v]
        if _box_distance(x, lo[a], hi[a]) < _box_distance(x, lo[b], hi[b]):
            a, b = b, a
        stack[top], stack[top + 1] = a, b  # the nearer child is popped first
        top += 2
    return found


@nb.njit(cache=True, nogil=True)
def all_nearest(points, tree, want):
    """Each point's ``want`` nearest other points (L1; ties: smaller index), −1 where there are fewer."""
    n = len(points)
    alive = np.ones(n, dtype=np.bool_)
    out = np.full((n, want), -1, dtype=np.int64)
    best_d, best_i = np.empty(want + 1), np.empty(want + 1, dtype=np.int64)
    for p in range(n):
        found = nearest(points[p], want + 1, points, tree, alive, best_d, best_i)
        t = 0
        for x in range(found):
            if best_i[x] != p and t < want:
                out[p, t] = best_i[x]
                t += 1
    return out


@nb.njit(cache=True, nogil=True)
def forget(p, alive, tree):
    """Entity p is grouped: the tree stops returning it."""
    parent, count, leaf_of = tree[5], tree[6], tree[9]
    alive[p] = False
    v = leaf_of[p]
    while v >= 0:
        count[v] -= 1
        v = parent[v]


# --- the greedy: seeds farthest first, each group grown one member at a time ----------------------------

@nb.njit(cache=True, nogil=True)
def seed_groups(ids, order, pos, stop, alive, n_alive, k, want, points, tree, group, g, qi_codes, qi_hcodes, qi_tab,
                rows, w_rows, visit_ptr, code_ptr, codes, times, hcodes, tab, w_rel, w_sup, mu, w_time, span,
                step_bytes):
    """Seeds order[pos:stop] (skipping grouped ones) each start a group; k − 1 times, the one of its
    ``want`` sketch-nearest ungrouped entities with the smallest score joins (ties: smaller index).
    Entities are numbered within a block: entity i is ``ids[i]`` of the data (ids ascending), and
    ``order``, ``alive``, ``points``, ``tree`` and ``group`` use the block's numbers.
    Returns (pos, g, n_alive)."""
    m = qi_codes.shape[1]
    best_d, best_i = np.empty(max(want, 1)), np.empty(max(want, 1), dtype=np.int64)
    new_level, qi_level = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
    grown = np.empty(max(k, 1), dtype=np.int64)  # the group's members so far
    while pos < stop and n_alive >= k:
        s = order[pos]
        pos += 1
        if not alive[s]:
            continue
        forget(s, alive, tree)
        group[s] = g
        found = nearest(points[s], want, points, tree, alive, best_d, best_i) if k > 1 else 0
        local = np.sort(best_i[:found])  # by number: the order of ties
        cand = ids[local]
        free = np.ones(found, dtype=np.bool_)
        n_codes = np.empty(found, dtype=np.int64)
        widest = 1
        for t in range(found):
            n_codes[t] = code_ptr[visit_ptr[cand[t] + 1]] - code_ptr[visit_ptr[cand[t]]]
            widest = max(widest, visit_ptr[cand[t] + 1] - visit_ptr[cand[t]] + 1)
        work = np.empty((3, widest))
        seed = ids[s]
        grown[0], held = seed, 0.0  # held: the satellites' rows_loss of the members so far
        low, high, ptr, level, rep = first_consensus(seed, visit_ptr, code_ptr, codes, times)
        qi_level[:] = 0
        rel, value, size = 0.0, float(len(level)), 1
        bound = np.empty(found)
        for _ in range(k - 1):
            values = np.empty(len(level))
            for x in range(len(level)):
                values[x] = code_value(level[x], rep[x], hcodes, tab, mu)
            top = np.zeros(len(level) + 1)  # top[j]: the j largest values
            top[1:] = np.cumsum(-np.sort(-values))
            tops = visit_tops(ptr, level, rep, hcodes, tab, mu)
            for t in range(found):
                if not free[t]:
                    bound[t] = np.inf
                    continue
                rel_c = relational_after(qi_level, seed, cand[t], qi_codes, qi_hcodes, qi_tab, new_level)
                most = min(top[min(n_codes[t], len(level))], value_bound(ptr, tops, cand[t], visit_ptr, code_ptr, work))
                bound[t] = w_rel * ((size + 1) * rel_c - size * rel) + w_sup * (
                    n_codes[t] - (size + 1) * most + size * value) + (
                    rows_loss(grown, size, -1, cand[t], rows, w_rows) - held)
            best, best_t = np.inf, -1
            b_low, b_high, b_ptr, b_level, b_rep = low, high, ptr, level, rep
            for t in np.argsort(bound, kind="mergesort"):
                if not free[t] or bound[t] > best + SLACK:
                    break
                nl, nh, np_, nlev, nrep = kernels.merge_member(low, high, ptr, level, rep, cand[t], visit_ptr,
                                                               code_ptr, codes, times, hcodes, tab, w_time, span,
                                                               step_bytes)
                rel_c = relational_after(qi_level, seed, cand[t], qi_codes, qi_hcodes, qi_tab, new_level)
                score = w_rel * ((size + 1) * rel_c - size * rel) + w_sup * (
                    n_codes[t] - (size + 1) * consensus_value(nlev, nrep, hcodes, tab, mu) + size * value) + (
                    rows_loss(grown, size, -1, cand[t], rows, w_rows) - held)
                if score < best or (score == best and cand[t] < cand[best_t]):
                    best, best_t = score, t
                    b_low, b_high, b_ptr, b_level, b_rep = nl, nh, np_, nlev, nrep
            free[best_t] = False
            forget(local[best_t], alive, tree)
            group[local[best_t]] = g
            low, high, ptr, level, rep = b_low, b_high, b_ptr, b_level, b_rep
            rel = relational_after(qi_level, seed, cand[best_t], qi_codes, qi_hcodes, qi_tab, new_level)
            qi_level[:] = new_level
            value = consensus_value(level, rep, hcodes, tab, mu)
            grown[size] = cand[best_t]
            size += 1
            held = rows_loss(grown, size, -1, -1, rows, w_rows)
        g += 1
        n_alive -= k
    return pos, g, n_alive
