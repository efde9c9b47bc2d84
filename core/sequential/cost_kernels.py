"""Compiled kernels of the cost function F (the definitions are in
``microrelease.core.sequential.cost``; the pure-Python oracles they are tested against live in
tests/core/sequential/test_scale.py). The group alignment's kernels, which walk the hierarchy the same
way (``lca_level``, ``node_cost``), are in ``alignment_kernels``.

A hierarchy enters as two tables instead of a ground × ground matrix (which would take 40 GB for the
70,000 codes of ICD-10): ``hcodes[j, u]``, the node at level j above ground value u, and
``tab[j, node]``, that node's NCP; above the top, one more level where values that never meet do, at a
cost the caller sets. The lowest common ancestor of a node (level, rep) and a ground value u is found
by walking up from the node's level until u's ancestor is the same node.

Memory: F keeps two rows of each dynamic-programming table.

Speed: numba counts the references of arrays atomically, and each array handed to a helper, taken as
a slice or swapped with another costs two such counts; in the inner loops these cost more than the
arithmetic (measured: about half the grouping's time). So the loops name their rows by index in one
2-D array and never swap or slice arrays (the alignment's kernels follow the same rule).
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def lca_level(hcodes, level, rep, u):
    """The level of the lowest common ancestor of node (level, rep's ancestor) and ground value u."""
    j, top = level, hcodes.shape[0] - 1
    while j < top and hcodes[j, rep] != hcodes[j, u]:
        j += 1
    return j


@nb.njit(cache=True, nogil=True)
def node_cost(hcodes, tab, level, rep, u):
    j = lca_level(hcodes, level, rep, u)
    return tab[j, hcodes[j, rep]]


# --- F: the cost between two entities (two rows per table) ---------------------------------------------

@nb.njit(cache=True, nogil=True)
def _codes_cost(codes, a0, a1, b0, b1, hcodes, tab, work):
    """Edit distance of codes[a0:a1] and codes[b0:b1]: substitution NCP(LCA), insertion/deletion 1; in
    rows 2 and 3 of ``work``. (Rows are named by index, never swapped as arrays: swapping array
    variables costs numba two atomic reference counts each time, which dominated these loops.)"""
    lb = b1 - b0
    p, c = 2, 3
    for j in range(lb + 1):
        work[p, j] = j
    for i in range(1, a1 - a0 + 1):
        work[c, 0] = i
        u = codes[a0 + i - 1]
        for j in range(1, lb + 1):
            best = work[p, j] + 1.0
            if work[c, j - 1] + 1.0 < best:
                best = work[c, j - 1] + 1.0
            sub = work[p, j - 1] + node_cost(hcodes, tab, 0, u, codes[b0 + j - 1])
            if sub < best:
                best = sub
            work[c, j] = best
        p, c = c, p
    return work[p, lb]


@nb.njit(cache=True, nogil=True)
def scratch_for(visit_ptr, code_ptr):
    """Work rows for ``pair_sequence_cost``: 4 × (most visits of an entity, or codes of a visit, + 1)."""
    width = 1
    for e in range(len(visit_ptr) - 1):
        width = max(width, visit_ptr[e + 1] - visit_ptr[e])
    for v in range(len(code_ptr) - 1):
        width = max(width, code_ptr[v + 1] - code_ptr[v])
    return np.empty((4, width + 1))


@nb.njit(cache=True, nogil=True)
def pair_sequence_cost(visit_ptr, code_ptr, codes, times, hcodes, tab, a, b, w_time, span, scratch):
    """The sequence loss of entities a and b in [0, 1] (alignment / cost of suppressing both);
    ``scratch`` from ``scratch_for`` (one per thread): rows 0 and 1 for the visits, 2 and 3 for
    the codes."""
    va0, vb0 = visit_ptr[a], visit_ptr[b]
    la, lb = visit_ptr[a + 1] - va0, visit_ptr[b + 1] - vb0
    p, c = 0, 1
    scratch[p, 0] = 0.0
    for j in range(1, lb + 1):
        v = vb0 + j - 1
        scratch[p, j] = scratch[p, j - 1] + (code_ptr[v + 1] - code_ptr[v]) + w_time
    total = scratch[p, lb]
    for i in range(1, la + 1):
        u = va0 + i - 1
        drop_u = (code_ptr[u + 1] - code_ptr[u]) + w_time
        total += drop_u
        scratch[c, 0] = scratch[p, 0] + drop_u
        for j in range(1, lb + 1):
            v = vb0 + j - 1
            best = scratch[p, j] + drop_u
            left = scratch[c, j - 1] + (code_ptr[v + 1] - code_ptr[v]) + w_time
            if left < best:
                best = left
            sub = scratch[p, j - 1] + _codes_cost(codes, code_ptr[u], code_ptr[u + 1], code_ptr[v], code_ptr[v + 1],
                                                  hcodes, tab, scratch) + w_time * abs(times[u] - times[v]) / span
            if sub < best:
                best = sub
            scratch[c, j] = best
        p, c = c, p
    return scratch[p, lb] / total if total > 0 else 0.0


@nb.njit(cache=True, nogil=True)
def _qi_cost(qi_hcodes, qi_tab, q, u, v):
    """node_cost of QI q's ground values u and v, without taking views of the stacked tables."""
    j, top = 0, qi_hcodes.shape[1] - 1
    while j < top and qi_hcodes[q, j, u] != qi_hcodes[q, j, v]:
        j += 1
    return qi_tab[q, j, qi_hcodes[q, j, u]]


@nb.njit(cache=True, nogil=True)
def pair_cost(a, c, qi_codes, qi_hcodes, qi_tab, visit_ptr, code_ptr, codes, times, hcodes, tab,
              w_rel, w_seq, w_time, span, scratch):
    """F(a, c) = w_R · mean QI NCP(LCA) + w_S · sequence loss."""
    m = qi_codes.shape[1]
    rel = 0.0
    for q in range(m):
        rel += _qi_cost(qi_hcodes, qi_tab, q, qi_codes[a, q], qi_codes[c, q])
    rel = rel / m if m else 0.0
    seq = 0.0
    if w_seq > 0:
        seq = pair_sequence_cost(visit_ptr, code_ptr, codes, times, hcodes, tab, a, c, w_time, span, scratch)
    return w_rel * rel + w_seq * seq


@nb.njit(cache=True, nogil=True)
def costs_from_tables(a, candidates, qi_codes, qi_hcodes, qi_tab, visit_ptr, code_ptr, codes, times, hcodes,
                      tab, w_rel, w_seq, w_time, span, width):
    """F(a, c) for every c in ``candidates`` (``width``: the scratch rows' length, see ``scratch_for``)."""
    out = np.empty(len(candidates))
    scratch = np.empty((4, width))
    for t in range(len(candidates)):
        out[t] = pair_cost(a, candidates[t], qi_codes, qi_hcodes, qi_tab, visit_ptr, code_ptr, codes, times,
                           hcodes, tab, w_rel, w_seq, w_time, span, scratch)
    return out


@nb.njit(cache=True, nogil=True)
def add_costs(anchors, lo, hi, out, qi_codes, qi_hcodes, qi_tab, visit_ptr, code_ptr, codes, times, hcodes, tab,
              w_rel, w_seq, w_time, span, width):
    """out[e] += F(a, e) for every anchor a (in their order), for e in lo:hi."""
    scratch = np.empty((4, width))
    for e in range(lo, hi):
        for a in anchors:
            out[e] += pair_cost(a, e, qi_codes, qi_hcodes, qi_tab, visit_ptr, code_ptr, codes, times, hcodes, tab,
                                w_rel, w_seq, w_time, span, scratch)
