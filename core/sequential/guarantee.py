"""Checking a relational + sequential release from its output alone, and attacking it.

- :func:`check_release`: for every released entity, how many entities share its full relational QI
  values *and* its whole sequence of visits (times and codes, in order). k-anonymity over both parts
  holds when the smallest count is >= k. Computed from the output tables only, by grouping text.
- :func:`subsequence_attack`: an attacker holds a person's original relational QIs and m of their codes
  in order (a random sub-sequence). A released entity is a candidate when each released QI value
  generalizes the person's value and its released code sequence contains the m codes, in order,
  each generalized (an ancestor or equal). The attacker picks one candidate at random: success has
  probability [the person is a candidate] / (number of candidates). Reported as the mean over people.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from microrelease.core.data.dataset import as_text
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.sequential.model import SequentialData
from microrelease.core.validation import check_rng


def signatures(entities: pd.DataFrame, events: pd.DataFrame, entity_id: str, qi: Sequence[str], sequence_key: str,
               order_by: str, code: str) -> pd.Series:
    """One text signature per released entity: QI values | visit (time: codes) | ..."""
    ev = events.astype(str)
    visit = ev.groupby([entity_id, sequence_key], sort=False).agg(time=(order_by, "first"), codes=(code, "|".join))
    visit = visit.reset_index()
    visit["rank"] = visit[sequence_key].str.extract(r"-V(\d+)$")[0].astype(int)
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


def _ancestors(h: Hierarchy) -> list[set[str]]:
    """For each ground code, the set of its labels at every level (itself included)."""
    return [{h.labels[level][h.codes[level][g]] for level in range(h.height + 1)} for g in range(len(h.ground))]


def _contains(released: list[str], pattern: list[int], anc: list[set[str]]) -> bool:
    i = 0
    for label in released:
        if i < len(pattern) and label in anc[pattern[i]]:
            i += 1
    return i == len(pattern)


def subsequence_attack(data: SequentialData, entities: pd.DataFrame, events: pd.DataFrame, pseudonym: np.ndarray,
                   *, m: int = 2, sample: int | None = 500, rng=0) -> float:
    """Mean success probability of the attack (see the module docstring) over a seeded sample."""
    generator = check_rng(rng)
    n = data.n_entities
    people = np.arange(n) if sample is None or sample >= n else np.sort(generator.choice(n, sample, replace=False))
    ent = entities.set_index(entity_id := data.entity_id)
    released_ids = ent.index.to_numpy()
    qi_anc = [_ancestors(h) for h in data.hierarchies]
    code_anc = _ancestors(data.code_hierarchy)
    flat = events.groupby(entity_id, sort=False)[data.code].agg(list).reindex(released_ids)
    flat = [x if isinstance(x, list) else [] for x in flat]
    qi_values = [as_text(ent[q]).to_numpy() for q in data.qi]
    total = 0.0
    for e in people:
        codes = data.codes[data.code_ptr[data.visit_ptr[e]]:data.code_ptr[data.visit_ptr[e + 1]]]
        pick = np.sort(generator.choice(len(codes), min(m, len(codes)), replace=False)) if len(codes) else []
        pattern = [int(codes[i]) for i in pick]
        ok = np.ones(len(released_ids), dtype=bool)
        for q in range(len(data.qi)):
            allowed = qi_anc[q][int(data.qi_codes[e, q])]
            ok &= np.isin(qi_values[q], list(allowed))
        candidates = [r for r in np.flatnonzero(ok) if _contains(flat[r], pattern, code_anc)]
        target = np.flatnonzero(released_ids == pseudonym[e])
        if len(target) and target[0] in candidates:
            total += 1.0 / len(candidates)
    return total / len(people)
