"""The cost function F over both parts (our definitions; the patent publishes no constants).

F(a, b) = w_R · relational loss + w_S · sequence loss, both in [0, 1]:

- **relational loss**: mean over the QIs of the normalized certainty penalty of a's and b's lowest
  common generalization: NCP(node) = (ground values under the node − 1) / (ground values − 1)
  (0 if equal, 1 if only the top covers both). In a study, each satellite column counts as one more
  QI, the mean over its slots (``satellites``);
- **sequence loss**: a two-level alignment, divided by what suppressing everything would cost.
  Codes of two visits are aligned by dynamic programming (edit distance): substituting code u by v
  costs NCP(LCA(u, v)) in the code hierarchy; an unmatched code costs 1 (its suppression). Visits
  are aligned the same way: substituting visit A by visit B costs the alignment of their codes plus
  w_T · |t_A − t_B| / (time span of the data) (generalizing both times to one interval); an unmatched
  visit costs its codes plus w_T.

Defaults w_R = w_S = ½, w_T = 1. Everything runs compiled (numba, in
``cost_kernels``, on up to two threads): ``CostModel`` gives F
from one entity to many, as ``align_groups`` gives the
alignment of every group's members (the anonymization's consensus). Both read a hierarchy as per-level
tables, never a ground × ground matrix, so memory grows with the number of codes, not its square.
``sequence_cost`` and ``costs_from`` are the same F on dense NCP matrices (from
``ncp_matrix``), for small hierarchies.
"""

from __future__ import annotations

import math
import numbers
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba as nb
import numpy as np

import microrelease.core.sequential.cost_kernels as kernels
from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.validation import validate_int


def node_ncp(h: Hierarchy) -> list[np.ndarray]:
    """Per level, the NCP of each node: (ground values under it − 1) / (ground values − 1)."""
    n = len(h.ground)
    return [(np.bincount(codes) - 1) / (n - 1) if n > 1 else np.zeros(len(h.labels[lv]))
            for lv, codes in enumerate(h.codes)]


def ncp_matrix(h: Hierarchy) -> np.ndarray:
    """NCP of the lowest common ancestor of every pair of ground values (ground × ground), from
    ``Hierarchy.lca_levels``."""
    n = len(h.ground)
    if n <= 1:
        return np.zeros((n, n))
    lca = h.lca_levels()
    tables = node_ncp(h)
    out = np.ones((n, n))
    for level, table in enumerate(tables):
        rows, _ = np.nonzero(lca == level)
        out[lca == level] = table[h.codes[level][rows]]
    return out


@dataclass(frozen=True)
class CostWeights:
    """w_R, w_S and the weight of a visit's time against its codes; each finite and >= 0.

    Parameters
    ----------
    relational : float, default 0.5
        w_R, the relational part's weight.
    sequence : float, default 0.5
        w_S, the sequential part's weight.
    time : float, default 1.0
        A visit's time against its codes.
    """

    relational: float = 0.5
    sequence: float = 0.5
    time: float = 1.0

    def __post_init__(self) -> None:
        for name in ("relational", "sequence", "time"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"The 'weight_{name}' parameter must be a real number. Got {value!r} instead.")
            if not (math.isfinite(value) and value >= 0):
                raise InvalidParameterError(f"The 'weight_{name}' parameter must be finite and at least 0. "
                                            f"Got {value!r} instead.", parameter=f"weight_{name}")
        if self.relational + self.sequence == 0:
            raise InvalidParameterError("The 'weight_relational' and 'weight_sequence' parameters are both 0: "
                                        "F would rank every pair of entities the same", parameter="weight_relational")


@nb.njit(cache=True, nogil=True)
def _codes_cost(codes, a0, a1, b0, b1, ncp):
    la, lb = a1 - a0, b1 - b0
    prev = np.arange(lb + 1).astype(np.float64)
    cur = np.empty(lb + 1)
    for i in range(1, la + 1):
        cur[0] = i
        for j in range(1, lb + 1):
            best = prev[j] + 1.0
            if cur[j - 1] + 1.0 < best:
                best = cur[j - 1] + 1.0
            sub = prev[j - 1] + ncp[codes[a0 + i - 1], codes[b0 + j - 1]]
            if sub < best:
                best = sub
            cur[j] = best
        prev, cur = cur, prev
    return prev[lb]


@nb.njit(cache=True, nogil=True)
def sequence_cost(visit_ptr, code_ptr, codes, times, ncp, a, b, w_time, span):
    """Cost of aligning entity a's visits with entity b's, normalized to [0, 1]."""
    va0, va1, vb0, vb1 = visit_ptr[a], visit_ptr[a + 1], visit_ptr[b], visit_ptr[b + 1]
    la, lb = va1 - va0, vb1 - vb0
    prev = np.zeros(lb + 1)
    for j in range(1, lb + 1):
        v = vb0 + j - 1
        prev[j] = prev[j - 1] + (code_ptr[v + 1] - code_ptr[v]) + w_time
    cur = np.empty(lb + 1)
    total = prev[lb]
    for i in range(1, la + 1):
        u = va0 + i - 1
        drop_u = (code_ptr[u + 1] - code_ptr[u]) + w_time
        total += drop_u
        cur[0] = prev[0] + drop_u
        for j in range(1, lb + 1):
            v = vb0 + j - 1
            drop_v = (code_ptr[v + 1] - code_ptr[v]) + w_time
            best = prev[j] + drop_u
            if cur[j - 1] + drop_v < best:
                best = cur[j - 1] + drop_v
            sub = prev[j - 1] + _codes_cost(codes, code_ptr[u], code_ptr[u + 1], code_ptr[v], code_ptr[v + 1], ncp) \
                + w_time * abs(times[u] - times[v]) / span
            if sub < best:
                best = sub
            cur[j] = best
        prev, cur = cur, prev
    return prev[lb] / total if total > 0 else 0.0


@nb.njit(cache=True, nogil=True)
def costs_from(a, candidates, qi_codes, qi_ncp, visit_ptr, code_ptr, codes, times, code_ncp,
               w_rel, w_seq, w_time, span):
    """F(a, c) for every c in ``candidates`` (``qi_ncp``: the QIs' NCP matrices, zero-padded, stacked).
    One thread: numba's OpenMP threads spin while waiting, which on a busy 2-core machine slowed a
    call 10-600 fold; ``CostModel`` splits its work over its own threads instead."""
    out = np.empty(len(candidates))
    m = qi_codes.shape[1]
    for t in range(len(candidates)):
        c = candidates[t]
        rel = 0.0
        for q in range(m):
            rel += qi_ncp[q, qi_codes[a, q], qi_codes[c, q]]
        rel = rel / m if m else 0.0
        seq = sequence_cost(visit_ptr, code_ptr, codes, times, code_ncp, a, c, w_time, span)
        out[t] = w_rel * rel + w_seq * seq
    return out


def hierarchy_tables(h: Hierarchy, apart: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The kernels' form of a hierarchy: ``hcodes[j, u]`` (the node at level j above ground value u)
    and ``tab[j, node]`` (its NCP), plus one level above the top where values that never meet (in a
    height-0 hierarchy) meet at cost ``apart``: 1 for F, as in ``ncp_matrix``; infinite for the
    anonymization, which cannot release such a pair as one value."""
    depth, n = h.codes.shape
    hcodes = np.zeros((depth + 1, n), dtype=np.int64)
    hcodes[:depth] = h.codes
    ncp = node_ncp(h)
    tab = np.zeros((depth + 1, max(len(t) for t in ncp)))
    for level, table in enumerate(ncp):
        tab[level, :len(table)] = table
    tab[depth, 0] = apart if n > 1 else 0.0
    return hcodes, tab


def stacked_tables(hierarchies) -> tuple[np.ndarray, np.ndarray]:
    """``hierarchy_tables`` of several hierarchies, zero-padded to one shape and stacked (a padded
    level is one node with NCP 1, like the level above the top)."""
    tables = [hierarchy_tables(h) for h in hierarchies]
    depth = max([c.shape[0] for c, _ in tables], default=1)
    width = max([c.shape[1] for c, _ in tables], default=1)
    nodes = max([t.shape[1] for _, t in tables], default=1)
    hcodes = np.zeros((len(tables), depth, width), dtype=np.int64)
    tab = np.zeros((len(tables), depth, nodes))
    for q, (c, t) in enumerate(tables):
        hcodes[q, :len(c), :c.shape[1]] = c
        tab[q, :len(t), :t.shape[1]] = t
        tab[q, len(t):, 0] = t[-1, 0]
    return hcodes, tab


def time_span(data) -> float:
    """The width that time differences are divided by: last visit − first visit (1 if they are equal)."""
    times = data.visit_time
    return float(times.max() - times.min()) if len(times) and times.max() > times.min() else 1.0


def thread_count(workers: int | None) -> int:
    """``workers`` checked (an int >= 1), or up to 2 cores by default."""
    return max(1, min(2, os.cpu_count() or 1)) if workers is None else validate_int(workers, "workers", low=1)


def in_threads(n: int, workers: int, fn, pieces: int | None = None) -> None:
    """fn(lo, hi) over contiguous slices of range(n) (``pieces`` of them, default one per worker) on
    ``workers`` threads: fn calls compiled kernels that release the GIL."""
    pieces = max(1, min(n, pieces or workers))
    bounds = np.linspace(0, n, pieces + 1).astype(np.int64)
    if workers == 1 or pieces == 1:
        for i in range(pieces):
            fn(int(bounds[i]), int(bounds[i + 1]))
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(lambda i: fn(int(bounds[i]), int(bounds[i + 1])), range(pieces)))


class CostModel:
    """F over one ``SequentialData`` (see the module docstring);
    ``workers``: threads (default: up to 2 cores).

    Parameters
    ----------
    data : SequentialData
        The entities and their sequences.
    weights : CostWeights, optional
        The weights of the cost's parts.
    workers : int, optional
        Threads.
    """

    PARALLEL_FROM = 4096  # fewer candidates are compared on the calling thread

    def __init__(self, data, weights: CostWeights = CostWeights(), *, workers: int | None = None):
        self.data, self.weights = data, weights
        self.workers = thread_count(workers)
        self.qi_hcodes, self.qi_tab = stacked_tables(data.cost_hierarchies)
        # the kernels take a plain mean over the columns: a weighted one is the mean of scaled tables
        weights = data.cost_qi_weights
        self.qi_tab *= (weights * len(weights) / weights.sum())[:, None, None] if len(weights) else 1.0
        self.hcodes, self.tab = hierarchy_tables(data.code_hierarchy)
        self.span = time_span(data)
        self.width = kernels.scratch_for(data.visit_ptr, data.code_ptr).shape[1]

    def _arrays(self) -> tuple:
        d, w = self.data, self.weights
        return (d.cost_qi_codes, self.qi_hcodes, self.qi_tab, d.visit_ptr, d.code_ptr, d.codes, d.visit_time, self.hcodes,
                self.tab, w.relational, w.sequence, w.time, self.span, self.width)

    def costs_from(self, a: int, candidates: np.ndarray) -> np.ndarray:
        """F(a, c) for every entity c in ``candidates``."""
        candidates, arrays = np.asarray(candidates, dtype=np.int64), self._arrays()
        if len(candidates) < self.PARALLEL_FROM:
            return kernels.costs_from_tables(int(a), candidates, *arrays)
        out = np.empty(len(candidates))

        def part(lo, hi):
            out[lo:hi] = kernels.costs_from_tables(int(a), candidates[lo:hi], *arrays)

        in_threads(len(candidates), self.workers, part)
        return out

    def add_costs(self, anchors: np.ndarray, total: np.ndarray) -> None:
        """total[e] += F(a, e) for every anchor a and every entity e."""
        anchors, arrays = np.asarray(anchors, dtype=np.int64), self._arrays()
        in_threads(len(total), self.workers, lambda lo, hi: kernels.add_costs(anchors, lo, hi, total, *arrays))
