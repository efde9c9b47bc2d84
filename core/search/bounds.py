"""ARX's quality models scored from one node's figures, and their generalization-only lower bounds.

The scores are those of ``microrelease.core.lattice.quality`` (its docstring defines each model),
computed from a ``NodeFigures`` instead of the whole-lattice
profile. A *generalization-only lower bound* (ARX's ``Metric.getLowerBound``) is a figure that never
exceeds the score, whatever is suppressed, and never decreases up the lattice, so the branch-and-bound
search may skip every node whose bound is above the best score found:

- Loss: the Loss with nothing suppressed (a suppressed row's share of each domain is 1, the most);
  it depends on each QI's level alone (per QI, the rows' share mass at that level);
- Precision: the mean of d_i / h_i (a suppressed row counts 1, the most);
- Height: the height itself;
- non-uniform entropy: the generalization part Σ_i H(A_i | level d_i) (the suppressed rows add
  S·H(their values) >= 0 per QI).

DM, DM* and AECS have no bound that depends on the levels alone (they read the class sizes), and KL
divergence is not computed here: the search declares them as such (``BOUNDED``). DM* never
decreases up the lattice, so its optimum is among the k-minimal nodes (``AT_MINIMAL``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from microrelease.core.lattice.quality_profile import conditional_entropy, share_tables, xlog2x
from microrelease.core.search.evaluator import NodeFigures

BOUNDED = frozenset({"loss", "precision", "height", "nu-entropy"})  # a separable lower bound exists
# never lower above a node, and equal only where no classes merge (the same suppression, more generalization,
# so the tie-break prefers the node below): the optimum over every satisfying node is a k-minimal one
AT_MINIMAL = frozenset({"dm-star"})
SCORED = frozenset({"loss", "precision", "height", "discernibility", "dm-star", "aecs", "nu-entropy",
                    "kl-divergence"})  # KL: scored from the classes by core/search/kl.py


@dataclass(frozen=True, eq=False)
class QualityConstants:
    """What the scores read of the table: rows, heights, |D_i|, each QI's share mass of all rows per
    level (QIs × levels) and the conditional entropy table (``conditional_entropy``)."""

    n_rows: int
    heights: np.ndarray
    domain: np.ndarray
    mass: np.ndarray
    conditional: np.ndarray

    @classmethod
    def of(cls, source) -> QualityConstants:
        hierarchies, freq = tuple(source.hierarchies), source.frequency
        flat, off = share_tables(hierarchies)
        depth = max(h.height for h in hierarchies) + 1
        mass = np.zeros((len(hierarchies), depth))
        for i, h in enumerate(hierarchies):
            a = np.bincount(freq.codes[:, i], weights=freq.counts, minlength=len(h.ground))
            for level in range(h.height + 1):
                mass[i, level] = float((a * flat[off[i, level] + h.codes[level]]).sum())
        return cls(freq.n_rows, np.array([h.height for h in hierarchies], dtype=np.int64),
                   np.array([len(h.ground) for h in hierarchies], dtype=np.int64), mass,
                   conditional_entropy(freq, hierarchies))

    def _loss_terms(self, released_mass: np.ndarray, suppressed: float) -> np.ndarray:
        n, dom = self.n_rows, self.domain.astype(float)
        floor = n / dom
        return (released_mass + suppressed - floor) / np.where(n - floor > 0, n - floor, 1.0)

    def per_level(self, name: str) -> list[np.ndarray]:
        """The lower bound's term per QI and level, and how they combine (see ``lower_bound``)."""
        levels = [np.arange(h + 1) for h in self.heights]
        if name == "loss":  # log(1 + L_i) / m: the geometric mean is exp of their sum
            floor = self.n_rows / self.domain.astype(float)
            scale = np.where(self.n_rows - floor > 0, self.n_rows - floor, 1.0)
            return [np.log1p((self.mass[i, lv] - floor[i]) / scale[i]) / len(levels) for i, lv in enumerate(levels)]
        if name == "precision":
            return [lv / (h if h > 0 else 1) / len(levels) for lv, h in zip(levels, self.heights, strict=True)]
        if name == "height":
            return [lv.astype(float) for lv in levels]
        if name == "nu-entropy":
            return [self.conditional[i, :h + 1] for i, h in enumerate(self.heights)]
        raise KeyError(name)

    def lower_bound(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """The generalization-only lower bound of every node (flat, node numbers in C order)."""
        terms = self.per_level(name)
        total = np.zeros(shape)
        for i, t in enumerate(terms):
            total += t.reshape([-1 if j == i else 1 for j in range(len(shape))])
        total = total.reshape(-1)
        return np.expm1(total) if name == "loss" else total

    def score(self, name: str, vec: np.ndarray, f: NodeFigures) -> float:
        """Quality model ``name`` of the node with levels ``vec`` and figures ``f`` (lower is better)."""
        n, s = self.n_rows, f.suppressed
        if name == "height":
            return float(vec.sum())
        if name == "precision":
            h = self.heights.astype(float)
            ratio = vec / np.where(h > 0, h, 1.0)
            return float(((n - s) * ratio + s).mean() / n)
        if name == "discernibility":
            return float(f.released_sq + s * n)
        if name == "dm-star":
            return float(f.all_sq)
        if name == "aecs":
            return n / max(f.distinct + (s > 0), 1)
        m = len(vec)
        if name == "loss":
            released = self.mass[np.arange(m), vec] - f.mass
            return float(np.prod(1.0 + self._loss_terms(released, float(s))) ** (1.0 / m) - 1.0)
        if name == "nu-entropy":
            generalization = self.conditional[np.arange(m), vec].sum()
            return float(generalization + m * xlog2x(s) - f.entropy)
        raise KeyError(name)
