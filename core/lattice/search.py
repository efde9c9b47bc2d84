"""Searching the lattice: k-minimal generalizations and Samarati's Find_vector (§5).

Samarati Def. 4.3: a generalization T_j (vector v) is *k-minimal* if it satisfies k-anonymity
with at most MaxSup suppressed rows, and no vector strictly below v does. Because the suppression
needed at a node never increases up the lattice (Samarati Lemma 5.1), satisfaction is monotone, so
v is k-minimal iff it satisfies and none of its *direct* predecessors does.

Find_vector (Samarati Fig. 6) is a binary search over the height: if some vector at height h
satisfies, so does some vector at every greater height, so the lowest satisfying height is found
with O(log(max height)) probes of whole height levels.

Two ways of asking:
- ``find_vector`` and ``k_minimal`` take any monotone predicate ``satisfies(node)``
  (e.g. a direct evaluation on the data);
- ``query`` answers from a ``LatticeProfile`` for every node at
  once, which is what the CLI and the dashboard use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from microrelease.core.criteria.criterion import monotone
from microrelease.core.exceptions import NoSolutionError
from microrelease.core.lattice.distance_vectors import Lattice, Node
from microrelease.core.lattice.metrics import node_metrics
from microrelease.core.lattice.policies import prefer, validate_policy
from microrelease.core.lattice.profile import ClassStats, LatticeProfile
from microrelease.core.validation import parse_max_sup, validate_k


@dataclass(frozen=True)
class Probe:
    """One step of Find_vector: the search bounds, the height tried, what was tested."""

    low: int
    high: int
    tried: int
    tested: tuple[Node, ...]
    satisfied: Node | None

    def to_dict(self) -> dict:
        return {
            "low": self.low,
            "high": self.high,
            "try": self.tried,
            "tested": [list(v) for v in self.tested],
            "satisfied": list(self.satisfied) if self.satisfied is not None else None,
        }


@dataclass(frozen=True)
class FindVectorResult:
    """The vector found (None if no vector satisfies, not even the top) and every probe made."""

    vector: Node | None
    trace: tuple[Probe, ...]

    def to_dict(self) -> dict:
        return {"vector": None if self.vector is None else list(self.vector), "trace": [p.to_dict() for p in self.trace]}


def find_vector(
    lattice: Lattice,
    satisfies: Callable[[Node], bool] | None = None,
    *,
    satisfying: np.ndarray | None = None,
) -> FindVectorResult:
    """Samarati's Find_vector: a satisfying vector of minimum height, with a trace of every probe.

    Give either a monotone predicate ``satisfies(node)`` or a boolean array ``satisfying`` over the
    node numbers (what a profile answer has; probes are then vectorized). At each probed height
    the vectors are tested in lexicographic order until one satisfies. If the search ends on the
    top without having tested it, the top is tested; if even it fails, the vector is None.

    Parameters
    ----------
    lattice : Lattice
        The generalization lattice.
    satisfies : callable, optional
        A monotone predicate on a node.
    satisfying : numpy.ndarray, optional
        A boolean per node number (instead of ``satisfies``).

    Returns
    -------
    FindVectorResult
        The vector found (None if even the top fails) and the trace of the binary search.

    Examples
    --------
    >>> find_vector(Lattice((1, 2)), lambda node: sum(node) >= 2).vector
    (0, 2)
    """
    if (satisfies is None) == (satisfying is None):
        raise TypeError("find_vector needs exactly one of 'satisfies' and 'satisfying'")

    def probe(height: int) -> tuple[list[Node], Node | None]:
        vectors = lattice.nodes_at_height(height)  # lexicographic order
        if satisfying is not None:
            hits = np.flatnonzero(satisfying[lattice.indices_at_height(height)])
            if len(hits):
                return vectors[: hits[0] + 1], vectors[hits[0]]
            return vectors, None
        assert satisfies is not None  # exactly one of the two is given (checked above)
        for i, v in enumerate(vectors):
            if satisfies(v):
                return vectors[: i + 1], v
        return vectors, None

    return probe_heights(lattice.max_height, lattice.top, probe)


def probe_heights(max_height: int, top: Node,
                  probe: Callable[[int], tuple[list[Node], Node | None]]) -> FindVectorResult:
    """Find_vector's binary search over the height (Samarati Fig. 6), whatever answers the probes:
    ``probe(height)`` gives the vectors tested at that height (lexicographic order, up to the first
    that satisfies) and that vector, or None."""
    low, high = 0, max_height
    solution: Node = top
    trace = []
    while low < high:
        tried = (low + high) // 2
        tested, found = probe(tried)
        trace.append(Probe(low, high, tried, tuple(tested), found))
        if found is not None:
            solution, high = found, tried
        else:
            low = tried + 1
    if not any(p.satisfied == solution for p in trace):
        # The paper assumes the top satisfies; with height-0 hierarchies or a small MaxSup it may
        # not, and then no vector does (monotonicity), so we test it instead of assuming.
        tested, found = probe(max_height)
        trace.append(Probe(low, high, max_height, tuple(tested), found))
        if found is None:
            return FindVectorResult(None, tuple(trace))
    return FindVectorResult(solution, tuple(trace))


def k_minimal(lattice: Lattice, satisfies: Callable[[Node], bool]) -> list[Node]:
    """All k-minimal vectors for a monotone ``satisfies``, in (height, lexicographic) order.

    Bottom-up by height; a node with a satisfying direct predecessor satisfies by monotonicity and
    is not evaluated (nor minimal); only the others are tested.

    Parameters
    ----------
    lattice : Lattice
        The generalization lattice.
    satisfies : callable
        A monotone predicate on a node (a tuple of levels).

    Returns
    -------
    list of Node
        The k-minimal nodes, by height then lexicographically.

    Examples
    --------
    >>> k_minimal(Lattice((1, 2)), lambda node: sum(node) >= 2)
    [(0, 2), (1, 1)]
    """
    status: dict[Node, bool] = {}
    minimal = []
    for height in range(lattice.max_height + 1):
        for node in lattice.nodes_at_height(height):
            if any(status[p] for p in lattice.predecessors(node)):
                status[node] = True
                continue
            status[node] = bool(satisfies(node))
            if status[node]:
                minimal.append(node)
    return minimal


@dataclass(frozen=True)
class NodeResult:
    """One node's figures for a given (k, MaxSup)."""

    vector: Node
    height: int
    satisfies: bool
    k_minimal: bool
    suppressed: int
    accuracy: float
    completeness: float
    distinct: int
    rel_distance: float
    discernibility: int
    avg_class_size: float
    smallest_class: int
    max_risk: float
    average_risk: float

    def to_dict(self) -> dict:
        d = {f: getattr(self, f) for f in self.__dataclass_fields__}
        d["vector"] = list(self.vector)
        return d


@dataclass(frozen=True, eq=False)
class Answer:
    """Everything about one (k, MaxSup) question, for every node, from the profile.

    Parameters
    ----------
    profile : LatticeProfile
        The profile the question was asked of.
    k : int
        The k of k-anonymity.
    max_sup : int
        MaxSup, in rows.
    stats : ClassStats
        Per node: suppressed rows, classes and their figures at this k.
    satisfying : numpy.ndarray
        Per node number: whether it satisfies (k, MaxSup) and the criteria.
    minimal : numpy.ndarray
        Per node number: whether it is k-minimal.
    criteria : tuple, optional
        The release-scope criteria also asked for.
    """

    profile: LatticeProfile
    k: int
    max_sup: int
    stats: ClassStats
    satisfying: np.ndarray  # bool per node
    minimal: np.ndarray  # bool per node: k-minimal
    criteria: tuple = ()  # risk-based privacy models (microrelease.core.risk.criteria) also satisfied

    @property
    def lattice(self) -> Lattice:
        return self.profile.lattice

    @cached_property
    def metrics(self) -> dict[str, np.ndarray]:
        return node_metrics(self.lattice, self.profile.n_rows, self.stats)

    def node(self, node: Node | int) -> NodeResult:
        """One node's figures for this question.

        Parameters
        ----------
        node : Node or int
            A distance vector or a node number.

        Returns
        -------
        NodeResult
            Its figures.
        """
        i = node if isinstance(node, int | np.integer) else self.lattice.index(node)
        m = self.metrics
        return NodeResult(
            vector=self.lattice.node(int(i)),
            height=int(self.lattice.node_heights[i]),
            satisfies=bool(self.satisfying[i]),
            k_minimal=bool(self.minimal[i]),
            suppressed=int(self.stats.suppressed[i]),
            accuracy=float(m["accuracy"][i]),
            completeness=float(m["completeness"][i]),
            distinct=int(self.stats.distinct[i]),
            rel_distance=float(m["rel_distance"][i]),
            discernibility=int(m["discernibility"][i]),
            avg_class_size=float(m["avg_class_size"][i]),
            smallest_class=int(self.stats.smallest[i]),
            max_risk=float(m["max_risk"][i]),
            average_risk=float(m["average_risk"][i]),
        )

    @property
    def k_minimal_indices(self) -> np.ndarray:
        """Node numbers of the k-minimal set, by (height, vector)."""
        idx = np.flatnonzero(self.minimal)
        return idx[np.argsort(self.lattice.node_heights[idx], kind="stable")]

    def k_minimal_nodes(self) -> list[NodeResult]:
        return [self.node(int(i)) for i in self.k_minimal_indices]

    def find_vector(self) -> FindVectorResult:
        return self._find_vector

    @cached_property
    def _find_vector(self) -> FindVectorResult:  # the views ask for it on every redraw
        return find_vector(self.lattice, satisfying=self.satisfying)

    def preferred(self, policy: str = "min-relative", weights: Mapping[str, float] | None = None, *,
                  among: str | None = None) -> NodeResult:
        """The node the policy prefers (ties broken as documented in policies): among the k-minimal
        nodes, or, for a quality policy, among every satisfying node (ARX's optimum);
        ``among="k-minimal"`` asks for the best k-minimal node whatever the policy.

        Raises NoSolutionError if no node satisfies (k, MaxSup).

        Parameters
        ----------
        policy : str, default "min-relative"
            A key of ``POLICIES``.
        weights : mapping of str to float, optional
            The weights of a weighted policy.
        among : str, optional
            ``"k-minimal"``: the best k-minimal node whatever the policy.

        Returns
        -------
        NodeResult
            The preferred node.

        Raises
        ------
        NoSolutionError
            If no node satisfies (k, MaxSup).
        """
        scope = among or validate_policy(policy).among
        candidates = self.k_minimal_indices if scope == "k-minimal" else np.flatnonzero(self.satisfying)
        if len(candidates) == 0:
            top = self.lattice.size - 1
            raise NoSolutionError(
                f"no generalization satisfies k={self.k} with MaxSup={self.max_sup}: even the fully generalized "
                f"table needs {int(self.stats.suppressed[top])} suppressed rows (QIs whose hierarchy has height 0 "
                "are never generalized)"
            )
        return self.node(prefer(policy, self.lattice, self.stats, candidates, weights))

    def score(self, policy: str, node: Node | int) -> float:
        """Policy ``policy``'s score of one node (a quality policy's: read from the profile).

        Parameters
        ----------
        policy : str
            A key of ``POLICIES``.
        node : Node or int
            A distance vector or a node number.

        Returns
        -------
        float
            Its score.
        """
        i = node if isinstance(node, int | np.integer) else self.lattice.index(node)
        return float(validate_policy(policy).score(self.lattice, self.stats, np.array([i]), None)[0])


def query(profile: LatticeProfile, k: int, max_sup: int | str, criteria: tuple = ()) -> Answer:
    """Answer (k, MaxSup) for every node of the profiled lattice (no pass over the data); ``criteria``:
    the scope-RELEASE criteria (``microrelease.core.risk.criteria``) a node must satisfy too (the
    scope-CLASS ones are the profile's, counted when it was built).

    Parameters
    ----------
    profile : LatticeProfile
        The profile from ``build_profile``.
    k : int
        The k of k-anonymity.
    max_sup : int or str
        MaxSup, the most rows that may be suppressed: a count, or a percentage such as ``"5%"``.
    criteria : tuple, optional
        Release-scope criteria every answer node must satisfy as well.

    Returns
    -------
    Answer
        Which nodes satisfy, which are k-minimal, and their figures.

    Raises
    ------
    InvalidParameterError
        If ``k`` or ``max_sup`` is out of range.

    Examples
    --------
    >>> answer = query(build_profile(load_sample("toy")), k=2, max_sup=0)
    >>> answer.find_vector().vector
    (1, 1, 2)
    """
    k = validate_k(k, profile.n_rows)
    max_sup = parse_max_sup(max_sup, profile.n_rows)
    stats = profile.stats(k)
    satisfying = stats.suppressed <= max_sup
    for criterion in criteria:
        satisfying = satisfying & criterion.satisfies(profile, k)
    src, tgt = profile.lattice.edges
    if not monotone((*profile.models, *criteria), max_sup):
        # A criterion not monotone here (entropy or recursive l-diversity, t-closeness, with suppression:
        # a class that fails can merge with one that passes into one that fails) lets a satisfying node lie above
        # a failing one above a satisfying one: look at every node below, not just the direct
        # predecessors. (Find_vector's binary search assumes monotonicity; it stays the paper's.)
        below = np.zeros(profile.lattice.size, dtype=bool)  # some satisfying node strictly below
        heights = profile.lattice.node_heights
        for h in range(1, int(heights.max(initial=0)) + 1):
            into = heights[tgt] == h
            reach = (satisfying | below)[src[into]]
            below[tgt[into][reach]] = True
        minimal = satisfying & ~below
    else:
        has_satisfying_pred = np.bincount(tgt, weights=satisfying[src], minlength=profile.lattice.size) > 0
        minimal = satisfying & ~has_satisfying_pred
    return Answer(profile, k, max_sup, stats, satisfying, minimal, tuple(criteria))
