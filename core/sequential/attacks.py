"""Attacking a relational + sequential release: the *sub-sequence attack* and full knowledge
(``attack``, ``attack_figures``, ``plan_attacks``).

The attackers read *records* (``guarantee``): what a reader sees of
one entity, its QI values and its visits in order, each a time interval [low, high] and an ordered
list of codes; released records from the written files and the release's intervals, original ones from
the input. The attacker aims at one person t and knows t's original QI values and either

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

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microrelease.core.sequential.guarantee import (
    Labels,
    Records,
    labels_of,
    original_records,
    released_records,
)
from microrelease.core.sequential.rt_data import SequentialData
from microrelease.core.validation import validate_rng

# name -> codes known (None: the whole history with times)
ATTACKERS: dict[str, int | None] = {"qi_2_codes": 2, "qi_3_codes": 3, "full_knowledge": None}
ATTACKER_TEXT = {"qi_2_codes": "QIs + 2 codes in order", "qi_3_codes": "QIs + 3 codes in order",
                 "full_knowledge": "QIs + whole history with times"}


def draw_known(data: SequentialData, targets: np.ndarray, m: int, rng=0) -> list[np.ndarray]:
    """For each target, the positions (sorted) of m of its codes in its whole history, drawn
    uniformly without replacement (all of them when it has fewer)."""
    generator = validate_rng(rng)
    out = []
    for e in targets:
        n = int(data.code_ptr[data.visit_ptr[e + 1]] - data.code_ptr[data.visit_ptr[e]])
        out.append(np.sort(generator.choice(n, min(m, n), replace=False)) if n else np.empty(0, dtype=np.int64))
    return out


LEVELS = 1 << 32  # a score is matched codes × LEVELS − levels climbed: the count decides first


def _matched(rec: Records, cand: np.ndarray, known: list[int], codes: Labels) -> np.ndarray:
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


def _embeds(rec: Records, cand: np.ndarray, visits: list[tuple[float, float, list[int]]], codes: Labels) -> np.ndarray:
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
    qi_labels, code_labels = labels_of(data)
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
    """One attacker (see ``attacks``)."""
    return attacks(data, rec, rows, targets, [known])[0]


def draw_targets(n: int, sample: int | None, rng=0) -> np.ndarray:
    """The attacked input entities: all of them, or ``sample`` drawn without replacement (sorted)."""
    return np.arange(n) if sample is None or sample >= n else np.sort(validate_rng(rng).choice(n, sample, replace=False))


@dataclass(frozen=True, eq=False)
class AttackPlan:
    """What the attackers of ``attack_figures`` aim at and know (targets, per attacker the known
    code positions or None), and their success against the original records. None of it depends on
    the release, so comparing releases of one data set computes it once (``plan_attacks``)."""

    targets: np.ndarray
    knowledge: list = field(repr=False)
    before: list[AttackResult] = field(repr=False)
    n_entities: int = 0


def plan_attacks(data: SequentialData, *, sample: int | None = 500, rng=0) -> AttackPlan:
    """The targets and knowledge of the attackers (``ATTACKERS``), seeded, and their success before."""
    generator = validate_rng(rng)
    targets = draw_targets(data.n_entities, sample, generator)
    knowledge = [None if m is None else draw_known(data, targets, m, generator) for m in ATTACKERS.values()]
    before = attacks(data, original_records(data), np.arange(data.n_entities), targets, knowledge)
    return AttackPlan(targets, knowledge, before, data.n_entities)


def attack_figures(data: SequentialData, released: Records, pseudonym: np.ndarray, *, sample: int | None = 500,
                   rng=0, plan: AttackPlan | None = None) -> dict[str, dict]:
    """The three attackers (``ATTACKERS``) before and after, on the same targets with the same
    knowledge: {name: {"before", "after", "found_after", "smallest_candidates_after"}}. ``plan``
    (from ``plan_attacks`` on the same data) replaces ``sample`` and ``rng``."""
    if plan is None:
        plan = plan_attacks(data, sample=sample, rng=rng)
    elif plan.n_entities != data.n_entities:
        raise ValueError(f"plan: made for {plan.n_entities} entities, the data has {data.n_entities}")
    rows = pd.Index(released.ids).get_indexer(np.asarray(pseudonym, dtype=str))
    after = attacks(data, released, rows, plan.targets, plan.knowledge)
    out = {}
    for name, b, a in zip(ATTACKERS, plan.before, after, strict=True):
        out[name] = {"before": round(b.success, 6), "after": round(a.success, 6), "found_after": round(a.found, 6),
                     "smallest_candidates_after": a.smallest}
    return out


def subsequence_attack(data: SequentialData, entities: pd.DataFrame, events: pd.DataFrame, pseudonym: np.ndarray,
                       *, m: int = 2, sample: int | None = 500, rng=0) -> float:
    """Mean success of the sub-sequence attack (QIs + m codes in order, see the module docstring)
    against the released tables, over a seeded sample of targets."""
    generator = validate_rng(rng)
    targets = draw_targets(data.n_entities, sample, generator)
    released = released_records(data, entities, events)
    rows = pd.Index(released.ids).get_indexer(np.asarray(pseudonym, dtype=str))
    return attack(data, released, rows, targets, draw_known(data, targets, m, generator)).success
