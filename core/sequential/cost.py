"""The cost function F over both parts (our definitions; the patent publishes no constants).

F(a, b) = w_R · relational loss + w_S · sequence loss, both in [0, 1]:

- **relational loss**: mean over the QIs of the normalized certainty penalty of a's and b's lowest
  common generalization: NCP(node) = (ground values under the node − 1) / (ground values − 1)
  (0 if equal, 1 if only the top covers both);
- **sequence loss**: a two-level alignment, divided by what suppressing everything would cost.
  Codes of two visits are aligned by dynamic programming (edit distance): substituting code u by v
  costs NCP(LCA(u, v)) in the code hierarchy; an unmatched code costs 1 (its suppression). Visits
  are aligned the same way: substituting visit A by visit B costs the alignment of their codes plus
  w_T · |t_A − t_B| / (time span of the data) (generalizing both times to one interval); an unmatched
  visit costs its codes plus w_T.

Defaults w_R = w_S = ½, w_T = 1. The alignment runs compiled (numba), one entity against many.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numba as nb
import numpy as np

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.hierarchies import Hierarchy


def node_ncp(h: Hierarchy) -> list[np.ndarray]:
    """Per level, the NCP of each node: (ground values under it − 1) / (ground values − 1)."""
    n = len(h.ground)
    return [(np.bincount(codes) - 1) / (n - 1) if n > 1 else np.zeros(len(h.labels[lv]))
            for lv, codes in enumerate(h.codes)]


def ncp_matrix(h: Hierarchy) -> np.ndarray:
    """NCP of the lowest common ancestor of every pair of ground values (ground × ground), from
    :meth:`Hierarchy.lca_levels`."""
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
    """w_R, w_S and the weight of a visit's time against its codes; each finite and >= 0."""

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


@nb.njit(cache=True, nogil=True, parallel=True)
def costs_from(a, candidates, qi_codes, qi_ncp, visit_ptr, code_ptr, codes, times, code_ncp,
               w_rel, w_seq, w_time, span):
    """F(a, c) for every c in ``candidates`` (``qi_ncp``: the QIs' NCP matrices, zero-padded, stacked)."""
    out = np.empty(len(candidates))
    m = qi_codes.shape[1]
    for t in nb.prange(len(candidates)):
        c = candidates[t]
        rel = 0.0
        for q in range(m):
            rel += qi_ncp[q, qi_codes[a, q], qi_codes[c, q]]
        rel = rel / m if m else 0.0
        seq = sequence_cost(visit_ptr, code_ptr, codes, times, code_ncp, a, c, w_time, span)
        out[t] = w_rel * rel + w_seq * seq
    return out


class CostModel:
    """F over one :class:`~microrelease.core.sequential.model.SequentialData` (see the module docstring)."""

    def __init__(self, data, weights: CostWeights = CostWeights()):
        self.data, self.weights = data, weights
        mats = [ncp_matrix(h) for h in data.hierarchies]
        size = max([len(m) for m in mats], default=1)
        self.qi_ncp = np.zeros((max(len(mats), 1), size, size))
        for q, m in enumerate(mats):
            self.qi_ncp[q, :len(m), :len(m)] = m
        self.code_ncp = ncp_matrix(data.code_hierarchy)
        times = data.visit_time
        self.span = float(times.max() - times.min()) if len(times) and times.max() > times.min() else 1.0

    def costs_from(self, a: int, candidates: np.ndarray) -> np.ndarray:
        d, w = self.data, self.weights
        return costs_from(int(a), np.asarray(candidates, dtype=np.int64), d.qi_codes, self.qi_ncp, d.visit_ptr,
                          d.code_ptr, d.codes, d.visit_time, self.code_ncp, w.relational, w.sequence, w.time,
                          self.span)
