"""Predictive tagging over the lattice (Kohlmayer et al., "Flash", 2012, §3; ARX's ``SolutionSpace``).

For a criterion that is monotone (k-anonymity with suppression: Samarati Lemma 5.1), a node that
satisfies makes every node above it satisfy, and one that fails makes every node below it fail. The
search keeps one status byte per node (node numbers in C order over the heights + 1): ``SAT`` and
``UNSAT`` tags, and ``EVALUATED`` for the nodes actually rolled up. Tagging walks the box above
(or below) a node depth-first on the spanning tree v -> v + e_a (a >= the last QI raised) and skips
a subtree whose root is already tagged: tags stay up-closed (down-closed), so its whole box is. Each
node is tagged at most once in each direction, so all tagging costs O(nodes × QIs) over a search.
"""

from __future__ import annotations

import numba as nb
import numpy as np

SAT, UNSAT, EVALUATED = np.uint8(1), np.uint8(2), np.uint8(4)


def strides_of(heights: np.ndarray) -> np.ndarray:
    shape = np.asarray(heights, dtype=np.int64) + 1
    strides = np.ones(len(shape), dtype=np.int64)
    for a in range(len(shape) - 2, -1, -1):
        strides[a] = strides[a + 1] * shape[a + 1]
    return strides


@nb.njit(cache=True, nogil=True)
def tag_box(status, start, vec0, heights, strides, flag, up):
    """Tag ``flag`` on every node above (``up``) or below ``vec0`` (node number ``start``); returns how
    many nodes were newly tagged."""
    m = len(heights)
    if status[start] & flag:
        return 0
    vec = vec0.copy()
    depth = 0
    for a in range(m):
        depth += heights[a] - vec[a] if up else vec[a]
    next_a = np.zeros(depth + 1, np.int64)
    moved = np.zeros(depth + 1, np.int64)
    node = start
    status[node] |= flag
    tagged = 1
    d = 0
    while d >= 0:
        a = next_a[d]
        while a < m and (vec[a] >= heights[a] if up else vec[a] <= 0):
            a += 1
        if a < m:
            next_a[d] = a + 1
            child = node + strides[a] if up else node - strides[a]
            if status[child] & flag:
                continue
            vec[a] += 1 if up else -1
            node = child
            status[node] |= flag
            tagged += 1
            d += 1
            moved[d] = a
            next_a[d] = a
        else:
            if d > 0:
                b = moved[d]
                vec[b] -= 1 if up else -1
                node = node - strides[b] if up else node + strides[b]
            d -= 1
    return tagged


@nb.njit(cache=True, nogil=True)
def path_up(status, start, vec0, heights, strides, bounds, bound):
    """Flash's path: from ``start`` greedily up through untagged nodes, each step raising the QI whose
    successor has the smallest ``bounds`` value (the lowest QI on ties), while that value is at most
    ``bound``. Returns the node numbers, ``start`` first."""
    m = len(heights)
    vec = vec0.copy()
    total = 0
    for a in range(m):
        total += heights[a] - vec[a]
    out = np.empty(total + 1, np.int64)
    out[0] = start
    n = 1
    node = start
    while True:
        best = -1
        best_value = 0.0
        for a in range(m):
            if vec[a] >= heights[a]:
                continue
            child = node + strides[a]
            if status[child] & 3:
                continue
            value = bounds[child]
            if value > bound:
                continue
            if best < 0 or value < best_value:
                best = a
                best_value = value
        if best < 0:
            break
        vec[best] += 1
        node += strides[best]
        out[n] = node
        n += 1
    return out[:n].copy()


@nb.njit(cache=True, nogil=True)
def next_open(order, cursor, status, bounds, bound, want):
    """The first position >= ``cursor`` of ``order`` whose node is open: untagged, or (``want`` bit 1)
    satisfying but not evaluated; with ``bounds[node] <= bound``. -1 when none is left."""
    for pos in range(cursor, len(order)):
        node = order[pos]
        if bounds[node] > bound:
            continue
        s = status[node]
        if s & 3 == 0:
            return pos
        if want & 1 and s & SAT and not s & EVALUATED:
            return pos
    return -1
