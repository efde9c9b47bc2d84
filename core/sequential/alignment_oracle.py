"""The pure-Python group alignment: the oracle that the compiled one
(``align_groups``) is tested against, group by group, and
a plain reading of its definition (the same moves, costs and tie rules, on whole tables).

``group_consensus`` gives a group's consensus, the visits every member is released with: the
members are taken fewest codes first (ties: input order); the first one's visits are the starting
consensus, and each further member's visits are aligned to it by the moves of ``MOVES``
(``_merge_member``), keeping only what both have, generalized.
"""

from __future__ import annotations

import numpy as np

from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.sequential.alignment import ConsensusVisit, NodeNCP, member_visits
from microrelease.core.sequential.rt_data import SequentialData

# a step of the visit alignment: (consensus visits, member visits) matched into one released visit
MOVES = ((1, 1), (1, 2), (2, 1))


class _Tree(NodeNCP):
    """A hierarchy's LCA levels and node NCPs, computed once (the alignment asks for them per cell).

    A node is (level, a ground value under it); the LCA of a node and a ground value u is at the
    higher of the node's level and the level where the two ground values meet (height + 1 if they
    never meet: such a pair cannot be kept, its NCP is infinite)."""

    def __init__(self, h: Hierarchy, root_allowed: bool = True):
        super().__init__(h)
        self.lca = h.lca_levels()
        if not root_allowed:  # a study's synthetic root (event_codes.py): a pair meeting there cannot be kept
            self.lca[self.lca == h.height] = h.height + 1

    def lca_level(self, level: int, rep: int, u: int) -> int:
        return max(level, int(self.lca[rep, u]))


def _align(rows_a: int, rows_b: int, sub, drop_a, drop_b) -> list[tuple[int, int]]:
    """Edit-distance alignment; returns the matched (i, j) pairs."""
    cost = np.zeros((rows_a + 1, rows_b + 1))
    for i in range(1, rows_a + 1):
        cost[i, 0] = cost[i - 1, 0] + drop_a(i - 1)
    for j in range(1, rows_b + 1):
        cost[0, j] = cost[0, j - 1] + drop_b(j - 1)
    for i in range(1, rows_a + 1):
        for j in range(1, rows_b + 1):
            cost[i, j] = min(cost[i - 1, j] + drop_a(i - 1), cost[i, j - 1] + drop_b(j - 1),
                             cost[i - 1, j - 1] + sub(i - 1, j - 1))
    pairs, i, j = [], rows_a, rows_b
    while i > 0 and j > 0:
        if np.isclose(cost[i, j], cost[i - 1, j - 1] + sub(i - 1, j - 1)):
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif np.isclose(cost[i, j], cost[i - 1, j] + drop_a(i - 1)):
            i -= 1
        else:
            j -= 1
    return pairs[::-1]


def _code_cost(h: _Tree, node: tuple[int, int], u: int) -> float:
    return h.ncp(h.lca_level(node[0], node[1], u), node[1])


def _code_pairs(h: _Tree, nodes: list[tuple[int, int]], codes: list[int]) -> list[tuple[int, int]]:
    return _align(len(nodes), len(codes), lambda i, j: _code_cost(h, nodes[i], codes[j]),
                  lambda i: 1.0, lambda j: 1.0)


def _codes_distance(h: _Tree, nodes: list[tuple[int, int]], codes: list[int]) -> float:
    """The edit distance of the alignment above (substitution NCP(LCA), an unmatched code 1), two rows."""
    prev = [float(j) for j in range(len(codes) + 1)]
    for i, node in enumerate(nodes, start=1):
        cur = [float(i)]
        for j, u in enumerate(codes, start=1):
            cur.append(min(prev[j] + 1.0, cur[j - 1] + 1.0, prev[j - 1] + _code_cost(h, node, u)))
        prev = cur
    return prev[-1]


def _run_cost(h: _Tree, cons: list[ConsensusVisit], mine: list[tuple[float, float, list[int]]],
              w_time: float, span: float) -> float:
    """Cost of making consecutive consensus visits ``cons`` and member visits ``mine`` one visit."""
    nodes = [c for v in cons for c in v.codes]
    codes = [c for _, _, cs in mine for c in cs]
    low = min(min(float(v.low) for v in cons), min(float(lo) for lo, _, _ in mine))
    high = max(max(float(v.high) for v in cons), max(float(hi) for _, hi, _ in mine))
    widen = (high - low) - sum(float(v.high) - float(v.low) for v in cons)
    merged = len(cons) + len(mine) - 2
    return _codes_distance(h, nodes, codes) + w_time * (widen / span + merged)


def _merge_member(h: _Tree, consensus: list[ConsensusVisit], theirs, w_time: float,
                  span: float) -> list[ConsensusVisit]:
    """Align one member's visits (low, high, codes) to the consensus by the moves of ``MOVES``
    (ties: the earlier move, then dropping a consensus visit, then a member's); keep only what both
    have, generalized."""
    n, m = len(consensus), len(theirs)
    cost = np.full((n + 1, m + 1), np.inf)
    step = np.zeros((n + 1, m + 1, 2), dtype=np.int8)
    cost[0, 0] = 0.0
    for i in range(n + 1):
        for j in range(m + 1):
            options = [(a, b, cost[i - a, j - b] + _run_cost(h, consensus[i - a:i], theirs[j - b:j], w_time, span))
                       for a, b in MOVES if a <= i and b <= j]
            if i:
                options.append((1, 0, cost[i - 1, j] + len(consensus[i - 1].codes) + w_time))
            if j:
                options.append((0, 1, cost[i, j - 1] + len(theirs[j - 1][2]) + w_time))
            if options:
                best = min(c for _, _, c in options)
                a, b, cost[i, j] = next(o for o in options if o[2] <= best + 1e-9)
                step[i, j] = (a, b)
    merged, i, j = [], n, m
    while i or j:
        a, b = (int(x) for x in step[i, j])
        if a and b:
            cons, mine = consensus[i - a:i], theirs[j - b:j]
            nodes = [c for v in cons for c in v.codes]
            codes = [c for _, _, cs in mine for c in cs]
            kept = [(h.lca_level(nodes[p][0], nodes[p][1], codes[q]), nodes[p][1])
                    for p, q in _code_pairs(h, nodes, codes)]
            if kept:
                merged.append(ConsensusVisit(min(*(v.low for v in cons), *(lo for lo, _, _ in mine)),
                                             max(*(v.high for v in cons), *(hi for _, hi, _ in mine)), kept))
        i, j = i - a, j - b
    return merged[::-1]


def group_consensus(data: SequentialData, members: list[int], w_time: float, span: float,
                    tree: _Tree | None = None) -> list[ConsensusVisit]:
    """The visits every member of the group is released with (see the module docstring)."""
    h = tree or _Tree(data.code_hierarchy, root_allowed=not data.event_tables)
    size = [int(data.code_ptr[data.visit_ptr[e + 1]] - data.code_ptr[data.visit_ptr[e]]) for e in members]
    order = [members[i] for i in sorted(range(len(members)), key=lambda i: (size[i], members[i]))]
    consensus = [ConsensusVisit(lo, hi, [(0, c) for c in codes])
                 for lo, hi, codes in member_visits(data, order[0])]
    for e in order[1:]:
        consensus = _merge_member(h, consensus, member_visits(data, e), w_time, span)
    return consensus
