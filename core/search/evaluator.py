"""A node evaluator whose cost follows the nodes a search asks for, not the whole lattice.

Samarati's minimal required suppression at a node (Def. 4.2, Theorem 4.1) is read off the node's
equivalence classes. Instead of every node's histogram (the whole-lattice profile), the evaluator
computes a node's classes on demand, rolled up from the evaluated node below it that has the fewest
classes (ARX's roll-up from a cached predecessor, Kohlmayer et al. 2012, §4.3): a bounded cache of
class snapshots, under a memory budget, least recently used first out; the frequency set (the bottom
node) is always kept.

Each evaluation gives the node's ``NodeFigures``: the suppressed rows for k, the released classes,
the smallest released class, Σ size² of the released classes and of all, and, when the node satisfies
and quality figures are asked for, the suppressed rows' share mass per QI and their entropy sum (what
ARX's Loss and non-uniform entropy read beyond the sizes).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.frequency import FrequencySource
from microrelease.core.lattice.profile import key_spec
from microrelease.core.lattice.quality_profile import share_tables, value_offsets

CACHE_BUDGET = 256 << 20  # bytes of class snapshots kept (keys and counts, 16 bytes a class)
STAGE, STAGE_CLASSES = 6, 4096  # a roll-up this many levels up from this many classes goes halfway first
MAX_ENTRIES = 1 << 14  # snapshots kept at most (the nearest one is looked for among all)


@dataclass(frozen=True)
class NodeFigures:
    """One node's figures for one k (see the module docstring); ``mass``/``entropy`` are None unless
    quality figures were computed (a satisfying node, ``quality=True``).

    Parameters
    ----------
    suppressed : int
        Rows suppressed.
    distinct : int
        Released classes.
    smallest : int
        The smallest released class.
    released_sq : int
        The sum of the squared released class sizes.
    all_sq : int
        The sum of the squared sizes of all classes.
    classes : int
        All classes.
    mass : numpy.ndarray, optional
        Quality figures, if computed.
    entropy : float, optional
        Quality figures, if computed.
    complete : bool, default True
        Whether every figure was computed.
    satisfies_release_criteria : bool, default True
        Whether the node satisfies.
    """

    suppressed: int
    distinct: int
    smallest: int
    released_sq: int
    all_sq: int
    classes: int
    mass: np.ndarray | None = None
    entropy: float | None = None
    complete: bool = True  # False: the roll-up stopped once the node failed (NodeEvaluator.classes)
    satisfies_release_criteria: bool = True  # the scope-RELEASE criteria hold on what the node releases (criteria_figures)


def _up_maps(hierarchies) -> list[dict]:
    """Per QI, the composed maps from each level a to each level b > a: ``maps[i][(a, b)]``."""
    out = []
    for h in hierarchies:
        maps = {}
        for a in range(h.height + 1):
            composed = np.arange(h.level_size(a), dtype=np.int64)
            for b in range(a + 1, h.height + 1):
                composed = h.parents[b - 1][composed].astype(np.int64)
                maps[(a, b)] = composed
        out.append(maps)
    return out


class NodeEvaluator:
    """Evaluates nodes of ``source``'s lattice for one k (see the module docstring).

    ``evaluations`` counts the nodes rolled up; ``rolled`` the classes read to do so.

    Parameters
    ----------
    source : FrequencySource
        A ``Dataset`` or a ``TableSummary``.
    cache_budget : int, default 268435456
        Bytes of rolled-up frequency sets kept for reuse.
    """

    def __init__(self, source: FrequencySource, *, cache_budget: int = CACHE_BUDGET) -> None:
        self.hierarchies = tuple(source.hierarchies)
        self.heights = np.array([h.height for h in self.hierarchies], dtype=np.int64)
        spec = key_spec(self.hierarchies)
        if spec is None:
            raise InvalidParameterError("the pruned search needs the QIs' codes to pack into 62 bits; "
                                        "use strategy='profile' with the 'direct' kernel", parameter="strategy")
        self.shifts, self.masks = spec.shifts, spec.masks
        self.n_rows = int(source.frequency.n_rows)
        self.frequency = source.frequency  # the rows it evaluates: what a SearchMemory is bound to
        # per QI and pair of levels, what a code's move adds to a key (its field's new value minus its old)
        # what a code's move adds to a key (its field's new value minus its old, shifted into place), for
        # each QI and pair of levels, in one flat array: ``_deltas[_delta_at[i][(a, b)]:]``
        flat: list[np.ndarray] = []
        self._delta_at: list[dict[tuple[int, int], int]] = []
        at = 0
        for i, maps in enumerate(_up_maps(self.hierarchies)):
            self._delta_at.append({})
            for ab, up in maps.items():
                flat.append((up - np.arange(len(up))) << self.shifts[i])
                self._delta_at[i][ab] = at
                at += len(up)
        self._deltas = np.concatenate(flat) if flat else np.zeros(1, np.int64)
        self.share_flat, self.share_off = share_tables(self.hierarchies)
        self.value_off = value_offsets(self.hierarchies)
        self._value_count = np.zeros(int(self.value_off[-1]))
        bottom = tuple([0] * len(self.hierarchies))
        self._bottom = (bottom, spec.pack(source.frequency.codes), source.frequency.counts.astype(np.int64))
        self._blocked = self._block_orders(source.frequency.codes)
        bits = max(4, (2 * max(len(self._bottom[1]), 1) - 1).bit_length())
        self._table_keys = np.full(1 << bits, -1, dtype=np.int64)  # the roll-up's hash table, reused: one
        self._table_idx = np.empty(1 << bits, dtype=np.int64)  # evaluator serves one thread at a time
        self.cache_budget = int(cache_budget)
        # staging raises first the QIs whose ground domains are largest (they split the most classes)
        depth = int(self.heights.max()) + 1
        self._level_sizes = np.array([[h.level_size(min(d, h.height)) for d in range(depth)]
                                      for h in self.hierarchies], dtype=np.int64)
        self._stage_order = [int(i) for i in np.argsort([-len(h.ground) for h in self.hierarchies], kind="stable")]
        self._cache: OrderedDict = OrderedDict()  # node -> slot, least recently used first
        self._classes: dict = {}  # slot -> (keys, counts)
        self._levels = np.zeros((64, len(self.hierarchies)), dtype=np.int64)
        self._sizes = np.full(64, -1, dtype=np.int64)  # classes per slot; -1: a free slot
        self._free: list[int] = list(range(63, -1, -1))
        self._bytes = 0
        self.evaluations = 0
        self.rolled = 0

    def _block_orders(self, ground: np.ndarray) -> list:
        """Per QI, the bottom's classes sorted by that QI's value from the top level down (so that the
        values under one value of any level are contiguous: ``roll_to``'s blocks)."""
        _, keys, counts = self._bottom
        out = []
        for i, h in enumerate(self.hierarchies):
            nested = np.empty(len(h.ground), dtype=np.int64)
            nested[np.lexsort(h.codes)] = np.arange(len(h.ground))  # lexsort's last key, the top, first
            order = np.argsort(nested[ground[:, i]], kind="stable")
            out.append((keys[order], counts[order]))
        return out

    @property
    def bottom(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, rows) of the frequency set's tuples: ground codes packed as a class's are."""
        return self._bottom[1], self._bottom[2]

    # --- classes ---------------------------------------------------------------------------------
    def classes(self, node, k: int = 1, give_up: int = -1) -> tuple[np.ndarray, np.ndarray, bool]:
        """(keys, row counts, complete) of ``node``'s equivalence classes. ``give_up`` >= 0: the roll-up
        may stop once more than that many rows are in classes smaller than k (the node fails); then
        ``complete`` is False, the classes are some of the node's only, and they are not kept."""
        from microrelease.core.search.evaluator_kernels import nearest_below  # numba

        vector = np.asarray(node, dtype=np.int64)
        node = tuple(vector.tolist())
        slot = self._cache.get(node)
        if slot is not None:
            self._cache.move_to_end(node)
            return (*self._classes[slot][:2], True)
        slot = nearest_below(self._levels, self._sizes, vector, len(self._bottom[1]))
        if slot < 0:  # from the bottom, sorted by the QI with the most values at this node: the most blocks
            start = source = self._bottom[0]
            split = int(np.argmax(self._level_sizes[np.arange(len(node)), vector]))  # the first on ties
            keys, counts = self._blocked[split]
        else:
            start = source = tuple(self._levels[slot].tolist())
            keys, counts, split = self._classes[slot]
            self._cache.move_to_end(start)
        gap = sum(node) - sum(start)
        if gap >= STAGE and len(keys) >= STAGE_CLASSES:
            # far from any snapshot: roll to a node halfway first and keep it, so that the next nodes
            # near this one start closer (the sparse counterpart of the profile's depth-first walk)
            halfway, gained = list(start), 0
            for i in self._stage_order:
                step = min(node[i] - start[i], (gap + 1) // 2 - gained)
                halfway[i] += step
                gained += step
            start = tuple(halfway)
            cached = self._cache.get(start)
            keys, counts, _ = ((*self._classes[cached][:2], True) if cached is not None else
                               self._roll(source, start, keys, counts, split, 1, -1))
        return self._roll(start, node, keys, counts, split, k, give_up)

    def _roll(self, start, node, keys, counts, split, k, give_up) -> tuple[np.ndarray, np.ndarray, bool]:
        """``node``'s classes rolled up from ``start``'s (sorted by ``split``, as the result is); kept when
        complete (see ``classes`` for ``give_up``)."""
        from microrelease.core.search.evaluator_kernels import roll_to  # numba

        changed = np.flatnonzero(np.asarray(node) > np.asarray(start))
        flat, offsets = self._moves(start, node, changed)
        out_keys, out_counts, complete, read = roll_to(
            keys, counts, changed, self.shifts, self.masks, flat, offsets, split,
            self._table_keys, self._table_idx, int(k), int(give_up))
        self.evaluations += 1
        self.rolled += int(read)
        if complete:
            self._remember(tuple(node), (out_keys, out_counts, split))
        return out_keys, out_counts, complete

    def _moves(self, start, node, changed) -> tuple[np.ndarray, np.ndarray]:
        """Where ``roll_to`` reads what each changed QI's move from ``start`` to ``node`` adds to a key."""
        return self._deltas, np.array([self._delta_at[i][(start[i], node[i])] for i in changed.tolist()],
                                      dtype=np.int64)

    def _remember(self, node, classes) -> None:
        size = classes[0].nbytes + classes[1].nbytes
        if size > self.cache_budget or len(classes[0]) >= len(self._bottom[1]):
            return  # rolling from the bottom costs no more
        while self._cache and (self._bytes + size > self.cache_budget or not self._free):
            if not self._free and self._bytes + size <= self.cache_budget and len(self._sizes) < MAX_ENTRIES:
                self._grow()
                break
            _, old = self._cache.popitem(last=False)
            k_old, c_old, _ = self._classes.pop(old)
            self._bytes -= k_old.nbytes + c_old.nbytes
            self._sizes[old] = -1
            self._free.append(old)
        if not self._free:
            self._grow()
        slot = self._free.pop()
        self._cache[node] = slot
        self._classes[slot] = classes
        self._levels[slot] = node
        self._sizes[slot] = len(classes[0])  # (keys, counts, the QI they are sorted by)
        self._bytes += size

    def _grow(self) -> None:
        n = len(self._sizes)
        self._levels = np.concatenate([self._levels, np.zeros_like(self._levels)])
        self._sizes = np.concatenate([self._sizes, np.full(n, -1, dtype=np.int64)])
        self._free.extend(range(2 * n - 1, n - 1, -1))

    # --- figures ---------------------------------------------------------------------------------
    def figures(self, node, k: int, *, give_up: int = -1, quality_within: int | None = None,
                classes: tuple | None = None) -> NodeFigures:
        """``node``'s figures for k; with ``quality_within`` (a MaxSup), also the quality figures when
        at most that many rows are suppressed. ``give_up``: as for ``classes`` (figures of a roll-up
        that gave up are those of part of the classes: ``complete`` is False, and more than ``give_up``
        rows suppressed is all they tell). ``classes``: what ``classes`` gave for them, if known."""
        from microrelease.core.search.evaluator_kernels import class_figures, suppressed_quality  # numba

        keys, counts, complete = classes if classes is not None else self.classes(node, k, give_up)
        suppressed, distinct, smallest, released_sq, all_sq = class_figures(counts, k)
        mass = entropy = None
        if quality_within is not None and complete and suppressed <= quality_within:
            levels = np.asarray(node, dtype=np.int64)
            mass, entropy = suppressed_quality(keys, counts, k, levels, self.shifts, self.masks, self.share_flat,
                                               self.share_off, self.value_off, self._value_count)
        return NodeFigures(int(suppressed), int(distinct), int(smallest), int(released_sq), int(all_sq),
                           len(counts), mass, None if entropy is None else float(entropy), complete)
