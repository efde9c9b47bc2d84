"""Relational + sequential anonymization: the guarantee on the hospital data, properties on random
inputs, the alignment on hand-made cases, and named errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from microrelease.core import CoverageError, DataError, Hierarchy, InvalidParameterError
from microrelease.core.data.samples import sample_data_folder
from microrelease.core.sequential.attacks import subsequence_attack
from microrelease.core.sequential.cost import CostModel, CostWeights, ncp_matrix
from microrelease.core.sequential.guarantee import verify_release
from microrelease.core.sequential.pipeline import anonymize_sequential
from microrelease.core.sequential.rt_data import load_sequential

HOSPITAL = sample_data_folder("hospital")
CODES = Hierarchy("code", tuple((f"{c}{b}{i}", f"{c}{b}*", f"{c}**", "*") for c in "AB" for b in "01" for i in "01"))
AGE = Hierarchy("age", tuple((str(a), f"{a // 10 * 10}s", "*") for a in range(20, 40)))


def hospital(every: int = 1):
    """The bundled hospital data (2,000 patients), or every ``every``-th patient with their visits."""
    patients, visits = HOSPITAL / "patients.csv", HOSPITAL / "visits.csv"
    if every > 1:
        patients = pd.read_csv(patients, dtype=str, keep_default_na=False).iloc[::every]
        visits = pd.read_csv(visits, dtype=str, keep_default_na=False)
        visits = visits[visits["patient_id"].isin(patients["patient_id"])]
    return load_sequential(patients, visits, entity_id="patient_id",
                           qi=["age", "sex", "zip"], sequence_key="visit_id", order_by="day", code="code",
                           code_hierarchy=HOSPITAL / "hospital_hierarchy_code.csv", hierarchy_dir=HOSPITAL,
                           identifiers=["name"])


def check(data, release):
    return verify_release(release.entities, release.events, entity_id=data.entity_id, qi=data.qi,
                         sequence_key=data.sequence_key, order_by=data.order_by, code=data.code)


# At k = 2 on every other patient: the greedy grouping makes n/k groups, each from one cost row
# against the remaining entities (O(n²/k)), so k = 2 costs most; the checks do not depend on n (the
# guarantee holds by construction, and the attack's bound is three standard errors over 500
# attacked entities whatever the population).
@pytest.mark.parametrize(("k", "every"), [(2, 2), (5, 1), (10, 1)])
def test_hospital_release_shares_both_parts_with_k_and_defeats_the_attack(k, every):
    data = hospital(every)
    both = anonymize_sequential(data, k)
    assert check(data, both).min() >= k
    attack = subsequence_attack(data, both.entities, both.events, both.pseudonym, m=2, sample=500)
    assert attack <= 1 / k + 3 * np.sqrt((1 / k) * (1 - 1 / k) / 500)
    assert 0 < both.relational_loss < 1 and 0 < both.sequence_loss <= 1
    relational_only = anonymize_sequential(data, k, relational_only=True)
    baseline = subsequence_attack(data, relational_only.entities, relational_only.events, relational_only.pseudonym,
                              m=2, sample=500)
    assert baseline > 2 * attack + 0.1  # sequences single people out when only the relational part is protected


def test_the_generator_reproduces_the_bundled_files(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate", HOSPITAL / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write(tmp_path)
    for name in ("patients.csv", "visits.csv", "hospital_hierarchy_code.csv"):
        assert (tmp_path / name).read_bytes() == (HOSPITAL / name).read_bytes()


# --- the alignment on hand-made cases ---------------------------------------------------------------

def tiny(visits_by_entity: dict[str, list[tuple[int, list[str]]]]):
    entities = pd.DataFrame({"id": list(visits_by_entity), "age": ["25"] * len(visits_by_entity)})
    events = [(e, f"{e}-{v}", day, code) for e, visits in visits_by_entity.items()
              for v, (day, codes) in enumerate(visits) for code in codes]
    frame = pd.DataFrame(events, columns=["id", "visit", "day", "code"])
    return load_sequential(entities, frame, entity_id="id", qi=["age"], sequence_key="visit", order_by="day",
                           code="code", code_hierarchy=CODES, hierarchies={"age": AGE})


def sequence_cost(data, a, b):
    """The unnormalized two-level alignment cost (sequence part only, no time)."""
    model = CostModel(data, CostWeights(relational=0.0, sequence=1.0, time=0.0))
    total = sum(int(data.code_ptr[data.visit_ptr[e + 1]] - data.code_ptr[data.visit_ptr[e]]) for e in (a, b))
    return float(model.costs_from(a, np.array([b]))[0]) * total


def test_alignment_costs_on_hand_made_cases():
    same = tiny({"x": [(1, ["A00", "B10"]), (5, ["A01"])], "y": [(1, ["A00", "B10"]), (5, ["A01"])]})
    assert sequence_cost(same, 0, 1) == 0
    extra = tiny({"x": [(1, ["A00"]), (5, ["A01"])], "y": [(1, ["A00"]), (3, ["B11", "B10"]), (5, ["A01"])]})
    assert sequence_cost(extra, 0, 1) == pytest.approx(2)  # the extra visit's two codes are suppressed
    sibling = tiny({"x": [(1, ["A00"])], "y": [(1, ["A01"])]})
    parent_ncp = (2 - 1) / (8 - 1)  # A0* covers 2 of the 8 codes
    assert sequence_cost(sibling, 0, 1) == pytest.approx(parent_ncp)
    assert ncp_matrix(CODES)[CODES.index["A00"], CODES.index["A01"]] == pytest.approx(parent_ncp)


# --- properties on small random inputs -----------------------------------------------------------------

@st.composite
def random_sequential(draw):
    n = draw(st.integers(2, 9))
    leaves = list(CODES.ground)
    visits = {f"p{i}": [(draw(st.integers(1, 30)), draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=3)))
                        for _ in range(draw(st.integers(0, 3)))] for i in range(n)}
    ages = [str(draw(st.integers(20, 39))) for _ in range(n)]
    k = draw(st.integers(1, n))
    return visits, ages, k


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(random_sequential(), st.sampled_from(["greedy", "ranking"]))
def test_groups_generalizations_identifiers_and_accounting(case, method):
    visits, ages, k = case
    entities = pd.DataFrame({"id": list(visits), "name": [f"secret-{e}" for e in visits], "age": ages})
    events = pd.DataFrame([(e, f"{e}-{v}", day, code) for e, vs in visits.items() for v, (day, codes) in enumerate(vs)
                           for code in codes], columns=["id", "visit", "day", "code"])
    data = load_sequential(entities, events, entity_id="id", qi=["age"], sequence_key="visit", order_by="day",
                           code="code", code_hierarchy=CODES, hierarchies={"age": AGE}, identifiers=["name"])
    release = anonymize_sequential(data, k, method=method)
    assert np.bincount(release.groups).min() >= k  # groups of at least k
    assert sorted(release.entities["id"]) == sorted(release.pseudonym)  # each entity exactly once
    assert check(data, release).min() >= k
    ancestors = {g: {CODES.labels[lv][CODES.codes[lv][CODES.index[g]]] for lv in range(4)} for g in CODES.ground}
    age_anc = {a: {AGE.labels[lv][AGE.codes[lv][AGE.index[a]]] for lv in range(3)} for a in AGE.ground}
    for e, original in enumerate(visits):
        released = release.entities.set_index("id").loc[release.pseudonym[e]]
        assert released["age"] in age_anc[ages[e]]  # generalized values are ancestors of the originals
        codes = release.events[release.events["id"] == release.pseudonym[e]]["code"]
        mine = [c for _, cs in visits[original] for c in cs]
        assert all(any(c in ancestors[o] for o in mine) for c in codes)
        kept = len(codes)
        assert kept + release.suppressed_elements[e] == len(mine)  # every element kept or counted
    text = pd.concat([release.entities.astype(str), release.events.astype(str)]).to_string()
    assert "secret-" not in text and "name" not in release.entities.columns


# --- bad input -------------------------------------------------------------------------------------------

def test_bad_input_is_named_or_documented():
    base = {"x": [(1, ["A00"])], "y": [(2, ["A01"])]}
    entities = pd.DataFrame({"id": ["x", "y"], "age": ["25", "26"]})
    events = pd.DataFrame([("x", "x-0", 1, "A00"), ("y", "y-0", 2, "A01")], columns=["id", "visit", "day", "code"])
    kwargs = {"entity_id": "id", "qi": ["age"], "sequence_key": "visit", "order_by": "day", "code": "code",
              "code_hierarchy": CODES, "hierarchies": {"age": AGE}}
    with pytest.raises(DataError, match=r"1 event\(s\) for unknown entities \['z'\]"):
        load_sequential(entities, pd.concat([events, pd.DataFrame([("z", "z-0", 3, "A00")], columns=events.columns)]),
                        **kwargs)
    with pytest.raises(DataError, match="missing or non-numeric 'day'"):
        load_sequential(entities, events.assign(day=["1", ""]), **kwargs)
    with pytest.raises(CoverageError, match="'Z99'"):
        load_sequential(entities, events.assign(code=["A00", "Z99"]), **kwargs)
    data = tiny(base)
    with pytest.raises(InvalidParameterError, match="at most the number of rows"):
        anonymize_sequential(data, 3)
    # documented: events need not be sorted (they are sorted by time here); an entity may have no events
    shuffled = load_sequential(entities, events.iloc[::-1], **kwargs)
    assert shuffled.visits(0) == load_sequential(entities, events, **kwargs).visits(0)
    lonely = load_sequential(pd.concat([entities, pd.DataFrame({"id": ["w"], "age": ["30"]})]), events, **kwargs)
    assert lonely.visits(2) == [] and check(lonely, anonymize_sequential(lonely, 3)).min() >= 3
