"""Checking a relational + sequential release from its output alone, and attacking it.

:func:`check_release`: for every released entity, how many entities share its full relational QI
values *and* its whole sequence of visits (times and codes, in order). k-anonymity over both parts
holds when the smallest count is >= k. Computed from the output tables only, by grouping text.

**The attacks** (:func:`attack`, :func:`attack_figures`). A *record* is what a reader sees of one
entity: its QI values and its history, visits in order, each a time interval [low, high] and an
ordered list of codes. Released records come from the written files (QIs, codes, visit order) and,
for times, from the release in memory (``SequentialRelease.intervals``; the written interval text is
never parsed); original records are the input (a visit's interval spans its events' times). The
attacker aims at one person t and knows t's original QI values and either

- m of t's codes in the order of t's history (the *sub-sequence attack*, m = 2 or 3; positions
  drawn uniformly without replacement, all of them when t has fewer), or
- t's whole history with times (*full knowledge*).

It knows how a release is made: a released value is the true value or an ancestor in its hierarchy
(``*`` hides it), elements may be suppressed (removed), order is kept, a released visit may stand
for several visits, and its interval holds their times. A record R is *consistent* with what it
knows when (1) each QI value of R is t's value or an ancestor of it, and (2) with full knowledge, R's
history could have been made from t's: each visit of R stands for one or more visits of t (those of
R's first visit all before those of its second, and so on) whose times lie in its interval, and its
codes go, in order, to distinct codes of those visits, each the code or an ancestor of it. With m
codes (2) asks nothing: the rest of t's history is unknown and the known codes may have been
suppressed. The attacker assumes the release lost as little as it could: a record's *score* is first
the number of known codes it accounts for (the most that match, in order, distinct codes of R, each
the code or an ancestor; with full knowledge, every code of R), then the fewest levels climbed (the
levels of those matched codes' labels plus those of R's QI values; a label's level is the lowest at
which it occurs in its hierarchy). Its *candidates* are the
consistent records of the highest score; it picks one at random. Success for t = 1/|candidates| when
t's own record is among them, else 0; the figure is the mean over targets. (The preference for
specific labels matters: without it, the sub-sequence attack on the hospital sample succeeds several
times less often, which would understate the risk.)

*Before* is the same attacker against the original records (nothing generalized or suppressed: with
full knowledge the candidates are the records with t's QIs, codes and times, so a unique history
gives 1). *After*, every member of t's group has t's record, so when t is a candidate so are all
>= k of them: success <= 1/k for every target, whatever the attacker knows (``found`` says how often
t was a candidate).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.release.cells import formula_mask
from microrelease.core.sequential.model import SequentialData
from microrelease.core.validation import check_rng

# name -> codes known (None: the whole history with times)
ATTACKERS: dict[str, int | None] = {"qi_2_codes": 2, "qi_3_codes": 3, "full_knowledge": None}
ATTACKER_TEXT = {"qi_2_codes": "QIs + 2 codes in order", "qi_3_codes": "QIs + 3 codes in order",
                 "full_knowledge": "QIs + whole history with times"}


def signatures(entities: pd.DataFrame, events: pd.DataFrame, entity_id: str, qi: Sequence[str], sequence_key: str,
               order_by: str, code: str) -> pd.Series:
    """One text signature per released entity: QI values | visit (time: codes) | ..."""
    ev = events.astype(str)
    visit = ev.groupby([entity_id, sequence_key], sort=False).agg(time=(order_by, "first"), codes=(code, "|".join))
    visit = visit.reset_index()
    visit["rank"] = _rank(visit[sequence_key])
    visit = visit.sort_values([entity_id, "rank"])
    seq = visit.assign(text=visit["time"] + ":" + visit["codes"]).groupby(entity_id)["text"].agg(" / ".join)
    ents = entities.astype(str).set_index(entity_id)
    rel = ents[list(qi)].agg(" , ".join, axis=1)
    return rel + " || " + seq.reindex(rel.index).fillna("")


def check_release(entities: pd.DataFrame, events: pd.DataFrame, *, entity_id: str, qi: Sequence[str],
                  sequence_key: str, order_by: str, code: str) -> pd.Series:
    """Per released entity, the number of entities sharing both parts (its anonymity set size)."""
    sig = signatures(entities, events, entity_id, qi, sequence_key, order_by, code)
    return sig.map(sig.value_counts())


def _rank(visit_ids: pd.Series) -> np.ndarray:
    """A released visit's rank in its entity's history, from its id (``<entity>-V<rank>``)."""
    return visit_ids.str.extract(r"-V(\d+)$")[0].astype(int).to_numpy()


class _Labels:
    """A hierarchy's labels at every level, by text: ``up[g]`` holds the ids of ground value g's
    labels from level 0 to the top, so a label generalizes g when its id is in that row."""

    def __init__(self, h: Hierarchy):
        self.ids: dict[str, int] = {}
        self.up = np.array([[self.ids.setdefault(h.labels[lv][h.codes[lv][g]], len(self.ids))
                             for lv in range(h.height + 1)] for g in range(len(h.ground))], dtype=np.int64)
        self.level = np.zeros(len(self.ids) + 1, dtype=np.int64)  # a label's lowest level (last: unknown)
        for lv in range(h.height, -1, -1):
            self.level[self.up[:, lv]] = lv
        self.table = None  # labels × ground values, when small: a look-up is faster than comparing ids
        if (len(self.ids) + 1) * len(h.ground) <= 1 << 24:
            self.table = np.zeros((len(self.ids) + 1, len(h.ground)), dtype=bool)
            self.table[self.up, np.arange(len(h.ground))[:, None]] = True

    def encode(self, text: pd.Series) -> np.ndarray:
        """Label ids of text cells; a text that is no label of the hierarchy gets -1 (generalizes nothing)."""
        return text.map(self.ids).fillna(-1).to_numpy(np.int64)

    def covers(self, labels: np.ndarray, g: int) -> np.ndarray:
        """Which labels generalize ground value g (itself included)."""
        if self.table is not None:
            return self.table[labels, g]
        return (labels[..., None] == self.up[g]).any(axis=-1)


@dataclass(frozen=True, eq=False)
class Records:
    """Records (see the module docstring) in flat arrays: QI label ids (records × QIs), record r's
    visits ``visit_ptr[r]:visit_ptr[r+1]``, visit v's codes ``code_ptr[v]:code_ptr[v+1]`` (label ids),
    each visit's interval [low, high], and each record's id."""

    ids: np.ndarray
    qi: np.ndarray
    visit_ptr: np.ndarray
    code_ptr: np.ndarray
    codes: np.ndarray
    low: np.ndarray
    high: np.ndarray


def _labels(data: SequentialData) -> tuple[list[_Labels], _Labels]:
    return [_Labels(h) for h in data.hierarchies], _Labels(data.code_hierarchy)


def original_records(data: SequentialData) -> Records:
    """The input's records: ground values, each visit's interval from its first to its last time."""
    qi_labels, code_labels = _labels(data)
    qi = np.column_stack([lab.up[data.qi_codes[:, q], 0] for q, lab in enumerate(qi_labels)]) if data.qi \
        else np.zeros((data.n_entities, 0), dtype=np.int64)
    ids = data.entities[data.entity_id].astype(str).to_numpy()
    last = data.times[data.code_ptr[1:] - 1].astype(np.float64) if len(data.codes) else np.empty(0)
    return Records(ids, qi, data.visit_ptr, data.code_ptr, code_labels.up[data.codes, 0], data.visit_time, last)


def unescaped(column: pd.Series) -> pd.Series:
    """A cell written with a leading ``'`` to defuse a spreadsheet formula, read as the value it stands for."""
    quoted = column.str.startswith("'") & formula_mask(column.str.slice(1))
    return column.where(~quoted, column.str.slice(1))


def released_records(data: SequentialData, entities: pd.DataFrame, events: pd.DataFrame,
                     intervals: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None) -> Records:
    """The released records: QIs and codes from the written tables (text), visits in the order their
    ids give; times from ``intervals`` (released id -> each visit's lows and highs, as
    ``SequentialRelease.intervals``), or unknown ([-inf, inf]) without them."""
    qi_labels, code_labels = _labels(data)
    ids = entities[data.entity_id].astype(str).to_numpy()
    qi = np.column_stack([lab.encode(unescaped(entities[name].astype(str)))
                          for name, lab in zip(data.qi, qi_labels, strict=True)]) if data.qi \
        else np.zeros((len(ids), 0), dtype=np.int64)
    row = pd.Index(ids).get_indexer(events[data.entity_id].astype(str))
    if (row < 0).any():
        raise InvalidParameterError("events of entities absent from the entity table", parameter="events")
    rank = _rank(events[data.sequence_key].astype(str))
    order = np.lexsort((np.arange(len(events)), rank, row))  # within a visit, codes stay in written order
    row, rank = row[order], rank[order]
    codes = code_labels.encode(unescaped(events[data.code].astype(str)).iloc[order])
    new = np.ones(len(row), dtype=bool)
    new[1:] = (row[1:] != row[:-1]) | (rank[1:] != rank[:-1])
    starts = np.flatnonzero(new)
    visit_ptr = np.searchsorted(row[starts], np.arange(len(ids) + 1))
    low, high = np.full(len(starts), -np.inf), np.full(len(starts), np.inf)
    if intervals is not None:
        for r, name in enumerate(ids):
            span = slice(visit_ptr[r], visit_ptr[r + 1])
            lo, hi = intervals.get(name, (np.empty(0), np.empty(0)))
            if len(lo) != span.stop - span.start:
                raise InvalidParameterError(f"{len(lo)} interval(s) for the {span.stop - span.start} visit(s) of "
                                            f"released entity {name!r}", parameter="intervals")
            low[span], high[span] = lo, hi
    return Records(ids, qi, visit_ptr, np.append(starts, len(row)), codes, low, high)


def draw_known(data: SequentialData, targets: np.ndarray, m: int, rng=0) -> list[np.ndarray]:
    """For each target, the positions (sorted) of m of its codes in its whole history, drawn
    uniformly without replacement (all of them when it has fewer)."""
    generator = check_rng(rng)
    out = []
    for e in targets:
        n = int(data.code_ptr[data.visit_ptr[e + 1]] - data.code_ptr[data.visit_ptr[e]])
        out.append(np.sort(generator.choice(n, min(m, n), replace=False)) if n else np.empty(0, dtype=np.int64))
    return out


LEVELS = 1 << 32  # a score is matched codes × LEVELS − levels climbed: the count decides first


def _matched(rec: Records, cand: np.ndarray, known: list[int], codes: _Labels) -> np.ndarray:
    """Per candidate record, the code part of its score (most known codes matched, in order, to
    distinct codes of its history, then fewest levels climbed by them): a weighted LCS over all
    candidates at once, one position of the histories per step."""
    start = rec.code_ptr[rec.visit_ptr[cand]]
    length = rec.code_ptr[rec.visit_ptr[cand + 1]] - start
    best = np.zeros((len(cand), len(known) + 1), dtype=np.int64)
    for i in range(int(length.max()) if len(cand) else 0):
        act = np.flatnonzero(length > i)
        label, old = rec.codes[start[act] + i], best[act]
        worth = LEVELS - codes.level[label]
        new = old.copy()
        for j, g in enumerate(known, start=1):
            new[:, j] = np.maximum(np.maximum(old[:, j], new[:, j - 1]), old[:, j - 1] + codes.covers(label, g) * worth)
        best[act] = new
    return best[:, -1]


def _spans(data: SequentialData, e: int) -> list[tuple[float, float, list[int]]]:
    """Entity e's visits as (first time, last time, [ground codes]), times on the float axis."""
    first, ptr = data.visit_time, data.code_ptr
    return [(float(first[v]), float(data.times[ptr[v + 1] - 1]), data.codes[ptr[v]:ptr[v + 1]].tolist())
            for v in range(data.visit_ptr[e], data.visit_ptr[e + 1])]


def _embeds(rec: Records, cand: np.ndarray, visits: list[tuple[float, float, list[int]]], codes: _Labels) -> np.ndarray:
    """Per candidate record, whether its whole history could have been made from ``visits``. The
    target's visits are read in order; each one that fits the interval of a record's next unplaced
    visit lends it its codes (matched greedily, in order), and the visit is placed as soon as all its
    codes are matched. Matching every code at its earliest possible place finds an order-preserving
    assignment whenever one exists."""
    nxt, end = rec.visit_ptr[cand].copy(), rec.visit_ptr[cand + 1]
    pos = rec.code_ptr[nxt].copy()  # the next unmatched code of each record's next unplaced visit
    for first, last, ground in visits:
        act = np.flatnonzero(nxt < end)
        v = nxt[act]
        act = act[(rec.low[v] <= first) & (last <= rec.high[v])]
        p, stop = pos[act], rec.code_ptr[nxt[act] + 1]
        for g in ground:
            left = np.flatnonzero(p < stop)
            p[left] += codes.covers(rec.codes[p[left]], g)
        placed = act[p == stop]
        pos[act] = p
        nxt[placed] += 1
        pos[placed] = rec.code_ptr[nxt[placed]]
    return nxt == end


@dataclass(frozen=True, eq=False)
class AttackResult:
    """One attacker against one set of records: the mean success over the targets, the share of
    targets among their candidates, the smallest candidate set holding its target (0 if none), and
    each target's success."""

    success: float
    found: float
    smallest: int
    per_target: np.ndarray = field(repr=False)


def _distinct(rec: Records) -> tuple[np.ndarray, np.ndarray]:
    """Each record's class of identical records, and each class's size (a speed-up: equal records are
    scored once and weighted by their number)."""
    keys = []
    visit_size = np.diff(rec.code_ptr)
    for r in range(len(rec.ids)):
        v0, v1 = rec.visit_ptr[r], rec.visit_ptr[r + 1]
        keys.append((rec.qi[r].tobytes(), rec.codes[rec.code_ptr[v0]:rec.code_ptr[v1]].tobytes(),
                     visit_size[v0:v1].tobytes(), rec.low[v0:v1].tobytes(), rec.high[v0:v1].tobytes()))
    cls, _ = pd.factorize(pd.Series(keys, dtype=object))
    return cls, np.bincount(cls)


def attacks(data: SequentialData, rec: Records, rows: np.ndarray, targets: np.ndarray,
            knowledge: Sequence[list[np.ndarray] | None]) -> list[AttackResult]:
    """The attack of the module docstring on ``rec``, once per entry of ``knowledge``: target e (an
    input entity) is record ``rows[e]`` and knows the codes at positions ``known[i]`` of its history
    (``known=None``: full knowledge)."""
    qi_labels, code_labels = _labels(data)
    cls, size = _distinct(rec)
    first = np.unique(cls, return_index=True)[1]  # one record of each class
    # with full knowledge every code of a record is matched: its score needs no matching
    levels = np.add.reduceat(np.append(code_labels.level[rec.codes], 0), rec.code_ptr[rec.visit_ptr[:-1]])
    counts = rec.code_ptr[rec.visit_ptr[1:]] - rec.code_ptr[rec.visit_ptr[:-1]]
    full_score = counts * LEVELS - np.where(counts > 0, levels, 0)
    qi_levels = np.zeros(len(rec.ids), dtype=np.int64)
    for q, lab in enumerate(qi_labels):
        qi_levels += lab.level[rec.qi[:, q]]
    first_qi = rec.qi[first]
    success, found, smallest = np.zeros((len(knowledge), len(targets))), [0] * len(knowledge), [0] * len(knowledge)
    for i, e in enumerate(targets):
        ok = np.ones(len(first), dtype=bool)
        for q, lab in enumerate(qi_labels):
            ok &= lab.covers(first_qi[:, q], int(data.qi_codes[e, q]))
        cand = np.flatnonzero(ok)
        reps = first[cand]
        history = data.codes[data.code_ptr[data.visit_ptr[e]]:data.code_ptr[data.visit_ptr[e + 1]]]
        for a, known in enumerate(knowledge):
            if known is None:
                consistent, score = _embeds(rec, reps, _spans(data, e), code_labels), full_score[reps]
            else:
                consistent = np.ones(len(reps), dtype=bool)
                score = _matched(rec, reps, [int(history[p]) for p in known[i]], code_labels)
            score = score - qi_levels[reps]
            top = cand[consistent & (score == score[consistent].max())] if consistent.any() else cand[:0]
            if rows[e] >= 0 and cls[rows[e]] in top:
                n = int(size[top].sum())
                success[a, i], found[a], smallest[a] = 1.0 / n, found[a] + 1, min(smallest[a] or n, n)
    return [AttackResult(float(success[a].mean()) if len(targets) else 0.0, found[a] / max(len(targets), 1),
                         smallest[a], success[a]) for a in range(len(knowledge))]


def attack(data: SequentialData, rec: Records, rows: np.ndarray, targets: np.ndarray,
           known: list[np.ndarray] | None) -> AttackResult:
    """One attacker (see :func:`attacks`)."""
    return attacks(data, rec, rows, targets, [known])[0]


def draw_targets(n: int, sample: int | None, rng=0) -> np.ndarray:
    """The attacked input entities: all of them, or ``sample`` drawn without replacement (sorted)."""
    return np.arange(n) if sample is None or sample >= n else np.sort(check_rng(rng).choice(n, sample, replace=False))


def attack_figures(data: SequentialData, released: Records, pseudonym: np.ndarray, *, sample: int | None = 500,
                   rng=0) -> dict[str, dict]:
    """The three attackers (:data:`ATTACKERS`) before and after, on the same targets with the same
    knowledge: {name: {"before", "after", "found_after", "smallest_candidates_after"}}."""
    generator = check_rng(rng)
    targets = draw_targets(data.n_entities, sample, generator)
    rows = pd.Index(released.ids).get_indexer(np.asarray(pseudonym, dtype=str))
    knowledge = [None if m is None else draw_known(data, targets, m, generator) for m in ATTACKERS.values()]
    before = attacks(data, original_records(data), np.arange(data.n_entities), targets, knowledge)
    after = attacks(data, released, rows, targets, knowledge)
    out = {}
    for name, b, a in zip(ATTACKERS, before, after, strict=True):
        out[name] = {"before": round(b.success, 6), "after": round(a.success, 6), "found_after": round(a.found, 6),
                     "smallest_candidates_after": a.smallest}
    return out


def subsequence_attack(data: SequentialData, entities: pd.DataFrame, events: pd.DataFrame, pseudonym: np.ndarray,
                       *, m: int = 2, sample: int | None = 500, rng=0) -> float:
    """Mean success of the sub-sequence attack (QIs + m codes in order, see the module docstring)
    against the released tables, over a seeded sample of targets."""
    generator = check_rng(rng)
    targets = draw_targets(data.n_entities, sample, generator)
    released = released_records(data, entities, events)
    rows = pd.Index(released.ids).get_indexer(np.asarray(pseudonym, dtype=str))
    return attack(data, released, rows, targets, draw_known(data, targets, m, generator)).success
