"""Metrics of a generalized table at a lattice node (Samarati §6 and the usual companions).

All are computed for every node at once from the node's distance vector and the class-size
figures of ``microrelease.core.lattice.profile.ClassStats``. For a node with vector (d_1..d_m) over
hierarchies of heights (h_1..h_m), on a table of n rows of which S are suppressed:

- relative distance (Samarati's "relative distance"): sum of d_i / h_i (a QI with h_i = 0 adds 0);
- accuracy = 1 - (1/m) * relative distance (1 = original values, 0 = everything generalized);
- completeness = (n - S) / n, the share of rows released;
- distinct: released QI combinations (equivalence classes with >= k rows);
- discernibility (Bayardo & Agrawal 2005): sum of squared class sizes + S * n;
- average class size = (n - S) / distinct; smallest class; highest re-identification risk
  (prosecutor model) = 1 / smallest class; average re-identification risk = distinct / (n - S) (the
  mean of 1 / class size over the released rows).

``METRICS`` is the registry read by the CLI, the dashboard menus and the contract tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from microrelease.core.lattice.distance_vectors import Lattice
from microrelease.core.lattice.profile import ClassStats


def relative_distance(lattice: Lattice, grid: np.ndarray | None = None) -> np.ndarray:
    """Sum of d_i / h_i per node (QIs with height 0 contribute 0)."""
    grid = lattice.grid if grid is None else np.atleast_2d(grid)
    total = np.zeros(len(grid))
    for i, h in enumerate(lattice.heights):  # QI by QI: the same sum for one node as for the whole lattice
        if h > 0:
            total += grid[:, i] / h
    return total


@dataclass(frozen=True)
class Metric:
    """A named per-node figure.

    ``compute(lattice, grid, n_rows, stats)`` returns one value per row of ``grid`` (distance
    vectors) whose class figures are the matching entries of ``stats``.
    """

    name: str
    label: str
    higher_is_better: bool
    description: str
    compute: Callable[[Lattice, np.ndarray, int, ClassStats], np.ndarray]


def _accuracy(lattice: Lattice, grid: np.ndarray, n: int, s: ClassStats) -> np.ndarray:
    return 1.0 - relative_distance(lattice, grid) / len(lattice.heights)


def _completeness(lattice: Lattice, grid: np.ndarray, n: int, s: ClassStats) -> np.ndarray:
    return (n - s.suppressed) / n


def _average(lattice: Lattice, grid: np.ndarray, n: int, s: ClassStats) -> np.ndarray:
    released = n - s.suppressed
    return np.divide(released, s.distinct, out=np.zeros(len(released), dtype=float), where=s.distinct > 0)


def _risk(lattice: Lattice, grid: np.ndarray, n: int, s: ClassStats) -> np.ndarray:
    return np.divide(1.0, s.smallest, out=np.zeros(len(s.smallest), dtype=float), where=s.smallest > 0)


def _average_risk(lattice: Lattice, grid: np.ndarray, n: int, s: ClassStats) -> np.ndarray:
    released = n - s.suppressed
    return np.divide(s.distinct, released, out=np.zeros(len(released), dtype=float), where=released > 0)


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("accuracy", "Accuracy", True, "1 - mean of d_i/h_i over the QIs", _accuracy),
        Metric("completeness", "Completeness", True, "share of rows released", _completeness),
        Metric("suppressed", "Suppressed rows", False, "rows removed by minimal required suppression",
               lambda lat, g, n, s: s.suppressed.copy()),
        Metric("distinct", "Distinct combinations", True, "released QI combinations (classes)",
               lambda lat, g, n, s: s.distinct.copy()),
        Metric("rel_distance", "Relative distance", False, "sum of d_i/h_i", lambda lat, g, n, s: relative_distance(lat, g)),
        Metric("discernibility", "Discernibility", False, "sum of class sizes squared + suppressed × rows",
               lambda lat, g, n, s: s.released_sq + s.suppressed * n),
        Metric("avg_class_size", "Average class size", False, "released rows / released classes", _average),
        Metric("smallest_class", "Smallest class", True, "size of the smallest released class",
               lambda lat, g, n, s: s.smallest.copy()),
        Metric("max_risk", "Highest re-identification risk", False, "1 / smallest released class", _risk),
        Metric("average_risk", "Average re-identification risk", False,
               "released classes / released rows (the prosecutor's mean of 1 / class size)", _average_risk),
    )
}


def node_metrics(
    lattice: Lattice, n_rows: int, stats: ClassStats, grid: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Every registered metric for the nodes of ``grid`` (default: every node of the lattice)."""
    grid = lattice.grid if grid is None else np.atleast_2d(grid)
    return {name: m.compute(lattice, grid, n_rows, stats) for name, m in METRICS.items()}
