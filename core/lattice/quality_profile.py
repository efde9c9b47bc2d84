"""The quality profile: what ARX's quality models read beyond the class sizes, for every node at once.

Per pair (node, size) of a profile (the passing classes of that size), ``Quality`` keeps the share
mass per QI, Σ c_x² and Σ c_x² · log2 area (c_x: the rows of ground tuple x; area: the ground tuples a
class's values cover), and the running entropy sum of the rows a query suppresses; per node, the same
for the classes failing a privacy model; per table, the constants of the models. See
``quality_kernels`` for the compiled roll-up and
``quality`` for the models. ``node_quality_arrays`` computes one node
directly (the ``direct`` strategy, and the oracle of the compiled kernels).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from microrelease.core.lattice.generalization import class_representatives, class_sizes, generalize_codes
from microrelease.core.lattice.hierarchies import Hierarchy

if TYPE_CHECKING:  # annotations only: the profile module builds on this one
    from microrelease.core.lattice.profile import LatticeProfile

PAIR_COLUMNS = 3  # beyond the m share masses: Σ c_x², Σ c_x² log2 area, running entropy sum


def share_tables(hierarchies: tuple[Hierarchy, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Flat per-QI, per-level tables of share_i (ground values under a node / |D_i|):
    ``flat[off[i, level] + code]``."""
    depth = max(h.height for h in hierarchies) + 1
    off = np.zeros((len(hierarchies), depth), dtype=np.int64)
    parts, pos = [], 0
    for i, h in enumerate(hierarchies):
        for level in range(h.height + 1):
            off[i, level] = pos
            under = np.bincount(h.codes[level], minlength=h.level_size(level)) / len(h.ground)
            parts.append(under)
            pos += len(under)
    return np.concatenate(parts), off


def leaves_table(hierarchies: tuple[Hierarchy, ...], flat: np.ndarray, off: np.ndarray) -> np.ndarray:
    """log2 of the ground values under each value, in ``share_tables``' layout."""
    domain = np.zeros(len(flat))
    for i, h in enumerate(hierarchies):
        end = off[i, h.height] + h.level_size(h.height)
        domain[off[i, 0]:end] = len(h.ground)
    return np.log2(np.maximum(flat * domain, 1.0))


def node_tables(hierarchies: tuple[Hierarchy, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``share_tables`` and ``leaves_table`` together: what a node's quality figures look up."""
    flat, off = share_tables(hierarchies)
    return flat, off, leaves_table(hierarchies, flat, off)


def value_offsets(hierarchies: tuple[Hierarchy, ...]) -> np.ndarray:
    """Start of each QI's values in the kernels' scratch counts (a level code is below |D_i|)."""
    return np.concatenate(([0], np.cumsum([len(h.ground) for h in hierarchies]))).astype(np.int64)


def xlog2x(x: np.ndarray | float) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return np.where(x > 0, x * np.log2(np.where(x > 0, x, 1.0)), 0.0)


def conditional_entropy(freq, hierarchies: tuple[Hierarchy, ...]) -> np.ndarray:
    """ARX's precomputed non-uniform entropy per QI and level (QIs × levels):
    −Σ over ground values v of a_v log2(a_v / b), a_v the rows holding v, b those holding v's
    generalization at that level (Gionis & Tassa's non-uniform entropy; ARX's MetricMDNUEntropyPrecomputed)."""
    depth = max(h.height for h in hierarchies) + 1
    out = np.zeros((len(hierarchies), depth))
    for i, h in enumerate(hierarchies):
        a = np.bincount(freq.codes[:, i], weights=freq.counts, minlength=len(h.ground))
        for level in range(h.height + 1):
            b = np.bincount(h.codes[level], weights=a, minlength=h.level_size(level))[h.codes[level]]
            held = a > 0
            out[i, level] = -(a[held] * np.log2(a[held] / b[held])).sum()
    return out


@dataclass(frozen=True, eq=False)
class Quality:
    """What the quality models read besides the class sizes (see the module docstring).

    pairs : per histogram pair of the profile: m share masses, Σ c_x², Σ c_x² log2 area, running
        entropy sum (pairs × (m + 3)).
    failing : per node, the classes failing a privacy model: Σ c_x², entropy sum (nodes × 2).
    domain : |D_i| per QI. conditional : ``conditional_entropy``. tuples : Σ_x c_x² log2(c_x / n).
    """

    pairs: np.ndarray
    failing: np.ndarray
    domain: np.ndarray
    conditional: np.ndarray
    tuples: float
    sizes: np.ndarray = dataclasses.field(repr=False)  # the profile's, for Σ c_x² log2 size

    def __post_init__(self) -> None:
        self.pairs.setflags(write=False)

    @property
    def mass(self) -> np.ndarray:
        return self.pairs[:, :len(self.domain)]

    @cached_property
    def cumulative(self) -> np.ndarray:
        """Running sums over the pairs (one row more, zeros first) of the share masses, Σ c_x²,
        Σ c_x² log2 area and Σ c_x² log2 size: the same for every k, so a query costs two gathers."""
        m = len(self.domain)
        summed = np.column_stack((self.pairs[:, :m + 2], self.pairs[:, m] * np.log2(np.maximum(self.sizes, 1))))
        cum = np.zeros((len(summed) + 1, summed.shape[1]))
        np.cumsum(summed, axis=0, out=cum[1:])
        return cum


def node_quality_arrays(freq, hierarchies: tuple[Hierarchy, ...], node, passing=None, tables=None):
    """One node's passing class-size histogram, its (sizes × (m + 3)) quality pairs and its failing
    figures (2), by grouping the frequency set anew. ``passing(sizes, tuple_class)``: which classes pass
    (default: all); ``tables``: ``node_tables``, when built once already."""
    sizes, tuple_class = class_sizes(freq, hierarchies, node)
    passing = np.ones(len(sizes), dtype=bool) if passing is None else passing(sizes, tuple_class)
    levels = generalize_codes(hierarchies, freq.codes, node)
    flat, off, leaves = node_tables(hierarchies) if tables is None else tables
    m = len(hierarchies)
    per_class = np.zeros((len(sizes), m + 2))
    for i, d in enumerate(node):
        at = off[i, d] + levels[:, i]
        np.add.at(per_class[:, i], tuple_class, freq.counts * flat[at])
    first = class_representatives(tuple_class, len(sizes))
    area = sum(leaves[off[i, d] + levels[first, i]] for i, d in enumerate(node))
    np.add.at(per_class[:, m], tuple_class, freq.counts.astype(float) ** 2)
    per_class[:, m + 1] = per_class[:, m] * area
    class_levels = levels[first]

    def entropy_sum(chosen: np.ndarray) -> float:
        return float(sum(xlog2x(np.bincount(class_levels[chosen, i], weights=sizes[chosen],
                                            minlength=len(h.ground))).sum()
                         for i, h in enumerate(hierarchies)))

    s, which, c = np.unique(sizes[passing], return_inverse=True, return_counts=True)
    pairs = np.zeros((len(s), m + PAIR_COLUMNS))
    np.add.at(pairs[:, :m + 2], which.reshape(-1), per_class[passing])
    for j, size in enumerate(s):
        pairs[j, m + 2] = entropy_sum(~passing | (sizes <= size))
    failing = np.array([per_class[~passing, m].sum(), entropy_sum(~passing)])
    return s.astype(np.int64), c.astype(np.int64), pairs, failing


def attach_quality(profile: LatticeProfile, freq, hierarchies: tuple[Hierarchy, ...], pieces) -> LatticeProfile:
    """The profile with its ``Quality``, from roll-up pieces whose last two arrays are the pairs'
    figures and the visited nodes' failing figures."""
    m = len(hierarchies)
    pairs = np.empty((len(profile.sizes), m + PAIR_COLUMNS))
    failing = np.zeros((profile.lattice.size, 2))
    for ids, seg, *_, piece_pairs, piece_failing in pieces:
        dest = np.repeat(profile.offsets[ids] - seg[:-1], np.diff(seg)) + np.arange(seg[-1])
        pairs[dest] = piece_pairs
        failing[ids] = piece_failing[:len(ids)]
    n = freq.n_rows
    counts = freq.counts.astype(float)
    tuples = float((counts ** 2 * np.log2(counts / n)).sum()) if n else 0.0
    domain = np.array([len(h.ground) for h in hierarchies], dtype=np.int64)
    quality = Quality(pairs, failing, domain, conditional_entropy(freq, hierarchies), tuples, profile.sizes)
    return dataclasses.replace(profile, quality=quality, _stats_cache={})


XLOG_TABLE_MAX = 1 << 20  # x log2 x is looked up below this (8 MiB), computed above


def kernel_tables(hierarchies: tuple[Hierarchy, ...], n_rows: int) -> tuple:
    """The tables a compiled quality kernel takes: shares, their offsets, log2 leaves, value offsets, and
    x log2 x for the whole numbers a count of ``n_rows`` rows reaches (a lookup: a log per class and QI
    costs most of the roll-up otherwise)."""
    return (*node_tables(hierarchies), value_offsets(hierarchies), xlog2x(np.arange(min(n_rows, XLOG_TABLE_MAX) + 1)))
