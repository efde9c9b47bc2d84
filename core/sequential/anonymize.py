"""Making a group's members indistinguishable on both parts, and writing the anonymized tables.

Relational QIs: each generalized to the lowest level of its hierarchy at which all members agree.
Sequences: a progressive multiple alignment. The members are taken fewest codes first (ties: input
order); the first one's visits are the starting consensus, and each further member's visits are
aligned to it by the two-level dynamic programming of the cost function (a consensus code stands for
the lowest common ancestor of the codes aligned to it; a consensus visit for the interval of their
times). A code without a partner is suppressed only after generalization has been tried at both
levels: within a visit every code that can be paired is kept at the common ancestor (up to ``*``),
and between visits two consecutive visits of the member (or of the consensus) may merge into one
released visit whose interval covers both, so that codes split over two visits on one side are kept
against one visit on the other. A merge costs w_T per visit merged plus the widening of the interval
(w_T × growth / time span), against |codes| + w_T for dropping a visit. Consensus visits or codes that
a member does not match are dropped (suppressed for everyone), as are the member's own unmatched
elements. At the end every member's sequence is the consensus: codes generalized to their common
ancestor, times to the interval first..last of the member's visits it stands for (written exactly,
see :mod:`microrelease.core.sequential.times`), or, with ``relative_time``, just the visit's rank.
Suppressed elements are counted per entity.

Entity ids are replaced by pseudonyms drawn from OS entropy (so a pseudonym says nothing of its
entity's input position); direct identifiers and dropped columns are not written, kept columns are
written as they are (see :class:`~microrelease.core.sequential.model.SequentialData`). The written
order is the release path's (:func:`microrelease.core.sequential.release.write_sequential`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.sequential.cost import GroupConsensus, align_groups, node_ncp, time_span
from microrelease.core.sequential.model import KEPT, QI, SequentialData

# a step of the visit alignment: (consensus visits, member visits) matched into one released visit
MOVES = ((1, 1), (1, 2), (2, 1))


class _Tree:
    """A hierarchy's LCA levels and node NCPs, computed once (the alignment asks for them per cell).

    A node is (level, a ground value under it); the LCA of a node and a ground value u is at the
    higher of the node's level and the level where the two ground values meet (height + 1 if they
    never meet: such a pair cannot be kept, its NCP is infinite)."""

    def __init__(self, h: Hierarchy, root_allowed: bool = True):
        self.h, self.lca, self.tables = h, h.lca_levels(), node_ncp(h)
        if not root_allowed:  # a study's synthetic root (event_codes.py): a pair meeting there cannot be kept
            self.lca[self.lca == h.height] = h.height + 1

    def lca_level(self, level: int, rep: int, u: int) -> int:
        return max(level, int(self.lca[rep, u]))

    def ncp(self, level: int, rep: int) -> float:
        return float(self.tables[level][self.h.codes[level][rep]]) if level <= self.h.height else math.inf


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
    low: object  # exact times (see times.py): the interval the visit stands for
    high: object
    codes: list[tuple[int, int]]  # (level, representative ground code) per position


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


def _run_cost(h: _Tree, cons: list[_Visit], mine: list[tuple[object, object, list[int]]], w_time: float,
              span: float) -> float:
    """Cost of making consecutive consensus visits ``cons`` and member visits ``mine`` one visit."""
    nodes = [c for v in cons for c in v.codes]
    codes = [c for _, _, cs in mine for c in cs]
    low = min(min(float(v.low) for v in cons), min(float(lo) for lo, _, _ in mine))
    high = max(max(float(v.high) for v in cons), max(float(hi) for _, hi, _ in mine))
    widen = (high - low) - sum(float(v.high) - float(v.low) for v in cons)
    merged = len(cons) + len(mine) - 2
    return _codes_distance(h, nodes, codes) + w_time * (widen / span + merged)


def _merge_member(h: _Tree, consensus: list[_Visit], theirs, w_time: float, span: float) -> list[_Visit]:
    """Align one member's visits (low, high, codes) to the consensus by the moves of :data:`MOVES`
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
                merged.append(_Visit(min(*(v.low for v in cons), *(lo for lo, _, _ in mine)),
                                     max(*(v.high for v in cons), *(hi for _, hi, _ in mine)), kept))
        i, j = i - a, j - b
    return merged[::-1]


def member_visits(data: SequentialData, e: int) -> list[tuple[object, object, list[int]]]:
    """Entity e's visits as (first time, last time, [ground codes]), times exact."""
    out = []
    for v in range(data.visit_ptr[e], data.visit_ptr[e + 1]):
        a, b = data.code_ptr[v], data.code_ptr[v + 1]
        out.append((data.times[a].item(), data.times[b - 1].item(), data.codes[a:b].tolist()))
    return out


def group_consensus(data: SequentialData, members: list[int], w_time: float, span: float,
                    tree: _Tree | None = None) -> list[_Visit]:
    """The visits every member of the group is released with (see the module docstring)."""
    h = tree or _Tree(data.code_hierarchy, root_allowed=not data.event_tables)
    size = [int(data.code_ptr[data.visit_ptr[e + 1]] - data.code_ptr[data.visit_ptr[e]]) for e in members]
    order = [members[i] for i in sorted(range(len(members)), key=lambda i: (size[i], members[i]))]
    consensus = [_Visit(lo, hi, [(0, c) for c in codes]) for lo, hi, codes in member_visits(data, order[0])]
    for e in order[1:]:
        consensus = _merge_member(h, consensus, member_visits(data, e), w_time, span)
    return consensus


def consensus_of(aligned: GroupConsensus, g: int) -> list[_Visit]:
    """Group ``g``'s consensus visits out of the compiled alignment of every group."""
    visits = range(aligned.group_ptr[g], aligned.group_ptr[g + 1])
    return [_Visit(aligned.low[v].item(), aligned.high[v].item(),
                   [(int(aligned.level[c]), int(aligned.rep[c])) for c in range(aligned.code_ptr[v], aligned.code_ptr[v + 1])])
            for v in visits]


@dataclass(frozen=True, eq=False)
class SequentialRelease:
    """The anonymized tables and what it cost. ``pseudonym`` maps input entity -> released id
    (kept in memory for the attack simulation and tests; never written). ``intervals``: released id
    -> the (first, last) times of each of its released visits, in order, on the float axis of
    ``SequentialData.visit_time`` (written as such unless ``relative_time``). ``columns``: what
    happened to each input column, per table (for the report)."""

    entities: pd.DataFrame
    events: pd.DataFrame
    groups: np.ndarray
    k: int
    suppressed_elements: np.ndarray  # per entity
    relational_loss: float  # mean NCP of the released QI values
    sequence_loss: float  # share of codes suppressed plus mean NCP of the kept ones (both / elements)
    pseudonym: np.ndarray = field(repr=False)
    intervals: dict = field(default_factory=dict, repr=False)
    columns: dict = field(default_factory=dict, repr=False)


def anonymize_groups(data: SequentialData, groups: np.ndarray, k: int, *, w_time: float = 1.0,
                     relative_time: bool = False, sequences: bool = True) -> SequentialRelease:
    """Generalize every group on both parts and build the output tables. ``sequences=False`` leaves
    the sequences as they are (the relational-only baseline the attack is compared with)."""
    if isinstance(w_time, bool) or not isinstance(w_time, (int, float)) or not (math.isfinite(w_time) and w_time >= 0):
        raise InvalidParameterError(f"The 'weight_time' parameter must be finite and at least 0. Got {w_time!r} "
                                    "instead.", parameter="weight_time")
    # Pseudonyms from OS entropy, never from a user's seed: with the seed, anyone could map every
    # pseudonym back to its input position.
    generator = np.random.default_rng()
    n = data.n_entities
    names = np.array([f"E{i:06d}" for i in generator.permutation(n)], dtype=object)
    scale = data.time_scale
    span = time_span(data)
    released = [c for c, role in data.column_roles[data.name].items() if role in (QI, KEPT)]
    ents = data.entities[released].copy()
    rel_ncp = np.zeros((n, len(data.qi)))
    suppressed = np.zeros(n, dtype=np.int64)
    kept_ncp, rows, intervals = [], [], {}
    h = data.code_hierarchy
    tree = _Tree(h)
    qi_trees = [_Tree(hq) for hq in data.hierarchies]
    # every group's consensus at once, compiled (group_consensus is its pure-Python oracle in the tests)
    aligned = align_groups(data, groups, w_time=w_time, span=span) if sequences and len(groups) else None
    # each group's members, in input order, without a scan of every entity per group
    by_group = np.argsort(groups, kind="stable")
    starts = np.searchsorted(groups[by_group], np.arange(int(groups.max()) + 2 if len(groups) else 1))
    qi_labels = [np.empty(n, dtype=object) for _ in data.qi]  # filled per group, set once (not per .loc)
    for g in range(int(groups.max()) + 1 if len(groups) else 0):
        members = [int(e) for e in by_group[starts[g]:starts[g + 1]]]
        for q, hq in enumerate(data.hierarchies):
            values = data.qi_codes[members, q]
            level = next(lv for lv in range(hq.height + 1) if len(set(hq.codes[lv][values])) == 1)
            qi_labels[q][members] = hq.labels[level][hq.codes[level][values[0]]]
            rel_ncp[members, q] = qi_trees[q].ncp(level, int(values[0]))
        if not sequences:
            for e in members:
                visits = member_visits(data, e)
                intervals[names[e]] = tuple(np.array([float(v[i]) for v in visits]) for i in (0, 1))
                a = data.code_ptr[data.visit_ptr[e]]
                for rank, (_, _, codes) in enumerate(visits, start=1):
                    rows.extend((names[e], f"{names[e]}-V{rank}", scale.text(data.times[a + x]), h.ground[c])
                                for x, c in enumerate(codes))
                    a += len(codes)
            continue
        consensus = consensus_of(aligned, g)
        n_kept = sum(len(v.codes) for v in consensus)
        whens = [str(rank) if relative_time else scale.interval(v.low, v.high) for rank, v in enumerate(consensus, 1)]
        labels = [[h.labels[level][h.codes[level][rep]] for level, rep in v.codes] for v in consensus]
        kept_ncp.extend(tree.ncp(level, rep) * len(members) for v in consensus for level, rep in v.codes)
        bounds = tuple(np.array([float(getattr(v, end)) for v in consensus]) for end in ("low", "high"))
        for e in members:
            suppressed[e] = int(data.code_ptr[data.visit_ptr[e + 1]] - data.code_ptr[data.visit_ptr[e]]) - n_kept
            intervals[names[e]] = bounds
            for rank, (when, visit) in enumerate(zip(whens, labels, strict=True), start=1):
                rows.extend((names[e], f"{names[e]}-V{rank}", when, label) for label in visit)
    for name, labels in zip(data.qi, qi_labels, strict=True):
        ents[name] = labels
    ents.insert(0, data.entity_id, names)
    events = pd.DataFrame(rows, columns=[data.entity_id, data.sequence_key, data.order_by, data.code])
    events = events.sort_values([data.entity_id], kind="stable").reset_index(drop=True)
    total_codes = len(data.codes)
    seq_loss = (suppressed.sum() + float(np.sum(kept_ncp))) / total_codes if total_codes else 0.0
    return SequentialRelease(ents, events, groups, k, suppressed, float(rel_ncp.mean()) if rel_ncp.size else 0.0,
                             float(seq_loss), names, intervals, data.column_fates(relative_time=relative_time, sequences=sequences))
