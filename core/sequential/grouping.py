"""Grouping entities by the cost F (the patent's "rank by similarity, take the first >= k").

- ``greedy`` (default, MDAV-like): seeds are taken farthest-first, the farthest from the data's centre
  (its mean F to a fixed spread of 64 entities; ties: input order) among the entities not yet grouped;
  the seed and the k−1 remaining entities nearest to it by F (ties: input order) form a group; repeat
  while k remain; the last < k entities each join the group whose seed is nearest. The k−1 are chosen
  by F on both parts, exactly, among ``candidates`` remaining entities nearest to the seed in a
  *sketch* of both parts (see :func:`sketch`), found with a k-d tree that forgets grouped entities:
  about n·(64 + candidates/k) evaluations of F instead of n²/(2k). ``candidates=None`` compares the
  seed with every remaining entity (the quadratic original, for small data and as a reference).
- ``ranking`` (the claim read literally): one seed (the farthest from the centre), every entity
  ranked by F to it, the ranking cut into consecutive groups of k, the short tail joined to the last.

Both give groups of at least k entities (if there are at least k entities).
"""

from __future__ import annotations

from collections.abc import Callable

import numba as nb
import numpy as np

from microrelease.core.exceptions import Cancelled, InvalidParameterError
from microrelease.core.micro.microaggregation import consecutive_groups
from microrelease.core.sequential import cost_kernels as kernels
from microrelease.core.sequential.cost import CostModel
from microrelease.core.validation import check_k

VARIANTS = ("greedy", "ranking")
SKETCH_BINS = 8  # the code histogram is taken at the lowest level of at most this many nodes
QI_SCALE = 8.0  # see sketch()
STEPS = 100  # progress reports (and cancellation checks) per phase

Progress = Callable[[float], None]
ShouldStop = Callable[[], bool]


def _check_stop(should_stop: ShouldStop | None) -> None:
    if should_stop is not None and should_stop():
        raise Cancelled("grouping cancelled")


def centrality(model: CostModel, sample: int = 64, *, progress: Progress | None = None,
               should_stop: ShouldStop | None = None) -> np.ndarray:
    """Mean F from every entity to a fixed, evenly spread set of entities (large = far from the centre)."""
    n = model.data.n_entities
    anchors = np.unique(np.linspace(0, n - 1, min(sample, n)).astype(np.int64))
    total = np.zeros(n)
    for i in range(0, len(anchors), 8):  # 8 anchors a step, between progress reports
        _check_stop(should_stop)
        model.add_costs(anchors[i:i + 8], total)
        if progress is not None:
            progress(min(i + 8, len(anchors)) / len(anchors))
    return total / len(anchors)


def tree_order(h) -> np.ndarray:
    """Each ground value's position when the ground is sorted by its ancestors from the top down
    (siblings next to each other, so |position difference| / (n − 1) <= NCP of the two's ancestor)."""
    order = np.lexsort(h.codes[::-1])  # lexsort's last key is the primary one: the top level
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    return position


def sketch(model: CostModel) -> np.ndarray:
    """A point per entity whose L1 distances roughly follow F (entities x features):

    - per QI, ``QI_SCALE`` · w_R/m · the value's position in :func:`tree_order` / (n − 1) (the position
      difference is a lower bound of the NCP, which between near values is several times larger: ages
      30 and 31 share a 5-year band, NCP 4/72 for a step of 1/72);
    - w_S/2 · the share of the entity's codes under each node of the lowest code level with at most
      ``SKETCH_BINS`` nodes (half the L1 distance of two shares is the share of codes that cannot be
      matched inside one such node);
    - w_S · 0.3 · log2(1 + number of codes) (unmatched lengths are suppressed).

    The scale 8 and the bins were chosen on generated hospital data (k = 2, 5, 10; w_R from 0.2 to 0.8):
    the grouping's within-group F then stays within 2 % of the quadratic grouping's at 64 candidates
    (tests/core/sequential/test_scale.py measures it)."""
    d, w = model.data, model.weights
    n, m = d.n_entities, d.cost_qi_codes.shape[1]
    share = d.cost_qi_weights / d.cost_qi_weights.sum() * m if m else d.cost_qi_weights
    cols = [QI_SCALE * w.relational / m * share[q] * tree_order(h)[d.cost_qi_codes[:, q]] / max(len(h.ground) - 1, 1)
            for q, h in enumerate(d.cost_hierarchies)]
    h = d.code_hierarchy
    level = next(lv for lv in range(h.height + 1) if h.level_size(lv) <= SKETCH_BINS or lv == h.height)
    bins = h.level_size(level)
    per_entity = np.diff(d.code_ptr[d.visit_ptr])
    owner = np.repeat(np.arange(n), per_entity)
    counts = np.bincount(owner * bins + h.codes[level][d.codes], minlength=n * bins).reshape(n, bins)
    share = counts / np.maximum(per_entity, 1)[:, None]
    points = np.column_stack([*cols, w.sequence / 2 * share, w.sequence * 0.3 * np.log2(1 + per_entity)])
    return np.ascontiguousarray(points, dtype=np.float64)


def group_entities(model: CostModel, k: int, *, variant: str = "greedy", candidates: int | None = 64,
                   progress: Progress | None = None, should_stop: ShouldStop | None = None) -> np.ndarray:
    """The group number of every entity (see the module docstring).

    Parameters
    ----------
    candidates : for ``greedy``, how many remaining entities nearest the seed in the sketch are compared
        by F (at least k − 1 are); None compares every remaining entity (quadratic).
    progress : called with the fraction done (0..1): the centrality takes the first half, the groups
        the rest.
    should_stop : polled between steps; when it returns True, :class:`Cancelled` is raised.
    """
    if variant not in VARIANTS:
        raise InvalidParameterError(f"The 'variant' parameter must be one of {VARIANTS}. Got {variant!r}.",
                                    parameter="variant")
    if candidates is not None and (isinstance(candidates, bool) or not isinstance(candidates, (int, np.integer))
                                   or candidates < 1):
        raise InvalidParameterError(f"The 'candidates' parameter must be an int >= 1 or None. Got {candidates!r}.",
                                    parameter="candidates")
    n = model.data.n_entities
    k = check_k(k, n)
    half = None if progress is None else (lambda f: progress(f / 2))
    far = centrality(model, progress=half, should_stop=should_stop)
    if variant == "ranking":
        seed = int(np.argmax(far))
        cost = model.costs_from(seed, np.arange(n))
        groups = consecutive_groups(np.lexsort((np.arange(n), cost)), k)
    elif candidates is None:
        groups = _greedy_exact(model, k, far, progress, should_stop)
    else:
        groups = _greedy_sketched(model, k, far, max(int(candidates), k - 1), progress, should_stop)
    if progress is not None:
        progress(1.0)
    return groups


def _order(far: np.ndarray) -> np.ndarray:
    """Seeds farthest first; ties in input order."""
    return np.lexsort((np.arange(len(far)), -far))


def _join_leftovers(model: CostModel, group: np.ndarray, seeds: list[int] | np.ndarray) -> np.ndarray:
    """Fewer than k left: each joins the group whose seed is nearest."""
    seeds = np.asarray(seeds, dtype=np.int64)
    for e in np.flatnonzero(group < 0):
        group[e] = int(np.argmin(model.costs_from(int(e), seeds)))
    return group


def _greedy_exact(model, k, far, progress, should_stop) -> np.ndarray:
    n = model.data.n_entities
    group = np.full(n, -1, dtype=np.int64)
    remaining = _order(far)  # kept in seed order: the next seed is always the first
    seeds = []
    while len(remaining) >= k:
        _check_stop(should_stop)
        seed = int(remaining[0])
        cost = model.costs_from(seed, remaining)
        chosen = remaining[np.lexsort((remaining, cost))[:k]]
        group[chosen] = len(seeds)
        seeds.append(seed)
        remaining = remaining[group[remaining] < 0]
        if progress is not None:
            progress(0.5 + 0.5 * (1 - len(remaining) / n))
    return _join_leftovers(model, group, seeds)


def _greedy_sketched(model, k, far, want, progress, should_stop) -> np.ndarray:
    d, w = model.data, model.weights
    n = d.n_entities
    points = sketch(model)
    kd = _build(points)
    order = _order(far)
    alive = np.ones(n, dtype=np.bool_)
    group = np.full(n, -1, dtype=np.int64)
    seeds = np.empty(n // k + 1, dtype=np.int64)
    pos, g, n_alive = 0, 0, n
    step = max(1, n // STEPS)
    while pos < n and n_alive >= k:
        _check_stop(should_stop)
        pos, g, n_alive = _greedy_steps(order, pos, min(pos + step, n), alive, n_alive, k, want, points, *kd,
                                            group, g, seeds, d.cost_qi_codes, model.qi_hcodes, model.qi_tab, d.visit_ptr,
                                            d.code_ptr, d.codes, d.visit_time, model.hcodes, model.tab,
                                            w.relational, w.sequence, w.time, model.span, model.width)
        if progress is not None:
            progress(0.5 + 0.5 * (1 - n_alive / n))
    return _join_leftovers(model, group, seeds[:g])


# --- the compiled greedy: a k-d tree over the sketch that forgets grouped entities ------------------------

LEAF = 16


@nb.njit(cache=True)
def _build(points):
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


@nb.njit(cache=True, inline="always")
def _box_distance(x, lo, hi):
    d = 0.0
    for f in range(len(x)):
        if x[f] < lo[f]:
            d += lo[f] - x[f]
        elif x[f] > hi[f]:
            d += x[f] - hi[f]
    return d


@nb.njit(cache=True)
def _nearest(x, want, points, perm, start, end, left, right, count, lo, hi, alive, best_d, best_i):
    """The ``want`` ungrouped points nearest x in L1 (ties: smaller index) into best_d/best_i, sorted;
    returns how many were found."""
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


@nb.njit(cache=True, inline="always")
def _forget(p, alive, parent, count, leaf_of):
    alive[p] = False
    v = leaf_of[p]
    while v >= 0:
        count[v] -= 1
        v = parent[v]


@nb.njit(cache=True)
def _greedy_steps(order, pos, stop, alive, n_alive, k, want, points, perm, start, end, left, right, parent, count,
                  lo, hi, leaf_of, group, g, seeds, qi_codes, qi_hcodes, qi_tab, visit_ptr, code_ptr, codes, times,
                  hcodes, tab, w_rel, w_seq, w_time, span, width):
    """Seeds order[pos:stop] (skipping grouped ones) each form a group with the k−1 of their ``want``
    sketch-nearest ungrouped entities that are nearest by F (ties: smaller index)."""
    best_d, best_i = np.empty(max(want, 1)), np.empty(max(want, 1), dtype=np.int64)
    top_f, top_i = np.empty(k - 1), np.empty(k - 1, dtype=np.int64)
    scratch = np.empty((4, width))
    while pos < stop and n_alive >= k:
        s = order[pos]
        pos += 1
        if not alive[s]:
            continue
        _forget(s, alive, parent, count, leaf_of)
        found = 0
        if k > 1:
            found = _nearest(points[s], want, points, perm, start, end, left, right, count, lo, hi, alive, best_d,
                             best_i)
        top_f[:] = np.inf
        top_i[:] = np.iinfo(np.int64).max
        for t in range(found):
            c = best_i[t]
            f = kernels.pair_cost(s, c, qi_codes, qi_hcodes, qi_tab, visit_ptr, code_ptr, codes, times, hcodes, tab,
                                  w_rel, w_seq, w_time, span, scratch)
            last = k - 2
            if f < top_f[last] or (f == top_f[last] and c < top_i[last]):
                while last > 0 and (f < top_f[last - 1] or (f == top_f[last - 1] and c < top_i[last - 1])):
                    top_f[last], top_i[last] = top_f[last - 1], top_i[last - 1]
                    last -= 1
                top_f[last], top_i[last] = f, c
        group[s] = g
        for t in range(k - 1):
            group[top_i[t]] = g
            _forget(top_i[t], alive, parent, count, leaf_of)
        seeds[g] = s
        g += 1
        n_alive -= k
    return pos, g, n_alive
