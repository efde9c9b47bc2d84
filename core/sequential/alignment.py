"""The group alignment: every group's *consensus*, the history all its members are released with
(the sequences of ``anonymize``).

``align_groups`` aligns the members of every group at once, compiled
(``alignment_kernels``), on up to two threads, and gives a
``GroupConsensus``; one visit of it, as the release reads it, is a ``ConsensusVisit``. The
code hierarchy enters as ``release_tables`` gives it: the tables of F
(``cost``), except that values meeting nowhere, or only at a study's
synthetic root, cannot be kept. ``NodeNCP`` prices what is kept. The pure-Python oracle of the
alignment is ``alignment_oracle``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import microrelease.core.sequential.alignment_kernels as kernels
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.sequential.cost import hierarchy_tables, in_threads, node_ncp, thread_count
from microrelease.core.sequential.rt_data import SequentialData


def release_tables(data) -> tuple[np.ndarray, np.ndarray]:
    """The code hierarchy's tables as the release reads them: values that never meet cannot be kept
    (infinite), nor can events of two tables, which meet only at a study's synthetic root (event_codes.py)."""
    hcodes, tab = hierarchy_tables(data.code_hierarchy, apart=np.inf)
    if data.event_tables:
        tab[data.code_hierarchy.height, 0] = np.inf
    return hcodes, tab


class NodeNCP:
    """The NCP of a hierarchy's nodes, computed once per level; a node is (level, a ground value under
    it), and above the top (where a pair that never meets would go) its NCP is infinite."""

    def __init__(self, h: Hierarchy):
        self.h, self.tables = h, node_ncp(h)

    def ncp(self, level: int, rep: int) -> float:
        return float(self.tables[level][self.h.codes[level][rep]]) if level <= self.h.height else math.inf


@dataclass
class ConsensusVisit:
    """One visit of a consensus: the interval it stands for, and its codes (nodes of the code hierarchy)."""

    low: float  # exact times (see times.py): the interval the visit stands for
    high: float
    codes: list[tuple[int, int]]  # (level, representative ground code) per position


def member_visits(data: SequentialData, e: int) -> list[tuple[float, float, list[int]]]:
    """Entity e's visits as (first time, last time, [ground codes]), times exact."""
    out = []
    for v in range(data.visit_ptr[e], data.visit_ptr[e + 1]):
        a, b = data.code_ptr[v], data.code_ptr[v + 1]
        out.append((data.times[a].item(), data.times[b - 1].item(), data.codes[a:b].tolist()))
    return out


@dataclass(frozen=True, eq=False)
class GroupConsensus:
    """Every group's consensus history as CSR arrays: group g's visits are ``group_ptr[g]:group_ptr[g+1]``;
    visit v spans the exact times [``low[v]``, ``high[v]``] (values of ``SequentialData.times``) and holds
    the codes ``code_ptr[v]:code_ptr[v+1]``; code c is the node at ``level[c]`` of the code hierarchy above
    the ground code ``rep[c]``."""

    group_ptr: np.ndarray
    low: np.ndarray
    high: np.ndarray
    code_ptr: np.ndarray
    level: np.ndarray
    rep: np.ndarray


def align_groups(data, groups: np.ndarray, *, w_time: float, span: float, step_bytes: int = kernels.STEP_BYTES,
                 workers: int | None = None) -> GroupConsensus:
    """The consensus of every group (``groups``: the group number 0..G−1 of every entity, as
    ``group_entities`` returns), compiled, on ``workers``
    threads (default: up to 2 cores).

    The member with fewest codes (ties: input order) gives the starting consensus, each visit spanning
    its events' times; every further member in that order is aligned to it: a step matches one
    consensus visit with one or two consecutive member visits, or two consensus visits with one
    member visit (ties: in that order, then dropping a consensus visit, then a member's; within 1e-9),
    at the cost of the codes' edit distance (substitution NCP of the common ancestor, an unmatched
    code 1) + w_T · (widening of the interval / ``span`` + visits merged); dropping a visit costs its
    codes + w_T. Matched codes rise to their lowest common ancestor and a run's interval covers all its
    visits; unmatched visits and codes are dropped. ``step_bytes``: the largest trace-back table kept
    whole (one byte per pair of visits); a larger one is rebuilt in blocks, in O(√N·M) memory."""
    groups = np.asarray(groups, dtype=np.int64)
    members = np.argsort(groups, kind="stable")  # input order within each group
    group_ptr = np.searchsorted(groups[members], np.arange(int(groups.max(initial=-1)) + 2))
    hcodes, tab = release_tables(data)
    vcap, ccap = kernels.consensus_caps(group_ptr, members, data.visit_ptr, data.code_ptr)
    times, codes = data.times, data.codes.astype(np.int64)
    low, high, vlen = np.empty(vcap[-1], dtype=times.dtype), np.empty(vcap[-1], dtype=times.dtype), np.empty(
        vcap[-1], dtype=np.int64)
    level, rep = np.empty(ccap[-1], dtype=np.int64), np.empty(ccap[-1], dtype=np.int64)
    n_groups = len(group_ptr) - 1
    nv, nc = np.zeros(n_groups, dtype=np.int64), np.zeros(n_groups, dtype=np.int64)

    def part(g0, g1):  # each group writes only its own room: threads never share a cell
        kernels.consensus_slots(g0, g1, group_ptr, members, data.visit_ptr, data.code_ptr, codes, times, hcodes,
                                tab, float(w_time), float(span), int(step_bytes), vcap, ccap, low, high, vlen, level,
                                rep, nv, nc)

    workers = thread_count(workers)
    in_threads(n_groups, workers, part, pieces=8 * workers)  # small pieces: groups differ in cost
    return GroupConsensus(*kernels.consensus_compact(vcap, ccap, low, high, vlen, level, rep, nv, nc))
