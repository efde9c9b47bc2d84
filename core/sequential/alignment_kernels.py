"""Compiled kernels of the group alignment, the anonymization's consensus (the definition is
``microrelease.core.sequential.alignment.align_groups``; the pure-Python oracle they are tested
against is ``alignment_oracle``). A hierarchy enters as the two tables
of ``cost_kernels``, whose walk to the lowest common ancestor
(``lca_level``, ``node_cost``) these kernels share, and
the loops follow its rule for speed (rows named by index in one 2-D array, never swapped or sliced).

Memory: the alignment needs to know which visits and codes are matched, so it keeps one byte per cell
of the visit table for the trace-back up to ``step_bytes``; beyond, it keeps two rows every s = √rows
rows and rebuilds one block of s rows at a time while tracing back (twice the work, O(√N·M) memory
instead of O(N·M)). The costs of every pair of codes are tabulated once per alignment when the table
takes at most step_bytes / 64.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from microrelease.core.sequential.cost_kernels import lca_level, node_cost

RTOL, ATOL = 1e-5, 1e-8  # numpy.isclose's defaults: the codes' trace-back tie rule, as in the Python alignment
SLACK = 1e-9  # the visits' tie rule: the first move within SLACK of the best
STEP_BYTES = 1 << 26  # the default step_bytes: larger visit tables are traced back in blocks (merge_member)


@nb.njit(cache=True, nogil=True)
def _close(a, b):
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= ATOL + RTOL * abs(b)


# --- the alignment of a group: consensus against one member, with its trace-back -------------------------
# The consensus is CSR: visit u spans [c_low[u], c_high[u]] (exact times, the input's dtype) and holds
# the codes c_ptr[u]:c_ptr[u+1], each a node (c_level, c_rep: its level and a ground code under it).
# A step of the visit alignment makes a run of consecutive consensus visits and member visits one
# visit: MOVES (1, 1), (1, 2), (2, 1); or drops a consensus visit (1, 0) or a member visit (0, 1).

MOVES = ((1, 1), (1, 2), (2, 1), (1, 0), (0, 1))  # in tie order


@nb.njit(cache=True, nogil=True)
def _sub_cost(sub, cb0, c_level, c_rep, x, codes, y, hcodes, tab):
    """The cost of keeping consensus code x against member code y: from ``sub`` (rows: consensus codes,
    columns: member codes from cb0) when ``merge_member`` built it, else walked up the hierarchy."""
    if sub.shape[1]:
        return sub[x, y - cb0]
    return node_cost(hcodes, tab, c_level[x], c_rep[x], codes[y])


@nb.njit(cache=True, nogil=True)
def _node_codes_pairs(c_level, c_rep, c0, c1, codes, b0, b1, hcodes, tab, sub, cb0):
    """The matched (consensus position, member position) pairs of the codes' alignment, in order; the
    trace-back prefers a match, then dropping a consensus code, within numpy.isclose."""
    la, lb = c1 - c0, b1 - b0
    cost = np.zeros((la + 1, lb + 1))
    for i in range(1, la + 1):
        cost[i, 0] = cost[i - 1, 0] + 1.0
    for j in range(1, lb + 1):
        cost[0, j] = cost[0, j - 1] + 1.0
    for i in range(1, la + 1):
        for j in range(1, lb + 1):
            cost[i, j] = min(cost[i - 1, j] + 1.0, cost[i, j - 1] + 1.0,
                             cost[i - 1, j - 1] + _sub_cost(sub, cb0, c_level, c_rep, c0 + i - 1, codes, b0 + j - 1,
                                                            hcodes, tab))
    out = np.empty((min(la, lb), 2), dtype=np.int64)
    n, i, j = 0, la, lb
    while i > 0 and j > 0:
        if _close(cost[i, j], cost[i - 1, j - 1] + _sub_cost(sub, cb0, c_level, c_rep, c0 + i - 1, codes, b0 + j - 1,
                                                             hcodes, tab)):
            out[n, 0], out[n, 1] = c0 + i - 1, b0 + j - 1
            n += 1
            i, j = i - 1, j - 1
        elif _close(cost[i, j], cost[i - 1, j] + 1.0):
            i -= 1
        else:
            j -= 1
    return out[:n][::-1]


@nb.njit(cache=True, nogil=True)
def _merge_row(i, m, rows, r2, r1, r0, steps, r, c_low, c_high, c_ptr, c_level, c_rep, vb0, code_ptr, codes, times,
               hcodes, tab, w_time, span, work, options, sub, cb0):
    """Row i of the visit table into rows[r0] from rows i−1 (rows[r1]) and i−2 (rows[r2]); each cell's
    move (an index into MOVES: the first within SLACK of the best) into steps[r] when r >= 0.

    A run (consecutive consensus visits u0:u1 and member visits v0:v1 made one visit) costs their codes'
    edit distance (in the two rows of ``work``) + w_T · (widening of the consensus intervals / span +
    visits merged). The drops are priced first, and a run that surely costs more than the best so far
    (the edit distance is at least the difference of the lengths) is never chosen, so its codes are not
    aligned. Everything is written out in this one loop: numba counts references (atomically) for the
    arrays handed to each helper, which cost more than the alignment itself."""
    for j in range(m + 1):
        if i == 0 and j == 0:
            rows[r0, 0] = 0.0
            continue
        for o in range(5):  # (a loop: a slice would be a view, reference-counted)
            options[o] = np.nan  # not available
        known = np.inf  # the best option so far
        if i >= 1:
            options[3] = rows[r1, j] + (c_ptr[i] - c_ptr[i - 1]) + w_time
            known = min(known, options[3])
        if j >= 1:
            v = vb0 + j - 1
            options[4] = rows[r0, j - 1] + (code_ptr[v + 1] - code_ptr[v]) + w_time
            known = min(known, options[4])
        for o in range(3):
            a, d = MOVES[o]
            if i < a or j < d:
                continue
            before = rows[r1 if a == 1 else r2, j - d]
            u0, u1, v0, v1 = i - a, i, vb0 + j - d, vb0 + j
            low, high, own = np.inf, -np.inf, 0.0
            for u in range(u0, u1):
                low, high = min(low, float(c_low[u])), max(high, float(c_high[u]))
                own += float(c_high[u]) - float(c_low[u])
            for v in range(v0, v1):
                low, high = min(low, float(times[code_ptr[v]])), max(high, float(times[code_ptr[v + 1] - 1]))
            timing = w_time * (((high - low) - own) / span + (a + d - 2))
            c0, c1, b0, b1 = c_ptr[u0], c_ptr[u1], code_ptr[v0], code_ptr[v1]
            if abs((c1 - c0) - (b1 - b0)) + timing > known - before + 2 * SLACK:
                options[o] = np.inf  # surely worse than an option at hand
                continue
            lb = b1 - b0
            p, c = 0, 1
            for y in range(lb + 1):
                work[p, y] = y
            for x in range(c0, c1):
                work[c, 0] = x - c0 + 1
                for y in range(1, lb + 1):
                    if sub.shape[1]:
                        pair = sub[x, b0 + y - 1 - cb0]
                    else:
                        pair = node_cost(hcodes, tab, c_level[x], c_rep[x], codes[b0 + y - 1])
                    work[c, y] = min(work[p, y] + 1.0, work[c, y - 1] + 1.0, work[p, y - 1] + pair)
                p, c = c, p
            options[o] = before + (work[p, lb] + timing)
            known = min(known, options[o])
        best = np.inf
        for o in range(5):
            if not np.isnan(options[o]) and options[o] < best:
                best = options[o]
        for o in range(5):
            if not np.isnan(options[o]) and options[o] <= best + SLACK:
                rows[r0, j] = options[o]
                if r >= 0:
                    steps[r, j] = o
                break


@nb.njit(cache=True, nogil=True)
def merge_member(c_low, c_high, c_ptr, c_level, c_rep, e, visit_ptr, code_ptr, codes, times, hcodes, tab,
                 w_time, span, step_bytes):
    """Align entity e's visits to the consensus and keep what both have: a run's matched codes rise to
    their common ancestor and its interval covers all its visits; a run left without codes, and every
    dropped visit or unmatched code, is suppressed. Returns the new consensus arrays.

    Memory: the moves take one byte a cell of the visit table; beyond ``step_bytes`` the table is kept as
    two rows every s = √rows rows, and the trace-back recomputes one block of s rows at a time."""
    vb0, m, n = visit_ptr[e], visit_ptr[e + 1] - visit_ptr[e], len(c_low)
    widest = 1
    for v in range(vb0, vb0 + m):
        widest = max(widest, code_ptr[min(v + 2, vb0 + m)] - code_ptr[v])
    work, options = np.empty((2, widest + 1)), np.empty(5)
    # every code pair's cost, once (the visit table asks for each up to 9 times), in at most step_bytes / 64
    cb0 = code_ptr[vb0]
    mc = code_ptr[vb0 + m] - cb0
    sub = np.empty((len(c_level), mc) if 8 * len(c_level) * mc <= step_bytes // 64 else (0, 0))
    if sub.shape[1]:
        for x in range(len(c_level)):
            for y in range(mc):
                sub[x, y] = node_cost(hcodes, tab, c_level[x], c_rep[x], codes[cb0 + y])
    whole = (n + 1) * (m + 1) <= step_bytes  # then one block: every move kept, no second pass
    s = n + 1 if whole else max(1, int(math.ceil(math.sqrt(n + 1))))
    saved = np.full((n // s + 1, 2, m + 1), np.inf)  # block b starts from rows b·s − 2 and b·s − 1
    rows = np.full((3, m + 1), np.inf)
    r2, r1, r0 = 0, 1, 2  # rows i − 2, i − 1, i (by index: see cost_kernels._codes_cost)
    steps = np.zeros((s, m + 1), dtype=np.uint8)
    for i in range(n + 1):
        if i % s == 0:
            for j in range(m + 1):
                saved[i // s, 0, j], saved[i // s, 1, j] = rows[r2, j], rows[r1, j]
        _merge_row(i, m, rows, r2, r1, r0, steps, i if whole else -1, c_low, c_high, c_ptr, c_level, c_rep, vb0,
                   code_ptr, codes, times, hcodes, tab, w_time, span, work, options, sub, cb0)
        r2, r1, r0 = r1, r0, r2
    runs = np.empty((min(n, m), 4), dtype=np.int64)
    n_runs, i, j, block = 0, n, m, 0 if whole else -1
    while i > 0 or j > 0:
        if i == 0:  # the first row has only member drops
            j -= 1
            continue
        b = i // s
        if b != block:  # rebuild the moves of rows b·s .. b·s + s − 1
            block = b
            for y in range(m + 1):
                rows[r2, y], rows[r1, y] = saved[b, 0, y], saved[b, 1, y]
            for x in range(b * s, min(b * s + s, n + 1)):
                _merge_row(x, m, rows, r2, r1, r0, steps, x - b * s, c_low, c_high, c_ptr, c_level, c_rep, vb0,
                           code_ptr, codes, times, hcodes, tab, w_time, span, work, options, sub, cb0)
                r2, r1, r0 = r1, r0, r2
        a, d = MOVES[steps[i - b * s, j]]
        if a and d:
            runs[n_runs, 0], runs[n_runs, 1], runs[n_runs, 2], runs[n_runs, 3] = i - a, i, vb0 + j - d, vb0 + j
            n_runs += 1
        i, j = i - a, j - d
    new_low, new_high = np.empty(n_runs, dtype=c_low.dtype), np.empty(n_runs, dtype=c_high.dtype)
    new_ptr = np.zeros(n_runs + 1, dtype=np.int64)
    new_level, new_rep = np.empty(len(c_level), dtype=np.int64), np.empty(len(c_level), dtype=np.int64)
    nv, nc = 0, 0
    for x in range(n_runs - 1, -1, -1):  # the runs were found last first
        u0, u1, v0, v1 = runs[x, 0], runs[x, 1], runs[x, 2], runs[x, 3]
        kept = _node_codes_pairs(c_level, c_rep, c_ptr[u0], c_ptr[u1], codes, code_ptr[v0], code_ptr[v1], hcodes, tab,
                                 sub, cb0)
        if len(kept) == 0:
            continue
        for y in range(len(kept)):
            p = kept[y, 0]
            new_level[nc], new_rep[nc] = lca_level(hcodes, c_level[p], c_rep[p], codes[kept[y, 1]]), c_rep[p]
            nc += 1
        low, high = c_low[u0], c_high[u0]
        for u in range(u0 + 1, u1):
            low, high = min(low, c_low[u]), max(high, c_high[u])
        for v in range(v0, v1):
            low, high = min(low, times[code_ptr[v]]), max(high, times[code_ptr[v + 1] - 1])
        new_low[nv], new_high[nv] = low, high
        nv += 1
        new_ptr[nv] = nc
    return new_low[:nv], new_high[:nv], new_ptr[:nv + 1], new_level[:nc], new_rep[:nc]


@nb.njit(cache=True, nogil=True)
def member_order(members, visit_ptr, code_ptr):
    """The members fewest codes first (ties: the order given)."""
    size = np.empty(len(members), dtype=np.int64)
    for t in range(len(members)):
        e = members[t]
        size[t] = code_ptr[visit_ptr[e + 1]] - code_ptr[visit_ptr[e]]
    return members[np.argsort(size, kind="mergesort")]


@nb.njit(cache=True, nogil=True)
def group_consensus(members, visit_ptr, code_ptr, codes, times, hcodes, tab, w_time, span, step_bytes):
    """The consensus of a group: the member with fewest codes (its visits spanning their events'
    times), merged with each further member in ``member_order``."""
    order = member_order(members, visit_ptr, code_ptr)
    first = order[0]
    v0, v1 = visit_ptr[first], visit_ptr[first + 1]
    low, high = np.empty(v1 - v0, dtype=times.dtype), np.empty(v1 - v0, dtype=times.dtype)
    for v in range(v0, v1):
        low[v - v0], high[v - v0] = times[code_ptr[v]], times[code_ptr[v + 1] - 1]
    ptr = code_ptr[v0:v1 + 1] - code_ptr[v0]
    level = np.zeros(ptr[-1], dtype=np.int64)
    rep = codes[code_ptr[v0]:code_ptr[v1]].astype(np.int64)
    for t in range(1, len(order)):
        low, high, ptr, level, rep = merge_member(low, high, ptr, level, rep, order[t], visit_ptr, code_ptr, codes,
                                                  times, hcodes, tab, w_time, span, step_bytes)
    return low, high, ptr, level, rep


@nb.njit(cache=True, nogil=True)
def consensus_caps(group_ptr, members, visit_ptr, code_ptr):
    """Each group's room for its consensus (visits, codes) as offsets: a consensus never outgrows its
    first member, the one with fewest codes."""
    n_groups = len(group_ptr) - 1
    vcap, ccap = np.zeros(n_groups + 1, dtype=np.int64), np.zeros(n_groups + 1, dtype=np.int64)
    for g in range(n_groups):
        f = member_order(members[group_ptr[g]:group_ptr[g + 1]], visit_ptr, code_ptr)[0]
        vcap[g + 1] = vcap[g] + visit_ptr[f + 1] - visit_ptr[f]
        ccap[g + 1] = ccap[g] + code_ptr[visit_ptr[f + 1]] - code_ptr[visit_ptr[f]]
    return vcap, ccap


@nb.njit(cache=True, nogil=True)
def consensus_slots(g0, g1, group_ptr, members, visit_ptr, code_ptr, codes, times, hcodes, tab, w_time, span,
                    step_bytes, vcap, ccap, low, high, vlen, level, rep, nv, nc):
    """The consensus of groups g0:g1, each written into its room (see ``consensus_caps``); nv, nc:
    how many visits and codes it kept."""
    for g in range(g0, g1):
        lo, hi, ptr, lev, rp = group_consensus(members[group_ptr[g]:group_ptr[g + 1]], visit_ptr, code_ptr, codes,
                                               times, hcodes, tab, w_time, span, step_bytes)
        nv[g], nc[g] = len(lo), len(lev)
        low[vcap[g]:vcap[g] + nv[g]], high[vcap[g]:vcap[g] + nv[g]] = lo, hi
        vlen[vcap[g]:vcap[g] + nv[g]] = ptr[1:] - ptr[:-1]
        level[ccap[g]:ccap[g] + nc[g]], rep[ccap[g]:ccap[g] + nc[g]] = lev, rp


@nb.njit(cache=True, nogil=True)
def consensus_compact(vcap, ccap, low, high, vlen, level, rep, nv, nc):
    """The rooms packed into CSR: group -> visits (low, high) -> codes (level, representative)."""
    n_groups = len(nv)
    g_ptr = np.zeros(n_groups + 1, dtype=np.int64)
    v_ptr = np.zeros(nv.sum() + 1, dtype=np.int64)
    out_low, out_high = np.empty(nv.sum(), dtype=low.dtype), np.empty(nv.sum(), dtype=high.dtype)
    out_level, out_rep = np.empty(nc.sum(), dtype=np.int64), np.empty(nc.sum(), dtype=np.int64)
    for g in range(n_groups):
        a, b = g_ptr[g], g_ptr[g] + nv[g]
        g_ptr[g + 1] = b
        out_low[a:b], out_high[a:b] = low[vcap[g]:vcap[g] + nv[g]], high[vcap[g]:vcap[g] + nv[g]]
        for x in range(nv[g]):
            v_ptr[a + x + 1] = v_ptr[a + x] + vlen[vcap[g] + x]
        out_level[v_ptr[a]:v_ptr[b]] = level[ccap[g]:ccap[g] + nc[g]]
        out_rep[v_ptr[a]:v_ptr[b]] = rep[ccap[g]:ccap[g] + nc[g]]
    return g_ptr, out_low, out_high, v_ptr, out_level, out_rep
