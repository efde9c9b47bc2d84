"""The dashboard on a lattice too large for the whole-lattice profile: answers from the pruned search.

Which search answers is the core's rule (``microrelease.core.search.strategy.choose`` for many
questions): on a lattice over its profile threshold the Explorer answers every (k, MaxSup, policy)
question with ``search_pruned``, reusing one warm
``NodeEvaluator`` per loaded table (its cache of class snapshots makes
the later questions fast) and one ``SearchMemory`` (what earlier
questions decided tags a new search's nodes: a k change evaluates only the nodes left open). ``LargeAnswer`` gives the views what they read of a profile's
``Answer``: every node's tag (satisfies or not: the whole lattice
is tagged, k-anonymity being monotone), the k-minimal set, Find_vector, and the figures of the nodes
asked for, read from the search's evaluated nodes or rolled up on demand.

One evaluator serves one thread at a time: the search runs on a worker thread holding ``lock``, and
a figure the page asks for that the search did not compute waits for it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping

import numpy as np

from microrelease.core import Dataset
from microrelease.core.criteria.criteria_set import Criteria
from microrelease.core.exceptions import InvalidParameterError, NoSolutionError
from microrelease.core.lattice.distance_vectors import Lattice
from microrelease.core.lattice.metrics import METRICS, node_metrics
from microrelease.core.lattice.policies import validate_policy
from microrelease.core.lattice.profile import ClassStats
from microrelease.core.lattice.search import FindVectorResult, NodeResult
from microrelease.core.risk.reidentification import table_risk
from microrelease.core.search import NodeEvaluator, PrunedAnswer, SearchMemory, search_pruned
from microrelease.core.search.strategy import choose
from microrelease.core.search.tags import SAT

DRAW_CAP = 500  # nodes drawn at most (as the focused view): the browser stays responsive
MINIMAL_SHARE = 0.6  # of the cap, at most, for k-minimal nodes: the rest shows where the search failed
STATS = ("suppressed", "distinct", "smallest", "released_sq")
ANSWERS_KEPT = 16  # questions answered again at once (a few MB each: the tags and the evaluated nodes' figures)


def large_lattice(dataset: Dataset) -> bool:
    """Whether the dashboard answers ``dataset`` by the pruned search: the core's choice for many
    questions (the profile's one pass pays off only on a lattice up to its threshold)."""
    return choose(dataset, "min-relative", questions=2).search == "pruned"


class Searcher:
    """One loaded table's warm evaluator, the lock that keeps it to one thread, and the last
    ANSWERS_KEPT answers (a question asked again is answered at once). A bundled sample's is shared
    by every session (``microrelease.app.main.sample_searcher``); answers are read-only."""

    def __init__(self, dataset: Dataset):
        self.dataset = dataset
        self.lattice = dataset.lattice  # one for every answer: its grid and edges are computed once (MBs at 12 QIs)
        self.evaluator = NodeEvaluator(dataset)
        self.memory = SearchMemory(self.evaluator.heights)
        self.lock = threading.RLock()
        self._answers: OrderedDict = OrderedDict()

    def known(self, k: int, max_sup: int, policy: str, weights: Mapping[str, float], criteria: Criteria | None = None):
        """The kept (answer, preferred, message) of this question, or None."""
        key = (k, max_sup, policy, tuple(sorted(weights.items())), criteria_key(criteria))
        with self.lock:
            if key in self._answers:
                self._answers.move_to_end(key)
                return self._answers[key]
        return None

    def answer(self, k: int, max_sup: int, policy: str, weights: Mapping[str, float], *, criteria: Criteria | None = None,
               progress=None, should_stop=None, reuse: LargeAnswer | None = None) -> tuple[LargeAnswer, int | None, str]:
        """(answer, preferred node or None, message) of one question; ``criteria``: k and the criteria
        beside it (None: k-anonymity alone); ``reuse``: an answer of the same question whose search
        serves ``policy`` too (a policy among the k-minimal nodes needs no new search: the tags are the same)."""

        with self.lock:
            if reuse is not None:
                large = reuse
            else:
                pruned = search_pruned(self.dataset, criteria if criteria is not None else k, max_sup, policy,
                                       evaluator=self.evaluator, memory=self.memory, progress=progress,
                                       should_stop=should_stop)
                large = LargeAnswer(pruned, self.lock, self.lattice, criteria)
            try:
                preferred = large.lattice.index(large.pruned.preferred(policy, weights or None).vector)
                message = ""
            except (NoSolutionError, InvalidParameterError) as exc:
                preferred, message = None, str(exc)
            large.prepare(preferred)
            self._answers[(k, max_sup, policy, tuple(sorted(weights.items())), criteria_key(criteria))] = (
                large, preferred, message)
            while len(self._answers) > ANSWERS_KEPT:
                self._answers.popitem(last=False)
            return large, preferred, message

    @staticmethod
    def serves(answer: LargeAnswer | None, k: int, max_sup: int, policy: str, criteria: Criteria | None = None) -> bool:
        """Whether ``answer``'s search answers ``policy`` at (k, MaxSup) under ``criteria`` without searching again."""
        if answer is None or (answer.k, answer.max_sup, answer.question) != (k, max_sup, criteria_key(criteria)):
            return False
        return validate_policy(policy).among == "k-minimal" or answer.pruned.search.quality == policy


class _Column:
    """One figure of the nodes asked for (``column[ids]``, or ``column[i]`` for one), computed on demand."""

    def __init__(self, answer: LargeAnswer, name: str):
        self.answer, self.name = answer, name

    def __getitem__(self, ids):
        one = np.ndim(ids) == 0
        values = self.answer.values(np.atleast_1d(np.asarray(ids, dtype=np.int64)), self.name)
        return values[0] if one else values


class _Stats:
    """``stats.suppressed[ids]`` and the like, as a profile's ClassStats is read."""

    def __init__(self, answer: LargeAnswer):
        self.k = answer.k
        for name in STATS:
            setattr(self, name, _Column(answer, name))


class LargeAnswer:
    """What the views read of an ``Answer``, from a pruned search
    whose whole lattice is tagged (see the module docstring)."""

    def __init__(self, pruned: PrunedAnswer, lock, lattice: Lattice | None = None, criteria: Criteria | None = None):
        self.pruned, self.lock = pruned, lock
        self.lattice: Lattice = lattice or pruned.lattice
        # criteria: the scope-RELEASE ones, as a profile's Answer names them; described: every one beside k
        self.k, self.max_sup, self.criteria = pruned.k, pruned.max_sup, pruned.criteria
        self.described = tuple(c.describe() for c in criteria.others) if criteria is not None else ()
        self.question, self.given = criteria_key(criteria), criteria
        minimal = pruned.k_minimal_indices  # tags the whole lattice (the search polls should_stop)
        self.satisfying = (pruned.search.status & SAT) > 0
        self.minimal = np.zeros(self.lattice.size, dtype=bool)
        self.minimal[minimal] = True
        self._rows: dict[int, dict[str, object]] = {}  # node -> figures
        self.metrics = {name: _Column(self, name) for name in METRICS}
        self.stats = _Stats(self)
        self.drawn = np.zeros(0, dtype=np.int64)

    # --- what the search evaluated ---------------------------------------------------------------
    @property
    def nodes_evaluated(self) -> int:
        return self.pruned.nodes_evaluated

    def evaluated(self) -> np.ndarray:
        """Node numbers the search rolled up whole or the memory knows whole (their figures are known), ascending."""
        return self.pruned.search.known_indices()

    def prepare(self, preferred: int | None) -> None:
        """Choose the drawn nodes and compute their figures (on the search's thread, so that the page
        reads them without waiting for the evaluator). Not Find_vector: its trace lists every vector
        tested, hundreds of thousands at 12 QIs (most of a k change's time); it is read off the tags
        when asked for."""
        self.drawn = evaluated_frontier(self, preferred)
        self.values(self.drawn, "suppressed")

    # --- figures ---------------------------------------------------------------------------------
    def values(self, ids: np.ndarray, name: str) -> np.ndarray:
        self._compute([int(i) for i in ids if int(i) not in self._rows])
        return np.array([self._rows[int(i)][name] for i in ids])

    def _compute(self, ids: list[int]) -> None:
        if not ids:
            return
        search = self.pruned.search
        known = {i: search.known(i) for i in ids}
        if any(f is None for f in known.values()):
            with self.lock:  # a roll-up: the evaluator is the search's
                for i, f in known.items():
                    if f is None:  # all its classes; under criteria beside k, what it releases under all
                        known[i] = search.full_figures(i)
        figures = [known[i] for i in ids]
        stats = ClassStats(self.k, *(np.array([getattr(f, name) for f in figures], dtype=np.int64) for name in STATS))
        grid = self.lattice.grid[np.array(ids, dtype=np.int64)]
        metrics = node_metrics(self.lattice, search.evaluator.n_rows, stats, grid)
        for j, i in enumerate(ids):
            row = {name: getattr(stats, name)[j] for name in STATS}
            row.update({name: values[j] for name, values in metrics.items()})
            self._rows[i] = row

    def node(self, node) -> NodeResult:
        i = int(node) if isinstance(node, int | np.integer) else self.lattice.index(node)
        self._compute([] if i in self._rows else [i])
        r = self._rows[i]
        return NodeResult(vector=self.lattice.node(i), height=int(self.lattice.node_heights[i]),
                          satisfies=bool(self.satisfying[i]), k_minimal=bool(self.minimal[i]),
                          suppressed=int(r["suppressed"]), accuracy=float(r["accuracy"]),
                          completeness=float(r["completeness"]), distinct=int(r["distinct"]),
                          rel_distance=float(r["rel_distance"]), discernibility=int(r["discernibility"]),
                          avg_class_size=float(r["avg_class_size"]), smallest_class=int(r["smallest"]),
                          max_risk=float(r["max_risk"]), average_risk=float(r["average_risk"]))

    def class_sizes(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(class size, classes of that size) at node i, rolled up by the evaluator."""
        with self.lock:
            _, counts, _ = self.pruned.search.evaluator.classes(self.lattice.grid[i].astype(np.int64))
        return np.unique(counts, return_counts=True)

    def risk(self, i: int, threshold: float) -> dict[str, float]:
        sizes, counts = self.class_sizes(i)
        released = sizes >= self.k
        risk = table_risk(np.repeat(sizes[released], counts[released]), threshold=threshold)
        # no population-uniques estimate: its limit is off on a large lattice (the details say "no estimate")
        return {"highest": risk.highest, "average": risk.average, "records_at_risk": risk.records_at_risk,
                "population_uniques": None, "uniqueness_model": ""}

    # --- the answer ------------------------------------------------------------------------------
    @property
    def k_minimal_indices(self) -> np.ndarray:
        return self.pruned.k_minimal_indices

    def k_minimal_nodes(self) -> list[NodeResult]:
        return [self.node(int(i)) for i in self.k_minimal_indices]

    def find_vector(self) -> FindVectorResult:
        return self.pruned.find_vector()

    def preferred(self, policy: str = "min-relative", weights: Mapping[str, float] | None = None, *,
                  among: str | None = None) -> NodeResult:
        with self.lock:
            return self.pruned.preferred(policy, weights, among=among)


def criteria_key(criteria: Criteria | None) -> tuple:
    """What tells one question's criteria beside k from another's (kept answers are found by it)."""
    if criteria is None or not criteria.others:
        return ()
    sensitive = criteria.sensitive.attribute if criteria.sensitive is not None else None
    return (sensitive, *((c.name, c.spec()) for c in criteria.others))


def evaluated_frontier(answer: LargeAnswer, preferred: int | None, cap: int = DRAW_CAP) -> np.ndarray:
    """The nodes drawn on a large lattice, at most ``cap``, all of them nodes the search evaluated:
    the preferred node, the k-minimal nodes (lowest first, up to
    MINIMAL_SHARE of the cap), the failing nodes it evaluated just below them, then the other evaluated
    nodes nearest the k-minimal heights."""
    lattice = answer.lattice
    heights = lattice.node_heights
    first = [] if preferred is None else [preferred]
    minimal = answer.k_minimal_indices[: int(cap * MINIMAL_SHARE)]
    evaluated = answer.evaluated()
    is_evaluated = np.zeros(lattice.size, dtype=bool)
    is_evaluated[evaluated] = True
    strides = np.array(lattice.shape[::-1]).cumprod()[::-1]  # node numbers: the last QI varies fastest
    strides = np.append(strides[1:], 1).astype(np.int64)
    grid = lattice.grid[minimal].astype(np.int64)
    below = np.concatenate([minimal[grid[:, a] > 0] - s for a, s in enumerate(strides)]) if len(minimal) else minimal
    below = np.unique(below[is_evaluated[below] & ~answer.satisfying[below]])
    target = float(np.median(heights[minimal])) if len(minimal) else float(lattice.max_height) / 2
    rest = evaluated[np.argsort(np.abs(heights[evaluated] - target), kind="stable")]
    chosen = dict.fromkeys(_ints(first, minimal, below, rest))
    return np.fromiter(list(chosen)[:cap], dtype=np.int64)


def _ints(*groups: Iterable) -> list[int]:
    return [int(i) for group in groups for i in group]
