"""Preference policies: which k-minimal generalization to release (Samarati §6).

Several k-minimal generalizations usually exist; Samarati lists criteria to choose one:
- ``min-absolute``: minimum absolute distance, the smallest height sum(d_i);
- ``min-relative``: minimum relative distance, the smallest sum(d_i / h_i);
- ``max-distribution``: maximum distribution, the most distinct QI combinations released;
- ``min-suppression``: minimum suppression, the fewest suppressed rows;
- ``weighted``: a weighted relative distance sum(w_i * d_i / h_i), with per-QI weights (default 1;
  a larger weight makes generalizing that QI costlier);
- ARX's quality models (``quality``: ``loss``, ``precision``, ``height``,
  ``discernibility``, ``dm-star``, ``aecs``): with suppression most are not monotone, so these choose
  the best of **every satisfying node** (ARX's optimum), not only of the k-minimal ones; they read a
  profile built with ``quality=True``.

Ties are broken deterministically, in this order: the policy's own score, then fewer suppressed
rows, then smaller relative distance, then the lexicographically smallest vector (in QI order).

``POLICIES`` is the registry read by the CLI, the dashboard menus and the contract tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.distance_vectors import Lattice
from microrelease.core.lattice.metrics import relative_distance
from microrelease.core.lattice.profile import ClassStats
from microrelease.core.lattice.quality import QUALITY_MODELS, policy_score

Score = Callable[[Lattice, ClassStats, np.ndarray, np.ndarray | None], np.ndarray]


@dataclass(frozen=True)
class Policy:
    """``score(lattice, stats, candidates, weights)``: one number per candidate node, lower preferred."""

    name: str
    label: str
    description: str
    score: Score
    uses_weights: bool = False
    quality: bool = False  # ARX's quality model: scored from the profile, chosen among every satisfying node
    # its score reads the quality profile (the share mass of ``.quality_profile``): only then is it built
    reads_quality_profile: bool = False

    @property
    def among(self) -> str:
        """Which nodes the policy chooses from: "k-minimal" (Samarati's) or "satisfying" (ARX's optimum)."""
        return "satisfying" if self.quality else "k-minimal"


POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (
        Policy("min-absolute", "Minimum absolute distance", "smallest height sum(d_i)",
               lambda lat, s, c, w: lat.node_heights[c].astype(float)),
        Policy("min-relative", "Minimum relative distance", "smallest sum(d_i/h_i)",
               lambda lat, s, c, w: relative_distance(lat, lat.grid[c])),
        Policy("max-distribution", "Maximum distribution", "most distinct QI combinations released",
               lambda lat, s, c, w: -s.distinct[c].astype(float)),
        Policy("min-suppression", "Minimum suppression", "fewest suppressed rows",
               lambda lat, s, c, w: s.suppressed[c].astype(float)),
        Policy("weighted", "Weighted relative distance", "smallest sum(w_i * d_i/h_i)",
               lambda lat, s, c, w: relative_distance(lat, lat.grid[c] * w), uses_weights=True),
        *(Policy(q.name, q.label, f"smallest {q.description}", policy_score(q.name), quality=True,
                 reads_quality_profile=q.needs_mass)
          for q in QUALITY_MODELS.values()),
    )
}


def validate_policy(name: str) -> Policy:
    if name not in POLICIES:
        raise InvalidParameterError(f"The 'policy' parameter must be one of {sorted(POLICIES)}. Got {name!r} instead.",
                                    parameter="policy")
    return POLICIES[name]


def weight_vector(lattice: Lattice, weights: Mapping[str, float] | None) -> np.ndarray:
    """Per-QI weights in QI order (1 where not given); names must be QIs, values finite and >= 0."""
    w = np.ones(len(lattice.heights), dtype=float)
    for name, value in (weights or {}).items():
        if name not in lattice.names:
            raise InvalidParameterError(f"weight given for {name!r}, which is not a QI {list(lattice.names)}",
                                        parameter="weights")
        if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value) or value < 0:
            raise InvalidParameterError(f"the weight of {name!r} must be a finite number >= 0, got {value!r}",
                                        parameter="weights")
        w[lattice.names.index(name)] = float(value)
    return w


def prefer(
    policy: str, lattice: Lattice, stats: ClassStats, candidates: np.ndarray, weights: Mapping[str, float] | None = None
) -> int:
    """Index of the preferred node among ``candidates`` (node numbers), with the documented tie-break."""
    chosen = validate_policy(policy)
    candidates = np.asarray(candidates, dtype=np.int64)
    if len(candidates) == 0:
        raise InvalidParameterError("no candidate node to choose from")
    w = weight_vector(lattice, weights)
    primary = chosen.score(lattice, stats, candidates, w)
    return int(candidates[tie_break(lattice, primary, lattice.grid[candidates], stats.suppressed[candidates])])


def tie_break(lattice: Lattice, primary: np.ndarray, grid: np.ndarray, suppressed: np.ndarray) -> int:
    """Position of the preferred candidate: the smallest ``primary`` score, then fewer ``suppressed``
    rows, then smaller relative distance, then the lexicographically smallest vector (rows of ``grid``)."""
    # Rounded so that sums like 1/3 + 2/3 and 1 tie instead of differing in the last bit.
    primary = np.round(np.asarray(primary, dtype=float), 9)
    rel = np.round(relative_distance(lattice, grid), 9)
    keys = [grid[:, i] for i in range(len(lattice.heights) - 1, -1, -1)]
    keys += [rel, np.asarray(suppressed), primary]
    return int(np.lexsort(keys)[0])
