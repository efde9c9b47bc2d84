"""The focused view's nodes: the k-minimal frontier, chosen under the drawing cap so that each drawn
k-minimal node has a drawn neighbour.

The frontier is three groups: the k-minimal nodes, the failing nodes just below them and the
satisfying (not k-minimal) nodes just above them. On a large question it exceeds the cap (adult, k = 5,
MaxSup 1 %: 324 k-minimal, 1,086 below, 516 above). Filling the cap group after group then drew the
k-minimal nodes, which are pairwise incomparable (no edge between any two), and the lowest failing
nodes only: layers without a single edge. So the cap is filled with, in this order:

1. the nodes asked for first (the view passes the preferred node);
2. the k-minimal nodes, lowest first: as many as fit with their connectors;
3. *connectors*: frontier nodes next to drawn k-minimal nodes, chosen greedily (next to most k-minimal
   nodes still without a drawn neighbour first; failing nodes below before satisfying nodes above)
   until each drawn k-minimal node has one;
4. the rest of the frontier: failing nodes below, then satisfying nodes above, lowest first.

What was left out is counted per group, for the caption.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from microrelease.app.tabs.lattice.graph import DRAW_CAP, neighbours
from microrelease.core import Lattice

GROUPS = ("k-minimal", "failing just below", "satisfying just above")
ROUNDS = 6  # the fitting of k-minimal nodes and connectors converges in one or two


@dataclass(frozen=True)
class Focus:
    """The nodes drawn (``ids``, in the order chosen) and, per group of GROUPS, how many the frontier
    has (``total``) and how many are drawn (``drawn``)."""

    ids: np.ndarray
    total: dict[str, int]
    drawn: dict[str, int]
    cap: int

    @property
    def truncated(self) -> bool:
        return any(self.drawn[g] < self.total[g] for g in GROUPS)

    def left_out(self) -> dict[str, int]:
        """Nodes of the frontier not drawn, per group that has some."""
        return {g: self.total[g] - self.drawn[g] for g in GROUPS if self.drawn[g] < self.total[g]}


def by_height(lattice: Lattice, ids: np.ndarray) -> np.ndarray:
    return ids[np.lexsort((ids, lattice.node_heights[ids]))]


def frontier_groups(lattice: Lattice, satisfying: np.ndarray, minimal: np.ndarray) -> dict[str, np.ndarray]:
    """The frontier's node numbers per group of GROUPS, each lowest first (then by number)."""
    minimal_ids = np.flatnonzero(minimal)
    below, above = neighbours(lattice, minimal_ids)
    groups = (minimal_ids, below[~satisfying[below]], above[satisfying[above] & ~minimal[above]])
    return {name: by_height(lattice, ids) for name, ids in zip(GROUPS, groups, strict=True)}


def connectors(lattice: Lattice, targets: np.ndarray, candidates: np.ndarray, drawn: np.ndarray,
               budget: int) -> list[int]:
    """Up to ``budget`` of ``candidates`` so that as many ``targets`` as possible get a neighbour among
    ``drawn`` + the chosen; greedily, the candidate next to most targets still without one first (ties:
    earlier in ``candidates``)."""
    src, tgt = lattice.edges
    slot = np.full(lattice.size, -1, dtype=np.int64)
    slot[candidates] = np.arange(len(candidates))
    target_slot = np.full(lattice.size, -1, dtype=np.int64)
    target_slot[targets] = np.arange(len(targets))
    # each (candidate, target) pair one generalization step apart, in either direction
    ends = np.concatenate([np.column_stack([src, tgt]), np.column_stack([tgt, src])])
    pairs = ends[(slot[ends[:, 0]] >= 0) & (target_slot[ends[:, 1]] >= 0)]
    near, far = slot[pairs[:, 0]], target_slot[pairs[:, 1]]
    without = ~np.isin(targets, ends[np.isin(ends[:, 0], drawn), 1])
    chosen: list[int] = []
    while len(chosen) < budget and without.any():
        gain = np.bincount(near[without[far]], minlength=len(candidates))
        best = int(np.argmax(gain))
        if gain[best] == 0:
            break
        chosen.append(int(candidates[best]))
        without[far[near == best]] = False
    return chosen


def frontier(lattice: Lattice, satisfying: np.ndarray, minimal: np.ndarray, *, first: Iterable[int] = (),
             cap: int = DRAW_CAP) -> Focus:
    """The focused view's nodes under ``cap`` (see the module's docstring for the order)."""
    groups = frontier_groups(lattice, satisfying, minimal)
    first = list(dict.fromkeys(int(i) for i in first))[:cap]
    minimal_ids = groups["k-minimal"][~np.isin(groups["k-minimal"], first)]
    candidates = np.concatenate([groups["failing just below"], groups["satisfying just above"]])
    n = min(len(minimal_ids), cap - len(first))
    for _ in range(ROUNDS):  # fewer k-minimal nodes until they fit with their connectors
        base = np.concatenate([np.asarray(first, dtype=np.int64), minimal_ids[:n]])
        joins = connectors(lattice, np.intersect1d(base, groups["k-minimal"]), candidates, base, cap)
        excess = len(base) + len(joins) - cap
        if excess <= 0:
            break
        n = max(0, n - excess)
    chosen = dict.fromkeys([*base.tolist(), *joins[:cap - len(base)]])
    for i in candidates.tolist():  # the rest of the frontier, room permitting
        if len(chosen) >= cap:
            break
        chosen.setdefault(i)
    ids = np.fromiter(chosen, dtype=np.int64)
    return Focus(ids=ids, total={g: len(v) for g, v in groups.items()},
                 drawn={g: int(np.isin(v, ids).sum()) for g, v in groups.items()}, cap=cap)
