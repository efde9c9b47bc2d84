"""The pruned search's answer to one (k, MaxSup) question: what ``Answer``
gives from the whole-lattice profile (the k-minimal set, Find_vector and its trace, the preferred node
of any policy, each node's figures), read from the tags and the evaluated nodes instead.

The whole lattice is tagged only when the k-minimal set, Find_vector or a k-minimal policy is asked for;
a quality policy's optimum alone visits the nodes its lower bound does not exclude.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from microrelease.core.exceptions import InvalidParameterError, NoSolutionError
from microrelease.core.lattice.distance_vectors import Lattice, Node
from microrelease.core.lattice.metrics import node_metrics
from microrelease.core.lattice.policies import tie_break, validate_policy, weight_vector
from microrelease.core.lattice.profile import ClassStats
from microrelease.core.lattice.search import FindVectorResult, NodeResult, probe_heights
from microrelease.core.search.bounds import SCORED
from microrelease.core.search.flash import PrunedSearch
from microrelease.core.search.tags import SAT


@dataclass(frozen=True)
class _Candidates:
    """The few members of ``Lattice`` a policy's score reads, for a list of candidate nodes."""

    heights: tuple[int, ...]
    names: tuple[str, ...]
    grid: np.ndarray

    @property
    def node_heights(self) -> np.ndarray:
        return self.grid.sum(axis=1)


@dataclass(frozen=True, eq=False)
class PrunedAnswer:
    """Everything about one (k, MaxSup) question that a caller asks, from a ``PrunedSearch``.

    Parameters
    ----------
    lattice : Lattice
        The lattice searched.
    search : PrunedSearch
        The search's state.
    criteria : tuple, optional
        The release-scope criteria asked for.
    """

    lattice: Lattice
    search: PrunedSearch = field(repr=False)
    criteria: tuple = ()

    @property
    def k(self) -> int:
        return self.search.k

    @property
    def max_sup(self) -> int:
        return self.search.max_sup

    @property
    def nodes_evaluated(self) -> int:
        return len(self.search.figures)

    @property
    def timed_out(self) -> bool:
        """Whether the quality search stopped at its time limit (the preferred node is then the best
        found, and ``lower_bound`` the proven bound on the optimum's score)."""
        return self.search.timed_out

    @property
    def lower_bound(self) -> float:
        """No satisfying node scores below this (equal to the optimum's score when not timed out;
        -inf for a policy without a lower bound)."""
        return self.search.lower_bound

    # --- the whole lattice tagged ------------------------------------------------------------------
    @cached_property
    def _classified(self) -> PrunedSearch:
        self.search.classify_all()
        return self.search

    @cached_property
    def k_minimal_indices(self) -> np.ndarray:
        """Node numbers of the k-minimal set, by (height, vector)."""
        idx = self._classified.minimal()
        heights = np.array([self.search.vector(i).sum() for i in idx], dtype=np.int64)
        return idx[np.argsort(heights, kind="stable")]

    def k_minimal_nodes(self) -> list[NodeResult]:
        return [self.node(int(i)) for i in self.k_minimal_indices]

    def find_vector(self) -> FindVectorResult:
        return self._find_vector

    @cached_property
    def _find_vector(self) -> FindVectorResult:
        """Samarati's Find_vector over the tags, probe for probe as
        ``find_vector`` over a profile's answer."""
        search = self._classified

        def probe(height: int) -> tuple[list[Node], Node | None]:
            nodes = search.nodes_at_height(height)
            hits = np.flatnonzero(search.status[nodes] & SAT)
            tested = nodes[: hits[0] + 1] if len(hits) else nodes
            vectors = [tuple(int(d) for d in search.vector(i)) for i in tested]
            return vectors, (vectors[-1] if len(hits) else None)

        return probe_heights(self.lattice.max_height, self.lattice.top, probe)

    # --- one node --------------------------------------------------------------------------------
    def _index(self, node: Node | int) -> int:
        return int(node) if isinstance(node, int | np.integer) else self.lattice.index(node)

    def node(self, node: Node | int) -> NodeResult:
        """One node's figures (evaluated now if the search did not)."""
        i = self._index(node)
        f = self.search.evaluate(i)
        vec = self.search.vector(i)
        if not f.complete:  # the search stopped rolling it up once it failed: its own figures now
            f = self.search.full_figures(i)
        stats = ClassStats(self.k, np.array([f.suppressed]), np.array([f.distinct]), np.array([f.smallest]),
                           np.array([f.released_sq]))
        m = {name: float(v[0]) for name, v in node_metrics(self.lattice, self.search.evaluator.n_rows, stats,
                                                           vec[None, :]).items()}
        satisfies = f.suppressed <= self.max_sup and f.satisfies_release_criteria
        if self.search.monotone:  # minimal: no direct predecessor satisfies
            minimal = satisfies and not any(self.search.satisfies(i - int(stride))
                                            for a, stride in enumerate(self.search.strides) if vec[a] > 0)
        else:  # no node below satisfies: the whole lattice classified
            minimal = satisfies and i in set(self.k_minimal_indices.tolist())
        return NodeResult(vector=tuple(int(d) for d in vec), height=int(vec.sum()),
                          satisfies=satisfies, k_minimal=minimal, suppressed=f.suppressed,
                          accuracy=m["accuracy"], completeness=m["completeness"], distinct=f.distinct,
                          rel_distance=m["rel_distance"], discernibility=int(m["discernibility"]),
                          avg_class_size=m["avg_class_size"], smallest_class=f.smallest, max_risk=m["max_risk"],
                          average_risk=m["average_risk"])

    def score(self, policy: str, node: Node | int) -> float:
        """Quality policy ``policy``'s score of one satisfying node."""
        return float(self._scores(policy, np.array([self._index(node)]))[0])

    def _scores(self, policy: str, candidates: np.ndarray) -> np.ndarray:
        search = self.search
        out = np.empty(len(candidates))
        for j, i in enumerate(candidates):
            i = int(i)
            if search.quality == policy and i in search.scores:
                out[j] = search.scores[i]
                continue
            out[j] = search.score_of(policy, i)
        return out

    # --- the preferred node ----------------------------------------------------------------------
    def preferred(self, policy: str = "min-relative", weights: Mapping[str, float] | None = None, *,
                  among: str | None = None) -> NodeResult:
        """As ``Answer.preferred``: among the k-minimal
        nodes, or for the search's quality policy among every satisfying node (ARX's optimum)."""
        chosen = validate_policy(policy)
        scope = among or chosen.among
        if scope == "k-minimal":
            candidates = self.k_minimal_indices
        else:
            if self.search.quality != policy:
                sought = (f"the optimum of {self.search.quality!r}" if self.search.quality else
                          "the k-minimal set (no quality policy)")
                raise InvalidParameterError(f"this search sought {sought}, not {policy!r} among every satisfying "
                                            f"node; search again with policy={policy!r}", parameter="policy")
            candidates = np.array(sorted(self.search.scores), dtype=np.int64)
        if len(candidates) == 0:
            top = self.search.evaluate(self.search.size - 1)
            criteria = self.search.criteria
            if criteria is None or not criteria.others:
                raise NoSolutionError(
                    f"no generalization satisfies k={self.k} with MaxSup={self.max_sup}: even the fully generalized "
                    f"table needs {top.suppressed} suppressed rows (QIs whose hierarchy has height 0 are never "
                    "generalized)")
            why = (f"the fully generalized table needs {top.suppressed} suppressed rows"
                   if top.suppressed > self.max_sup else
                   "the fully generalized table keeps within it but its release fails "
                   + ", ".join(c.describe() for c in criteria.release_scoped) if not top.satisfies_release_criteria else
                   "each node either needs more suppression or fails a criterion")
            raise NoSolutionError(f"no generalization satisfies {', '.join(criteria.describe())} with "
                                  f"MaxSup={self.max_sup}: {why}")
        grid = np.array([self.search.vector(i) for i in candidates], dtype=np.int64)
        figures = [self.search.evaluate(int(i)) for i in candidates]
        suppressed = np.array([f.suppressed for f in figures], dtype=np.int64)
        if chosen.quality:
            primary = self._scores(policy, candidates)
        else:
            stats = ClassStats(self.k, suppressed, np.array([f.distinct for f in figures], dtype=np.int64),
                               np.array([f.smallest for f in figures], dtype=np.int64),
                               np.array([f.released_sq for f in figures], dtype=np.int64))
            w = weight_vector(self.lattice, weights)
            # _Candidates has the members of Lattice a score reads (a duck type, not a subclass)
            primary = chosen.score(_Candidates(self.lattice.heights, self.lattice.names, grid), stats,  # type: ignore[arg-type]
                                   np.arange(len(candidates)), w)
        return self.node(int(candidates[tie_break(self.lattice, primary, grid, suppressed)]))


def supports(policy: str) -> bool:
    """Whether the pruned search answers ``policy`` (every policy: kept for the callers that ask).

    Parameters
    ----------
    policy : str
        A key of ``POLICIES``.

    Returns
    -------
    bool
        Whether the pruned search answers it.
    """
    chosen = validate_policy(policy)
    return not chosen.quality or policy in SCORED
