"""The attackers of a relational + sequential release (issue 16 item 5): the function against a brute
force that enumerates every candidate and every matching, on random hand-made releases; the bound
1/k after anonymization on the hospital sample; and the figures in the steward's audit."""

from __future__ import annotations

import json
from itertools import combinations, product

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from microrelease.core import Hierarchy
from microrelease.core.data.samples import sample_data_folder
from microrelease.core.sequential.attacks import (
    ATTACKERS,
    attack,
    attack_figures,
    draw_known,
    subsequence_attack,
)
from microrelease.core.sequential.guarantee import original_records, released_records
from microrelease.core.sequential.pipeline import anonymize_sequential, write_sequential
from microrelease.core.sequential.rt_data import load_sequential

HOSPITAL = sample_data_folder("hospital")
CODES = Hierarchy("code", tuple((f"{c}{b}{i}", f"{c}{b}*", f"{c}**", "*") for c in "AB" for b in "01" for i in "01"))
AGE = Hierarchy("age", tuple((str(a), f"{a // 10 * 10}s", "*") for a in range(20, 40)))


def hospital(head: int | None = None):
    patients = pd.read_csv(HOSPITAL / "patients.csv", dtype=str, keep_default_na=False)
    visits = pd.read_csv(HOSPITAL / "visits.csv", dtype=str, keep_default_na=False)
    if head:
        patients = patients.head(head)
        visits = visits[visits["patient_id"].isin(patients["patient_id"])]
    return load_sequential(patients, visits, entity_id="patient_id", qi=["age", "sex", "zip"], sequence_key="visit_id",
                           order_by="day", code="code", code_hierarchy=HOSPITAL / "hospital_hierarchy_code.csv",
                           hierarchy_dir=HOSPITAL, identifiers=["name"])


# --- brute force: every candidate, every order-preserving matching ----------------------------------------

def ancestors(h: Hierarchy, value: str) -> set[str]:
    return {h.labels[lv][h.codes[lv][h.index[value]]] for lv in range(h.height + 1)}


def codes_fit(released: list[str], ground: list[str], h: Hierarchy) -> bool:
    """Do the released labels go, in order, to distinct codes of ``ground``, each an ancestor?"""
    return any(all(label in ancestors(h, ground[i]) for label, i in zip(released, chosen, strict=True))
               for chosen in combinations(range(len(ground)), len(released)))


def derivable(record_visits, target_visits, h: Hierarchy) -> bool:
    """Could the record's visits [(low, high, labels)] have been made from the target's visits
    [(first, last, codes)]? Every way of giving each target visit to one record visit (in order) or
    to none is tried."""
    n = len(record_visits)
    for owner in product(range(n + 1), repeat=len(target_visits)):
        used = [j for j in owner if j]
        if used != sorted(used) or set(used) != set(range(1, n + 1)):
            continue
        if all(all(lo <= first and last <= hi for (first, last, _), j in zip(target_visits, owner, strict=True)
                   if j == r)
               and codes_fit(labels, [c for (_, _, cs), j in zip(target_visits, owner, strict=True) if j == r
                                      for c in cs], h)
               for r, (lo, hi, labels) in enumerate(record_visits, start=1)):
            return True
    return False


def spans(data, e: int):
    """Entity e's visits as (first time, last time, [code texts]), from the encoded input."""
    ptr, ground = data.code_ptr, data.code_hierarchy.ground
    return [(float(data.visit_time[v]), float(data.times[ptr[v + 1] - 1]), [ground[c] for c in data.codes[ptr[v]:ptr[v + 1]]])
            for v in range(data.visit_ptr[e], data.visit_ptr[e + 1])]


def level(h: Hierarchy, label: str) -> int:
    return min(lv for lv in range(h.height + 1) for g in range(len(h.ground)) if h.labels[lv][h.codes[lv][g]] == label)


def best_matching(flat: list[str], known: list[str], h: Hierarchy) -> tuple[int, int]:
    """(most known codes matched in order to distinct labels, then minus the fewest levels of those labels)."""
    return max([(size, -sum(level(h, flat[p]) for p in pos)) for size in range(len(known) + 1)
                for subset in combinations(known, size) for pos in combinations(range(len(flat)), size)
                if all(flat[p] in ancestors(h, g) for p, g in zip(pos, subset, strict=True))])


def brute_success(data, records, own: int, e: int, known_positions) -> float:
    """records: [([QI labels], [(low, high, [code labels])])], one per released entity (no merging)."""
    target_qi = [data.entities[q].astype(str).iloc[e] for q in data.qi]
    visits = spans(data, e)
    flat_target = [c for _, _, codes in visits for c in codes]
    scores = []
    for qi, rvisits in records:
        qi_levels = sum(level(h, v) for v, h in zip(qi, data.hierarchies, strict=True))
        labels = [label for _, _, visit in rvisits for label in visit]
        if not all(v in ancestors(h, t) for v, t, h in zip(qi, target_qi, data.hierarchies, strict=True)):
            scores.append(None)
        elif known_positions is None:
            fits = derivable(rvisits, visits, data.code_hierarchy)
            code_levels = sum(level(data.code_hierarchy, label) for label in labels)
            scores.append((len(labels), -code_levels - qi_levels) if fits else None)
        else:
            count, minus_levels = best_matching(labels, [flat_target[p] for p in known_positions], data.code_hierarchy)
            scores.append((count, minus_levels - qi_levels))
    top = max((s for s in scores if s is not None), default=None)
    candidates = [r for r, s in enumerate(scores) if s is not None and s == top]
    return 1 / len(candidates) if own in candidates else 0.0


# --- random releases, truthful or not ---------------------------------------------------------------------

@st.composite
def data_and_release(draw):
    n = draw(st.integers(2, 6))
    visits = {f"p{i}": [(draw(st.integers(1, 9)), draw(st.lists(st.tuples(st.integers(0, 2), st.sampled_from(CODES.ground)),
                                                                  min_size=1, max_size=3)))
                        for _ in range(draw(st.integers(0, 3)))] for i in range(n)}
    entities = pd.DataFrame({"id": list(visits), "age": [str(draw(st.integers(20, 39))) for _ in range(n)]})
    events = pd.DataFrame([(e, f"{e}-{v}", day + later, code) for e, vs in visits.items()
                           for v, (day, codes) in enumerate(vs) for later, code in codes],
                          columns=["id", "visit", "day", "code"])
    data = load_sequential(entities, events, entity_id="id", qi=["age"], sequence_key="visit", order_by="day",
                           code="code", code_hierarchy=CODES, hierarchies={"age": AGE})
    records = []
    for e in range(n):
        if e and draw(st.booleans()):  # the same record as an earlier entity: a group
            records.append(records[draw(st.integers(0, e - 1))])
            continue
        age = data.entities["age"].iloc[e] if draw(st.integers(0, 4)) else draw(st.sampled_from(AGE.ground))
        rvisits = []
        for first, last, codes in spans(data, e):
            kept = []
            for c in codes:  # each code suppressed, or generalized to some level (sometimes another code's label)
                if draw(st.booleans()):
                    g = CODES.index[c] if draw(st.integers(0, 4)) else CODES.index[draw(st.sampled_from(CODES.ground))]
                    level = draw(st.integers(0, 3))
                    kept.append(CODES.labels[level][CODES.codes[level][g]])
            if not kept:
                continue
            shift = draw(st.sampled_from([0, 0, 0, 4]))  # sometimes an interval that misses the times
            low, high = first - draw(st.integers(0, 2)) + shift, last + draw(st.integers(0, 2)) + shift
            if rvisits and draw(st.booleans()):  # merged with the previous released visit
                lo, hi, labels = rvisits.pop()
                low, high, kept = min(lo, low), max(hi, high), labels + kept
            rvisits.append((low, high, kept))
        level = draw(st.integers(0, 2))
        records.append(([AGE.labels[level][AGE.codes[level][AGE.index[age]]]], rvisits))
    return data, records, draw(st.permutations(range(n))), draw(st.integers(0, 2**16))


def as_tables(records, order):
    """The records written as a release would be: pseudonyms, rows in ``order``, visits V1, V2, ..."""
    ids = [f"R{i}" for i in range(len(records))]
    entities = pd.DataFrame({"id": [ids[r] for r in order], "age": [records[r][0][0] for r in order]})
    rows, intervals = [], {}
    for r in order[::-1]:  # entity blocks in another order than the entity table
        rows += [(ids[r], f"{ids[r]}-V{j}", "?", label) for j, (_, _, labels) in enumerate(records[r][1], start=1)
                 for label in labels]
        intervals[ids[r]] = tuple(np.array([v[i] for v in records[r][1]], dtype=float) for i in (0, 1))
    return entities, pd.DataFrame(rows, columns=["id", "visit", "day", "code"]), intervals, np.array(ids, dtype=object)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data_and_release(), st.sampled_from(sorted(ATTACKERS)))
def test_the_attack_equals_a_brute_force_enumeration(case, attacker):
    data, records, order, seed = case
    entities, events, intervals, pseudonym = as_tables(records, list(order))
    targets = np.arange(data.n_entities)
    m = ATTACKERS[attacker]
    known = None if m is None else draw_known(data, targets, m, rng=seed)
    rec = released_records(data, entities, events, intervals)
    rows = pd.Index(rec.ids).get_indexer(pseudonym.astype(str))
    got = attack(data, rec, rows, targets, known).per_target
    expected = [brute_success(data, records, e, e, None if known is None else known[e]) for e in targets]
    assert got == pytest.approx(expected)
    # before: the input's own records
    original = [([data.entities["age"].iloc[e]], spans(data, e)) for e in targets]
    before = attack(data, original_records(data), targets, targets, known).per_target
    assert before == pytest.approx([brute_success(data, original, e, e, None if known is None else known[e])
                                    for e in targets])


def test_hand_made_case_with_suppressed_generalized_and_merged_visits():
    visits = {"a": [(1, ["A00", "B10"]), (5, ["A01"])], "b": [(2, ["A00"]), (6, ["A01", "B11"])],
              "c": [(1, ["B10"])], "d": [(1, ["A00"]), (3, ["A01"])]}
    entities = pd.DataFrame({"id": list(visits), "age": ["25", "27", "25", "22"]})
    events = pd.DataFrame([(e, f"{e}-{v}", day, code) for e, vs in visits.items() for v, (day, codes) in enumerate(vs)
                           for code in codes], columns=["id", "visit", "day", "code"])
    data = load_sequential(entities, events, entity_id="id", qi=["age"], sequence_key="visit", order_by="day",
                           code="code", code_hierarchy=CODES, hierarchies={"age": AGE})
    # a and b share a record (B10 and B11 suppressed, A01 generalized); c keeps its code as B1*; d's two
    # visits are merged into one
    shared = (["20s"], [(1, 2, ["A00"]), (5, 6, ["A0*"])])
    records = [shared, shared, (["20s"], [(1, 1, ["B1*"])]), (["20s"], [(1, 3, ["A00", "A0*"])])]
    entities, events, intervals, pseudonym = as_tables(records, [2, 0, 3, 1])
    rec = released_records(data, entities, events, intervals)
    rows = pd.Index(rec.ids).get_indexer(pseudonym.astype(str))
    # full knowledge: c's record also fits a's history (B10 on day 1) but accounts for fewer codes than
    # the shared one; b's day-2 visit is outside c's interval; the shared record needs two visits of c;
    # only d's history has two visits within [1, 3] with A00 then an A0* code
    full = attack(data, rec, rows, np.arange(4), None)
    assert full.per_target.tolist() == [0.5, 0.5, 1.0, 1.0] and full.smallest == 1
    # a knows A00 then B10: B10 was suppressed from a's record, which matches A00 only; c's record
    # matches B10 only, d's A00 only: one code each, but c's through B1*, a level up -> a, b, d: 1/3
    got = attack(data, rec, rows, np.array([0]), [np.array([0, 1])]).per_target
    assert got.tolist() == [pytest.approx(1 / 3)]


# --- the hospital sample -----------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [2, 5])
def test_full_knowledge_after_anonymization_is_at_most_one_over_k(k):
    data = hospital()
    release = anonymize_sequential(data, k)
    rec = released_records(data, release.entities, release.events, release.intervals)
    rows = pd.Index(rec.ids).get_indexer(release.pseudonym.astype(str))
    targets = np.arange(data.n_entities)
    full = attack(data, rec, rows, targets, None)
    assert full.per_target.max() <= 1 / k + 1e-12 and full.success <= 1 / k
    assert full.success > 0 and full.smallest >= k
    # each target's own released record is consistent with its whole history (brute force on a sample):
    # the release is truthful, so the bound is not met by the attacker missing its target
    labels = {i: list(codes) for i, codes in release.events.groupby("visit_id", sort=False)["code"]}
    for e in np.random.default_rng(1).choice(data.n_entities, 60, replace=False):
        r = rows[e]
        v = range(rec.visit_ptr[r], rec.visit_ptr[r + 1])
        mine = [(rec.low[j], rec.high[j], (labels[f"{release.pseudonym[e]}-V{j - v.start + 1}"])) for j in v]
        assert derivable(mine, spans(data, e), data.code_hierarchy)


def test_before_full_knowledge_is_one_over_the_number_of_identical_records():
    patients = pd.read_csv(HOSPITAL / "patients.csv", dtype=str, keep_default_na=False).head(300)
    visits = pd.read_csv(HOSPITAL / "visits.csv", dtype=str, keep_default_na=False)
    visits = visits[visits["patient_id"].isin(patients["patient_id"])]
    # 40 patients twice (same QIs and visits under other ids): their records are no longer unique
    twins = patients.head(40).assign(patient_id="C" + patients["patient_id"].head(40))
    twin_visits = visits[visits["patient_id"].isin(patients["patient_id"].head(40))]
    twin_visits = twin_visits.assign(patient_id="C" + twin_visits["patient_id"], visit_id="C" + twin_visits["visit_id"])
    patients, visits = pd.concat([patients, twins], ignore_index=True), pd.concat([visits, twin_visits], ignore_index=True)
    data = load_sequential(patients, visits, entity_id="patient_id", qi=["age", "sex", "zip"], sequence_key="visit_id",
                           order_by="day", code="code", code_hierarchy=HOSPITAL / "hospital_hierarchy_code.csv",
                           hierarchy_dir=HOSPITAL, identifiers=["name"])
    ordered = visits.assign(day=visits["day"].astype(int), row=np.arange(len(visits)))
    ordered = ordered.sort_values(["patient_id", "day", "visit_id", "row"])
    per_visit = ordered.groupby(["patient_id", "visit_id"], sort=False).agg(day=("day", "first"), codes=("code", "|".join))
    text = per_visit["day"].astype(str) + ":" + per_visit["codes"]
    history = text.groupby(level="patient_id", sort=False).agg(" / ".join)
    signature = patients[["age", "sex", "zip"]].agg(",".join, axis=1) + "|" + patients["patient_id"].map(history)
    expected = 1 / signature.map(signature.value_counts()).to_numpy()
    assert (expected == 0.5).sum() >= 80
    targets = np.arange(data.n_entities)
    got = attack(data, original_records(data), targets, targets, None).per_target
    assert got == pytest.approx(expected)


def test_the_audit_holds_the_three_attackers_computed_from_the_written_files(tmp_path):
    data = hospital(300)
    release = anonymize_sequential(data, 5)
    published = write_sequential(release, data, tmp_path / "out", escape=True, attack_sample=None)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    audit = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert "attack" not in report and "attack" not in json.dumps(published.data)
    figures = audit["attack"]["attackers"]
    assert sorted(figures) == sorted(ATTACKERS) and audit["attack"]["bound_1_over_k"] == 0.2
    for name, f in figures.items():
        assert f["after"] <= 0.2 < f["before"], name
    # the same figures from the tables in memory (the written rows are shuffled, the records equal)
    in_memory = attack_figures(data, released_records(data, release.entities, release.events, release.intervals),
                               release.pseudonym, sample=None)
    assert {n: {key: f[key] for key in in_memory[n]} for n, f in figures.items()} == in_memory
    assert in_memory["qi_2_codes"]["after"] == pytest.approx(
        subsequence_attack(data, release.entities, release.events, release.pseudonym, m=2, sample=None), abs=1e-6)


def test_cells_escaped_as_formulas_are_read_as_the_values_they_stand_for(tmp_path):
    formulas = Hierarchy("code", tuple((f"={c}{i}", f"={c}*", "*") for c in "AB" for i in "01"))
    visits = {f"p{i}": [(i % 3 + 1, [f"={'AB'[i % 2]}{i % 3 % 2}"]), (5, ["=A0", f"=B{i % 2}"])] for i in range(8)}
    entities = pd.DataFrame({"id": list(visits), "age": [str(20 + i % 4) for i in range(8)]})
    events = pd.DataFrame([(e, f"{e}-{v}", day, code) for e, vs in visits.items() for v, (day, codes) in enumerate(vs)
                           for code in codes], columns=["id", "visit", "day", "code"])
    data = load_sequential(entities, events, entity_id="id", qi=["age"], sequence_key="visit", order_by="day",
                           code="code", code_hierarchy=formulas, hierarchies={"age": AGE})
    release = anonymize_sequential(data, 2)
    write_sequential(release, data, tmp_path / "out", escape=True, attack_sample=None)
    assert "'=" in (tmp_path / "out" / "events.csv").read_text()  # the codes were written escaped
    audit = json.loads((tmp_path / "out" / "audit.json").read_text())["attack"]["attackers"]
    in_memory = attack_figures(data, released_records(data, release.entities, release.events, release.intervals),
                               release.pseudonym, sample=None)
    assert {n: {key: f[key] for key in in_memory[n]} for n, f in audit.items()} == in_memory
    assert in_memory["full_knowledge"]["found_after"] > 0


def test_one_attack_plan_serves_every_release_of_the_data_and_gives_the_same_figures():
    from microrelease.core.sequential.attacks import plan_attacks

    data = hospital(200)
    plan = plan_attacks(data, sample=120, rng=7)
    for k in (3, 5):
        release = anonymize_sequential(data, k)
        released = released_records(data, release.entities, release.events, release.intervals)
        assert attack_figures(data, released, release.pseudonym, plan=plan) == \
            attack_figures(data, released, release.pseudonym, sample=120, rng=7)
    with pytest.raises(ValueError, match="plan: made for 200 entities, the data has 150"):
        small = hospital(150)
        release = anonymize_sequential(small, 3)
        attack_figures(small, released_records(small, release.entities, release.events, release.intervals),
                       release.pseudonym, plan=plan)
