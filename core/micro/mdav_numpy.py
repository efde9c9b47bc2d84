"""MDAV in vectorized numpy passes, with the same steps and tie rule as the compiled loop of
``microrelease.core.micro.mdav_kernels``. Kept only as that loop's oracle
(tests/core/micro/test_microaggregation.py, ``test_compiled_and_numpy_mdav_agree``) and as the
``numpy`` strategy the benchmark compares it with."""

from __future__ import annotations

import numpy as np


def _sq_distances(block: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Squared distances, summed attribute by attribute in order: the same rounding as the
    compiled loop, so that both strategies see the same ties."""
    d = (block[:, 0] - point[0]) ** 2
    for j in range(1, block.shape[1]):
        d += (block[:, j] - point[j]) ** 2
    return d


def _farthest(block: np.ndarray, order: np.ndarray, point: np.ndarray) -> int:
    """Position in ``block`` of the row farthest from ``point`` (ties: smallest input order)."""
    d = _sq_distances(block, point)
    tied = np.flatnonzero(d == d.max())
    return int(tied[np.argmin(order[tied])])


def _nearest(block: np.ndarray, order: np.ndarray, point: np.ndarray, k: int) -> np.ndarray:
    """Positions in ``block`` of the k rows nearest ``point`` (ties: smallest input order)."""
    d = _sq_distances(block, point)
    if k >= len(d):
        return np.lexsort((order, d))
    cut = np.partition(d, k - 1)[k - 1]
    candidates = np.flatnonzero(d <= cut)
    return candidates[np.lexsort((order[candidates], d[candidates]))[:k]]


def mdav(z: np.ndarray, k: int, progress=None) -> np.ndarray:
    """The group number of every row of ``z`` (standardized; k already checked)."""
    n = len(z)
    work = np.array(z, dtype=np.float64, copy=True)
    order = np.arange(n)  # input row of each position of `work`
    group = np.full(n, -1, dtype=np.int64)
    total = work.sum(axis=0)
    m = n  # work[:m] are the remaining rows
    g = 0

    def take(positions: np.ndarray) -> None:
        nonlocal m, g, total
        group[order[positions]] = g
        # move the taken rows behind the remaining block (highest positions first, so that a
        # swap never moves a row that is still to be taken); the running total is updated row
        # by row in that order, as the compiled loop does, for identical rounding
        for p in np.sort(positions)[::-1]:
            total = total - work[p]
            m -= 1
            work[[p, m]] = work[[m, p]]
            order[[p, m]] = order[[m, p]]
        g += 1

    while m >= 3 * k:
        block, o = work[:m], order[:m]
        r = _farthest(block, o, total / m)
        r_point = block[r].copy()
        s_point = block[_farthest(block, o, r_point)].copy()
        take(_nearest(work[:m], order[:m], r_point, k))
        take(_nearest(work[:m], order[:m], s_point, k))
        if progress is not None:
            progress(1 - m / n)
    if m >= 2 * k:
        r = _farthest(work[:m], order[:m], total / m)
        take(_nearest(work[:m], order[:m], work[r].copy(), k))
    if m > 0:
        take(np.arange(m))
    if progress is not None:
        progress(1.0)
    return group
