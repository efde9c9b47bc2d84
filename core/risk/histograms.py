"""Many samples' class-size histograms at once, as the population uniqueness models read them: node i's
(size j, count c_j) pairs are ``offsets[i]:offsets[i+1]`` of ``sizes``/``counts`` (the CSR layout of
``LatticeProfile``; ``c_j``, the number of sample classes of
size j, is the sample's *frequency of frequencies*), with each node's sample size n, number of
classes u, sample uniques c_1 and classes of size 2, c_2 (``NodeHistograms`` for the numpy path,
``node_totals`` compiled); and what Zayatz's and SNB's models read of each node's pairs: the
hypergeometric chances h(j) / h(1) (a table over class sizes, or log-gammas) and their sum, the
powers in SNB's Sh3 and its sums (numpy, and compiled: ``zayatz_sums``, ``snb_classes``).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.risk.special_functions import lgamma, lgamma_one


def validate_histograms(offsets, sizes, counts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``offsets``, ``sizes`` and ``counts`` as int64 arrays, validated (errors name the parameter)."""
    offsets, sizes, counts = (np.asarray(a) for a in (offsets, sizes, counts))
    for name, arr in (("offsets", offsets), ("sizes", sizes), ("counts", counts)):
        if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
            raise InvalidParameterError(f"The {name!r} parameter must be a 1-D array of integers. "
                                        f"Got dtype {arr.dtype}, shape {arr.shape} instead.", parameter=name)
    if len(offsets) < 2 or offsets[0] != 0 or offsets[-1] != len(sizes) or np.any(np.diff(offsets) < 0):
        raise InvalidParameterError("The 'offsets' parameter must rise from 0 to len(sizes) "
                                    f"({len(sizes)}). Got {offsets!r} instead.", parameter="offsets")
    if len(counts) != len(sizes):
        raise InvalidParameterError(f"The 'counts' parameter must have len(sizes) ({len(sizes)}) entries. "
                                    f"Got {len(counts)} instead.", parameter="counts")
    if len(sizes) and sizes.min() < 1:
        raise InvalidParameterError(f"The 'sizes' parameter must hold class sizes >= 1. Got {sizes.min()}.",
                                    parameter="sizes")
    if len(counts) and counts.min() < 0:
        raise InvalidParameterError(f"The 'counts' parameter must hold counts >= 0. Got {counts.min()}.",
                                    parameter="counts")
    return tuple(np.ascontiguousarray(a, dtype=np.int64) for a in (offsets, sizes, counts))


class NodeHistograms:
    """Per-node n, u (classes), c_1, c_2 and the pairs with their node, from CSR arrays (validated).
    The numpy path's view (the tests' oracle); the compiled path sums the same per node in
    ``node_totals``."""

    def __init__(self, offsets, sizes, counts):
        offsets, sizes, counts = validate_histograms(offsets, sizes, counts)
        self.nodes = len(offsets) - 1
        self.node = np.repeat(np.arange(self.nodes), np.diff(offsets))
        self.sizes, self.counts = sizes.astype(float), counts.astype(float)
        self.n = self.per_node(self.sizes * self.counts)
        self.u = self.per_node(self.counts)
        self.c1 = self.per_node(np.where(sizes == 1, self.counts, 0.0))
        self.c2 = self.per_node(np.where(sizes == 2, self.counts, 0.0))

    def per_node(self, values):
        """Sum of ``values`` (one per pair) over each node's pairs."""
        return np.bincount(self.node, weights=values, minlength=self.nodes)

    def regular(self):
        """Nodes that need a model: some sample uniques, not all records unique."""
        return (self.c1 > 0) & (self.c1 < self.n)


@nb.njit(cache=True, nogil=True)
def node_totals(offsets, sizes, counts):
    """Per node: sample size n, classes u, sample uniques c_1 and classes of size 2, c_2 (floats)."""
    nodes = len(offsets) - 1
    n, u, c1, c2 = np.zeros(nodes), np.zeros(nodes), np.zeros(nodes), np.zeros(nodes)
    for i in range(nodes):
        for p in range(offsets[i], offsets[i + 1]):
            size, count = sizes[p], float(counts[p])
            n[i] += size * count
            u[i] += count
            if size == 1:
                c1[i] += count
            elif size == 2:
                c2[i] += count
    return n, u, c1, c2


def draw_one_table(n, fraction, sizes):
    """h(j) / h(1) for j = 1 .. max(sizes), one row per distinct sample size, and each node's row; or an
    empty table (then by log-gammas) when the rows would outnumber the pairs (nodes of many sizes n)."""
    values, row = np.unique(n, return_inverse=True)
    top = int(sizes.max()) if len(sizes) else 1
    if len(values) * top > len(sizes):
        return np.empty((0, 1)), row
    j, table = np.arange(1, top + 1, dtype=float), np.empty((len(values), top))
    for r, sample in enumerate(values):
        N = sample / fraction
        with np.errstate(divide="ignore", invalid="ignore"):
            steps = np.log(np.maximum(N - sample - j[:-1] + 1, 0) / (N - j[:-1]))
        table[r] = np.exp(np.log(j) + np.concatenate(([0.0], np.cumsum(steps))))
    return table, row


def power_tables(fraction, sizes):
    """(1 - pi)^i and (1 - pi^2)^i for i = 0 .. max(sizes), the powers Sh3 reads; raised only while
    above e^-746 (the rest round to 0.0 all the same)."""
    top, tables = int(sizes.max()) + 1 if len(sizes) else 1, []
    for base in (1 - fraction, 1 - fraction**2):
        table = np.zeros(top)
        kept = top if base >= 1 else min(top, int(746 / -math.log(base)) + 2 if base > 0 else 2)
        table[:kept] = base ** np.arange(kept)
        tables.append(table)
    return tables


def draw_one_ratio(h: NodeHistograms, fraction):
    """Per pair, h(j) / h(1): h(j) = j C(N - j, n - 1) / C(N, n), the hypergeometric chance that exactly
    one record of a population class of size j is drawn; h(j) / h(1) = j prod_{i<j} (N-n-i+1) / (N-i)."""
    table, row = draw_one_table(h.n, fraction, h.sizes)
    if len(table):
        return table[row[h.node], h.sizes.astype(np.int64) - 1]
    n, size = h.n[h.node], h.sizes
    N = n / fraction
    possible = N - n - size + 2 > 0  # else more than N - n records would stay out of the sample
    with np.errstate(invalid="ignore", divide="ignore"):
        log_ratio = (np.log(size) + lgamma(np.where(possible, N - size + 1, 1.0)) - lgamma(np.maximum(N, 1.0))
                     + lgamma(N - n + 1) - lgamma(np.where(possible, N - n - size + 2, 1.0)))
    return np.where(possible, np.exp(log_ratio), 0.0)


@nb.njit(cache=True, nogil=True, error_model="numpy")
def zayatz_sums(offsets, sizes, counts, n, c1, fraction, table, table_row):
    """Per node, sum_j c_j h(j) / h(1), from ``table`` (row ``table_row[i]``, column j - 1) or, if it has
    no rows, by log-gammas (as ``draw_one_ratio``). Without sample uniques the sum stops at its first
    positive term: P(population unique | sample unique) = c_1 / sum is 0 whatever the rest (nan if none)."""
    nodes = len(offsets) - 1
    out = np.zeros(nodes)
    for i in range(nodes):
        total, N = 0.0, n[i] / fraction
        if table.shape[0]:
            row = table[table_row[i]]
        else:
            fixed, rest = lgamma_one(max(N, 1.0)), lgamma_one(N - n[i] + 1)
        for p in range(offsets[i], offsets[i + 1]):
            size = sizes[p]
            if table.shape[0]:
                total += counts[p] * row[size - 1]
            elif N - n[i] - size + 2 > 0:  # else more than N - n records would stay out of the sample
                log_ratio = (math.log(size) + lgamma_one(N - size + 1) - fixed
                             + rest - lgamma_one(N - n[i] - size + 2))
                total += counts[p] * math.exp(log_ratio)
            if c1[i] == 0 and total > 0:
                break
        out[i] = total
    return out


@nb.njit(cache=True, nogil=True, error_model="numpy")
def snb_classes(offsets, sizes, counts, u, c1, fraction, q_pow, r_pow):
    """K per node: Haas et al.'s Sh3 (as ``_snb``), from the powers of q and 1 - pi^2."""
    nodes = len(offsets) - 1
    classes = np.empty(nodes)
    f2 = fraction**2
    for i in range(nodes):
        a_, b_, c_, d_ = 0.0, 0.0, 0.0, 0.0
        for p in range(offsets[i], offsets[i + 1]):
            j, cnt = sizes[p], float(counts[p])
            a_ += cnt * j * f2 * r_pow[j - 1]
            b_ += cnt * (r_pow[j] - q_pow[j])
            c_ += cnt * q_pow[j]
            d_ += cnt * j * fraction * q_pow[j - 1]
        classes[i] = u[i] + c1[i] * (a_ / b_) * (c_ / d_) ** 2
    return classes
