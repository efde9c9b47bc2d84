"""t-closeness (Li, Li & Venkatasubramanian, "t-Closeness: Privacy Beyond k-Anonymity and
l-Diversity", ICDE 2007): the Earth Mover's Distance between a class's sensitive distribution and
the whole table's is at most t.

Ground distances (``ground``):

- ``equal``: any two values at distance 1, so EMD = ½Σ|pᵢ − qᵢ|;
- ``ordered``: values sorted, |i − j|/(m − 1), so EMD = (1/(m−1))·Σᵢ|Σ_{j≤i}(pⱼ − qⱼ)|;
- ``hierarchical``: the height of the lowest common ancestor in the attribute's hierarchy over its
  height H; EMD by the paper's closed formula: Σ over inner nodes N of height(N)/H ·
  min(positive extra, negative extra) of N's children.

EMD to a fixed distribution is convex, so merging two satisfying classes gives a satisfying one:
monotone up the lattice without suppression, not with it. The table distribution is that of the
whole input (before suppression), as in the paper; a release report names it and publishes its
counts only on request, as they disclose the suppressed rows' values
(``reference``).
Text spec (the ``t_closeness`` parameter): ``T[:equal|ordered|hierarchical]``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from microrelease.core.criteria.controls import Control, control
from microrelease.core.exceptions import CoverageError
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.models.privacy_model import (
    TOLERANCE,
    KernelCode,
    PrivacyModel,
    Statistic,
    distributions,
)

if TYPE_CHECKING:
    from microrelease.core.models.sensitive import SensitiveFrequency

GROUNDS = ("equal", "ordered", "hierarchical")


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
class TCloseness(PrivacyModel):
    """EMD to the table's distribution at most ``t``, for the ``ground`` distance. A hierarchical
    ground takes the sensitive attribute's ``hierarchy`` and ``order`` (the ground code of each
    sensitive value column) from the data: see ``bind``.

    Parameters
    ----------
    t : float
        The largest EMD allowed, in [0, 1].
    ground : str, default "equal"
        The ground distance: a key of ``GROUNDS``.
    hierarchy : Hierarchy, optional
        The sensitive attribute's hierarchy, for the hierarchical ground.
    order : tuple of int, optional
        The ground code of each sensitive value, for the hierarchical ground.
    """

    t: float = control(Control("t", "t-closeness t (0 = off)", float, 0.0, low=0, high=1, step=0.05, off=0.0,
                               doc="EMD to the table's distribution at most t"))
    ground: str = control(Control("ground", "EMD ground distance", str, "equal", choices=GROUNDS), default="equal")
    hierarchy: Hierarchy | None = None
    order: tuple[int, ...] = ()

    name: ClassVar[str] = "t-closeness"
    parameter: ClassVar[str] = "t_closeness"
    syntax: ClassVar[str] = "T[:equal|ordered|hierarchical]"
    example: ClassVar[str] = "0.2:ordered"
    monotone_generalization: ClassVar[bool] = True
    monotone_suppression: ClassVar[bool] = False
    kinds: ClassVar[dict[str, int]] = {"equal": 3, "ordered": 4, "hierarchical": 5}  # kernel kind per ground

    @classmethod
    def from_spec(cls, spec: str):
        t, _, ground = str(spec).partition(":")
        try:
            return cls(float(t), ground.strip() or "equal")
        except ValueError:
            return None

    def spec(self) -> str:
        return f"{self.t!r}:{self.ground}"

    def validate(self, n_values: int, attribute: str):
        if not 0 < self.t <= 1:
            raise self.invalid(f"The 't' parameter must be in (0, 1]. Got {self.t!r} instead.")
        if self.ground not in GROUNDS:
            raise self.invalid(f"The 'ground' parameter must be one of {GROUNDS}. Got {self.ground!r}.")
        if self.ground == "hierarchical" and self.hierarchy is None:
            raise self.invalid(f"hierarchical t-closeness needs a hierarchy for {attribute} (the sensitive "
                               "attribute's hierarchy: give it, or put its file in the hierarchy folder)")
        return self

    def needs(self) -> frozenset[Statistic]:
        needs = {Statistic.VALUE_COUNTS, Statistic.TABLE_DISTRIBUTION}
        return frozenset(needs | ({Statistic.VALUE_HIERARCHY} if self.ground == "hierarchical" else set()))

    def bind(self, sensitive: SensitiveFrequency) -> TCloseness:
        """With a hierarchical ground: the sensitive attribute's hierarchy (this model's own if it
        has one) and the ground code of each of ``sensitive``'s value columns."""
        hierarchy = self.hierarchy or sensitive.hierarchy
        if self.ground != "hierarchical" or hierarchy is None:
            return self
        absent = {v: int(n) for v, n in zip(sensitive.labels, sensitive.table_counts, strict=True)
                  if v not in hierarchy.index}
        if absent:
            raise CoverageError(sensitive.attribute, absent)
        return dataclasses.replace(self, hierarchy=hierarchy, order=tuple(hierarchy.index[v] for v in sensitive.labels))

    def statistic(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        p = distributions(counts)
        q = table / table.sum()
        q = np.broadcast_to(q, p.shape)
        if self.ground == "equal":
            return emd_equal(p, q)
        if self.ground == "ordered":
            return emd_ordered(p, q)
        assert self.hierarchy is not None  # the hierarchical ground is bound (check refuses it without)
        return emd_hierarchical(p, q, self.hierarchy, np.asarray(self.order, dtype=np.int64))

    def satisfies_counts(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        return self.statistic(counts, table) <= self.t + TOLERANCE

    def describe(self) -> str:
        return f"{self.t:g}-closeness ({self.ground} distance)"

    def kernel_code(self) -> KernelCode:
        return KernelCode(self.kinds[self.ground], t=float(self.t))

    def kernel_ground(self) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """The hierarchy as the kernel reads it (hierarchical ground, once bound): its height, the
        size of each level (level 0: the value columns), and the parent maps of levels 0..H-1 laid
        end to end, with each one's offset."""
        order = np.asarray(self.order, dtype=np.int64)
        h = self.hierarchy
        assert h is not None  # the hierarchical ground is bound (check refuses it without)
        if h.height == 0:  # every value the same at the top: EMD 0
            return 0, np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64)
        maps = [h.codes[1][order]] + [h.parents[level] for level in range(1, h.height)]
        level_sizes = np.array([len(order)] + [h.level_size(lv) for lv in range(1, h.height + 1)], np.int64)
        offsets = np.concatenate(([0], np.cumsum([len(x) for x in maps]))).astype(np.int64)
        return h.height, level_sizes, np.concatenate(maps).astype(np.int64), offsets
