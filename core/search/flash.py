"""The pruned exact search: Flash's binary search along paths with predictive tagging, and
branch-and-bound for ARX's quality models (Kohlmayer, Prasser, Eckert, Kemper & Kuhn, "Flash:
efficient, stable and optimal k-anonymity", PASSAT 2012; El Emam et al.'s OLA, JAMIA 2009).

Nodes are taken by height, then node number (lexicographic order). An untagged node starts a *path*:
greedily up through untagged nodes, each step to the successor with the smallest lower bound; a binary
search along the path evaluates its middle node, tags the box above it (satisfies) or below it (fails)
and halves the path, so the first node is classified after about log2(path length) evaluations
(Flash §4.2). k-anonymity with minimal required suppression is monotone (Samarati Lemma 5.1), so the
tags are exact and every node ends tagged: the k-minimal set (satisfying nodes whose direct
predecessors all fail) and Find_vector's probes are read off the tags.

For a quality model with a generalization-only lower bound (``bounds``),
only the nodes whose bound is at most the best score found so far are visited (branch and bound, as
ARX prunes by ``getLowerBound``), and every satisfying one is evaluated for its score: the best of them
is the exact optimum over every satisfying node. Without a bound, every satisfying node is evaluated.

Under criteria beside k (``Criteria``), a node's figures
are those of what it releases under all of them (``criteria_figures``).
A node failing k-anonymity alone tags the box below it failing, as before (the others only add
suppression); the rest spreads tags only when every criterion declares itself monotone at this MaxSup
(``monotone``); otherwise each node is tagged alone, every node
left open is evaluated, and a k-minimal node is one with no satisfying node anywhere below. The quality
models' lower bounds hold for any set of suppressed rows, so branch and bound stays exact.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from microrelease.core.criteria.criteria_set import Criteria
from microrelease.core.exceptions import Cancelled
from microrelease.core.search.bounds import BOUNDED, QualityConstants
from microrelease.core.search.criteria_figures import CriteriaFigures
from microrelease.core.search.evaluator import NodeEvaluator, NodeFigures
from microrelease.core.search.kl import KLDivergence
from microrelease.core.search.memory import Histogram, SearchMemory
from microrelease.core.search.tags import EVALUATED, SAT, UNSAT, next_open, path_up, strides_of, tag_box

if TYPE_CHECKING:
    from microrelease.core.search.kl import KLDivergence

MARGIN = 1e-9  # scores are compared rounded to 9 decimals: a bound within this of the best may tie


class _TimeUp(Exception):
    """The time limit passed (caught by ``PrunedSearch.run``)."""


class PrunedSearch:
    """The state of one pruned search for (k, MaxSup) over ``evaluator``'s lattice (see the module
    docstring). ``quality``: the quality model whose optimum is sought (None: classify only).

    Parameters
    ----------
    evaluator : NodeEvaluator
        Evaluates the nodes.
    k : int
        The k of k-anonymity.
    max_sup : int
        MaxSup, in rows.
    quality : str, optional
        The quality model whose optimum is sought.
    constants : QualityConstants, optional
        The quality model's constants.
    progress : callable, optional
        Called with the fraction done.
    should_stop : callable, optional
        Polled; when it returns true the search raises ``Cancelled``.
    time_limit : float, optional
        Seconds after which the search stops with what it has.
    criteria : Criteria, optional
        Further criteria.
    memory : SearchMemory, optional
        What earlier searches of this evaluator decided.
    """

    def __init__(self, evaluator: NodeEvaluator, k: int, max_sup: int, *, quality: str | None = None,
                 constants: QualityConstants | None = None, progress: Callable[[float], None] | None = None,
                 should_stop: Callable[[], bool] | None = None, time_limit: float | None = None,
                 criteria: Criteria | None = None, memory: SearchMemory | None = None) -> None:
        self.evaluator, self.k, self.max_sup, self.quality = evaluator, int(k), int(max_sup), quality
        # criteria beside k: their figures, and whether tags may spread (each criterion declares it)
        self.criteria = criteria
        self.under = CriteriaFigures(evaluator, criteria) if criteria is not None and criteria.others else None
        self.monotone = criteria is None or criteria.monotone(self.max_sup)
        self._kl: KLDivergence | None = None  # KL divergence's scorer, made when first asked for (core/search/kl.py)
        self.heights = evaluator.heights
        self.shape = tuple(int(h) + 1 for h in self.heights)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.strides = strides_of(self.heights)
        self._shape = np.array(self.shape, dtype=np.int64)
        self.status = np.zeros(self.size, dtype=np.uint8)
        self.figures: dict[int, NodeFigures] = {}
        self.scores: dict[int, float] = {}
        self.constants = constants
        self.progress, self.should_stop = progress, should_stop
        self.time_limit = time_limit
        self.deadline: float | None = None
        self.timed_out = False
        self.lower_bound = -np.inf  # no satisfying node scores below this (the best score once done)
        self._projected = False
        self.best = np.inf
        heights = np.zeros(self.shape, dtype=np.int16)
        for i, h in enumerate(self.heights):
            heights += np.arange(h + 1, dtype=np.int16).reshape([-1 if j == i else 1 for j in range(len(self.shape))])
        flat_heights = heights.reshape(-1)
        index_dtype = np.int32 if self.size < 2**31 else np.int64
        self.order = np.argsort(flat_heights, kind="stable").astype(index_dtype)
        self.height_start = np.searchsorted(flat_heights[self.order], np.arange(int(self.heights.sum()) + 2))
        if quality is not None and quality in BOUNDED:
            assert constants is not None, "a quality search needs the QualityConstants of its data"
            self.bounds = constants.lower_bound(quality, self.shape)
        else:  # the path heuristic only: precision's bound, the mean of d_i / h_i
            self.bounds = _plain(self.heights).lower_bound("precision", self.shape)
        # what earlier searches learnt (k-anonymity alone: criteria beside k change a node's figures)
        self.memory = memory if self.under is None else None
        self.seeded: dict[int, Histogram] = {}  # nodes whose figures the memory gives, not yet evaluated
        if self.memory is not None:
            self._seed()

    def _seed(self) -> None:
        """Tag the nodes the memory decides at (k, MaxSup), and the boxes they decide (monotone: k alone)."""
        assert self.memory is not None  # called when there is one
        self.memory.validate(self.heights, self.evaluator.frequency)
        sat, unsat = self.memory.decided(self.k, self.max_sup)
        self.seeded = {i: self.memory.histograms[i] for i in (*sat, *unsat) if i in self.memory.histograms}
        for group, flag, up in ((sat, SAT, True), (unsat, UNSAT, False)):
            for i in group:
                tag_box(self.status, i, self.vector(i), self.heights, self.strides, flag, up)

    # --- nodes -----------------------------------------------------------------------------------
    def vector(self, index: int) -> np.ndarray:
        return (int(index) // self.strides) % self._shape

    def index(self, vector) -> int:
        return int(np.dot(np.asarray(vector, dtype=np.int64), self.strides))

    def evaluate(self, index: int) -> NodeFigures:
        """Roll ``index`` up, tag it and the box it decides, and score it if it satisfies."""
        index = int(index)
        if index in self.figures:
            return self.figures[index]
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise _TimeUp
        vec = self.vector(index)
        if index in self.seeded:  # decided by an earlier search's figures (no quality figures: scored anew)
            f = self.seeded.pop(index).figures(self.k)
            k_part = sat = f.suppressed <= self.max_sup
        elif self.under is None:
            f = self._k_figures(index, vec, self.max_sup, self.max_sup if self.quality else None)
            k_part = sat = f.suppressed <= self.max_sup
        else:
            from microrelease.core.search.evaluator_kernels import class_figures  # compiled: loaded when used

            keys, counts, complete = self.evaluator.classes(vec, self.k, self.max_sup)
            k_part = complete and int(counts[counts < self.k].sum()) <= self.max_sup
            f = (self.under.figures(vec, keys, counts, self.k, quality=self.quality is not None) if k_part else
                 NodeFigures(*(int(x) for x in class_figures(counts, self.k)), len(counts),  # type: ignore[call-arg, misc, arg-type]  # mypy miscounts f(*args, x)
                             complete=complete))
            sat = f.suppressed <= self.max_sup and f.satisfies_release_criteria
        self.figures[index] = f
        if not k_part or self.monotone:
            # k-anonymity failing with minimal required suppression fails every node below (Lemma 5.1),
            # whatever the other criteria say; the rest spreads only when every criterion is monotone
            tag_box(self.status, index, vec, self.heights, self.strides, SAT if sat else UNSAT, sat)
        else:
            self.status[index] |= SAT if sat else UNSAT
        self.status[index] |= EVALUATED
        if sat and self.quality is not None:
            self.score(index)
        return f

    def _k_figures(self, index: int, vec: np.ndarray, give_up: int, quality_within: int | None) -> NodeFigures:
        """k-anonymity's figures of one node, what they tell kept in the memory."""
        classes = self.evaluator.classes(vec, self.k, give_up)
        if self.memory is not None:
            if classes[2]:
                self.memory.learn(index, classes[1])
            else:
                self.memory.learn_failed(index, self.k, give_up)
        return self.evaluator.figures(vec, self.k, quality_within=quality_within, classes=classes)

    def known(self, index: int) -> NodeFigures | None:
        """Node ``index``'s figures from all its classes if this search or the memory has them."""
        f = self.figures.get(index)
        if f is not None and f.complete:
            return f
        h = self.seeded.get(index)
        return None if h is None else h.figures(self.k)

    def known_indices(self) -> np.ndarray:
        """Node numbers whose figures ``known`` gives, ascending."""
        return np.array(sorted({*(i for i, f in self.figures.items() if f.complete), *self.seeded}), dtype=np.int64)

    def score(self, index: int) -> float:
        """The quality model's score of a satisfying node (kept in ``scores``; ``best`` follows)."""
        if index not in self.scores:
            f = self.figures[index] if index in self.figures else self.evaluate(index)
            assert self.quality is not None  # scores are asked of a quality search
            self.scores[index] = self.score_of(self.quality, index, f)
            self.best = min(self.best, self.scores[index])
        return self.scores[index]

    def score_of(self, policy: str, index: int, f: NodeFigures | None = None) -> float:
        """Quality model ``policy``'s score of one node (its figures ``f`` if known)."""
        vec = self.vector(int(index))
        if policy == "kl-divergence":
            if self._kl is None:
                self._kl = KLDivergence(self.evaluator)
            keys, counts, _ = self.evaluator.classes(vec, self.k)
            suppressed = self.under.suppressed(vec, keys, counts, self.k) if self.under else counts < self.k
            return self._kl.score(vec, keys, counts, suppressed)
        if f is None or (f.mass is None and policy in ("loss", "nu-entropy")) or not f.complete:
            f = self.full_figures(index, quality=True)
        assert self.constants is not None  # a quality search has them
        return self.constants.score(policy, vec, f)

    def full_figures(self, index: int, *, quality: bool = False) -> NodeFigures:
        """One node's figures from all its classes (a search's own may stop once the node fails), with
        the quality figures when ``quality``."""
        vec = self.vector(int(index))
        if self.under is None:
            return self._k_figures(int(index), vec, -1, self.max_sup if quality else None)
        keys, counts, _ = self.evaluator.classes(vec, self.k)
        return self.under.figures(vec, keys, counts, self.k, quality=quality)

    def satisfies(self, index: int) -> bool:
        if not self.status[index] & (SAT | UNSAT):
            self.evaluate(index)
        return bool(self.status[index] & SAT)

    # --- the search ------------------------------------------------------------------------------
    def _search_path(self, path: np.ndarray, top_first: bool) -> None:
        """Binary search for the lowest satisfying node of ``path``. ``top_first``: evaluate its last
        node first, for a path cut at the bound: when that fails, the whole path does with it."""
        low, high = 0, len(path) - 1
        if top_first and len(path) > 1:
            if not self.satisfies(int(path[-1])):
                return
            high -= 1
        while low <= high:
            mid = (low + high) // 2
            if self.satisfies(int(path[mid])):
                high = mid - 1
            else:
                low = mid + 1

    def _bound(self) -> float:
        if self.quality is None or self.quality not in BOUNDED:
            return np.inf
        return self.best + MARGIN

    def project(self) -> None:
        """Evaluate the projections on pairs of QIs: the nodes at the top in every QI but two. They are
        high in the lattice, so cheap (few classes), and one that fails tags every node at or below its
        two levels: most of the low nodes a bound leaves open fail so, without being rolled up."""
        top = self.heights
        m = len(top)
        for i in range(m):
            for j in range(i + 1, m):
                for a in range(int(top[i]), -1, -1):
                    for b in range(int(top[j]), -1, -1):
                        vec = top.copy()
                        vec[i], vec[j] = a, b
                        index = self.index(vec)
                        if not self.status[index] & (SAT | UNSAT):
                            self.evaluate(index)

    def run(self) -> PrunedSearch:
        """Visit every open node (see the module docstring) until none is left, the time limit of a
        quality search passes (``timed_out``; ``lower_bound`` then says how far the optimum can be below
        the best found) or ``should_stop`` says so (``Cancelled``)."""
        want = 1 if self.quality is not None else 0
        timed = want and self.time_limit is not None
        if timed and self.time_limit is not None:
            self._warm()
            self.deadline = time.monotonic() + self.time_limit
        try:
            if want and not self._projected:
                self.project()
                self._projected = True
            self._visit(want)
        except _TimeUp:
            self.timed_out = True
            self.lower_bound = self._open_bound(0, want)
        finally:
            self.deadline = None
        if want and not self.timed_out:
            self.lower_bound = self.best
        if self.progress is not None:
            self.progress(1.0)
        return self

    def _warm(self) -> None:
        """Load the compiled kernels (numba reads them from its cache on first call) before the clock
        of a time limit starts: the top node, one path and one scan."""
        top = self.size - 1
        self.evaluate(top)
        path_up(self.status, top, self.heights.copy(), self.heights, self.strides, self.bounds, np.inf)
        next_open(self.order, len(self.order), self.status, self.bounds, np.inf, 1)

    def _visit(self, want: int) -> None:
        cursor, done = 0, 0
        while True:
            bound = self._bound()
            pos = next_open(self.order, cursor, self.status, self.bounds, bound, want)
            if pos < 0:
                break
            index = int(self.order[pos])
            if not self.status[index] & (SAT | UNSAT):
                if self.monotone:
                    path = path_up(self.status, index, self.vector(index), self.heights, self.strides, self.bounds,
                                   bound)
                    self._search_path(path, bound < np.inf)
                else:  # a binary search would skip nodes that no tag then decides: each node on its own
                    self.evaluate(index)
            if want and self.status[index] & SAT and self.bounds[index] <= self._bound():
                self.evaluate(index)
            cursor = pos + 1
            done += 1
            if done % 64 == 0:
                self._poll(cursor)

    def _open_bound(self, cursor: int, want: int) -> float:
        """After a time limit: no satisfying node scores below this. A node left open (untagged, or
        satisfying and not scored), or any node above one, scores at least the open node's bound."""
        rest = self.order[cursor:]
        status, bounds = self.status[rest], self.bounds[rest]
        untagged = (status & (SAT | UNSAT)) == 0
        unscored = (status & SAT > 0) & (status & EVALUATED == 0) if want else np.zeros(len(rest), dtype=bool)
        open_ = (untagged | unscored) & (bounds <= self._bound())
        return float(min(self.best, bounds[open_].min(initial=np.inf)))

    def _poll(self, cursor: int) -> None:
        if self.should_stop is not None and self.should_stop():
            raise Cancelled("search cancelled")
        if self.progress is not None:
            self.progress(min(0.99, cursor / len(self.order)))

    def classify_all(self) -> None:
        """Tag every node (the k-minimal set and Find_vector read the tags), reusing what is known."""
        saved, self.quality = self.quality, None
        try:
            self.run()
        finally:
            self.quality = saved

    # --- what the tags tell ----------------------------------------------------------------------
    def minimal(self) -> np.ndarray:
        """Node numbers of the k-minimal set (every node tagged), ascending: satisfying evaluated nodes
        whose direct predecessors all fail (a minimal node has no satisfying node below to tag it); when
        a criterion is not monotone here, whose every node below fails."""
        # a minimal node's own figures tagged it (any other tag comes from a satisfying node below)
        candidates = np.array(sorted([*(i for i, f in self.figures.items() if f.suppressed <= self.max_sup and f.satisfies_release_criteria),
                                      *(i for i, h in self.seeded.items() if h.suppressed(self.k) <= self.max_sup)]),
                              dtype=np.int64)
        if not self.monotone:
            return candidates[~self._satisfying_below()[candidates]]
        keep = np.ones(len(candidates), dtype=bool)
        for a, stride in enumerate(self.strides):
            level = (candidates // stride) % self.shape[a]
            has = level > 0
            pred = candidates[has] - stride
            keep[np.flatnonzero(has)[(self.status[pred] & SAT) > 0]] = False
        return candidates[keep]

    def _satisfying_below(self) -> np.ndarray:
        """Per node, whether some node strictly below it satisfies (every node tagged), height by height."""
        sat = (self.status & SAT) > 0
        below = np.zeros(self.size, dtype=bool)
        for h in range(1, len(self.height_start) - 1):
            nodes = self.order[self.height_start[h]:self.height_start[h + 1]].astype(np.int64)
            for a, stride in enumerate(self.strides):
                has = (nodes // stride) % self.shape[a] > 0
                pred = nodes[has] - stride
                below[nodes[has]] |= sat[pred] | below[pred]
        return below

    def nodes_at_height(self, height: int) -> np.ndarray:
        """Node numbers of one height, ascending (lexicographic order of the vectors)."""
        if not 0 <= height < len(self.height_start) - 1:
            return np.zeros(0, dtype=np.int64)
        return self.order[self.height_start[height]:self.height_start[height + 1]].astype(np.int64)


def _plain(heights: np.ndarray) -> QualityConstants:
    """Constants for precision's bound alone (it reads only the heights)."""
    m = len(heights)
    return QualityConstants(1, heights, np.ones(m, dtype=np.int64), np.zeros((m, int(heights.max()) + 1)),
                            np.zeros((m, int(heights.max()) + 1)))
