"""Compiled MDAV loop (see ``microrelease.core.micro.microaggregation.mdav_groups``): the same
steps and tie rule as its numpy strategy, with each distance pass fused into one loop instead of
numpy temporaries (about 10x faster on 100k rows). The numpy strategy is kept only as this loop's
oracle (tests/core/micro/test_microaggregation.py, ``test_compiled_and_numpy_mdav_agree``)."""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def _sq(work, i, point):
    d = 0.0
    for j in range(work.shape[1]):
        t = work[i, j] - point[j]
        d += t * t
    return d


@nb.njit(cache=True, nogil=True)
def _farthest(work, order, m, point):
    best, best_d = 0, -1.0
    for i in range(m):
        d = _sq(work, i, point)
        if d > best_d or (d == best_d and order[i] < order[best]):
            best, best_d = i, d
    return best


@nb.njit(cache=True, nogil=True)
def _take_nearest(work, order, m, point, k, group, g, total):
    """Group the k rows of work[:m] nearest ``point`` (ties: smaller order) as group g; move them
    behind the remaining block. Returns the new m."""
    buf_d = np.full(k, np.inf)
    buf_o = np.full(k, np.iinfo(np.int64).max)
    buf_i = np.full(k, -1)
    for i in range(m):
        d = _sq(work, i, point)
        o = order[i]
        last = k - 1
        if d < buf_d[last] or (d == buf_d[last] and o < buf_o[last]):
            pos = last
            while pos > 0 and (d < buf_d[pos - 1] or (d == buf_d[pos - 1] and o < buf_o[pos - 1])):
                buf_d[pos] = buf_d[pos - 1]
                buf_o[pos] = buf_o[pos - 1]
                buf_i[pos] = buf_i[pos - 1]
                pos -= 1
            buf_d[pos] = d
            buf_o[pos] = o
            buf_i[pos] = i
    chosen = np.sort(buf_i)[::-1]  # highest positions first: a swap never moves a row still to take
    p = work.shape[1]
    for c in chosen:
        group[order[c]] = g
        for j in range(p):
            total[j] -= work[c, j]
        m -= 1
        for j in range(p):
            t = work[c, j]
            work[c, j] = work[m, j]
            work[m, j] = t
        t2 = order[c]
        order[c] = order[m]
        order[m] = t2
    return m


@nb.njit(cache=True, nogil=True)
def mdav(z, k):
    n, p = z.shape
    work = z.copy()
    order = np.arange(n)
    group = np.full(n, -1, np.int64)
    total = np.zeros(p)
    for i in range(n):
        for j in range(p):
            total[j] += work[i, j]
    m = n
    g = 0
    while m >= 3 * k:
        r = _farthest(work, order, m, total / m)
        r_point = work[r].copy()
        s_point = work[_farthest(work, order, m, r_point)].copy()
        m = _take_nearest(work, order, m, r_point, k, group, g, total)
        g += 1
        m = _take_nearest(work, order, m, s_point, k, group, g, total)
        g += 1
    if m >= 2 * k:
        r = _farthest(work, order, m, total / m)
        m = _take_nearest(work, order, m, work[r].copy(), k, group, g, total)
        g += 1
    if m > 0:
        for i in range(m):
            group[order[i]] = g
    return group
