"""The one compiled profile kernel: the shared walk with pluggable per-class accumulators.

Every whole-lattice profile walks the lattice once (``rollup_kernels``:
each node's classes rolled up from its parent's) and does the same per-node work on what its classes
carry. What a class carries is declared by a ``WalkPlan``, and the kernel's per-node work follows it:

- **rows**: a column of row counts, or the sum of the sensitive-value columns;
- **sensitive counts** (l-diversity, t-closeness): each model's check marks failing classes
  (``mark_failing``), counted per model;
- **population counts** (k-map): a class with fewer than K population records fails (K > 0; beside the
  sensitive counts too, a class then fails either), or, for the joint profile of every K at once
  (``pack``), the classes are histogrammed by (sample rows, population rows);
- **quality sums** (Σ c_x² per class): the figures ARX's quality models read
  (``add_node_quality``).

The plain k-anonymity profile (1-D integer row counts) is the same kernel compiled for that array type:
numba drops the branch of the other dimension, so the hot path stays a histogram per node. Two compiled
signatures in all (1-D int64, 2-D float64), where there were six kernels of copied loops.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba as nb
import numpy as np

from microrelease.core.lattice.quality_kernels import _grown, add_node_quality, start_quality
from microrelease.core.lattice.rollup_kernels import (
    append_histogram,
    classes,
    finish_histograms,
    histogram,
    histogram_buffers,
    lattice_size,
    next_node,
    node_id,
    start_histograms,
    start_walk,
)
from microrelease.core.models.model_rollup_kernels import mark_failing

# positions in WalkPlan.columns
_ROWS, _VALUES_START, _VALUES_END, _POPULATION, _SQUARES, _PACK = range(6)

_NO_INTS = np.zeros(0, np.int64)
_NO_FLOATS = np.zeros(0)


def _ints(values) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int64)


def _floats(values) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.float64)


@dataclass(frozen=True)
class WalkPlan:
    """What each class carries (its columns) and what the kernel accumulates per node.

    rows : the column of row counts; None: the sum of the sensitive-value columns.
    values : (start, end) of the sensitive-value columns, read by ``checks``; None: no models.
    population : the column of population counts (k-map); None: none.
    k_map : K: a class with fewer population records fails (0: not applied, e.g. with ``pack``).
    pack : histogram (sample rows, population rows) pairs packed as ``rows * base + population``,
        ``base`` = population rows + 1 (0: the passing classes' sizes).
    squares : the column of Σ c_x² (the quality figures are accumulated); None: no quality.
    checks : the models' kernel arrays (table distribution, kinds, l, c, t, and the value hierarchy), as
        ``kernel_arrays`` makes them; empty: no models.
    quality : the quality tables (``kernel_tables``).
    shifts, masks : every QI's bit field in a class key (read with ``quality``).
    """

    rows: int | None = 0
    values: tuple[int, int] | None = None
    population: int | None = None
    k_map: float = 0.0
    pack: int = 0
    squares: int | None = None
    checks: tuple = ()
    quality: tuple = ()
    shifts: np.ndarray = field(default_factory=lambda: _NO_INTS)
    masks: np.ndarray = field(default_factory=lambda: _NO_INTS)

    def arguments(self) -> tuple:
        """The kernel's arguments after the walk's, always of the same types (one compiled signature)."""
        start, end = self.values if self.values is not None else (0, 0)
        columns = _ints([-1 if self.rows is None else self.rows, start, end,
                         -1 if self.population is None else self.population,
                         -1 if self.squares is None else self.squares, self.pack])
        if self.checks:
            table_p, kinds, l_values, c_values, t_values, height, level_sizes, map_flat, map_off = self.checks
            checks = (_floats(table_p), _ints(kinds), _floats(l_values), _floats(c_values), _floats(t_values),
                      int(height), _ints(level_sizes), _ints(map_flat), _ints(map_off))
        else:
            checks = (_NO_FLOATS, _NO_INTS, _NO_FLOATS, _NO_FLOATS, _NO_FLOATS, 0, _ints([1]), _NO_INTS, _NO_INTS)
        if self.quality:
            share_flat, share_off, leaves_flat, value_off, xlog_table = self.quality
            tables = (_ints(self.shifts), _ints(self.masks), _floats(share_flat), _ints(share_off),
                      _floats(leaves_flat), _ints(value_off), _floats(xlog_table))
        else:
            tables = (_NO_INTS, _NO_INTS, _NO_FLOATS, np.zeros((0, 1), np.int64), _NO_FLOATS, _ints([0]), _NO_FLOATS)
        return columns, float(self.k_map), checks, tables

    def inner(self):
        """``inner(*walk, outer_levels)`` for ``roll_up`` (``with_start``)."""
        args = self.arguments()

        def inner(*walk):
            return walk_profile(*walk, *args)

        return inner


@nb.njit(cache=True, nogil=True)
def walk_profile(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, outer_levels,
                 columns, k_map, checks, tables):
    """Every node of the sub-lattice over the QIs in ``heights`` (the others at ``outer_levels``), as
    ``WalkPlan`` declares: (local node ids in visit order, segment offsets, sizes, counts, failing
    rows, failing rows by check, failing Σ size², the pairs' quality figures, the nodes' failing quality
    figures). Arrays a plan does not ask for come back empty."""
    if base_counts.ndim == 1:
        return _plain(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off)
    return _accumulated(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, outer_levels,
                        columns, k_map, checks, tables)


@nb.njit(cache=True, nogil=True)
def _plain(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off):
    """k-anonymity: each class carries its row count; the histogram of the class sizes per node."""
    walk = start_walk(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off)
    cnt_buf, nlen = classes(walk)
    buffers = histogram_buffers(len(base_keys))
    out = start_histograms(lattice_size(heights))
    while True:
        d = next_node(walk)
        if d < 0:
            break
        sizes, freq = histogram(cnt_buf[d], nlen[d], buffers)
        out = append_histogram(out, node_id(walk), sizes, freq)
    order, seg, sizes_out, counts_out = finish_histograms(out)
    return (order, seg, sizes_out, counts_out, np.zeros(0, np.int64), np.zeros((0, 0), np.int64),
            np.zeros(0, np.int64), np.zeros((0, 0)), np.zeros((0, 0)))


@nb.njit(cache=True, nogil=True)
def _accumulated(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off, outer_levels,
                 columns, k_map, checks, tables):
    table_p, kinds, l_values, c_values, t_values, height, level_sizes, map_flat, map_off = checks
    all_shifts, all_masks, share_flat, share_off, leaves_flat, value_off, xlog_table = tables
    rows_col, v0, v1, pop_col, sq_col, pack = (columns[_ROWS], columns[_VALUES_START], columns[_VALUES_END],
                                               columns[_POPULATION], columns[_SQUARES], columns[_PACK])
    walk = start_walk(base_keys, base_counts, heights, shifts, masks, parent_flat, parent_off)
    cnt_buf, nlen = classes(walk)
    keys_buf, vec = walk[10], walk[6]
    buffers = histogram_buffers(len(base_keys))
    width = max(len(base_keys), 1)
    kept_keys = np.empty(width, np.int64)  # the histogram's input: passing sizes, or packed pairs
    sizes = np.empty(width)
    divisors = np.empty(width)  # sizes, 1 for a class of the population alone (it holds no values to divide)
    ok = np.empty(width, np.bool_)
    fails = np.empty(width, np.bool_)
    scratch = np.empty((3, max(v1 - v0, level_sizes.max())))
    n_nodes = lattice_size(heights)
    out = start_histograms(n_nodes)
    n_checks = len(kinds) + (1 if k_map > 0 else 0)
    counted = pack == 0  # the joint profile of every K has no failing classes: K is chosen later
    failing = np.zeros(n_nodes if counted else 0, np.int64)
    failing_sq = np.zeros(n_nodes if counted else 0, np.int64)  # Σ size² of the failing classes (DM*)
    failing_by = np.zeros((n_checks, n_nodes), np.int64)
    quality = sq_col >= 0
    m = len(all_shifts)
    levels, value_count, pair_q, node_q = start_quality(heights, outer_levels, m, value_off)
    node_q = node_q if quality else np.zeros((0, 2))
    used = 0
    visited = 0
    while True:
        d = next_node(walk)
        if d < 0:
            break
        cnt = cnt_buf[d]
        n = nlen[d]
        for i in range(n):
            if rows_col >= 0:
                size = cnt[i, rows_col]
            else:
                size = 0.0
                for c in range(v0, v1):
                    size += cnt[i, c]
            sizes[i] = size
            divisors[i] = size if size > 0 else 1.0
            ok[i] = size > 0  # a class of the population alone holds none of the data's rows
        for k in range(len(kinds)):
            # the checks divide by the class size: a population-only class (k-map beside a model) would
            # raise there; whatever they mark it, it is already not kept and counts no row
            mark_failing(cnt[:, v0:v1], n, divisors, table_p, kinds[k], l_values[k], c_values[k], t_values[k], height,
                         level_sizes, map_flat, map_off, scratch, fails)
            for i in range(n):
                if fails[i]:
                    failing_by[k, visited] += np.int64(round(sizes[i]))
                    ok[i] = False
        if k_map > 0:
            for i in range(n):
                if sizes[i] > 0 and cnt[i, pop_col] < k_map:
                    failing_by[n_checks - 1, visited] += np.int64(round(sizes[i]))
                    ok[i] = False
        kept = 0
        for i in range(n):
            if pack > 0:
                if sizes[i] > 0:
                    kept_keys[kept] = np.int64(round(sizes[i])) * pack + np.int64(round(cnt[i, pop_col]))
                    kept += 1
            elif ok[i]:
                kept_keys[kept] = np.int64(round(sizes[i]))
                kept += 1
            elif counted and sizes[i] > 0:
                failing[visited] += np.int64(round(sizes[i]))
                failing_sq[visited] += np.int64(round(sizes[i])) ** 2
        kept_sizes, freq = histogram(kept_keys, kept, buffers)
        if quality:
            for a in range(len(heights)):
                levels[a] = vec[a]
            if used + len(kept_sizes) > len(pair_q):
                pair_q = _grown(pair_q[:used], used + len(kept_sizes), m + 3)
            add_node_quality(keys_buf[d], sizes, cnt[:, sq_col], n, ok, kept_sizes, freq, levels, all_shifts,
                             all_masks, share_flat, share_off, leaves_flat, value_count, value_off, xlog_table,
                             pair_q, used, node_q, visited)
            used += len(kept_sizes)
        out = append_histogram(out, node_id(walk), kept_sizes, freq)
        visited += 1
    order, seg, sizes_out, counts_out = finish_histograms(out)
    return order, seg, sizes_out, counts_out, failing, failing_by, failing_sq, pair_q[:used].copy(), node_q
