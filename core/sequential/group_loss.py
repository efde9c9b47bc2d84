"""The loss of a group: what the release loses when these entities are made one (the grouping's price).

For a group G: loss(G) = w_R · |G| · rel(G) + s · (codes of G − |G| · V(G)) + Σ_T s_T · (rows of G in
T − |G| · fewest rows of a member in T), where rel(G) is the mean NCP of the QIs' lowest common
generalization (the release generalizes them so; in a study, the QIs and the satellites' slots, weighted
as in F), the last sum runs over a study's satellite tables T (the release keeps, per table, as many
rows as its member with fewest, ``satellites``), and V(G) the value of
G's consensus (the group alignment of ``alignment_kernels``): each kept
code is worth 1 − μ · NCP(its node) to every member. So a code suppressed costs s for every member,
and a code kept at the top of the hierarchy costs s · μ.

The prices: s = ``SUPPRESSION`` · w_S / (mean codes of an entity), against w_R per unit of a member's
relational NCP; μ = ``GENERALIZATION`` (a kept ``*`` still keeps its event and its visit's time, so it
costs less than a suppression). Both were chosen on the bundled hospital sample (k = 2, 5, 10;
SUPPRESSION from 1.5 to 3, GENERALIZATION from 0 to 0.5): a higher SUPPRESSION trades relational NCP
for fewer suppressed codes, a higher GENERALIZATION keeps more specific codes at the price of more
suppressed ones; at 1.75 and 0.3 the codes suppressed, the relational NCP and the sequence loss at
k = 5 are all below those of grouping by F alone. A satellite row of T suppressed costs s_T = w_R ·
(T's columns / SLOTS) / (the columns' total weight in rel): what F charges for an absent row in one of
its slots (on the bundled study at k = 5, insurance rows suppressed: 26 % grouping by F, 31 % with
s_T = 0, 11 % with this price).

Bounds for the search: a member merged into a consensus keeps at most min(its codes, the consensus's)
of them, each one of the consensus's at a node no lower, so V can only fall, and ``value_bound``
caps it from the visits' sizes alone, without aligning the codes.
"""

from __future__ import annotations

import numba as nb
import numpy as np

import microrelease.core.sequential.alignment_kernels as kernels
from microrelease.core.sequential.alignment import release_tables
from microrelease.core.sequential.satellites import SLOTS

SUPPRESSION = 1.75
GENERALIZATION = 0.3


@nb.njit(cache=True, nogil=True)
def first_consensus(e, visit_ptr, code_ptr, codes, times):
    """Entity e's visits as a consensus (each spanning its events' times; every code at level 0)."""
    v0, v1 = visit_ptr[e], visit_ptr[e + 1]
    low, high = np.empty(v1 - v0, dtype=times.dtype), np.empty(v1 - v0, dtype=times.dtype)
    for v in range(v0, v1):
        low[v - v0], high[v - v0] = times[code_ptr[v]], times[code_ptr[v + 1] - 1]
    ptr = code_ptr[v0:v1 + 1] - code_ptr[v0]
    return low, high, ptr, np.zeros(ptr[-1], dtype=np.int64), codes[code_ptr[v0]:code_ptr[v1]].astype(np.int64)


@nb.njit(cache=True, nogil=True)
def code_value(level, rep, hcodes, tab, mu):
    """What a kept code is worth to each member: 1 − μ · NCP of its node."""
    return 1.0 - mu * tab[level, hcodes[level, rep]]


@nb.njit(cache=True, nogil=True)
def consensus_value(level, rep, hcodes, tab, mu):
    total = 0.0
    for x in range(len(level)):
        total += code_value(level[x], rep[x], hcodes, tab, mu)
    return total


@nb.njit(cache=True, nogil=True)
def relational_after(qi_level, s, c, qi_codes, qi_hcodes, qi_tab, out_level):
    """rel of the group whose QIs stand at (qi_level, entity s's ancestors) once entity c joins; the new
    levels go into out_level (c = −1: no one joins)."""
    m = len(qi_level)
    top = qi_hcodes.shape[1] - 1
    total = 0.0
    for q in range(m):
        lv, u = qi_level[q], qi_codes[s, q]
        if c >= 0:  # lca_level, on the stacked tables without taking views of them
            while lv < top and qi_hcodes[q, lv, u] != qi_hcodes[q, lv, qi_codes[c, q]]:
                lv += 1
        out_level[q] = lv
        total += qi_tab[q, lv, qi_hcodes[q, lv, u]]
    return total / m if m else 0.0


@nb.njit(cache=True, nogil=True)
def rows_loss(members, count, skip, extra, rows, w_rows):
    """Σ_T s_T · (rows of the group in T − size · fewest rows) for members[:count], ``skip`` left out and
    ``extra`` added (−1: none); ``rows``: entities × satellite tables, the row counts."""
    total = 0.0
    for t in range(rows.shape[1]):
        held, fewest, size = 0, np.iinfo(np.int64).max, 0
        for x in range(count + 1):
            e = members[x] if x < count else extra
            if e < 0 or e == skip:
                continue
            held, fewest, size = held + rows[e, t], min(fewest, rows[e, t]), size + 1
        if size:
            total += w_rows[t] * (held - size * fewest)
    return total


@nb.njit(cache=True, nogil=True)
def group_loss(members, qi_codes, qi_hcodes, qi_tab, rows, w_rows, visit_ptr, code_ptr, codes, times, hcodes, tab,
               w_rel, w_sup, mu, w_time, span, step_bytes):
    """The loss of a group (the module docstring) with its consensus as the release aligns it
    (``group_consensus``); returns (loss, codes
    suppressed)."""
    first = members[0]
    qi_level = np.zeros(qi_codes.shape[1], dtype=np.int64)
    out = np.empty_like(qi_level)
    for t in range(1, len(members)):
        relational_after(qi_level, first, members[t], qi_codes, qi_hcodes, qi_tab, out)
        qi_level[:] = out
    rel = relational_after(qi_level, first, -1, qi_codes, qi_hcodes, qi_tab, out)
    total = 0
    for t in range(len(members)):
        total += code_ptr[visit_ptr[members[t] + 1]] - code_ptr[visit_ptr[members[t]]]
    _, _, _, level, rep = kernels.group_consensus(members, visit_ptr, code_ptr, codes, times, hcodes, tab, w_time,
                                                  span, step_bytes)
    value = consensus_value(level, rep, hcodes, tab, mu)
    size = len(members)
    return (w_rel * size * rel + w_sup * (total - size * value) + rows_loss(members, size, -1, -1, rows, w_rows),
            total - size * len(level))


@nb.njit(cache=True, nogil=True)
def visit_tops(c_ptr, level, rep, hcodes, tab, mu):
    """Per consensus visit u, the sums of its j largest code values, j = 0..|u|, at tops[c_ptr[u] + u + j]."""
    n = len(c_ptr) - 1
    tops = np.zeros(c_ptr[n] + n)
    for u in range(n):
        a, b = c_ptr[u], c_ptr[u + 1]
        values = np.empty(b - a)
        for x in range(a, b):
            values[x - a] = code_value(level[x], rep[x], hcodes, tab, mu)
        values = -np.sort(-values)
        for j in range(b - a):
            tops[a + u + j + 1] = tops[a + u + j] + values[j]
    return tops


@nb.njit(cache=True, nogil=True)
def _top(tops, c_ptr, u, t):
    """The sum of consensus visit u's t largest values (all of them if it has fewer)."""
    return tops[c_ptr[u] + u + min(t, c_ptr[u + 1] - c_ptr[u])]


@nb.njit(cache=True, nogil=True)
def value_bound(c_ptr, tops, e, visit_ptr, code_ptr, rows):
    """An upper bound of the value the consensus keeps once entity e is aligned to it: the best
    alignment by the release's moves (a consensus visit with one or two member visits, two consensus
    visits with one member visit, or a visit dropped) when each run keeps the largest values of its
    consensus visits up to the run's member codes (``rows``: 3 × (e's visits + 1) of work space)."""
    n, vb0 = len(c_ptr) - 1, visit_ptr[e]
    m = visit_ptr[e + 1] - vb0
    r2, r1, r0 = 0, 1, 2  # rows i − 2, i − 1, i, by index (swapping arrays costs atomic reference counts)
    for j in range(m + 1):
        rows[r2, j], rows[r1, j] = 0.0, 0.0
    for i in range(1, n + 1):
        u = i - 1
        rows[r0, 0] = 0.0
        for j in range(1, m + 1):
            v = vb0 + j - 1
            one = code_ptr[v + 1] - code_ptr[v]
            best = max(rows[r1, j], rows[r0, j - 1], rows[r1, j - 1] + _top(tops, c_ptr, u, one))
            if j >= 2:
                best = max(best, rows[r1, j - 2] + _top(tops, c_ptr, u, one + code_ptr[v] - code_ptr[v - 1]))
            if i >= 2:
                best = max(best, rows[r2, j - 1] + _top(tops, c_ptr, u - 1, one) + _top(tops, c_ptr, u, one))
            rows[r0, j] = best
        r2, r1, r0 = r1, r0, r2
    return rows[r1, m] if n else 0.0


class LossModel:
    """The arrays and prices of the loss over a ``CostModel``
    (its data, QI tables and weights)."""

    def __init__(self, model, *, suppression: float = SUPPRESSION, generalization: float = GENERALIZATION):
        d, w = model.data, model.weights
        self.model = model
        self.hcodes, self.tab = release_tables(d)  # the release's alignment tables (as alignment.align_groups)
        self.codes = d.codes.astype(np.int64)
        per_entity = np.diff(d.code_ptr[d.visit_ptr])
        mean = float(per_entity.mean()) if len(per_entity) and per_entity.mean() > 0 else 1.0
        self.w_rel, self.w_sup, self.mu = w.relational, w.sequence * suppression / mean, float(generalization)
        counts = [np.diff(t.row_ptr) for t in d.satellites]
        self.rows = np.column_stack(counts).astype(np.int64) if counts else np.zeros((d.n_entities, 0), np.int64)
        weight = float(d.cost_qi_weights.sum()) or 1.0
        self.w_rows = np.array([w.relational * len(t.qi) / SLOTS / weight for t in d.satellites], dtype=np.float64)

    def arrays(self) -> tuple:
        """What the kernels take: the QIs' codes and tables, the satellites' row counts and prices s_T, the
        sequences and the alignment's tables, then the prices (w_R, s, μ, w_T, the time span, the
        alignment's step_bytes)."""
        m, d = self.model, self.model.data
        return (d.cost_qi_codes, m.qi_hcodes, m.qi_tab, self.rows, self.w_rows, d.visit_ptr, d.code_ptr, self.codes,
                d.times, self.hcodes, self.tab, self.w_rel, self.w_sup, self.mu, float(m.weights.time),
                float(m.span), kernels.STEP_BYTES)

    def loss(self, members) -> tuple[float, int]:
        """(loss, codes suppressed) of the group of these entities, as the release aligns it."""
        members = np.sort(np.asarray(members, dtype=np.int64))  # the release's order: input order
        return group_loss(members, *self.arrays())
