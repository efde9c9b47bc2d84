"""What the pruned searches of one evaluator learnt about each node, kept for the next question.

A node's class sizes decide k-anonymity with minimal required suppression at any (k, MaxSup): it
suppresses the rows of its classes smaller than k (Samarati Def. 4.2). So a node a search rolled up
whole is kept as its histogram of class sizes, and a node whose roll-up stopped once more than
``give_up`` rows were in classes smaller than k as that pair: it fails at every k' >= k with MaxSup'
<= ``give_up`` (fewer rows may be suppressed, and a larger k suppresses at least those rows). A new
search (``PrunedSearch``) tags these nodes, and the boxes they
decide, before it evaluates anything: a k change evaluates only the nodes still open.

Only k-anonymity is kept: under other criteria a node's figures depend on them, so a search with
criteria beside k neither learns nor reuses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from microrelease.core.search.evaluator import NodeFigures

MEMORY_NODES = 200_000  # nodes kept at most (a histogram is a few hundred sizes at most: tens of MB)


@dataclass(frozen=True)
class Histogram:
    """One node's classes by size: ``sizes`` ascending, ``classes`` of each; running sums for any k."""

    sizes: np.ndarray
    classes: np.ndarray
    rows_below: np.ndarray = field(repr=False)  # rows in classes of the sizes before each (and all, last)
    count_below: np.ndarray = field(repr=False)
    sq_below: np.ndarray = field(repr=False)

    @classmethod
    def of(cls, counts: np.ndarray) -> Histogram:
        sizes, classes = np.unique(np.asarray(counts, dtype=np.int64), return_counts=True)
        classes = classes.astype(np.int64)

        def running(x):
            return np.concatenate([[0], np.cumsum(x)]).astype(np.int64)

        return cls(sizes, classes, running(sizes * classes), running(classes), running(sizes * sizes * classes))

    def suppressed(self, k: int) -> int:
        return int(self.rows_below[np.searchsorted(self.sizes, k)])

    def figures(self, k: int) -> NodeFigures:
        """The node's ``NodeFigures`` for k, as the evaluator gives them (without quality figures)."""
        j = int(np.searchsorted(self.sizes, k))
        classes = int(self.count_below[-1])
        all_sq = int(self.sq_below[-1])
        smallest = int(self.sizes[j]) if j < len(self.sizes) else 0
        return NodeFigures(int(self.rows_below[j]), classes - int(self.count_below[j]), smallest,
                           all_sq - int(self.sq_below[j]), all_sq, classes)


class SearchMemory:
    """Per node number of one lattice, what decides it for any (k, MaxSup) (see the module docstring).
    One memory serves the searches of one evaluator, one thread at a time, as the evaluator does.

    Parameters
    ----------
    heights : tuple of int
        The lattice's heights.
    """

    def __init__(self, heights) -> None:
        self.heights = tuple(int(h) for h in heights)
        self.histograms: dict[int, Histogram] = {}
        self.failed: dict[int, list[tuple[int, int]]] = {}  # node -> (k, give_up) pairs it failed at
        self.frequency = None  # the rows it learnt from: bound by the first search

    def validate(self, heights, frequency=None) -> None:
        """Refuse another lattice's memory, or one that learnt from other rows (the same heights, other
        counts: its histograms would answer for the wrong table)."""
        if tuple(int(h) for h in heights) != self.heights:
            raise ValueError("this search memory is another lattice's")
        if frequency is not None:
            if self.frequency is None:
                self.frequency = frequency
            elif self.frequency is not frequency:
                raise ValueError("this search memory learnt from another table's rows: make one per table")

    def learn(self, index: int, counts: np.ndarray) -> None:
        """Node ``index``'s classes, all of them (their row counts)."""
        if index not in self.histograms and len(self.histograms) < MEMORY_NODES:
            self.histograms[index] = Histogram.of(counts)
            self.failed.pop(index, None)

    def learn_failed(self, index: int, k: int, give_up: int) -> None:
        """Node ``index`` has more than ``give_up`` rows in classes smaller than k."""
        if index not in self.histograms and len(self.failed) < MEMORY_NODES:
            self.failed.setdefault(index, []).append((int(k), int(give_up)))

    def decided(self, k: int, max_sup: int) -> tuple[list[int], list[int]]:
        """(satisfying, failing) node numbers known at (k, MaxSup)."""
        sat: list[int] = []
        unsat: list[int] = []
        for index, h in self.histograms.items():
            (sat if h.suppressed(k) <= max_sup else unsat).append(index)
        for index, pairs in self.failed.items():
            if any(k >= k0 and max_sup <= g for k0, g in pairs):
                unsat.append(index)
        return sat, unsat
