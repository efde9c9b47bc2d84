"""Relational satellite tables: one-to-many rows of an entity, each with QIs (the patent's relational
part in several tables; e.g. a patient's insurance plans).

**Released.** A group's members are released with the same multiset of satellite rows: the member
with fewest rows (ties: input order) gives the starting rows; each further member's rows are matched
one-to-one to them (least total NCP: every assignment when there are few, else greedily by cost) and
every column rises to the lowest common ancestor of the matched values. Rows left without a partner
are suppressed (removed, counted per entity) for the whole group, so a released row always
generalizes one input row of each member.

**In the cost F.** F sees a satellite table through *slots*: the values of an entity's first
``SLOTS`` rows (sorted by their values in hierarchy order) as extra relational QIs, an absent row
being the missing value, which meets every value only at the top (NCP 1). Rows beyond the slots do
not enter F.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microrelease.core.data.reading import as_text
from microrelease.core.lattice.hierarchies import MISSING, Hierarchy
from microrelease.core.sequential.cost import node_ncp

SLOTS = 3
EXHAUSTIVE_UP_TO = 5040  # assignments tried one by one (7!); more are matched greedily


@dataclass(frozen=True, eq=False)
class Satellite:
    """One satellite table, validated and encoded: ``rows`` keeps the QI columns of the input rows in
    the order of ``entity`` (each row's entity position), rows of one entity sorted by their values."""

    name: str
    qi: tuple[str, ...]
    hierarchies: tuple[Hierarchy, ...]
    n_entities: int
    entity: np.ndarray  # per row, sorted by entity then values
    codes: np.ndarray  # rows x QIs, ground codes
    missing_counts: dict = field(default_factory=dict)  # QI -> rows with a blank value
    row_ptr: np.ndarray = field(init=False, repr=False)  # entity e's rows: row_ptr[e]:row_ptr[e+1]

    def __post_init__(self) -> None:
        object.__setattr__(self, "row_ptr", np.searchsorted(self.entity, np.arange(self.n_entities + 1)))


def encode_satellite(name: str, frame: pd.DataFrame, position: np.ndarray, n_entities: int,
                     qi: Sequence[str], hierarchies: Sequence[Hierarchy]) -> Satellite:
    """Encode one satellite table (``position``: each row's entity, found by the caller). A blank QI
    cell is a value of its own (as for the entity table's QIs)."""
    codes = np.empty((len(frame), len(qi)), dtype=np.int64)
    resolved, missing = [], {}
    for q, (column, h) in enumerate(zip(qi, hierarchies, strict=True)):
        text = as_text(frame[column])
        blank = int((text == MISSING).sum())
        if blank:
            missing[column], h = blank, h.with_missing()
        codes[:, q] = h.encode(text)
        resolved.append(h)
    order_keys = [h.tree_order()[codes[:, q]] for q, h in enumerate(resolved)]
    order = np.lexsort((*order_keys[::-1], position)) if len(qi) else np.argsort(position, kind="stable")
    return Satellite(name, tuple(qi), tuple(resolved), n_entities, position[order].astype(np.int64), codes[order],
                     missing)


def slot_hierarchies(sat: Satellite) -> list[Hierarchy]:
    """The hierarchies of the cost slots: each column's, with the missing value (an absent row)."""
    return [h.with_missing() for _ in range(SLOTS) for h in sat.hierarchies]


def slot_codes(sat: Satellite) -> np.ndarray:
    """entities x (SLOTS · QIs): the ground codes of each entity's first rows, the missing value's code
    where the entity has fewer rows (see the module docstring)."""
    hs = slot_hierarchies(sat)
    out = np.empty((sat.n_entities, len(hs)), dtype=np.int64)
    counts = np.diff(sat.row_ptr)
    m = len(sat.qi)
    for r in range(SLOTS):
        has = counts > r
        for q in range(m):
            column = np.full(sat.n_entities, hs[r * m + q].index[MISSING], dtype=np.int64)
            column[has] = sat.codes[sat.row_ptr[:-1][has] + r, q]
            out[:, r * m + q] = column
    return out


def _lca(h: Hierarchy, level: int, rep: int, u: int) -> int:
    """The level at which node (level, above ground ``rep``) and ground value u meet."""
    for lv in range(level, h.height + 1):
        if h.codes[lv][rep] == h.codes[lv][u]:
            return lv
    return h.height + 1


def _assign(cost: np.ndarray) -> list[tuple[int, int]]:
    """A one-to-one matching of the smaller side (rows i of ``cost``) to columns j of least total cost."""
    n, m = cost.shape
    if n > m:
        return [(i, j) for j, i in _assign(cost.T)]
    if n == 0:
        return []
    if np.prod(range(m - n + 1, m + 1), dtype=float) <= EXHAUSTIVE_UP_TO:
        best = min(itertools.permutations(range(m), n), key=lambda p: sum(cost[i, p[i]] for i in range(n)))
        return list(enumerate(best))
    pairs, used_i, used_j = [], set(), set()
    for flat in np.argsort(cost, axis=None, kind="stable"):
        i, j = divmod(int(flat), m)
        if i not in used_i and j not in used_j:
            pairs.append((i, j))
            used_i.add(i)
            used_j.add(j)
    return sorted(pairs)


def _row_cost(hs: Sequence[Hierarchy], tables: Sequence[list[np.ndarray]], row: list[tuple[int, int]],
              values: np.ndarray) -> float:
    """Mean NCP over the columns of a consensus row raised to cover one more input row (1 for a column
    whose values never meet: such a pair is not kept, see ``group_rows``)."""
    out = []
    for h, table, (lv, rep), u in zip(hs, tables, row, values, strict=True):
        top = _lca(h, lv, rep, int(u))
        out.append(float(table[top][h.codes[top][rep]]) if top <= h.height else 1.0)
    return float(np.mean(out))


def group_rows(sat: Satellite, members: Sequence[int]) -> list[list[tuple[int, int]]]:
    """The rows every member of a group is released with: per row, per QI, (level, ground rep). A
    matched pair with a column whose values never meet (a height-0 hierarchy) cannot be one released
    row: both are dropped, like rows without a partner."""
    hs = sat.hierarchies
    tables = [node_ncp(h) for h in hs]
    counts = [int(sat.row_ptr[e + 1] - sat.row_ptr[e]) for e in members]
    order = [members[i] for i in sorted(range(len(members)), key=lambda i: (counts[i], members[i]))]
    first = sat.codes[sat.row_ptr[order[0]]:sat.row_ptr[order[0] + 1]]
    consensus = [[(0, int(c)) for c in row] for row in first]
    for e in order[1:]:
        theirs = sat.codes[sat.row_ptr[e]:sat.row_ptr[e + 1]]
        cost = np.array([[_row_cost(hs, tables, row, mine) for mine in theirs] for row in consensus])
        merged = [[(_lca(h, lv, rep, int(u)), rep) for h, (lv, rep), u in zip(hs, consensus[i], theirs[j],
                                                                              strict=True)]
                  for i, j in _assign(cost.reshape(len(consensus), len(theirs)))]
        consensus = [row for row in merged if all(lv <= h.height for h, (lv, _) in zip(hs, row, strict=True))]
    return consensus


def anonymize_satellite(sat: Satellite, groups: np.ndarray, names: np.ndarray,
                        entity_id: str) -> tuple[pd.DataFrame, np.ndarray]:
    """The released rows of every group (see the module docstring), with the pseudonym column
    ``entity_id``; and per entity the rows suppressed."""
    by_group = np.argsort(groups, kind="stable")
    starts = np.searchsorted(groups[by_group], np.arange(int(groups.max(initial=-1)) + 2))
    suppressed = np.diff(sat.row_ptr).astype(np.int64)
    out: list[tuple] = []
    for g in range(len(starts) - 1):
        members = [int(e) for e in by_group[starts[g]:starts[g + 1]]]
        rows = group_rows(sat, members)
        labels = [tuple(h.labels[lv][h.codes[lv][rep]] for h, (lv, rep) in zip(sat.hierarchies, row, strict=True)) for row in rows]
        for e in members:
            suppressed[e] -= len(rows)
            out.extend((names[e], *row) for row in labels)
    return pd.DataFrame(out, columns=[entity_id, *sat.qi]), suppressed
