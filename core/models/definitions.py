"""Privacy models on a sensitive attribute, beside k-anonymity: l-diversity and t-closeness.

k-anonymity hides *who* a row is, not *what* it says: if every row of a class has the same
diagnosis, the class gives it away. These models constrain the sensitive attribute inside each
equivalence class (the rows sharing one generalized QI combination):

- distinct l-diversity: at least l distinct sensitive values (Machanavajjhala et al. 2007);
- entropy l-diversity: entropy of the class's sensitive distribution >= log(l);
- recursive (c, l)-diversity: r₁ < c·(r_l + r_{l+1} + … + r_m), with r₁ ≥ r₂ ≥ … the class's value counts;
- t-closeness (Li, Li & Venkatasubramanian 2007): the Earth Mover's Distance between the class's
  distribution and the whole table's is at most t, with ground distance
  ``equal`` (any two values at distance 1: EMD = ½Σ|pᵢ − qᵢ|), ``ordered`` (values sorted, |i − j|/(m − 1):
  EMD = (1/(m−1))·Σᵢ|Σ_{j≤i}(pⱼ − qⱼ)|) or ``hierarchical`` (height of the lowest common ancestor in
  the attribute's hierarchy / its height H; EMD by the paper's closed formula: Σ over inner nodes N of
  height(N)/H · min(positive extra, negative extra) of N's children).

Every model here is monotone under generalization (merging two classes that satisfy it gives a
class that satisfies it; for t-closeness because EMD to a fixed distribution is convex), so the
lattice search may prune: suppressing the failing classes needs fewer rows higher up.
Each model evaluates many classes at once from a matrix of counts (classes × sensitive values).
:data:`PRIVACY_MODELS` is the registry read by the CLI, the dashboard and the contract tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.hierarchies import Hierarchy

_EPS = 1e-12  # comparisons with l and t allow for rounding in logs and sums


def _distributions(counts: np.ndarray) -> np.ndarray:
    sizes = counts.sum(axis=1, keepdims=True)
    return counts / np.where(sizes > 0, sizes, 1)


def entropy(counts: np.ndarray) -> np.ndarray:
    """Shannon entropy (natural log) of each row's distribution."""
    p = _distributions(counts)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(p), 0.0)
    return terms.sum(axis=1)


def emd_equal(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return 0.5 * np.abs(p - q).sum(axis=1)


def emd_ordered(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    m = p.shape[1]
    if m < 2:
        return np.zeros(len(p))
    return np.abs(np.cumsum(p - q, axis=1)[:, :-1]).sum(axis=1) / (m - 1)


def emd_hierarchical(p: np.ndarray, q: np.ndarray, hierarchy: Hierarchy, order: np.ndarray) -> np.ndarray:
    """Li et al.'s closed formula; column j of p/q is ground value ``order[j]`` of ``hierarchy``."""
    height = hierarchy.height
    if height == 0:
        return np.zeros(len(p))
    extra = (p - q)  # signed extra of each leaf, one column per ground value
    codes = hierarchy.codes[:, order]  # level code of each column's value, per level
    total = np.zeros(len(p))
    for level in range(1, height + 1):
        parent = codes[level]
        child = codes[level - 1]
        n_parent = hierarchy.level_size(level)
        # children of level-`level` nodes are the level-(level-1) nodes; their extras:
        n_child = hierarchy.level_size(level - 1)
        child_extra = np.zeros((len(p), n_child))
        np.add.at(child_extra.T, child, extra.T)
        child_parent = np.zeros(n_child, dtype=np.int64)
        child_parent[child] = parent
        pos = np.zeros((len(p), n_parent))
        neg = np.zeros((len(p), n_parent))
        np.add.at(pos.T, child_parent, np.clip(child_extra, 0, None).T)
        np.add.at(neg.T, child_parent, np.clip(-child_extra, 0, None).T)
        total += (level / height) * np.minimum(pos, neg).sum(axis=1)
    return total


@dataclass(frozen=True)
class DistinctLDiversity:
    l: int  # noqa: E741 - the paper's name
    name = "distinct-l-diversity"
    monotone = True

    def statistic(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        return (counts > 0).sum(axis=1).astype(float)

    def passes(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        return self.statistic(counts, table) >= self.l

    def describe(self) -> str:
        return f"distinct {self.l}-diversity"


@dataclass(frozen=True)
class EntropyLDiversity:
    l: float  # noqa: E741
    name = "entropy-l-diversity"
    monotone = True

    def statistic(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        return np.exp(entropy(counts))  # the class's "effective l"

    def passes(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        return entropy(counts) >= np.log(self.l) - _EPS

    def describe(self) -> str:
        return f"entropy {self.l:g}-diversity"


@dataclass(frozen=True)
class RecursiveCLDiversity:
    c: float
    l: int  # noqa: E741
    name = "recursive-cl-diversity"
    monotone = True

    def statistic(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        """r₁ / (r_l + … + r_m): the class passes when this is below c."""
        ranked = -np.sort(-counts, axis=1)
        tail = ranked[:, self.l - 1:].sum(axis=1)
        with np.errstate(divide="ignore"):
            return np.where(tail > 0, ranked[:, 0] / np.where(tail > 0, tail, 1), np.inf)

    def passes(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        return self.statistic(counts, table) < self.c

    def describe(self) -> str:
        return f"recursive ({self.c:g}, {self.l})-diversity"


@dataclass(frozen=True)
class TCloseness:
    t: float
    distance: str = "equal"
    hierarchy: Hierarchy | None = None
    order: tuple[int, ...] = ()  # for hierarchical: ground code of each sensitive column
    name = "t-closeness"
    monotone = True

    def statistic(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        p = _distributions(counts)
        q = table / table.sum()
        q = np.broadcast_to(q, p.shape)
        if self.distance == "equal":
            return emd_equal(p, q)
        if self.distance == "ordered":
            return emd_ordered(p, q)
        return emd_hierarchical(p, q, self.hierarchy, np.asarray(self.order, dtype=np.int64))

    def passes(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        return self.statistic(counts, table) <= self.t + _EPS

    def describe(self) -> str:
        return f"{self.t:g}-closeness ({self.distance} distance)"


PRIVACY_MODELS: dict[str, type] = {
    "distinct-l-diversity": DistinctLDiversity,
    "entropy-l-diversity": EntropyLDiversity,
    "recursive-cl-diversity": RecursiveCLDiversity,
    "t-closeness": TCloseness,
}
DISTANCES = ("equal", "ordered", "hierarchical")


def check_model(model, n_values: int, *, attribute: str = "the sensitive attribute"):
    """Validate a model against the sensitive attribute's number of distinct values."""
    if isinstance(model, DistinctLDiversity | EntropyLDiversity | RecursiveCLDiversity):
        if not model.l >= 1:
            raise InvalidParameterError(f"The 'l' parameter must be at least 1. Got {model.l!r} instead.")
        if model.l > n_values:
            raise InvalidParameterError(f"l = {model.l:g} is larger than the {n_values} distinct values of {attribute}: "
                                        "no class could ever satisfy it")
    if isinstance(model, RecursiveCLDiversity) and not model.c > 0:
        raise InvalidParameterError(f"The 'c' parameter must be positive. Got {model.c!r} instead.")
    if isinstance(model, TCloseness):
        if not 0 < model.t <= 1:
            raise InvalidParameterError(f"The 't' parameter must be in (0, 1]. Got {model.t!r} instead.")
        if model.distance not in DISTANCES:
            raise InvalidParameterError(f"The 'distance' parameter must be one of {DISTANCES}. Got {model.distance!r}.")
        if model.distance == "hierarchical" and model.hierarchy is None:
            raise InvalidParameterError(f"hierarchical t-closeness needs a hierarchy for {attribute} "
                                        "(give it with --hierarchy or --hierarchy-dir)")
    return model


def parse_l_diversity(spec: str):
    """'distinct:3', 'entropy:3' or 'recursive:C:3' -> a model."""
    parts = [p.strip() for p in str(spec).split(":")]
    try:
        if parts[0] == "distinct" and len(parts) == 2:
            return DistinctLDiversity(int(parts[1]))
        if parts[0] == "entropy" and len(parts) == 2:
            return EntropyLDiversity(float(parts[1]))
        if parts[0] == "recursive" and len(parts) == 3:
            return RecursiveCLDiversity(float(parts[1]), int(parts[2]))
    except ValueError:
        pass
    raise InvalidParameterError(f"--l-diversity expects distinct:L, entropy:L or recursive:C:L; got {spec!r}")


def parse_t_closeness(spec: str) -> tuple[float, str]:
    """'0.2' or '0.2:ordered' -> (t, distance)."""
    t, _, distance = str(spec).partition(":")
    try:
        value = float(t)
    except ValueError:
        raise InvalidParameterError(f"--t-closeness expects T[:equal|ordered|hierarchical]; got {spec!r}") from None
    return value, distance or "equal"
