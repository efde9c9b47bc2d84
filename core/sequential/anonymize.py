"""Making a group's members indistinguishable on both parts, and writing the anonymized tables.

Relational QIs: each generalized to the lowest level of its hierarchy at which all members agree.
Sequences: a progressive multiple alignment. The first member's visits are the starting consensus;
each further member's visits are aligned to it by the same two-level dynamic programming as the cost
function (a consensus code stands for the lowest common ancestor of the codes aligned to it; a
consensus visit for the interval of their times). Consensus visits or codes that a member does not
match are dropped (suppressed for everyone), as are the member's own unmatched elements. At the end
every member's sequence is the consensus: codes generalized to their common ancestor, times to the
interval [first, last] (or, with ``relative_time``, just the visit's rank). Suppressed elements are
counted per entity.

Entity ids are replaced by pseudonyms drawn from OS entropy (so a pseudonym says nothing of its
entity's input position); direct identifiers are dropped. The written order is the release path's
(:func:`microrelease.core.sequential.release.write_sequential`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.sequential.cost import node_ncp
from microrelease.core.sequential.model import SequentialData


class _Tree:
    """A hierarchy's LCA levels and node NCPs, computed once (the alignment asks for them per cell).

    A node is (level, a ground value under it); the LCA of a node and a ground value u is at the
    higher of the node's level and the level where the two ground values meet."""

    def __init__(self, h: Hierarchy):
        self.h, self.lca, self.tables = h, h.lca_levels(), node_ncp(h)

    def lca_level(self, level: int, rep: int, u: int) -> int:
        return max(level, int(self.lca[rep, u]))

    def ncp(self, level: int, rep: int) -> float:
        return float(self.tables[level][self.h.codes[level][rep]])


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


@dataclass
class _Visit:
    low: float
    high: float
    codes: list[tuple[int, int]]  # (level, representative ground code) per position


def _code_cost(h: _Tree, node: tuple[int, int], u: int) -> float:
    return h.ncp(h.lca_level(node[0], node[1], u), node[1])


def _code_pairs(h: _Tree, nodes: list[tuple[int, int]], codes: list[int]) -> list[tuple[int, int]]:
    return _align(len(nodes), len(codes), lambda i, j: _code_cost(h, nodes[i], codes[j]),
                  lambda i: 1.0, lambda j: 1.0)


def _visit_cost(h: _Tree, cv: _Visit, t: float, codes: list[int], w_time: float, span: float) -> float:
    matched = _code_pairs(h, cv.codes, codes)
    code_cost = sum(_code_cost(h, cv.codes[a], codes[b]) for a, b in matched)
    unmatched = len(cv.codes) + len(codes) - 2 * len(matched)
    widen = (max(cv.high, t) - min(cv.low, t)) - (cv.high - cv.low)
    return code_cost + unmatched + w_time * widen / span


def _merge_member(h: _Tree, consensus: list[_Visit], theirs, w_time: float, span: float) -> list[_Visit]:
    """Align one member's visits to the consensus; keep only what both have, generalized."""
    pairs = _align(len(consensus), len(theirs),
                   lambda i, j: _visit_cost(h, consensus[i], theirs[j][0], theirs[j][1], w_time, span),
                   lambda i: len(consensus[i].codes) + w_time, lambda j: len(theirs[j][1]) + w_time)
    merged = []
    for i, j in pairs:
        cv, (t, codes) = consensus[i], theirs[j]
        kept = [(h.lca_level(cv.codes[a][0], cv.codes[a][1], codes[b]), cv.codes[a][1])
                for a, b in _code_pairs(h, cv.codes, codes)]
        if kept:
            merged.append(_Visit(min(cv.low, t), max(cv.high, t), kept))
    return merged


def group_consensus(data: SequentialData, members: list[int], w_time: float, span: float,
                    tree: _Tree | None = None) -> list[_Visit]:
    h = tree or _Tree(data.code_hierarchy)
    consensus = [_Visit(t, t, [(0, c) for c in codes]) for t, codes in data.visits(members[0])]
    for e in members[1:]:
        consensus = _merge_member(h, consensus, data.visits(e), w_time, span)
    return consensus


@dataclass(frozen=True, eq=False)
class SequentialRelease:
    """The anonymized tables and what it cost. ``pseudonym`` maps input entity -> released id
    (kept in memory for the attack simulation and tests; never written)."""

    entities: pd.DataFrame
    events: pd.DataFrame
    groups: np.ndarray
    k: int
    suppressed_elements: np.ndarray  # per entity
    relational_loss: float  # mean NCP of the released QI values
    sequence_loss: float  # share of codes suppressed plus mean NCP of the kept ones (both / elements)
    pseudonym: np.ndarray = field(repr=False)


def anonymize_groups(data: SequentialData, groups: np.ndarray, k: int, *, w_time: float = 1.0,
                     relative_time: bool = False, sequences: bool = True) -> SequentialRelease:
    """Generalize every group on both parts and build the output tables. ``sequences=False`` leaves
    the sequences as they are (the relational-only baseline the attack is compared with)."""
    # Pseudonyms from OS entropy, never from a user's seed: with the seed, anyone could map every
    # pseudonym back to its input position.
    generator = np.random.default_rng()
    n = data.n_entities
    names = np.array([f"E{i:06d}" for i in generator.permutation(n)], dtype=object)
    times = data.visit_time
    span = float(times.max() - times.min()) if len(times) and times.max() > times.min() else 1.0
    ents = data.entities.drop(columns=[*data.identifiers, data.entity_id]).copy()
    rel_ncp = np.zeros((n, len(data.qi)))
    suppressed = np.zeros(n, dtype=np.int64)
    kept_ncp = []
    rows = []
    h = data.code_hierarchy
    tree = _Tree(h)
    qi_trees = [_Tree(hq) for hq in data.hierarchies]
    for g in range(int(groups.max()) + 1):
        members = [int(e) for e in np.flatnonzero(groups == g)]
        for q, (name, hq) in enumerate(zip(data.qi, data.hierarchies, strict=True)):
            values = data.qi_codes[members, q]
            level = next(lv for lv in range(hq.height + 1) if len(set(hq.codes[lv][values])) == 1)
            label = hq.labels[level][hq.codes[level][values[0]]]
            ents.loc[members, name] = label
            rel_ncp[members, q] = qi_trees[q].ncp(level, int(values[0]))
        if not sequences:
            for e in members:
                for rank, (t, codes) in enumerate(data.visits(e), start=1):
                    rows.extend((names[e], f"{names[e]}-V{rank}", f"{t:g}", h.ground[c]) for c in codes)
            continue
        consensus = group_consensus(data, members, w_time, span, tree)
        n_kept = sum(len(v.codes) for v in consensus)
        for e in members:
            n_codes = int(data.code_ptr[data.visit_ptr[e + 1]] - data.code_ptr[data.visit_ptr[e]])
            suppressed[e] = n_codes - n_kept
            for rank, v in enumerate(consensus, start=1):
                when = str(rank) if relative_time else (f"{v.low:g}" if v.low == v.high else f"{v.low:g}-{v.high:g}")
                for level, rep in v.codes:
                    rows.append((names[e], f"{names[e]}-V{rank}", when, h.labels[level][h.codes[level][rep]]))
                    kept_ncp.append(tree.ncp(level, rep))
    ents.insert(0, data.entity_id, names)
    events = pd.DataFrame(rows, columns=[data.entity_id, data.sequence_key, data.order_by, data.code])
    events = events.sort_values([data.entity_id], kind="stable").reset_index(drop=True)
    total_codes = len(data.codes)
    seq_loss = (suppressed.sum() + float(np.sum(kept_ncp))) / total_codes if total_codes else 0.0
    return SequentialRelease(ents, events, groups, k, suppressed, float(rel_ncp.mean()) if rel_ncp.size else 0.0,
                             float(seq_loss), names)
