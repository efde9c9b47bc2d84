"""The whole-lattice profile: every node's histogram of equivalence-class sizes, in one pass.

For k-anonymity with minimal required suppression (Samarati §4), everything about a node follows
from how many classes of each size it has: rows suppressed for k are the rows in classes smaller
than k, distinct released combinations are the classes of size >= k, and so on. So we compute,
once, for every node, the (size, count) pairs of its class-size histogram, rolling each node up
from an already computed predecessor on integer codes rather than re-reading the rows. Afterwards
any (k, MaxSup, policy) question is answered from these arrays (``LatticeProfile.stats``).

Layout: CSR. ``offsets[i]:offsets[i+1]`` are node i's pairs in ``sizes``/``counts``, sizes ascending.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from microrelease.core.criteria.criterion import monotone
from microrelease.core.exceptions import Cancelled, InvalidParameterError
from microrelease.core.lattice.distance_vectors import Lattice, Node
from microrelease.core.lattice.frequency import FrequencySet, FrequencySource
from microrelease.core.lattice.generalization import class_sizes
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.lattice.quality_profile import (
    attach_quality,
    kernel_tables,
    node_quality_arrays,
    node_tables,
)
from microrelease.core.validation import validate_int

if TYPE_CHECKING:
    from microrelease.core.lattice.quality_profile import Quality

STRATEGIES = ("auto", "numba", "numpy", "direct")
_KEY_BITS = 62
MEMORY_BUDGET = 512 << 20  # bytes: the default working set of a roll-up (every profile builder's)

Progress = Callable[[float], None]
ShouldStop = Callable[[], bool]


@dataclass(frozen=True, eq=False)
class ClassStats:
    """Per-node figures for one k, for every node of the lattice (arrays indexed by node number).

    suppressed : rows in classes smaller than k (minimal required suppression).
    distinct : released classes (QI combinations with >= k rows).
    smallest : size of the smallest released class (0 if nothing is released).
    released_sq : sum of squared sizes of the released classes (for discernibility).
    """

    k: int
    suppressed: np.ndarray
    distinct: np.ndarray
    smallest: np.ndarray
    released_sq: np.ndarray
    source: object = field(default=None, repr=False, compare=False)  # the LatticeProfile answered from

    @classmethod
    def from_sizes(cls, sizes: np.ndarray, k: int, suppressed: np.ndarray | None = None) -> ClassStats:
        """Figures of a single node (arrays of length 1) from its class sizes; ``suppressed`` marks
        the classes removed (default: those smaller than k; with privacy models, failing ones too)."""
        sizes = np.asarray(sizes, dtype=np.int64)
        suppressed = sizes < k if suppressed is None else suppressed
        kept = sizes[~suppressed]
        return cls(
            k,
            np.array([sizes[suppressed].sum()]),
            np.array([len(kept)]),
            np.array([kept.min() if len(kept) else 0]),
            np.array([(kept * kept).sum()]),
        )


@dataclass(frozen=True, eq=False)
class LatticeProfile:
    """Class-size histograms of every node of ``lattice`` for a table of ``n_rows`` rows.

    Parameters
    ----------
    lattice : Lattice
        The lattice profiled.
    n_rows : int
        The table's number of rows.
    offsets : numpy.ndarray
        Where each node's histogram starts in ``sizes`` and ``counts``.
    sizes : numpy.ndarray
        The class sizes of each node's histogram.
    counts : numpy.ndarray
        How many classes have each size.
    strategy : str, optional
        The roll-up strategy used.
    failing_rows : numpy.ndarray, optional
        Per node, rows in classes failing a privacy model.
    failing_sq : numpy.ndarray, optional
        Per node, the squared sizes of those classes.
    models : tuple, optional
        The privacy models counted.
    failing_by_model : dict, optional
        Per model, its failing rows per node.
    quality : object, optional
        ARX's quality models per node, if computed.
    """

    lattice: Lattice
    n_rows: int
    offsets: np.ndarray
    sizes: np.ndarray
    counts: np.ndarray
    strategy: str = ""
    # rows of every node in classes that fail a privacy model beyond k-anonymity (l-diversity,
    # t-closeness): suppressed whatever k is; the histogram then covers only the passing classes
    failing_rows: np.ndarray | None = None
    failing_sq: np.ndarray | None = None  # Σ size² of those failing classes (DM*, in quality.py)
    models: tuple = ()
    failing_by_model: dict = field(default_factory=dict, repr=False)  # model description -> rows per node
    quality: Quality | None = None  # what the quality models read (quality_profile.Quality), when built with quality=True
    _stats_cache: dict = field(default_factory=dict, repr=False)

    def monotone(self, max_sup: int) -> bool:
        """Whether satisfaction is monotone up the lattice for this MaxSup, so that a node with no
        satisfying direct predecessor has none below at all: k-anonymity always is (Samarati
        Lemma 5.1); each privacy model declares whether it is, without and with suppression.

        Parameters
        ----------
        max_sup : int
            MaxSup, in rows.

        Returns
        -------
        bool
            Whether satisfaction is monotone.
        """
        return monotone(self.models, max_sup)

    def histogram(self, node: Node) -> tuple[np.ndarray, np.ndarray]:
        """(sizes, counts) of ``node``'s equivalence classes.

        Parameters
        ----------
        node : Node
            A distance vector.

        Returns
        -------
        tuple of numpy.ndarray
            The class sizes and how many classes have each.
        """
        i = self.lattice.index(node)
        lo, hi = self.offsets[i], self.offsets[i + 1]
        return self.sizes[lo:hi], self.counts[lo:hi]

    @cached_property
    def _prefix(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        n_nodes = len(self.offsets) - 1
        node_of_pair = np.repeat(np.arange(n_nodes, dtype=np.int64), np.diff(self.offsets))
        composite = node_of_pair * (self.n_rows + 1) + self.sizes
        if n_nodes * (self.n_rows + 1) < np.iinfo(np.int32).max:
            composite = composite.astype(np.int32)  # half the memory traffic for searchsorted
        # Running sums over all pairs; differences within one node are exact even if a running
        # sum wraps around int64, because two's-complement subtraction undoes the wrap.
        with np.errstate(over="ignore"):
            cum_mass = np.concatenate(([0], np.cumsum(self.sizes * self.counts)))
            cum_cnt = np.concatenate(([0], np.cumsum(self.counts)))
            cum_sq = np.concatenate(([0], np.cumsum(self.sizes * self.sizes * self.counts)))
        return composite, cum_mass, cum_cnt, cum_sq

    def stats(self, k: int) -> ClassStats:
        """Suppressed rows, distinct released classes, ... of every node for this k (vectorized).

        The last 64 answers are kept: moving MaxSup or the policy does not recompute them.

        Parameters
        ----------
        k : int
            The k of k-anonymity.

        Returns
        -------
        ClassStats
            Per node: suppressed rows, classes and their figures.
        """
        if k in self._stats_cache:
            return self._stats_cache[k]
        stats = self._compute_stats(k)
        if len(self._stats_cache) >= 64:
            self._stats_cache.pop(next(iter(self._stats_cache)))
        self._stats_cache[k] = stats
        return stats

    def _compute_stats(self, k: int) -> ClassStats:
        composite, cum_mass, cum_cnt, cum_sq = self._prefix
        n_nodes = len(self.offsets) - 1
        start, end = self.offsets[:-1], self.offsets[1:]
        targets = (np.arange(n_nodes, dtype=np.int64) * (self.n_rows + 1) + k).astype(composite.dtype)
        first_kept = np.searchsorted(composite, targets)
        with np.errstate(over="ignore"):
            suppressed = cum_mass[first_kept] - cum_mass[start]
            distinct = cum_cnt[end] - cum_cnt[first_kept]
            released_sq = cum_sq[end] - cum_sq[first_kept]
        if self.failing_rows is not None:
            suppressed = suppressed + self.failing_rows
        has_release = first_kept < end
        smallest = (np.where(has_release, self.sizes[np.minimum(first_kept, len(self.sizes) - 1)], 0)
                    if len(self.sizes) else np.zeros(n_nodes, dtype=np.int64))  # every class may fail a model
        for arr in (suppressed, distinct, smallest, released_sq):
            arr.setflags(write=False)  # cached and shared between answers
        return ClassStats(k, suppressed, distinct, smallest, released_sq, self)


class KeySpec(NamedTuple):
    """How a class's level codes pack into one int64 key: bit field ``shifts[a]``/``masks[a]`` for
    QI a; ``parent_flat[parent_off[a, level]:]`` maps QI a's codes at ``level`` to ``level + 1``."""

    shifts: np.ndarray
    masks: np.ndarray
    parent_flat: np.ndarray
    parent_off: np.ndarray

    def pack(self, codes: np.ndarray) -> np.ndarray:
        """The key of each row of ``codes`` (one ground code per QI)."""
        if not len(codes):
            return np.zeros(0, np.int64)
        return np.bitwise_or.reduce(codes.astype(np.int64) << self.shifts, axis=1)


def key_spec(hierarchies: tuple[Hierarchy, ...]) -> KeySpec | None:
    """Bit fields packing one ground code per QI into an int64 key, or None if over 62 bits."""
    widths = np.array([max(1, int(len(h.ground) - 1).bit_length()) for h in hierarchies], dtype=np.int64)
    if widths.sum() > _KEY_BITS:
        return None
    shifts = np.zeros(len(widths), dtype=np.int64)
    for i in range(len(widths) - 2, -1, -1):
        shifts[i] = shifts[i + 1] + widths[i + 1]
    masks = (np.int64(1) << widths) - 1
    max_h = max(h.height for h in hierarchies)
    parent_off = np.zeros((len(hierarchies), max_h + 1), dtype=np.int64)
    flat, pos = [], 0
    for a, h in enumerate(hierarchies):
        for level, up in enumerate(h.parents):
            parent_off[a, level] = pos
            flat.append(up.astype(np.int64))
            pos += len(up)
    parent_flat = np.concatenate(flat) if flat else np.zeros(1, dtype=np.int64)
    return KeySpec(shifts, masks, parent_flat, parent_off)


def _choose_split(shape: tuple[int, ...], chunks: int = 16) -> int:
    """Index p: QIs [0, p) are rolled up inside one compiled call, QIs [p, m) enumerate chunks."""
    outer = 1
    for p in range(len(shape), 0, -1):
        if outer >= chunks:
            return p
        outer *= shape[p - 1]
    return 0


def profile_frequency_set(
    freq: FrequencySet,
    hierarchies: tuple[Hierarchy, ...],
    names: tuple[str, ...] = (),
    *,
    strategy: str = "auto",
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    workers: int | None = None,
    memory_budget: int = MEMORY_BUDGET,
    quality: bool = False,
) -> LatticeProfile:
    """Build the whole-lattice profile from a frequency set.

    strategy : ``"numba"`` (compiled roll-up), ``"numpy"`` (same roll-up, sort-based grouping: the
        tests' oracle), ``"direct"`` (group the frequency set anew at every node; no key-size
        limit), or ``"auto"`` (numba when one code per QI packs into 62 bits, else direct).
    progress : called with the fraction done (0..1) as work proceeds.
    should_stop : polled between chunks; when it returns True, ``Cancelled`` is raised.
    workers : threads for the roll-up (default: up to 2 cores).
    memory_budget : bytes the roll-up's working set may take. Each chunk in flight keeps one array
        of classes per level of its depth-first path (at most the frequency set's size each), so
        for very large frequency sets fewer chunks run at once (down to one, on one thread):
        memory stays bounded by the budget or one chunk, whichever is larger, at the cost of time.
    quality : also sum the share mass the quality models need (``.quality``).
    """
    if strategy not in STRATEGIES:
        raise InvalidParameterError(f"The 'strategy' parameter must be one of {STRATEGIES}. Got {strategy!r} instead.",
                                    parameter="strategy")
    lattice = Lattice(tuple(h.height for h in hierarchies), names or tuple(h.attribute for h in hierarchies))
    spec = key_spec(hierarchies)
    if strategy == "auto":
        strategy = "numba" if spec is not None else "direct"
    if strategy != "direct" and spec is None:
        raise InvalidParameterError(
            f"strategy={strategy!r} needs the QIs' codes to pack into {_KEY_BITS} bits; use 'direct'"
        )
    if quality:
        return build_quality(freq, hierarchies, lattice, spec, strategy, progress=progress, should_stop=should_stop,
                             workers=workers, memory_budget=memory_budget)
    if strategy == "direct":
        return _profile_direct(freq, hierarchies, lattice, progress, should_stop)
    if strategy == "numba":
        from microrelease.core.lattice.rollup_kernels import roll_once  # numba
        from microrelease.core.lattice.walk_kernel import WalkPlan  # numba

        inner, with_start = WalkPlan().inner(), True
    else:
        from microrelease.core.lattice.rollup_numpy import inner_profile as inner  # numpy twin of a kernel
        from microrelease.core.lattice.rollup_numpy import roll_once  # numpy twin of a kernel

        with_start = False
    assert spec is not None  # refused above unless direct
    pieces = roll_up(lattice, spec, spec.pack(freq.codes), freq.counts.astype(np.int64), inner, roll_once,
                     progress=progress, should_stop=should_stop, workers=workers, memory_budget=memory_budget,
                     with_start=with_start)
    return assemble_profile(lattice, freq.n_rows, pieces, strategy)


def build_profile(
    dataset: FrequencySource,
    *,
    strategy: str = "auto",
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    workers: int | None = None,
    memory_budget: int = MEMORY_BUDGET,
    quality: bool = False,
) -> LatticeProfile:
    """The whole-lattice profile of a ``Dataset`` or of a ``TableSummary`` computed by an
    engine over files (any ``FrequencySource``) (see ``profile_frequency_set``).

    Parameters
    ----------
    dataset : FrequencySource
        A ``Dataset`` or a ``TableSummary``: its frequency set is all that is read.
    strategy : str, default "auto"
        How the frequency set is rolled up the lattice (``"auto"`` picks one by size).
    progress : callable, optional
        Called with the progress of the roll-up.
    should_stop : callable, optional
        Polled during the roll-up; when it returns true the build raises ``Cancelled``.
    workers : int, optional
        Threads for the roll-up (default: every core).
    memory_budget : int, default 536870912
        Bytes the roll-up may hold at once.
    quality : bool, default False
        Also compute ARX's quality models for every node.

    Returns
    -------
    LatticeProfile
        The class-size statistics of every node, from which ``query`` answers any (k, MaxSup).

    Raises
    ------
    Cancelled
        If ``should_stop`` asked to stop.

    Examples
    --------
    >>> profile = build_profile(load_sample("toy"))
    >>> profile.lattice.heights
    (2, 1, 5)
    """
    return profile_frequency_set(
        dataset.frequency, dataset.hierarchies, dataset.quasi_identifiers,
        strategy=strategy, progress=progress, should_stop=should_stop, workers=workers,
        memory_budget=memory_budget, quality=quality,
    )


def chunks_in_flight(n_distinct: int, inner_depth: int, workers: int, memory_budget: int,
                     class_bytes: int = 16) -> int:
    """How many roll-up chunks may run at once: 2 per worker, fewer if their working sets
    (``class_bytes`` per class - key and count(s) - per level of the depth-first path, plus the
    hash table) would exceed ``memory_budget``; never fewer than one."""
    per_chunk = (class_bytes * max(n_distinct, 1) * (inner_depth + 1)
                 + 16 * (1 << max(4, (2 * max(n_distinct, 1) - 1).bit_length())))
    return max(1, min(2 * workers, memory_budget // per_chunk))


def roll_up(lattice: Lattice, spec: KeySpec, root_keys: np.ndarray, root_counts: np.ndarray, inner, roll_once, *,
            progress: Progress | None = None, should_stop: ShouldStop | None = None, workers: int | None = None,
            memory_budget: int = MEMORY_BUDGET, with_start: bool = False) -> list[tuple]:
    """Run a roll-up kernel over the whole lattice, in chunks, from the bottom node's classes.

    The QIs are split: ``inner(keys, counts, heights, shifts, masks, parent_flat, parent_off)``
    walks the sub-lattice of the first ones from a start node and returns (local node ids in visit
    order, then arrays of its own, per visited node or in CSR segments); the start nodes enumerate
    the other QIs, each reached with ``roll_once`` from the previous one. Between chunks
    ``should_stop`` is polled (raising ``Cancelled``) and ``progress`` told the fraction done.
    Returns one piece per chunk: its kernel's result with the local ids made lattice node numbers.
    ``with_start``: ``inner`` also gets the levels of the other QIs (the chunk's start node), for
    kernels that read a class's codes at their levels.
    """
    workers = max(1, min(2, os.cpu_count() or 1)) if workers is None else validate_int(workers, "workers", low=1)
    validate_int(memory_budget, "memory_budget", low=0)
    shifts, masks, parent_flat, parent_off = spec
    shape = lattice.shape
    p = _choose_split(shape)
    class_bytes = 8 + root_counts.itemsize * int(np.prod(root_counts.shape[1:], dtype=np.int64))
    in_flight = chunks_in_flight(len(root_keys), sum(lattice.heights[:p]), workers, memory_budget, class_bytes)
    workers = min(workers, in_flight)
    inner_heights = np.array(lattice.heights[:p], dtype=np.int64)
    outer_shape = shape[p:]
    outer_size = int(np.prod(outer_shape, dtype=np.int64))
    m_outer = len(outer_shape)

    def chunk(keys, counts, outer_vec):
        start = (np.asarray(outer_vec, dtype=np.int64),) if with_start else ()
        order, *rest = inner(keys, counts, inner_heights, shifts[:p], masks[:p], parent_flat, parent_off[:p], *start)
        outer_id = int(np.ravel_multi_index(outer_vec, outer_shape)) if outer_shape else 0
        return (order * outer_size + outer_id, *rest)

    def starts(keys, counts, vec, first):
        """Depth-first over the outer QIs (the kernel's spanning tree): each chunk's start node."""
        yield keys, counts, tuple(vec)
        for j in range(first, m_outer):
            a = p + j
            if vec[j] < lattice.heights[a]:
                off = parent_off[a, vec[j]]
                child = roll_once(keys, counts, shifts[a], masks[a], parent_flat[off:])
                vec[j] += 1
                yield from starts(*child, vec, j)  # type: ignore[call-arg]  # mypy miscounts f(*args, x)
                vec[j] -= 1

    pieces: list[tuple] = []
    if progress is not None:
        progress(0.0)
    # The kernels release the GIL, so chunks run on all cores; at most `in_flight` chunks are
    # submitted at once, which bounds memory (see chunks_in_flight).
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: set = set()
        for start in starts(root_keys, root_counts, [0] * m_outer, 0):
            if should_stop is not None and should_stop():
                for f in pending:
                    f.cancel()
                raise Cancelled("profile computation cancelled")
            pending.add(pool.submit(chunk, *start))
            if len(pending) >= in_flight:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                pieces.extend(f.result() for f in done)
                if progress is not None:
                    progress(len(pieces) / outer_size)
        for f in pending:
            pieces.append(f.result())
            if progress is not None:
                progress(len(pieces) / outer_size)
    return pieces


def assemble_profile(lattice: Lattice, n_rows: int, pieces, strategy: str) -> LatticeProfile:
    """The profile from pieces (node numbers, segment offsets, sizes, counts, ...: any further
    arrays are left to the caller), each node's pairs in CSR order."""
    lens = np.zeros(lattice.size, dtype=np.int64)
    for ids, seg, *_ in pieces:
        lens[ids] = np.diff(seg)
    offsets = np.concatenate(([0], np.cumsum(lens)))
    sizes = np.empty(offsets[-1], dtype=np.int64)
    counts = np.empty(offsets[-1], dtype=np.int64)
    for ids, seg, s, c, *_ in pieces:
        piece_lens = np.diff(seg)
        dest = np.repeat(offsets[ids] - seg[:-1], piece_lens) + np.arange(seg[-1])
        sizes[dest] = s
        counts[dest] = c
    for arr in (offsets, sizes, counts):
        arr.setflags(write=False)
    return LatticeProfile(lattice, n_rows, offsets, sizes, counts, strategy)


def _profile_direct(freq, hierarchies, lattice, progress, should_stop) -> LatticeProfile:
    pieces = []
    for i, node in enumerate(lattice):
        if should_stop is not None and i % 64 == 0 and should_stop():
            raise Cancelled("profile computation cancelled")
        sizes, _ = class_sizes(freq, hierarchies, node)
        s, c = np.unique(sizes, return_counts=True)
        pieces.append((np.array([i]), np.array([0, len(s)]), s.astype(np.int64), c.astype(np.int64)))
        if progress is not None and (i % 64 == 0 or i == lattice.size - 1):
            progress((i + 1) / lattice.size)
    return assemble_profile(lattice, freq.n_rows, pieces, "direct")


def build_quality(freq, hierarchies: tuple[Hierarchy, ...], lattice, spec, strategy: str, **walk) -> LatticeProfile:
    """The profile with its quality figures (see ``profile_frequency_set``):
    compiled with ``numba``, else node by node from the frequency set (``direct``; also the oracle)."""
    if strategy == "numba":
        from microrelease.core.lattice.rollup_kernels import roll_once  # numba
        from microrelease.core.lattice.walk_kernel import WalkPlan  # numba

        inner = WalkPlan(rows=0, squares=1, quality=kernel_tables(hierarchies, freq.n_rows), shifts=spec.shifts,
                         masks=spec.masks).inner()
        counts = freq.counts.astype(float)
        pieces = roll_up(lattice, spec, spec.pack(freq.codes), np.column_stack((counts, counts ** 2)), inner,
                         roll_once, with_start=True, **walk)
    else:
        tables = node_tables(hierarchies)
        pieces = []
        for i, node in enumerate(lattice):
            s, c, pairs, failing = node_quality_arrays(freq, hierarchies, node, tables=tables)
            pieces.append((np.array([i]), np.array([0, len(s)]), s, c, pairs, failing[None, :]))
    profile = assemble_profile(lattice, freq.n_rows, pieces, f"{strategy} with quality")
    return attach_quality(profile, freq, hierarchies, pieces)
