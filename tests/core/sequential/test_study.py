"""The multi-table study: its config, its validation (every column named, errors naming the table),
the in-step event hierarchy, the satellites' row matching, and the compiled alignment against its
pure-Python oracle on a study."""

from __future__ import annotations

import itertools
import shutil

import numpy as np
import pandas as pd
import pytest
from sequential_util import by_entity
from sweeps import sweep

from microrelease.core.data.samples import sample_data_folder
from microrelease.core.exceptions import DataError
from microrelease.core.lattice.hierarchies import read_arx
from microrelease.core.sequential import anonymize as anonymize_module
from microrelease.core.sequential.alignment_oracle import group_consensus
from microrelease.core.sequential.anonymize import anonymize_groups
from microrelease.core.sequential.cost import CostModel, CostWeights
from microrelease.core.sequential.event_codes import (
    ROOT,
    EventColumns,
    event_hierarchy,
    event_labels,
    split_label,
)
from microrelease.core.sequential.grouping import group_entities
from microrelease.core.sequential.satellites import _assign
from microrelease.core.sequential.study import load_study
from microrelease.core.sequential.study_config import read_study

STUDY = sample_data_folder("study")


def tables(every: int = 1) -> dict[str, pd.DataFrame]:
    """The bundled study's tables, every ``every``-th patient."""
    out = {n: pd.read_csv(STUDY / f"{n}.csv", dtype=str, keep_default_na=False)
           for n in ("patients", "insurance", "diagnoses", "prescriptions")}
    keep = set(out["patients"]["patient_id"].iloc[::every])
    return {n: f[f["patient_id"].isin(keep)] for n, f in out.items()}


def study_copy(tmp_path, edit=None):
    """A copy of the bundled study whose TOML text went through ``edit``."""
    folder = tmp_path / "study"
    shutil.copytree(STUDY, folder)
    toml = folder / "study.toml"
    if edit:
        toml.write_text(edit(toml.read_text()))
    return toml


def test_the_bundled_study_loads_with_every_table_and_column_accounted_for():
    study = read_study(STUDY / "study.toml")
    data = load_study(study)
    raw = tables()
    assert data.n_entities == len(raw["patients"])
    assert len(data.codes) == len(raw["diagnoses"]) + len(raw["prescriptions"])
    assert [s.name for s in data.satellites] == ["insurance"]
    assert len(data.satellites[0].entity) == len(raw["insurance"])
    for name, frame in raw.items():  # every input column has one role
        assert list(data.column_roles[name]) == list(frame.columns)
    # a visit is a sequence-key value across both event tables
    visits = pd.concat([raw["diagnoses"], raw["prescriptions"]])[["patient_id", "visit_id"]].drop_duplicates()
    assert len(data.visit_time) == len(visits)


@pytest.mark.parametrize("edit, words", [
    (lambda t: t.replace('identifiers = ["name"]', 'identifers = ["name"]'), "unknown key(s) ['identifers']"),
    (lambda t: t.replace('drop = ["cost"]', "drop = []"), "['cost'] of 'patients' have no role"),
    (lambda t: t.replace('identifiers = ["policy_number"]', "identifiers = []"),
     "['policy_number'] of 'insurance' have no role"),
    (lambda t: t.replace('codes = ["drug", "dose"]', 'codes = ["drug"]'), "['dose'] of 'prescriptions' have no role"),
    (lambda t: t.replace('name = "insurance"', 'name = "diagnoses"'), "used twice"),
    (lambda t: t.replace('time = "date"\ncodes = ["icd"]', 'time = "day"\ncodes = ["icd"]'),
     "'diagnoses' (diagnoses.csv) has no column(s) ['day']"),
    (lambda t: t.replace("[anonymization]", "[anonymisation]"), "unknown section(s) ['anonymisation']"),
    (lambda t: t + "\n[[events]]\nname = 3\n", "'name' must be a non-empty text"),
    (lambda t: t.replace("[[events]]", "[[event]]", 1).replace("[[events]]", "[[event]]"),
     "unknown section(s) ['event']"),
])
def test_a_study_file_that_leaves_a_column_unnamed_or_misspells_a_key_is_refused_by_name(tmp_path, edit, words):
    toml = study_copy(tmp_path, edit)
    with pytest.raises(DataError) as err:
        load_study(read_study(toml))
    assert words in str(err.value)
    assert err.value.parameter == "config"


@pytest.mark.parametrize("edit, words", [
    (lambda t: t.replace('file = "insurance.csv"', 'file = "/etc/passwd"'), "'file' '/etc/passwd' must be a path relative"),
    (lambda t: t.replace('file = "insurance.csv"', 'file = "../study/insurance.csv"'), "no '..'"),
    (lambda t: t.replace('icd = "hierarchy_icd.csv"', 'icd = "/tmp/h.csv"'), "'hierarchies.icd' '/tmp/h.csv' must be a path"),
])
def test_a_study_file_opens_files_only_inside_its_folder(tmp_path, edit, words, monkeypatch):
    toml = study_copy(tmp_path, edit)
    from microrelease.core.sequential import study

    opened = []
    monkeypatch.setattr(study, "read_table", lambda path, *a, **k: opened.append(path) or pd.DataFrame())
    with pytest.raises(DataError) as err:
        load_study(read_study(toml))
    assert words in str(err.value) and err.value.parameter == "config"
    assert opened == []  # refused before any table is read


def test_bad_rows_are_refused_naming_their_table(tmp_path):
    toml = study_copy(tmp_path)
    folder = toml.parent
    study = read_study(toml)
    raw = tables()
    cases = {
        "insurance": (raw["insurance"].assign(patient_id=lambda f: f["patient_id"].where(f.index != 0, "P99999")),
                      "1 row(s) of 'insurance' name entities absent from the entity table: ['P99999']"),
        "prescriptions": (raw["prescriptions"].assign(date=lambda f: f["date"].where(f.index != 0, "2023-02-30")),
                          "'prescriptions.date' has dates that do not exist: ['2023-02-30']"),
        "diagnoses": (raw["diagnoses"].assign(visit_id=lambda f: f["visit_id"].where(f.index != 3, "")),
                      "1 event(s) of 'diagnoses' have a blank 'visit_id'"),
    }
    for name, (frame, words) in cases.items():
        with pytest.raises(DataError) as err:
            load_study(study, {**raw, name: frame})
        assert words in str(err.value), name
    # times of two kinds across the event tables are refused, naming both columns
    numbers = raw["prescriptions"].assign(date=range(len(raw["prescriptions"])))
    with pytest.raises(DataError, match="prescriptions.date"):
        load_study(study, {**raw, "prescriptions": numbers})
    # a code cell holding the label separator cannot be split back: refused
    odd = raw["diagnoses"].assign(icd=lambda f: f["icd"].where(f.index != 0, "A\x1f00"))
    with pytest.raises(DataError, match="U\\+001F"):
        load_study(study, {**raw, "diagnoses": odd})
    assert folder.is_dir()


def test_the_in_step_event_hierarchy_is_a_tree_whose_tables_meet_only_at_the_root():
    study = read_study(STUDY / "study.toml")
    raw = tables(every=4)
    specs = []
    for t in study.events:
        specs.append(EventColumns(t.name, t.codes, tuple(read_arx(t.hierarchies[c], c) for c in t.codes)))
    labels = pd.concat([event_labels(raw[s.table], s) for s in specs], ignore_index=True)
    h = event_hierarchy(specs, labels.tolist())  # Hierarchy validates: one parent per node, one top
    assert h.labels[h.height] == (ROOT,)
    lca = h.lca_levels()
    tables_of = [split_label(g)[0] for g in h.ground]
    for a, b in itertools.combinations(range(len(h.ground)), 2):
        if tables_of[a] != tables_of[b]:
            assert lca[a, b] == h.height  # only the root covers events of two tables
        else:  # below the root, level j reads each column at its own level min(j, height)
            spec = next(s for s in specs if s.table == tables_of[a])
            for j in range(h.height):
                _, values = split_label(h.labels[j][h.codes[j][a]])
                _, ground = split_label(h.ground[a])
                assert values == tuple(c.generalize([v], min(j, c.height))[0]
                                       for c, v in zip(spec.hierarchies, ground, strict=True))


def test_the_row_matching_is_the_least_costly_one_when_exhaustive_and_one_to_one_always():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n, m = rng.integers(0, 5, 2)
        cost = rng.random((n, m)).round(2)
        pairs = _assign(cost)
        assert len(pairs) == min(n, m)
        assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == len(pairs)
        if n and m:
            small, big = (cost, m) if n <= m else (cost.T, n)
            best = min(sum(small[i, p[i]] for i in range(len(small))) for p in itertools.permutations(range(big),
                                                                                                      len(small)))
            assert sum(cost[i, j] for i, j in pairs) == pytest.approx(best)
    wide = rng.random((3, 12))  # 12·11·10 > 5040 assignments: greedy, still one-to-one
    pairs = _assign(wide)
    assert len(pairs) == 3 and len({j for _, j in pairs}) == 3


@pytest.mark.parametrize("k", sweep([5, 2]))  # k = 2 (the slower) in the slow step
def test_the_compiled_alignment_of_a_study_equals_the_pure_python_one_and_keeps_tables_apart(k, monkeypatch):
    data = load_study(read_study(STUDY / "study.toml"), tables(every=5))
    groups = group_entities(CostModel(data, CostWeights()), k)
    compiled = anonymize_groups(data, groups, k)

    def python_consensus(aligned, g):
        members = [int(e) for e in np.flatnonzero(groups == g)]
        return group_consensus(data, members, 1.0, anonymize_module.time_span(data))

    monkeypatch.setattr(anonymize_module, "consensus_of", python_consensus)
    python = anonymize_groups(data, groups, k)
    assert np.array_equal(compiled.suppressed_elements, python.suppressed_elements)
    assert by_entity(compiled) == by_entity(python)
    released = compiled.events.iloc[:, 3]
    assert not (released == ROOT).any()  # never an event of no table
    assert {split_label(x)[0] for x in released} <= {"diagnoses", "prescriptions"}


def tiny_study(tmp_path, insurance_rows, diagnoses, prescriptions):
    """Two patients (same QIs), their insurance rows, and events (patient, visit, date, code...)."""
    toml = study_copy(tmp_path)
    raw = {"patients": pd.DataFrame({"patient_id": ["a", "b"], "name": ["A", "B"], "age": ["40", "40"],
                                     "sex": ["F", "F"], "zip": ["47600", "47600"], "cost": ["1", "2"]}),
           "insurance": pd.DataFrame(insurance_rows, columns=["patient_id", "policy_number", "plan", "since"]),
           "diagnoses": pd.DataFrame(diagnoses, columns=["patient_id", "visit_id", "date", "icd"]),
           "prescriptions": pd.DataFrame(prescriptions, columns=["patient_id", "visit_id", "date", "drug", "dose"])}
    return load_study(read_study(toml), raw)


def test_a_visit_orders_its_events_by_time_then_table_then_input_row(tmp_path):
    data = tiny_study(tmp_path, [("a", "p1", "Basic", "2015"), ("b", "p2", "Basic", "2015")],
                      [("a", "v1", "2023-01-02", "A00"), ("a", "v1", "2023-01-01", "B00"), ("a", "v1", "2023-01-01",
                                                                                              "A01")],
                      [("a", "v1", "2023-01-01", "nystatin", "low"), ("a", "v1", "2023-01-02", "ibuprofen", "low")])
    shown = [data.code_hierarchy.ground[c].split("\x1f")[1] for c in data.codes]
    assert shown == ["B00", "A01", "nystatin", "A00", "ibuprofen"]
    assert len(data.visit_time) == 1  # one visit across both tables


def test_f_sees_a_satellite_column_as_one_qi_through_the_first_rows(tmp_path):
    """Two patients with equal QIs and no events: F is w_R times the weighted mean of the NCPs, the QIs
    weighing 1 each and every slot 1/3 (so each satellite column weighs as one QI)."""
    plan = read_arx(STUDY / "hierarchy_plan.csv", "plan")
    since = read_arx(STUDY / "hierarchy_since.csv", "since")

    def ncp(h, u, v):  # brute force from the hierarchy's rows
        level = next(j for j in range(h.height + 1) if h.generalize([u], j) == h.generalize([v], j))
        if level == h.height:
            return 1.0
        under = sum(1 for g in h.ground if h.generalize([g], level) == h.generalize([u], level))
        return (under - 1) / len(h.ground)  # the slots' hierarchies hold one more value (the absent row)

    data = tiny_study(tmp_path, [("a", "p1", "Basic", "2015"), ("a", "p2", "Premium", "2020"),
                                 ("b", "p3", "Plus", "2015")], [], [])
    got = CostModel(data, CostWeights()).costs_from(0, np.array([1]))[0]
    # a's rows sorted by value: (Basic, 2015), (Premium, 2020); b's: (Plus, 2015); third slots both absent
    slots = ncp(plan, "Basic", "Plus") + ncp(since, "2015", "2015") + 1.0 + 1.0 + 0.0 + 0.0
    expected = 0.5 * (0 + 0 + 0 + slots / 3) / (3 + 2)
    assert got == pytest.approx(expected)


def test_the_docs_study_sketch_is_valid_toml_and_reads_as_a_study(tmp_path):
    import re
    import tomllib

    from docs_text import page

    from microrelease.core.sequential.study_config import parse_study

    block = re.search(r"```toml\n(.*?)```", page("how-to/relational-sequential-study.md"), re.S).group(1)
    study = parse_study(tomllib.loads(block), tmp_path)
    assert [t.name for t in study.tables] == ["patients", "insurance", "prescriptions"]
    assert study.anonymization == {"k": 5}


@pytest.mark.parametrize("edit, words", [
    (lambda t: t.replace('sequence_key = "visit_id"\ntime = "date"\ncodes = ["icd"]',
                         'sequence_key = "date"\ntime = "date"\ncodes = ["icd"]'),
     "column 'date' of 'diagnoses' is given twice (as sequence key and as time)"),
    (lambda t: t.replace("k = 5", "k = \"5\""), "'k' must be a whole number >= 1, got '5'"),
    (lambda t: t.replace("k = 5", "k = 5\nweights = { rel = 1 }"), "'weights' must map some of"),
    (lambda t: t.replace("k = 5", "k = 5\nrelative_time = \"false\""), "'relative_time' must be true or false"),
    (lambda t: t.replace('name = "insurance"', 'name = "Patients"'), "differ only in case"),
    (lambda t: t.replace('file = "insurance.csv"', 'file = "."'), "'file' '"),
    (lambda t: t.replace('file = "insurance.csv"', 'file = "C:\\\\data\\\\insurance.csv"'), "is not found"),
])
def test_review_mistakes_are_refused_by_name_not_by_a_traceback(tmp_path, edit, words):
    toml = study_copy(tmp_path, edit)
    with pytest.raises(DataError) as err:
        load_study(read_study(toml))
    assert words in str(err.value) and err.value.parameter == "config"


def test_table_errors_name_the_table_and_the_study_not_a_one_table_flag(tmp_path):
    study = read_study(study_copy(tmp_path))
    raw = tables()
    twice = pd.concat([raw["patients"], raw["patients"].head(1)])
    with pytest.raises(DataError, match="entity ids repeat in 'patients'"):
        load_study(study, {**raw, "patients": twice})
    odd_time = raw["diagnoses"].assign(date=lambda f: f["date"].where(f.index != 0, "soon"))
    with pytest.raises(DataError) as err:
        load_study(study, {**raw, "diagnoses": odd_time})
    assert err.value.parameter == "config" and str(err.value).startswith("'diagnoses' (diagnoses.csv): ")
    unknown_icd = raw["diagnoses"].assign(icd=lambda f: f["icd"].where(f.index != 0, "Z99"))
    with pytest.raises(DataError) as err:
        load_study(study, {**raw, "diagnoses": unknown_icd})
    assert "'diagnoses'" in str(err.value) and "Z99" in str(err.value) and err.value.parameter == "config"


def test_integers_beyond_2_53_do_not_silently_mix_with_decimal_times(tmp_path):
    study = read_study(study_copy(tmp_path))
    raw = tables(every=50)
    big = raw["diagnoses"].assign(date=[str(1_700_000_000_000_000_014 + i) for i in range(len(raw["diagnoses"]))])
    decimal = raw["prescriptions"].assign(date=[f"{1.7e18 + i:.1f}" for i in range(len(raw["prescriptions"]))])
    with pytest.raises(DataError, match="beyond 2\\*\\*53"):
        load_study(study, {**raw, "diagnoses": big, "prescriptions": decimal})
    exact = raw["prescriptions"].assign(date=[str(1_700_000_000_000_000_014 + i) for i in range(len(raw["prescriptions"]))])
    data = load_study(study, {**raw, "diagnoses": big, "prescriptions": exact})  # integers only: exact
    assert data.times.dtype == np.int64 and int(data.times.max()) > 2**60


def test_satellite_values_that_never_meet_are_dropped_not_released_as_one_row():
    """A height-0 hierarchy has no common value for two different ground values: such a matched pair
    cannot be one released row (it would need a level above the top), so both rows are suppressed."""
    from microrelease.core.lattice.hierarchies import Hierarchy
    from microrelease.core.sequential.satellites import encode_satellite, group_rows

    flat = Hierarchy("plan", (("A",), ("B",)))
    rows = pd.DataFrame({"plan": ["A", "B", "A", "A"]})
    sat = encode_satellite("plans", rows, np.array([0, 1, 2, 2]), 3, ["plan"], [flat])
    assert group_rows(sat, [0, 1]) == []  # A against B: nothing in common
    assert group_rows(sat, [0, 2]) == [[(0, 0)]]  # A against A: kept as is
